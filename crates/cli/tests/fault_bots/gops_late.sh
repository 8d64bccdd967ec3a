#!/bin/sh
# GOPS bot that bids 1 and 2 on time, then sleeps 1.3 s (past a 1 s move
# time) before bidding 3, and goes on bidding 4, 5, ... promptly if it is still
# asked. It ignores SIGTERM, so the late answer is written even if the runner
# stops it at once (SIGKILL comes only after the grace period). It logs to LOG
# "start" when started, "card <n>" for every competition card it is sent and
# "late <n>" just before the late answer is written.
# Usage: gops_late.sh MARKER LOG
trap '' TERM
log=$2
echo "start" >>"$log"
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      echo "card $n" >>"$log"
      if [ "$n" -eq 3 ]; then
        sleep 1.3
        echo "late $n" >>"$log"
        echo "$n"
      else
        echo "$n"
      fi
      ;;
  esac
done
