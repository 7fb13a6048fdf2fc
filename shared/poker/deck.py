"""The secure deck (RULES.md §1) and the dealer's commitment to it.

A fresh deck is shuffled for every hand by the operating system's CSPRNG (:func:`entropy`, the
one source, which refuses when it fails or returns short), with an unbiased Fisher-Yates
shuffle: ``randbelow`` draws by rejection, so there is no modulo bias, and nothing is ever
seeded from the time. This module is used by the dealer service only:
decisions in the core never draw randomness, they receive the dealt cards.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence

from .cards import DECK, Card


class EntropyUnavailable(RuntimeError):
    """The system's random source failed: the dealer must refuse to deal."""


#: the one source of the secrets the tables rely on (decks, salts, hand keys, nonces, event
#: ids): the operating system's CSPRNG; tests put a failing source here
_source: Callable[[int], bytes] = os.urandom


def entropy(n: int) -> bytes:
    """``n`` bytes of the system's CSPRNG; EntropyUnavailable if it fails or returns fewer
    (the caller decides nothing and appends nothing: UNAVAILABLE, shared/infra/rpc.py)."""
    try:
        data = _source(n)
    except (OSError, NotImplementedError) as exc:
        raise EntropyUnavailable(f"the random source failed: {exc}") from exc
    if len(data) != n:
        raise EntropyUnavailable(f"the random source returned {len(data)} of {n} bytes")
    return data


def randbelow(n: int) -> int:
    """A uniform integer in [0, n) from :func:`entropy`, by rejection (no modulo bias)."""
    if n <= 0:
        raise ValueError("randbelow needs a positive bound")
    bits = (n - 1).bit_length()
    size = (bits + 7) // 8
    while True:
        value = int.from_bytes(entropy(size), "big") >> (8 * size - bits) if bits else 0
        if value < n:
            return value


def shuffled(cards: Sequence[Card] = DECK,
             randbelow: Callable[[int], int] = randbelow) -> tuple[Card, ...]:
    """An unbiased Fisher-Yates shuffle of ``cards`` drawing from ``randbelow``."""
    deck = list(cards)
    for i in range(len(deck) - 1, 0, -1):
        j = randbelow(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def new_salt() -> str:
    return entropy(16).hex()


def commitment(deck: Sequence[Card], salt: str) -> str:
    """SHA-256 over the salt and the deck order: published before the first card is dealt,
    checked against the revealed deck and salt after the hand."""
    return hashlib.sha256(salt.encode() + b":" + bytes(map(int, deck))).hexdigest()
