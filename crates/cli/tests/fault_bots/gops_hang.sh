#!/bin/sh
# GOPS bot that reads its input but never answers, and never exits on its own.
# Usage: gops_hang.sh MARKER
while IFS= read -r line; do
  :
done
# Input closed: hang on anyway until killed.
while :; do
  sleep 1
done
