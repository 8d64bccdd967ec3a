#!/bin/sh
# GOPS bot that plays correctly, ignores SIGTERM and keeps running after its
# input is closed at the end of the match.
# Usage: gops_ignore_term.sh MARKER
trap '' TERM
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      echo "$n"
      ;;
  esac
done
while :; do
  sleep 1
done
