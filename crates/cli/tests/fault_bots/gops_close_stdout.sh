#!/bin/sh
# GOPS bot that bids 1, then closes its stdout and keeps running: it goes on
# reading its input and, once that closes, idles until it is killed.
# Usage: gops_close_stdout.sh MARKER
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      if [ "$n" -eq 1 ]; then
        echo "$n"
      else
        exec 1>&-
      fi
      ;;
  esac
done
while :; do
  sleep 1
done
