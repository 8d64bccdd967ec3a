#!/bin/sh
# GOPS bot that bids 1 on time, then answers the second card with one line of
# 10 MB (digits included, so only its length makes it unreadable), then plays on.
# Usage: gops_huge_line.sh MARKER
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      if [ "$n" -eq 2 ]; then
        head -c 10000000 /dev/zero | tr '\0' '7'
        echo
      else
        echo "$n"
      fi
      ;;
  esac
done
