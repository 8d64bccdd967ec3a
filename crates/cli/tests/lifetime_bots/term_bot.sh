#!/bin/sh
# A bot that never answers and, on SIGTERM, becomes (exec, the same pid) a
# process whose command line holds "MARKER-term" (seen from the host even
# in a sandbox) for 0.3 s, then exits. Usage: term_bot.sh MARKER
# It waits with `wait`, which a trapped signal interrupts at once (a
# foreground `sleep` would hold the trap back until it ends).
trap 'exec sh -c "sleep 0.3; :" "$1-term"' TERM
while :; do
  sleep 1 &
  wait $!
done
