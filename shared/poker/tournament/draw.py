"""Committed randomness for the director's random choices (GLI-19 §5.3: seating is random and
can be re-checked).

Each draw has a seed of 32 random bytes that the director makes and keeps before it appends
the seed's SHA-256 (``SeedCommitted``); the decision that uses it appends the seed itself
(revealed), and every choice is a function of the seed alone: an auditor checks that the seed
matches its commitment and re-draws. The director cannot pick a seed after seeing what it
decides, since the commitment is in the log before the players and tables it draws over are
final (the draw follows the commitment).
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from typing import TypeVar

from ..errors import InvalidEvent

T = TypeVar("T")
SEED_BYTES = 32


def commitment(seed: bytes) -> str:
    """The SHA-256 of a seed, in lowercase hex: what the log holds before the draw."""
    return hashlib.sha256(seed).hexdigest()


def check_reveal(seed: bytes, committed: str) -> None:
    """InvalidEvent unless ``seed`` is the one committed."""
    if len(seed) != SEED_BYTES or not hmac.compare_digest(commitment(seed), committed):
        raise InvalidEvent("the revealed seed does not match its commitment")


class Stream:
    """Uniform integers from a seed: HMAC-SHA256(seed, label ‖ counter) blocks, rejection
    sampled so that every value below the bound is equally likely."""

    def __init__(self, seed: bytes, label: str) -> None:
        self._seed, self._label, self._counter = seed, label.encode(), 0

    def below(self, bound: int) -> int:
        """A uniform integer in [0, bound)."""
        if bound < 1:
            raise ValueError("bound >= 1")
        limit = (1 << 64) - (1 << 64) % bound
        while True:
            block = hmac.new(self._seed, self._label + self._counter.to_bytes(8, "big"),
                             hashlib.sha256).digest()
            self._counter += 1
            x = int.from_bytes(block[:8], "big")
            if x < limit:
                return x % bound

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """``items`` in a uniformly random order (Fisher–Yates)."""
        out = list(items)
        for i in range(len(out) - 1, 0, -1):
            j = self.below(i + 1)
            out[i], out[j] = out[j], out[i]
        return out

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]
