#!/usr/bin/env python3
"""A Love Letter AI that makes a random *legal* play.

It speaks the HackSoc Love Letter manager's protocol (Croupier's
`loveletter` dialect, seed 001): one line per message, players numbered
1..n, card names in lower case. The AI is started anew for every round and
stopped (SIGTERM) when it is out or the round ends. It also speaks the
protocol of the manager's later revision, Postman (`loveletter-postman`:
`ident`, `players`, `start`, players numbered from 0, capitalised card
names), which it recognises by its first line.

    croupier play loveletter "python3 examples/bots/loveletter/random_bot.py" builtin:random builtin:random
    croupier play loveletter "python3 examples/bots/loveletter/random_bot.py@loveletter-postman" builtin:random

It aims a card at a player the card can affect when there is one (not out,
not protected by a Priestess). When there is none, it names a protected
player: the card is played without effect, which both managers accept. So it
never needs to know how many players there are, which the classic protocol
never says (`--players N` tells it anyway; it also learns it as the turn
order goes round).

It answers every draw on its turn, even one that its view says the Minister
punishes: a manager that agrees stops it without reading the answer.

Python 3 standard library only.
"""

import argparse
import random
import sys

VALUES = {
    "soldier": 1,
    "clown": 2,
    "knight": 3,
    "priestess": 4,
    "wizard": 5,
    "general": 6,
    "minister": 7,
    "princess": 8,
}
# Cards that name another player (the Wizard may also name its own player).
TARGETED = {"soldier", "clown", "knight", "general", "wizard"}
# What a Soldier may name: any card but the Soldier.
GUESSES = [c for c in VALUES if c != "soldier"]
MAX_PLAYERS = 4


class Table:
    """What this AI knows of the round, from the manager's lines."""

    def __init__(self, players=None):
        self.postman = False  # which protocol: set by the first line
        self.me = None  # my player number, as the manager writes it
        self.players = players  # number of players, once known
        self.new_round()

    def new_round(self):
        self.hand = []  # my cards (one, or two on my turn)
        self.out = set()  # players out of this round
        self.protected = set()  # players protected by a Priestess
        self.seen = set()  # player numbers met in any message this round
        self.last_turn = None  # the player of the previous `player` line
        self.my_turn = False  # the previous line was my own `player` line

    # Player numbers: 1..n in the classic protocol, 0..n-1 in postman.
    def low(self):
        return 0 if self.postman else 1

    def known_players(self):
        """Players certainly at the table."""
        if self.players is not None:
            return list(range(self.low(), self.low() + self.players))
        # Classic, count not known yet: players 1..me exist, at least two
        # players play, and so does everyone we have heard of.
        top = max([self.me, 2] + list(self.seen))
        return list(range(1, top + 1))

    def note(self, *numbers):
        """Remembers player numbers met in a message."""
        for n in numbers:
            self.seen.add(n)
        if self.players is None and self.seen and max(self.seen) == MAX_PLAYERS:
            self.players = MAX_PLAYERS

    def card(self, name):
        return name.lower()

    def name(self, card):
        """A card name as this protocol writes it."""
        return card.capitalize() if self.postman else card

    # --- Reading the manager's lines -------------------------------------

    def handle(self, line):
        """Reads one line; returns the line to answer with, if any."""
        words = line.split()
        if not words:
            return None
        was_my_turn, self.my_turn = self.my_turn, False
        if self.me is None:
            if words[0] == "ident":  # postman: `ident <i>`, answer a name
                self.postman = True
                self.me = int(words[1])
                return "random_bot.py"
            self.me = int(words[0])  # classic: the bare player number
            return None
        kind, args = words[0], words[1:]
        if kind == "players":  # postman: `players <n>`
            self.players = int(args[0])
        elif kind == "start":  # postman: a round begins, `start <first>`
            self.new_round()
        elif kind == "player":  # `player <n>`: n's turn begins
            n = int(args[0])
            self.note(n)
            # The turn order wrapped around: everyone at the table has now
            # either had a turn or been named (put out) in a message.
            if self.players is None and self.last_turn is not None and n <= self.last_turn:
                self.players = max(self.seen | {self.me})
            self.last_turn = n
            self.protected.discard(n)  # protection lasts until one's next turn
            self.my_turn = n == self.me
        elif kind == "draw":  # `draw <card>`: into my hand
            self.hand.append(self.card(args[0]))
            if was_my_turn:
                return self.choose()
        elif kind == "played":  # `played <a> <card> [<b>] [<guess>]`
            a, card = int(args[0]), self.card(args[1])
            self.note(a, *[int(b) for b in args[2:3]])
            if a == self.me and card in self.hand:
                self.hand.remove(card)
            if card == "priestess":
                self.protected.add(a)
        elif kind == "protected":  # postman: the card just played did nothing to n
            pass
        elif kind == "swap":  # `swap <card>`: a General gave me this card
            self.hand = [self.card(args[0])]
        elif kind == "reveal":  # `reveal <n> <card>`: I see n's card
            self.note(int(args[0]))
        elif kind == "discard":  # `discard <n> <card>`: a Wizard made n discard
            n, card = int(args[0]), self.card(args[1])
            self.note(n)
            if n == self.me and card in self.hand:
                self.hand.remove(card)
        elif kind == "out":  # `out <n> [<cards>]`
            n = int(args[0])
            self.note(n)
            self.out.add(n)
            self.protected.discard(n)
            if n == self.me:
                sys.exit(0)  # the manager stops us anyway
        return None

    # --- Choosing a play -------------------------------------------------

    def targets(self, card):
        """Players `card` can affect, among those known to exist. (Under
        Postman's rules a card aimed at oneself does nothing, the Wizard's
        included.)"""
        return [
            p
            for p in self.known_players()
            if p not in self.out
            and p not in self.protected
            and (p != self.me or (card == "wizard" and not self.postman))
        ]

    def harmless(self):
        """Players a card may name without effect, when it can affect nobody:
        the protected ones still in the round. Postman's rules also take any
        player, itself included, but a table that mixes dialects plays the
        standard rules, where a card names only players in the round, and
        its own player only with the Wizard. If every other player it knows
        of is out, there is one it has not heard of yet, or the round would
        be over: the next number (classic), or any player (Postman)."""
        others = sorted(self.protected - {self.me})  # `out` leaves `protected`
        if self.postman:
            return others or self.known_players()
        return others or [max(self.known_players()) + 1]

    def plays(self, card):
        """Every play of `card` that is legal whatever the number of players."""
        if card not in TARGETED:
            return [f"play {self.name(card)}"]
        targets = self.targets(card) or self.harmless()
        if card == "soldier":
            return [f"play {self.name(card)} {t} {self.name(g)}" for t in targets for g in GUESSES]
        return [f"play {self.name(card)} {t}" for t in targets]

    def choose(self):
        options = [p for card in sorted(set(self.hand)) for p in self.plays(card)]
        return random.choice(options)


def main():
    parser = argparse.ArgumentParser(description="A random legal Love Letter AI.")
    parser.add_argument(
        "--players", type=int, help="number of players (the classic protocol does not say)"
    )
    table = Table(parser.parse_args().players)
    for line in sys.stdin:
        answer = table.handle(line)
        if answer is not None:
            print(answer, flush=True)  # flush: the manager is waiting


if __name__ == "__main__":
    main()
