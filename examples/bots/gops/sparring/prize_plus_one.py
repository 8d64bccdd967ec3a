#!/usr/bin/env python3
"""Bids one above the prize's value."""
import gops_io

gops_io.run(lambda p, hand, mine, theirs, prizes: p + 1)
