#!/bin/sh
# GOPS bot that bids 1 and 2 on time, sleeps past the deadline before its third
# bid, then answers that bid late and goes on answering promptly. Every
# competition card it is sent is logged to LOG, so the test can see whether
# the runner stopped feeding it.
# Usage: gops_late.sh MARKER LOG
log=$2
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      echo "card $n" >>"$log"
      if [ "$n" -eq 3 ]; then
        sleep 1.5
        echo "late $n" >>"$log"
      fi
      echo "$n"
      ;;
  esac
done
