#!/bin/sh
# GOPS bot that dies before reading anything.
# Usage: gops_crash_at_start.sh MARKER
echo "crashing at start" >&2
exit 3
