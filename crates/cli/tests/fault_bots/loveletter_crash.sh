#!/bin/sh
# Love Letter (manager protocol) AI that crashes on its first turn: it reads
# its player number, waits for "player <itself>" and the card it then draws,
# and exits with status 1 without answering. Every start is logged to LOG.
# Usage: loveletter_crash.sh MARKER LOG
echo "start" >>"$2"
IFS= read -r me || exit 0
mine=0
while IFS= read -r line; do
  case $line in
    "player $me") mine=1 ;;
    "draw "*)
      if [ "$mine" -eq 1 ]; then
        echo "player $me crashes" >&2
        exit 1
      fi
      ;;
  esac
done
