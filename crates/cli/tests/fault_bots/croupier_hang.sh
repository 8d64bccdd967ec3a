#!/bin/sh
# croupier/1 bot that answers its first N decisions with the first legal
# action, then reads on but never answers again (until it is killed).
# Usage: croupier_hang.sh MARKER N
left=$2
while IFS= read -r line; do
  case $line in
    '{"type":"act"'*)
      if [ "$left" -gt 0 ]; then
        left=$((left - 1))
        legal=$(printf '%s\n' "$line" | sed -n 's/.*"legal":\[\([^]]*\)\].*/\1/p')
        d=$(printf '%s\n' "$line" | sed -n 's/.*"decision":\([0-9]*\).*/\1/p')
        printf '{"action":%s,"decision":%s}\n' "${legal%%,*}" "$d"
      fi
      ;;
  esac
done
while :; do
  sleep 1
done
