#!/usr/bin/env python3
"""A Love Letter AI that makes a random *legal* play.

It speaks the HackSoc Love Letter manager's protocol (Croupier's
`loveletter` dialect, seed 001): one line per message, players numbered
1..n, card names in lower case. The AI is started anew for every round and
stopped (SIGTERM) when it is out or the round ends. It also understands the
later "postman" revision (`loveletter-postman` dialect: `ident`, `players`,
`start`, `protected`, players numbered from 0, capitalised card names, one
process per match), which it recognises by its first line.

    croupier play loveletter "python3 examples/bots/loveletter/random_bot.py" builtin:random builtin:random

The classic protocol never says how many players there are. The AI learns it
as the round goes (every player who exists either takes a turn or is named
before the turn order wraps around), and `--players N` tells it outright:

    croupier play loveletter "python3 examples/bots/loveletter/random_bot.py --players 3" builtin:random builtin:random

Without `--players`, one situation cannot be decided from the messages: it is
this AI's turn before every player has been seen, every player it knows of is
out or protected, and both its cards need a target. It then guesses that there
are no other players and plays a card without target, which is right with two
players and may be an illegal play (out of the round) with three or four; see
README.md.

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
            if was_my_turn and not self.minister_strikes():
                return self.choose()
        elif kind == "played":  # `played <a> <card> [<b>] [<guess>]`
            a, card = int(args[0]), self.card(args[1])
            self.note(a, *[int(b) for b in args[2:3]])
            if a == self.me and card in self.hand:
                self.hand.remove(card)
            if card == "priestess":
                self.protected.add(a)
        elif kind == "protected":  # postman: `protected <n>`
            self.protected.add(int(args[0]))
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
                self.hand = []
                if not self.postman:
                    sys.exit(0)  # the manager stops us anyway
        return None

    def minister_strikes(self):
        """Minister with a card worth 5 or more: out before playing."""
        return "minister" in self.hand and sum(VALUES[c] for c in self.hand) >= 12

    # --- Choosing a play -------------------------------------------------

    def targets(self, card):
        """Players `card` may legally name, among those known to exist."""
        return [
            p
            for p in self.known_players()
            if p not in self.out
            and p not in self.protected
            and (p != self.me or card == "wizard")
        ]

    def plays(self, card):
        """Every play of `card` that is legal whatever the number of players."""
        if card not in TARGETED:
            return [f"play {self.name(card)}"]
        targets = self.targets(card)
        if targets and card == "soldier":
            return [f"play {self.name(card)} {t} {self.name(g)}" for t in targets for g in GUESSES]
        if targets:
            return [f"play {self.name(card)} {t}" for t in targets]
        if self.players is not None:
            # Nobody may be named: the card is played without a target.
            return [f"play {self.name(card)}"]
        return []  # cannot tell: there may be players we have not seen yet

    def choose(self):
        options = [p for card in sorted(set(self.hand)) for p in self.plays(card)]
        if options:
            return random.choice(options)
        # Both cards need a target, everyone we know of is out or protected,
        # and we have not seen the whole table. Guess that there is nobody
        # else (always right with two players): play a card without target.
        return f"play {self.name(random.choice(self.hand))}"


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
