#!/bin/sh
# A bot that starts a daemon in a session of its own (setsid, so outside the
# bot's process group), then reads its input and never answers.
# Usage: daemon_bot.sh MARKER
# The daemon's command line holds "MARKER-daemon", the bot's holds MARKER.
setsid sh -c 'while :; do sleep 1; done' "$1-daemon" </dev/null >/dev/null 2>&1 &
while IFS= read -r line; do
  :
done
while :; do
  sleep 1
done
