"""The GOPS quiz protocol for the sparring bots (Python 3, standard library).

Per turn the runner writes a line with the prize ("Competition card:  7"),
the bot answers its bid, and the runner writes the opponent's bid
("Opponent's bid:  5"). Like the quiz's own bots, only the first number of
each line is read. `run(choose)` keeps the hands and calls
`choose(prize, hand, my_bids, their_bids, prizes)` for every bid; a card no
longer held is replaced by the nearest one held (the higher on a tie).
"""
import re
import sys


def nearest(hand, target):
    return min(hand, key=lambda c: (abs(c - target), -c))


def run(choose, cards=13):
    hand = list(range(1, cards + 1))
    mine, theirs, prizes = [], [], []
    want_prize = True
    for line in sys.stdin:
        m = re.search(r"\d+", line)
        if not m:
            continue
        value = int(m.group())
        if want_prize:
            prizes.append(value)
            bid = choose(value, hand, mine, theirs, prizes)
            if bid not in hand:
                bid = nearest(hand, bid)
            hand.remove(bid)
            mine.append(bid)
            print(bid, flush=True)
        else:
            theirs.append(value)
        want_prize = not want_prize
