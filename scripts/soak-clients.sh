#!/bin/bash
# Issue 50 soak: 16 `croupier bot random --connect` clients behind the docs'
# round-robin haproxy on two instances of one PostgreSQL; MINUTES without a
# kill, then a kill -9 of one instance, its restart, and 2 more minutes.
# Run from the repository as root (PostgreSQL runs as nobody), with
# PostgreSQL and haproxy installed:
#   MINUTES=10 BIN=target/release/croupier scripts/soak-clients.sh
# It prints how many clients still play, their games and their errors; the
# clients' logs stay in $DIR (default /tmp/croupier-soak).
set -u
MINUTES=${MINUTES:-10}
BIN=${BIN:-target/release/croupier}
D=${DIR:-/tmp/croupier-soak}; rm -rf $D; mkdir -p $D; chown nobody $D
runuser -u nobody -- initdb -D $D/pg -A trust -U postgres >/dev/null
runuser -u nobody -- pg_ctl -D $D/pg -o "-k $D -c listen_addresses='' -c max_connections=200" -l $D/pg.log start >/dev/null
sleep 2
runuser -u nobody -- createdb -h $D -U postgres soak
export CROUPIER_DATABASE="postgres://postgres@localhost/soak?host=$D"
start() { $BIN serve --listen 127.0.0.1:$1 --no-ladder --house-bots "" --move-timeout 20 > $D/serve$1.log 2>&1 & echo $! > $D/serve$1.pid; }
start 28081; sleep 3; start 28082; sleep 3
# Plain round robin (the lines marked "# affinity" out) unless AFFINITY=1.
rr() { if [ "${AFFINITY:-0}" = 1 ]; then cat; else awk '/# affinity$/ { if ($0 ~ /balance /) print "    balance roundrobin"; next } { print }'; fi; }
sed -e 's/127.0.0.1:8080/127.0.0.1:28080/' -e 's/127.0.0.1:8081/127.0.0.1:28081/' -e 's/127.0.0.1:8082/127.0.0.1:28082/' -e '/server three/d' docs/deploy/haproxy.cfg | rr > $D/haproxy.cfg
haproxy -db -f $D/haproxy.cfg > /dev/null 2>&1 & HA=$!
sleep 1
for i in $(seq 1 16); do $BIN bot random --connect http://127.0.0.1:28080 --name soak-$i --seed $i > /dev/null 2> $D/client$i.log & echo $! >> $D/clients.pid; done
sleep $((MINUTES*60))
alive() { n=0; for p in $(cat $D/clients.pid); do kill -0 $p 2>/dev/null && n=$((n+1)); done; echo $n; }
games() { cat $D/client*.log | grep -c '^game '; }
errs() { cat $D/client*.log | grep -c '^error'; }
behind() { cat $D/client*.log | grep -c 'status is behind'; }
echo "after $MINUTES min, no kill: $(alive) of 16 clients playing, $(games) games, $(errs) errors, $(behind) statuses behind what a client had seen" | tee $D/result.txt
kill -9 $(cat $D/serve28082.pid); sleep 5; start 28082; sleep 120
echo "after a kill -9 and restart and 2 min more: $(alive) of 16 clients playing, $(games) games, $(errs) errors, $(cat $D/client*.log | grep -c 'trying again\|whether it was taken') retry notes" | tee -a $D/result.txt
for p in $(cat $D/clients.pid); do kill $p 2>/dev/null; done
# Every game a client was told it won, lost or tied is stored as finished.
told=$(grep -h ': \(won\|lost\|tied\|forfeited\)' $D/client*.log | sed -n 's/^game \([0-9]*\) .*/\1/p' | sort -un)
n_told=$(echo "$told" | grep -c .)
ids=$(echo "$told" | paste -sd, -)
finished=$(psql -h $D -U postgres -d soak -Atc "SELECT COUNT(*) FROM games WHERE status = 'finished' AND id IN ($ids)")
echo "games with a result told to a client: $n_told; stored as finished: $finished" | tee -a $D/result.txt
kill $(cat $D/serve28081.pid) $(cat $D/serve28082.pid) $HA 2>/dev/null
sleep 2
runuser -u nobody -- pg_ctl -D $D/pg stop -m fast >/dev/null
