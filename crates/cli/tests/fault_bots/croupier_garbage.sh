#!/bin/sh
# croupier/1 bot that cycles through three answers: decision 1, 4, 7, ... gets
# a line that is not JSON; decision 2, 5, 8, ... names a card nobody holds;
# decision 3, 6, 9, ... gets the first legal action (the one good answer).
# Usage: croupier_garbage.sh MARKER
while IFS= read -r line; do
  case $line in
    '{"type":"act"'*)
      d=$(printf '%s\n' "$line" | sed -n 's/.*"decision":\([0-9]*\).*/\1/p')
      case $((d % 3)) in
        1) printf '{"action": this is not json \377\376\n' ;;
        2) printf '{"action":"99","decision":%s}\n' "$d" ;;
        0)
          legal=$(printf '%s\n' "$line" | sed -n 's/.*"legal":\[\([^]]*\)\].*/\1/p')
          printf '{"action":%s,"decision":%s}\n' "${legal%%,*}" "$d"
          ;;
      esac
      ;;
  esac
done
