#!/usr/bin/env python3
"""Bids the card of the prize's value."""
import gops_io

gops_io.run(lambda p, hand, mine, theirs, prizes: p)
