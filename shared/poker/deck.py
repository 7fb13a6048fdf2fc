"""The secure deck (RULES.md §1) and the dealer's commitment to it.

A fresh deck is shuffled for every hand by the operating system's CSPRNG (``secrets``), with
an unbiased Fisher-Yates shuffle: ``randbelow`` draws by rejection, so there is no modulo bias,
and nothing is ever seeded from the time. This module is used by the dealer service only:
decisions in the core never draw randomness, they receive the dealt cards.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable, Sequence

from .cards import DECK, Card


class EntropyUnavailable(RuntimeError):
    """The system's random source failed: the dealer must refuse to deal."""


def shuffled(cards: Sequence[Card] = DECK,
             randbelow: Callable[[int], int] = secrets.randbelow) -> tuple[Card, ...]:
    """An unbiased Fisher-Yates shuffle of ``cards`` drawing from ``randbelow``."""
    deck = list(cards)
    try:
        for i in range(len(deck) - 1, 0, -1):
            j = randbelow(i + 1)
            deck[i], deck[j] = deck[j], deck[i]
    except (OSError, NotImplementedError) as exc:
        raise EntropyUnavailable(f"the random source failed: {exc}") from exc
    return tuple(deck)


def new_salt() -> str:
    try:
        return secrets.token_hex(16)
    except (OSError, NotImplementedError) as exc:
        raise EntropyUnavailable(f"the random source failed: {exc}") from exc


def commitment(deck: Sequence[Card], salt: str) -> str:
    """SHA-256 over the salt and the deck order: published before the first card is dealt,
    checked against the revealed deck and salt after the hand."""
    return hashlib.sha256(salt.encode() + b":" + bytes(map(int, deck))).hexdigest()
