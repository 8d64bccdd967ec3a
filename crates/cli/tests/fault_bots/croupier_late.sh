#!/bin/sh
# croupier/1 bot that answers every decision at once with the lowest legal
# action, except decision 3: that one it answers with the highest legal action
# after sleeping 0.7 s, past a 0.5 s move time (but in time for decision 4). Each answer is logged to LOG as
# "<decision> <action>" once written.
# Usage: croupier_late.sh MARKER LOG
log=$2
while IFS= read -r line; do
  case $line in
    '{"type":"act"'*)
      d=$(printf '%s\n' "$line" | sed -n 's/.*"decision":\([0-9]*\).*/\1/p')
      legal=$(printf '%s\n' "$line" | sed -n 's/.*"legal":\[\([^]]*\)\].*/\1/p')
      if [ "$d" -eq 3 ]; then
        sleep 0.7
        a=${legal##*,}
      else
        a=${legal%%,*}
      fi
      printf '{"action":%s,"decision":%s}\n' "$a" "$d"
      echo "$d $a" >>"$log"
      ;;
  esac
done
