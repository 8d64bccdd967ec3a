#!/bin/sh
# A well-behaved but slow GOPS bot: bids 1..13 in order, thinking 0.2 s per
# bid (well inside a 1 s move time). It keeps a match running long enough
# for a late answer of its opponent to arrive while the match goes on.
# Usage: gops_slow.sh MARKER
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      sleep 0.2
      echo "$n"
      ;;
  esac
done
