#!/usr/bin/env python3
"""Answers each prize from a prize-to-card table drawn at random at start."""
import random

import gops_io

TABLE = list(range(1, 14))
random.shuffle(TABLE)
gops_io.run(lambda p, hand, mine, theirs, prizes: TABLE[(p - 1) % len(TABLE)])
