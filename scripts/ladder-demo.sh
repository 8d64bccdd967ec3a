#!/usr/bin/env bash
# Runs a server with a dozen HTTP bots of every kind on the ladder, on this
# machine, until Ctrl-C: Psychological Jujitsu push bots (Python, Node,
# `croupier bot --serve`), croupier/1 push bots, pull bots (Python, Node),
# plus the house bots. Everything is stopped on exit.
#
#   scripts/ladder-demo.sh [PORT]        # default 8090; needs python3 and node
#
# While it runs: the server log is in $DEMO/server.log, the database in
# $DEMO/croupier.db, and `croupier bots list` shows each bot's strikes.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT=${1:-8090}
DEMO=$(mktemp -d /tmp/croupier-demo.XXXXXX)
cargo build --release -q
BIN=target/release/croupier
export CROUPIER_SERVER=http://127.0.0.1:$PORT CROUPIER_OWNER=demo CROUPIER_PASSWORD=demo

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  echo "stopped; the database is kept in $DEMO/croupier.db"
}
trap cleanup EXIT INT TERM

start() { "$@" >>"$DEMO/bots.log" 2>&1 & pids+=($!); }

"$BIN" serve --listen "127.0.0.1:$PORT" --database "sqlite://$DEMO/croupier.db" \
  >"$DEMO/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  curl -fs "$CROUPIER_SERVER/openapi.json" >/dev/null 2>&1 && break
  sleep 0.1
done

base=$((PORT + 1))
start python3 examples/bots/jujitsu/bot.py --port $((base + 0)) --user judge --password pw
start node examples/bots/jujitsu/bot.js --port $((base + 1))
start "$BIN" bot planner --serve "127.0.0.1:$((base + 2))" --dialect jujitsu
start python3 examples/bots/croupier-http/push_bot.py --port $((base + 3))
start node examples/bots/croupier-http/push_bot.js --port $((base + 4))
start "$BIN" bot heuristic --serve "127.0.0.1:$((base + 5))" --dialect croupier
sleep 1

"$BIN" owner register
reg() { "$BIN" bots register "$@"; }
url() { echo "http://127.0.0.1:$((base + $1))/"; }
reg --name jj-python --game goofspiel --url "$(url 0)" --auth judge:pw
reg --name jj-node --game goofspiel --url "$(url 1)"
reg --name jj-planner --game goofspiel --url "$(url 2)"
reg --name ll-python --game loveletter --url "$(url 3)" --dialect croupier
reg --name sw-python --game skullwhist --url "$(url 3)"
reg --name ll-node --game loveletter --url "$(url 4)" --dialect croupier
reg --name sw-node --game skullwhist --url "$(url 4)"
reg --name ll-heuristic --game loveletter --url "$(url 5)" --dialect croupier
reg --name sw-heuristic --game skullwhist --url "$(url 5)"
token() { "$BIN" bots register --json --pull "$@" | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])'; }
start python3 examples/bots/croupier-http/pull_bot.py --server "$CROUPIER_SERVER" --token "$(token --name ll-pull-py --game loveletter)"
start node examples/bots/croupier-http/pull_bot.js --server "$CROUPIER_SERVER" --token "$(token --name gs-pull-node --game goofspiel)"
start python3 examples/bots/croupier-http/pull_bot.py --server "$CROUPIER_SERVER" --token "$(token --name sw-pull-py --game skullwhist)"
# A broken push bot, to watch strikes and a pause.
reg --name broken --game goofspiel --url "http://127.0.0.1:9/"

echo
echo "server: $CROUPIER_SERVER   log: $DEMO/server.log   database: $DEMO/croupier.db"
echo "bots:   $BIN bots list      (CROUPIER_SERVER/OWNER/PASSWORD are set in this shell only)"
echo "Ctrl-C stops everything."
tail -f "$DEMO/server.log" | grep --line-buffered "ladder"
