#!/usr/bin/env python3
"""Bids the prize's value half of the time, else a random card."""
import random

import gops_io

gops_io.run(lambda p, hand, mine, theirs, prizes: p if random.random() < 0.5 else random.choice(hand))
