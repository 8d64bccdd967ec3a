#!/usr/bin/env python3
"""Bids the opponent's last bid (the prize's value first)."""
import gops_io

gops_io.run(lambda p, hand, mine, theirs, prizes: theirs[-1] if theirs else p)
