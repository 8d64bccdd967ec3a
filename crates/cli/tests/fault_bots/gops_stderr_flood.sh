#!/bin/sh
# GOPS bot that plays correctly (bids 1..13 in order) while writing 3 MB to
# stderr before every bid: 39 MB per game.
# Usage: gops_stderr_flood.sh MARKER
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      head -c 3000000 /dev/zero | tr '\0' 'e' >&2
      echo "$n"
      ;;
  esac
done
