#!/bin/sh
# GOPS bot that always bids 13: legal once, then a card it no longer holds.
# Usage: gops_illegal.sh MARKER
while IFS= read -r line; do
  case $line in
    "Competition card:"*) echo "13" ;;
  esac
done
