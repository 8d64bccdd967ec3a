#!/bin/sh
# GOPS bot that bids 1, 2, 3 and then dies on the fourth competition card.
# Usage: gops_crash_mid_game.sh MARKER
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      if [ "$n" -gt 3 ]; then
        echo "segfault, just kidding" >&2
        exit 139
      fi
      echo "$n"
      ;;
  esac
done
