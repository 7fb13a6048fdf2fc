"""The system's random source (RULES.md §1, threat 21): the one place the tables' secrets come
from (decks, salts, seeds, hand keys, nonces, event ids).

:func:`entropy` reads the operating system's CSPRNG and refuses when it fails or returns short
(:class:`EntropyUnavailable`: the caller decides nothing and appends nothing, UNAVAILABLE,
shared/infra/rpc.py). :func:`randbelow` draws from it by rejection (no modulo bias), and
:func:`secure_shuffle` is the unbiased Fisher-Yates of shared/poker/deck.py over it. Nothing is
ever seeded from the time. The rules core (shared/poker) draws no randomness: it is given the
cards, or the seeds (shared/poker/shuffle.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from shared.poker.cards import DECK, Card
from shared.poker.deck import shuffled
from shared.poker.shuffle import uniform_below


class EntropyUnavailable(RuntimeError):
    """The system's random source failed: the dealer must refuse to deal."""


#: the one source of the secrets the tables rely on: the operating system's CSPRNG; tests put
#: a failing source here
_source: Callable[[int], bytes] = os.urandom


def entropy(n: int) -> bytes:
    """``n`` bytes of the system's CSPRNG; EntropyUnavailable if it fails or returns fewer."""
    try:
        data = _source(n)
    except (OSError, NotImplementedError) as exc:
        raise EntropyUnavailable(f"the random source failed: {exc}") from exc
    if len(data) != n:
        raise EntropyUnavailable(f"the random source returned {len(data)} of {n} bytes")
    return data


def randbelow(n: int) -> int:
    """A uniform integer in [0, n) from :func:`entropy`, by rejection (no modulo bias:
    shared/poker/shuffle.py ``uniform_below``)."""
    return uniform_below(n, lambda size: int.from_bytes(entropy(size), "big"))


def secure_shuffle(cards: Sequence[Card] = DECK) -> tuple[Card, ...]:
    """``cards`` shuffled by the unbiased Fisher-Yates over the system's CSPRNG."""
    return shuffled(cards, randbelow)


def new_salt() -> str:
    return entropy(16).hex()
