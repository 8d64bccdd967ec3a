#!/bin/sh
# croupier/1 bot that answers every decision at once with the lowest legal
# action, except decision 3: that one it answers with the highest legal action
# after sleeping 1.3 s, past a 1 s move time (but in time for decision 4).
# It logs "start" to LOG when started, and "<decision> <action>" for every
# answer just before writing it (the match may end, and the bot be stopped,
# as soon as the answer is read).
# Usage: croupier_late.sh MARKER LOG
log=$2
echo "start" >>"$log"
while IFS= read -r line; do
  case $line in
    '{"type":"act"'*)
      d=$(printf '%s\n' "$line" | sed -n 's/.*"decision":\([0-9]*\).*/\1/p')
      legal=$(printf '%s\n' "$line" | sed -n 's/.*"legal":\[\([^]]*\)\].*/\1/p')
      if [ "$d" -eq 3 ]; then
        sleep 1.3
        a=${legal##*,}
      else
        a=${legal%%,*}
      fi
      echo "$d $a" >>"$log"
      printf '{"action":%s,"decision":%s}\n' "$a" "$d"
      ;;
  esac
done
