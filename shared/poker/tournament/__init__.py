"""Tournaments, pure: structures, payouts, committed draws, balancing and the director's fold.

No I/O, no clock, no random source: the director passes the time, the tables' seatings and the
revealed seed of each draw in, and the events record what was decided, so an auditor re-decides
every draw, move, level and prize from the log (issue 30).

- :mod:`.structure`: levels, breaks, stacks, buy-in and fee, late registration, re-entries.
- :mod:`.payouts`: payout tables by field size, the prize pool with its guarantee.
- :mod:`.draw`: committed randomness (a seed's SHA-256 in the log before the draw it decides).
- :mod:`.balance`: the first seating, breaking tables, balancing (TDA, PokerStars).
- :mod:`.events`, :mod:`.state`, :mod:`.fold`: the director's log and its fold.
- :mod:`.decide`: the director's decisions (events, or ``IllegalAction``).
"""
