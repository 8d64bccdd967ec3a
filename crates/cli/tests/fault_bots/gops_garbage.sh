#!/bin/sh
# GOPS bot that answers every competition card with a line holding no number:
# words, invalid UTF-8, control characters, a carriage return, no digit.
# Usage: gops_garbage.sh MARKER
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      printf 'I bid \377\376 banana \001\002 \302\240 nine!\r\n'
      ;;
  esac
done
