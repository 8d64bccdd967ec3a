#!/usr/bin/env bash
# Builds a release `croupier` optimised with profiles of its own work
# (profile-guided optimisation, PGO): an instrumented build plays the
# benchmarks' workloads, and a second build uses what they counted. On the
# 2014 API's load the server spent 4-7% less CPU per request than the
# plain release build, and the rules engines played 11-35% more games a
# second (docs/benchmarks.md, "A build guided by its own profile");
# docs/deploy.md, "A faster build", says when to use it.
#
#   scripts/build-pgo.sh [OUT]      # default: target/pgo/croupier in this checkout
#
# Needs the Rust toolchain's llvm-profdata (`rustup component add
# llvm-tools`), about 20 minutes of both cores of a 2-core machine (not the
# one that runs a competition), about 3.5 GB in target/pgo-instrumented and
# target/pgo-optimized (both can be deleted afterwards), and no network
# beyond 127.0.0.1. The training runs, each bounded in time:
#   - `croupier bench server --bots 200 --seconds 10`: REST bots playing
#     SkullWhist through the 2014 API against `croupier serve` on SQLite;
#   - `croupier bench --seconds 1`: the rules engines' random games;
#   - `croupier bench web --games 20000`: every page over a seeded database.
# Rust code only is guided: SQLite and mimalloc (C) are built as usual.
# The build's own RUSTFLAGS replace any `rustflags` of a Cargo config file.
set -euo pipefail

OUT=$(realpath -m -- "${1:-$(dirname "$0")/../target/pgo/croupier}")
cd "$(dirname "$0")/.."

if [ -n "${CARGO_ENCODED_RUSTFLAGS:-}" ]; then
  echo "build-pgo: CARGO_ENCODED_RUSTFLAGS is set, and cargo would then ignore the profile flags this script gives in RUSTFLAGS; unset it (or move its flags to RUSTFLAGS)" >&2
  exit 2
fi
RUSTC_BIN=${RUSTC:-rustc}
HOST=$("$RUSTC_BIN" -vV | sed -n 's/^host: //p')
PROFDATA="$("$RUSTC_BIN" --print sysroot)/lib/rustlib/$HOST/bin/llvm-profdata"
if [ ! -x "$PROFDATA" ]; then
  echo "build-pgo: $PROFDATA is missing; install it with: rustup component add llvm-tools" >&2
  exit 2
fi

WORK=$(mktemp -d /tmp/croupier-pgo.XXXXXX)
running=""
# A training run is under `timeout`, in a process group of its own that
# the terminal's Ctrl-C does not reach: pass it on, and stop.
stop() {
  if [ -n "$running" ]; then
    kill -TERM "$running" 2>/dev/null || true
    # Let it write its profile before the scratch folder goes.
    wait "$running" 2>/dev/null || true
  fi
  exit 130
}
trap stop INT TERM
trap 'rm -rf "$WORK"' EXIT
PROFILES="$WORK/profiles"
mkdir -p "$PROFILES"

# `--target` keeps RUSTFLAGS off build scripts and proc macros, which would
# otherwise be instrumented too and write profiles while the crate builds.
build() { # TARGET_DIR RUSTFLAGS
  RUSTFLAGS="${RUSTFLAGS:-} $2" cargo build --release -p croupier-cli \
    --target "$HOST" --target-dir "$1"
}

# train SECONDS ARGS...: one training run of the instrumented build. Its
# stderr goes to $WORK/train.log (read for the server's PID below), shown
# as it comes.
train() {
  local limit=$1
  shift
  echo "build-pgo:   croupier $*" >&2
  : >"$WORK/train.log"
  (cd "$WORK" && exec timeout "$limit" "$TRAINEE" "$@" >/dev/null 2>"$WORK/train.log") &
  running=$!
  tail -n +1 -s 0.2 -f --pid="$running" "$WORK/train.log" >&2 &
  local shown=$!
  local status=0
  wait "$running" || status=$?
  wait "$shown" || true
  running=""
  if [ "$status" -ne 0 ]; then
    echo "build-pgo: croupier $* failed (exit status $status)" >&2
    exit 1
  fi
}

echo "== build-pgo: 1 of 3, the instrumented build" >&2
build target/pgo-instrumented "-Cprofile-generate=$PROFILES"
TRAINEE="$PWD/target/pgo-instrumented/$HOST/release/croupier"

echo "== build-pgo: 2 of 3, training runs (about 3 minutes)" >&2
export LLVM_PROFILE_FILE="$PROFILES/croupier-%p-%m.profraw"
# `bench server` stops its server with SIGTERM, on which `croupier serve`
# stops cleanly and writes its profile as it exits; the bench names the
# server's PID, which is in the profile's name.
train 300 bench server --bots 200 --seconds 10
server=$(sed -n 's/.*measuring server pid \([0-9][0-9]*\).*/\1/p' "$WORK/train.log" | tail -n 1)
if [ -z "$server" ] || ! compgen -G "$PROFILES/croupier-$server-*.profraw" >/dev/null; then
  echo "build-pgo: the trained server (pid ${server:-unknown}) wrote no profile: it must stop on the bench's SIGTERM within 10 s" >&2
  exit 1
fi
train 300 bench --seconds 1
train 900 bench web --games 20000 --db "$WORK/web.db"
unset LLVM_PROFILE_FILE

"$PROFDATA" merge -o "$WORK/merged.profdata" "$PROFILES"/*.profraw

echo "== build-pgo: 3 of 3, the build guided by the profile" >&2
build target/pgo-optimized "-Cprofile-use=$WORK/merged.profdata"
mkdir -p "$(dirname "$OUT")"
cp "target/pgo-optimized/$HOST/release/croupier" "$OUT"
echo "build-pgo: $OUT" >&2
