#!/usr/bin/env python3
"""A Love Letter AI written the way AIs for Postman, the competition
manager's later revision, are written: it lives for one round.

Postman starts every AI afresh for every round, so this AI keeps no state
between rounds and never resets any: everything it knows comes from the
lines of its own round.

    ident <i>        its player number, 0-based; it answers with its name
    players <n>      how many play
    start <s>        who plays first
    draw <Card>      a card into its hand (its deal, its turn's draw, after
                     a Wizard made it discard)
    player <i>       i's turn; on its own turn a `draw` follows, and the AI
                     answers `play <Card> [<target>] [<Guess>]`
    played / swap / reveal / discard / out / protected / won_round / won_game

It plays one of its two cards at random. A card that takes a target names a
random player (itself included: Postman then plays it without effect), and
the Soldier names a random card (Postman allows naming the Soldier). Card
names are capitalised, as Postman writes and reads them.

    croupier play loveletter "python3 examples/bots/loveletter/postman_bot.py@loveletter-postman" builtin:random

Python 3 standard library only.
"""

import random
import sys

CARDS = ["Soldier", "Clown", "Knight", "Priestess", "Wizard", "General", "Minister", "Princess"]
TARGETED = {"Soldier", "Clown", "Knight", "Wizard", "General"}


class Round:
    """What the AI knows of its one round."""

    def __init__(self):
        self.me = None
        self.players = None
        self.hand = []
        self.my_turn = False

    def handle(self, line):
        """Reads one line; returns the line to answer with, if any."""
        words = line.split()
        if not words:
            return None
        kind, args = words[0], words[1:]
        was_my_turn, self.my_turn = self.my_turn, False
        if kind == "ident":
            self.me = int(args[0])
            return "postman_bot.py"
        if kind == "players":
            self.players = int(args[0])
        elif kind == "player":
            self.my_turn = int(args[0]) == self.me
        elif kind == "draw":
            self.hand.append(args[0])
            if was_my_turn:
                return choose(self.hand, self.players)
        elif kind in ("played", "discard") and int(args[0]) == self.me and args[1] in self.hand:
            self.hand.remove(args[1])
        elif kind == "swap":
            self.hand = [args[0]]
        return None


def main():
    game = Round()
    for line in sys.stdin:
        answer = game.handle(line)
        if answer is not None:
            print(answer, flush=True)
        if line.split()[:2] == ["out", str(game.me)]:
            return  # out of the round: Postman tells it nothing more


def choose(hand, players):
    """A random card of the two, on a random player."""
    card = random.choice(hand)
    if card not in TARGETED:
        return f"play {card}"
    target = random.randrange(players)
    if card == "Soldier":
        return f"play {card} {target} {random.choice(CARDS)}"
    return f"play {card} {target}"


if __name__ == "__main__":
    main()
