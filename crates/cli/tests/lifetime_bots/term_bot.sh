#!/bin/sh
# A bot that never answers and, on SIGTERM, lives on for 0.3 s as a process
# whose command line holds "MARKER-term" (seen from the host even in a
# sandbox), then exits. Usage: term_bot.sh MARKER
# It waits with `wait`, which a trapped signal interrupts at once (a
# foreground `sleep` would hold the trap back until it ends).
trap 'sh -c "sleep 0.3; :" "$1-term"; exit 0' TERM
while :; do
  sleep 1 &
  wait $!
done
