#!/usr/bin/env python3
"""A Love Letter AI written from the competition's README alone, the way a
newcomer would: players numbered from 1, lower-case card names, no idea how
many players there are. On its turn it plays the lower of its two cards, at
"the other player": the next player after itself that it knows of and that
is not out (or a lower number: players 1 to its own exist). A Soldier names
the Princess. It
never thinks about the Priestess, which the README says makes the manager
ignore cards aimed at her player.

Used by the tests and the figures of issue 21; Python 3 standard library.
"""

import sys

VALUES = {"soldier": 1, "clown": 2, "knight": 3, "priestess": 4,
          "wizard": 5, "general": 6, "minister": 7, "princess": 8}
TARGETED = {"soldier", "clown", "knight", "wizard", "general"}


def main():
    me = None
    hand = []
    seen = set()
    out = set()
    my_turn = False
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if me is None:
            me = int(words[0])
            continue
        kind, args = words[0], words[1:]
        was_my_turn, my_turn = my_turn, False
        if kind == "player":
            seen.add(int(args[0]))
            my_turn = int(args[0]) == me
        elif kind == "draw":
            hand.append(args[0])
            if was_my_turn:
                print(play(me, hand, seen, out), flush=True)
        elif kind == "played":
            seen.add(int(args[0]))
            if int(args[0]) == me and args[1] in hand:
                hand.remove(args[1])
        elif kind == "swap":
            hand = [args[0]]
        elif kind == "discard":
            if int(args[0]) == me and args[1] in hand:
                hand.remove(args[1])
        elif kind == "out":
            out.add(int(args[0]))


def play(me, hand, seen, out):
    card = min(hand, key=lambda c: VALUES[c])
    if card not in TARGETED:
        return f"play {card}"
    # The next player it has heard of; else a lower number (players 1 to
    # its own number exist); else the next number (someone else is in).
    others = sorted(p for p in seen if p != me and p not in out)
    after = [p for p in others if p > me] + [p for p in others if p < me]
    lower = [p for p in range(1, me) if p not in out]
    other = (after or lower or [me + 1])[0]
    if card == "soldier":
        return f"play soldier {other} princess"
    return f"play {card} {other}"


if __name__ == "__main__":
    main()
