#!/usr/bin/env python3
"""Postman's example AI (examples/bots/loveletter/postman_bot.py) behind a
recorder: every line this process receives is appended to LOG exactly as
read (the repr of its bytes), after a line `start`. With `--chatter` it also
writes a line that is neither `play` nor `forfeit` before each answer; with
`--mute` that line is all it writes.

Usage: postman_logger.py LOG [--chatter | --mute]
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "..", "examples", "bots", "loveletter"))
import postman_bot  # noqa: E402


def main():
    log = open(sys.argv[1], "ab", buffering=0)
    chatter = "--chatter" in sys.argv[2:]
    mute = "--mute" in sys.argv[2:]
    log.write(b"start\n")
    game = postman_bot.Round()
    for raw in sys.stdin.buffer:
        log.write(repr(raw).encode() + b"\n")
        answer = game.handle(raw.decode())
        if answer is None:
            continue
        if answer.startswith("play") and (chatter or mute):
            print("thinking hard", flush=True)
            if mute:
                continue
        print(answer, flush=True)


if __name__ == "__main__":
    main()
