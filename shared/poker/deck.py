"""The secure deck (RULES.md §1) and the dealer's commitment to it.

A fresh deck is shuffled for every hand with an unbiased Fisher-Yates shuffle whose draws are
uniform by rejection (no modulo bias), from the system's CSPRNG (shared/infra/randomness.py,
the one source, which refuses when it fails or returns short) or from the server's and the
players' seeds (shared/poker/shuffle.py). Nothing is ever seeded from the time; decisions in
the core never draw randomness, they receive the dealt cards.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

from .cards import Card


def shuffled(cards: Sequence[Card], randbelow: Callable[[int], int]) -> tuple[Card, ...]:
    """An unbiased Fisher-Yates shuffle of ``cards`` drawing from ``randbelow`` (a uniform
    integer in [0, n) for each n: the system's CSPRNG, shared/infra/randomness.py, or the
    seeds' stream, shared/poker/shuffle.py)."""
    deck = list(cards)
    for i in range(len(deck) - 1, 0, -1):
        j = randbelow(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def commitment(deck: Sequence[Card], salt: str) -> str:
    """SHA-256 over the salt and the deck order: published before the first card is dealt,
    checked against the revealed deck and salt after the hand."""
    return hashlib.sha256(salt.encode() + b":" + bytes(map(int, deck))).hexdigest()
