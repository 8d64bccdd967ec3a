#!/usr/bin/env bash
# Builds a release `croupier` optimised with profiles of its own work
# (profile-guided optimisation, PGO): an instrumented build plays the
# benchmarks' workloads, and a second build uses what they counted. On the
# 2014 API's load the server spent 4-18% less CPU per request than the
# plain release build, and the rules engines played 11-35% more games a second
# (docs/benchmarks.md, "A build guided by its own profile"); docs/deploy.md,
# "A faster build", says when to use it.
#
#   scripts/build-pgo.sh [OUT]      # default target/pgo/croupier
#
# Needs the Rust toolchain's llvm-profdata (`rustup component add
# llvm-tools`), about 20 minutes on 2 cores, and loopback only. The
# training runs, each bounded in time:
#   - `croupier bench server --bots 200 --seconds 10`: REST bots playing
#     SkullWhist through the 2014 API against `croupier serve` on SQLite;
#   - `croupier bench --seconds 1`: the rules engines' random games;
#   - `croupier bench web --games 20000`: every page over a seeded database.
# Rust code only is guided: SQLite and mimalloc (C) are built as usual.
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=${1:-target/pgo/croupier}
HOST=$(rustc -vV | sed -n 's/^host: //p')
PROFDATA="$(rustc --print sysroot)/lib/rustlib/$HOST/bin/llvm-profdata"
if [ ! -x "$PROFDATA" ]; then
  echo "build-pgo: $PROFDATA is missing; install it with: rustup component add llvm-tools" >&2
  exit 2
fi

WORK=$(mktemp -d /tmp/croupier-pgo.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
PROFILES="$WORK/profiles"
mkdir -p "$PROFILES"

# `--target` keeps RUSTFLAGS off build scripts and proc macros, which would
# otherwise be instrumented too and write profiles while the crate builds.
build() { # TARGET_DIR RUSTFLAGS
  RUSTFLAGS="${RUSTFLAGS:-} $2" cargo build --release -p croupier-cli \
    --target "$HOST" --target-dir "$1"
}

echo "== build-pgo: 1 of 3, the instrumented build" >&2
build target/pgo-instrumented "-Cprofile-generate=$PROFILES"
TRAINEE="$PWD/target/pgo-instrumented/$HOST/release/croupier"

echo "== build-pgo: 2 of 3, training runs (profiles in $PROFILES)" >&2
export LLVM_PROFILE_FILE="$PROFILES/croupier-%p-%m.profraw"
# `bench server` ends its server with SIGKILL, which leaves no profile: the
# server runs behind this wrapper, whose watcher sends it SIGTERM (a clean
# stop, which writes the profile) once the bench has killed the wrapper.
cat >"$WORK/serve-and-stop" <<EOF
#!/usr/bin/env bash
"$TRAINEE" "\$@" &
child=\$!
me=\$\$
( while kill -0 \$me 2>/dev/null; do sleep 0.2; done; kill -TERM \$child 2>/dev/null ) </dev/null >/dev/null 2>&1 &
wait \$child
EOF
chmod +x "$WORK/serve-and-stop"
(cd "$WORK" && timeout 300 "$TRAINEE" bench server --bots 200 --seconds 10 \
  --server-bin "$WORK/serve-and-stop" >/dev/null)
(cd "$WORK" && timeout 300 "$TRAINEE" bench --seconds 1 >/dev/null)
(cd "$WORK" && timeout 900 "$TRAINEE" bench web --games 20000 --db "$WORK/web.db" >/dev/null)
# The wrapped server's watcher stops it a moment after the bench ends.
sleep 3
unset LLVM_PROFILE_FILE

"$PROFDATA" merge --failure-mode=all -o "$WORK/merged.profdata" "$PROFILES"/*.profraw

echo "== build-pgo: 3 of 3, the build guided by the profile" >&2
build target/pgo-optimized "-Cprofile-use=$WORK/merged.profdata"
mkdir -p "$(dirname "$OUT")"
cp "target/pgo-optimized/$HOST/release/croupier" "$OUT"
echo "build-pgo: $OUT" >&2
