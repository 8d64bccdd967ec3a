#!/bin/sh
# A GOPS bot that first tries to break out of its sandbox, then plays well.
# When the attempt fails (it is contained) the bot says so on stderr and
# exits 3, so the breach is recorded as its fault; when the attempt succeeds
# it plays on without a fault, and the test sees the breach.
# Usage: hostile.sh MARKER ATTEMPT [ARG]
#   connect PORT   open a TCP connection to 127.0.0.1:PORT
#   read file:FILE read a file outside its folder
#   write FILE     write a file outside its temp folder
#   fork           start 200 processes (the limit is 64)
#   memory         allocate 1 GiB (the limit is 512 MiB)
#   daemon         start a setsid daemon, then exit
#   ignore-term    ignore SIGTERM and never answer
#   long-line      write a 10 MB line, then play
#   descriptor N   use descriptor N that croupier's own parent left open
contained() {
  echo "contained: $*" >&2
  exit 3
}
case $2 in
  connect)
    python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2)' "$3" 2>/dev/null ||
      contained "no network"
    ;;
  read)
    # The path comes as file:PATH, so that croupier does not take it for
    # one of the bot's own files (and show its folder to the bot).
    cat "${3#file:}" >/dev/null 2>&1 || contained "cannot read $3"
    ;;
  write)
    (echo breach >"$3") 2>/dev/null || contained "cannot write $3"
    ;;
  fork)
    i=0
    while [ $i -lt 200 ]; do
      sleep 300 &
      i=$((i + 1))
    done
    ;;
  memory)
    python3 -c 'x = bytearray(1 << 30)' 2>/dev/null || contained "out of memory"
    ;;
  daemon)
    setsid sh -c 'while :; do sleep 1; done' "$1-daemon" </dev/null >/dev/null 2>&1 &
    sleep 0.2
    contained "left a daemon behind"
    ;;
  ignore-term)
    trap '' TERM
    while :; do
      sleep 1
    done
    ;;
  long-line)
    head -c 10000000 /dev/zero | tr '\000' x
    echo
    ;;
  descriptor)
    # The test starts croupier with descriptor N open on a file: a bot
    # that finds it there was handed what croupier's parent left open.
    [ -e "/proc/self/fd/$3" ] || contained "no descriptor $3"
    ;;
esac
n=0
while IFS= read -r line; do
  case $line in
    "Competition card:"*)
      n=$((n + 1))
      echo "$n"
      ;;
  esac
done
