#!/usr/bin/env python3
"""A bot for any game of the Croupier protocol (croupier/1) that plays a
random legal action.

Croupier writes one JSON object per line: `start`, then `event`s and `act`s,
then `end`. For every `act` the bot answers one line,
`{"action": <one entry of "legal">, "decision": <the act's decision>}`.
It never needs to know the game's rules: the `legal` list holds every action
it may take.

    croupier play skullwhist "python3 examples/bots/croupier/random_bot.py" builtin:random
    croupier play goofspiel "python3 examples/bots/croupier/random_bot.py@croupier" builtin:random
    croupier play loveletter "python3 examples/bots/croupier/random_bot.py@croupier" builtin:random

Python 3 standard library only. See docs/protocol/croupier.md.
"""

import json
import random
import sys


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "start":
            # {"protocol": "croupier/1", "game", "variant", "seat", "seats"}
            print(
                f"random_bot.py: {msg['game']}, seat {msg['seat']} of {msg['seats']}",
                file=sys.stderr,
            )
        elif kind == "act":
            # {"decision", "observation", "legal", "deadline_ms"}
            action = random.choice(msg["legal"])
            answer = {"action": action, "decision": msg["decision"]}
            # One line, flushed at once: Croupier is waiting for it.
            print(json.dumps(answer), flush=True)
        elif kind == "end":
            # {"outcome": {"scores", "ranks", ["forfeited_by"]}}
            break
        # "event" messages ({"event": {...}}) need no answer.


if __name__ == "__main__":
    main()
