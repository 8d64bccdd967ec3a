#!/usr/bin/env python3
"""A GOPS bot that bids a random card it still holds.

It speaks the GOPS quiz runner's protocol (Croupier's `gops` dialect):

    runner -> bot   Competition card:  <v>    (two spaces after the colon)
    bot -> runner   <bid>                     (one line holding a number)
    runner -> bot   Opponent's bid:  <v>

13 turns, one line each way per turn. Run it with

    croupier play goofspiel "python3 examples/bots/gops/random_bot.py" builtin:random

An optional argument gives the number of cards per hand (13 unless told,
as in the quiz): `random_bot.py 5` for `--variant "gops rounds=5"`.
Python 3 standard library only.
"""

import random
import sys


def main():
    cards = int(sys.argv[1]) if len(sys.argv) > 1 else 13
    hand = list(range(1, cards + 1))
    for line in sys.stdin:
        if line.startswith("Competition card:"):
            if not hand:  # a new round of a multi-round variant
                hand = list(range(1, cards + 1))
            bid = random.choice(hand)
            hand.remove(bid)
            # Flush at once: the runner is waiting for this line.
            print(bid, flush=True)
        elif line.startswith("Opponent's bid:"):
            # A random bot has no use for it: int(line.split()[-1]) reads it.
            pass
    # End of input: the match is over.


if __name__ == "__main__":
    main()
