#!/bin/sh
# GOPS bot that forks a long-lived child (which ignores SIGTERM and keeps the
# bot's stdout open), plays correctly, and exits at the end of the match,
# leaving the child behind. The child's pid is appended to PIDS.
# Usage: gops_fork.sh MARKER PIDS
(trap '' TERM; exec sleep 300) &
echo "$!" >>"$2"
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      echo "$n"
      ;;
  esac
done
exit 0
