"""The players' entropy (issue 29): a hand's deck derived from the server's seed and the seeds
the players revealed, so that a player can recompute the deck once the server's seed is
published and see that their seed was used.

**The algorithm** :data:`ALGORITHM` (``poker-shuffle/hmac-sha256-fy/v1``, named in each
``DeckCommitted`` that uses it). A byte stream is the concatenation, for ``counter`` = 0, 1,
2 ..., of

    HMAC-SHA256(key = server seed, msg = "poker-shuffle/v1" 0x0A "deck <index>" 0x0A
                                         <player seeds, sorted, 32 bytes each>
                                         <counter, 8 bytes big-endian>)

and an unbiased Fisher-Yates shuffle draws from it: for ``i`` from ``n - 1`` down to 1, a
draw takes the ``ceil(b / 8)`` next bytes (``b`` = bit length of ``i``), big-endian, keeps
their top ``b`` bits, and is rejected and drawn again when it is over ``i`` (at most half of
the draws are, since ``2**b <= 2 * i``); the card at ``i`` swaps with the card at the draw.
Every accepted draw is uniform over ``0..i``, so the shuffle is exactly uniform over the
orders of the deck as long as the stream looks random to whoever does not know the server
seed. ``index`` 0 is the hand's deck; a stud reshuffle (RULES §1) shuffles the cards to
reshuffle with index 1, 2 ...

The deck's commitment salt (shared/poker/deck.py) is :func:`deck_salt`, from the server seed
too: with the seed published, the commitment itself can be checked, not only the order.

**The seeds.** Every seed is 32 bytes (64 lowercase hex digits in events and requests); a
player commits to the SHA-256 of theirs (:func:`seed_digest`). The server's seed of hand
``N`` is HMAC-SHA256 under the table's own 32-byte master seed of
``poker-server-seed/v1|<table>|<N>`` (:func:`server_seed`): one secret per table, which the
dealer keeps, and which, published when the table has closed, gives the seed of every hand.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .cards import DECK, Card
from .deck import shuffled
from .events import DeckCommitted

ALGORITHM = "poker-shuffle/hmac-sha256-fy/v1"
SEED_BYTES = 32
_HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, slots=True)
class Entropy:
    """What a ``DeckCommitted`` says of the seeds its deck came from (all empty: the CSPRNG
    alone, shared/infra/randomness.py)."""

    shuffle: str = ""
    seed_sha256: str = ""
    player_seeds: tuple[str, ...] = ()
    next_seed_sha256: str = ""

    @classmethod
    def of(cls, e: DeckCommitted) -> Entropy:
        """The entropy fields of a ``DeckCommitted``."""
        return cls(e.shuffle, e.seed_sha256, tuple(e.player_seeds), e.next_seed_sha256)


NO_ENTROPY = Entropy()


def is_seed_hex(text: object) -> bool:
    """Whether ``text`` is a seed or a digest as events hold them: 64 lowercase hex digits."""
    return isinstance(text, str) and _HEX64.fullmatch(text) is not None


def seed_digest(seed_hex: str) -> str:
    """The commitment to a seed: SHA-256 of its 32 bytes, in hex."""
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()


def server_seed(master: bytes, table_id: str, hand_no: int) -> str:
    """The server's seed of hand ``hand_no`` of the table whose master seed is ``master``."""
    return hmac.digest(master, f"poker-server-seed/v1|{table_id}|{hand_no}".encode(),
                       "sha256").hex()


def _blocks(seed_hex: str, player_seeds: Sequence[str], index: int) -> Iterator[bytes]:
    key = bytes.fromhex(seed_hex)
    context = (f"poker-shuffle/v1\ndeck {index}\n".encode()
               + b"".join(bytes.fromhex(s) for s in sorted(player_seeds)))
    counter = 0
    while True:
        yield hmac.digest(key, context + counter.to_bytes(8, "big"), "sha256")
        counter += 1


def uniform_below(n: int, take: Callable[[int], int]) -> int:
    """A uniform integer in [0, n) from ``take(size)`` (the next ``size`` bytes of a random
    stream, as a big-endian integer), by rejection: the top bits of a draw, drawn again when
    over the bound, so there is no modulo bias and under half the draws are rejected. The
    one rule for both the system's random source (shared/infra/randomness.py) and the
    derived shuffle."""
    if n <= 0:
        raise ValueError("randbelow needs a positive bound")
    bits = (n - 1).bit_length()
    size = (bits + 7) // 8
    while True:
        value = take(size) >> (8 * size - bits) if bits else 0
        if value < n:
            return value


def drawer(seed_hex: str, player_seeds: Sequence[str], index: int = 0) -> Callable[[int], int]:
    """``randbelow`` over the stream of the seeds (:func:`draws_from`)."""
    return draws_from(_blocks(seed_hex, player_seeds, index))


def draws_from(blocks: Iterator[bytes]) -> Callable[[int], int]:
    """``randbelow(n)`` over a byte stream given in blocks: a uniform integer in [0, n), by
    rejection. A draw reads ``ceil(b / 8)`` bytes (``b`` = the bit length of ``n - 1``),
    keeps the top ``b`` bits, and tries again when they are ``n`` or more: each value below
    ``n`` comes from as many byte strings as every other, and a try fails less than half the
    time."""
    buf, pos = b"", 0

    def take(size: int) -> int:
        nonlocal buf, pos
        while pos + size > len(buf):
            buf, pos = buf[pos:] + next(blocks), 0
        pos += size
        return int.from_bytes(buf[pos - size:pos], "big")

    def randbelow(n: int) -> int:
        return uniform_below(n, take)

    return randbelow


def derive_deck(seed_hex: str, player_seeds: Sequence[str], cards: Sequence[Card] = DECK,
                index: int = 0) -> tuple[Card, ...]:
    """The deck ``cards`` shuffled by :data:`ALGORITHM` from the server seed and the players'
    seeds (their order does not matter: they are sorted)."""
    for s in (seed_hex, *player_seeds):
        if not is_seed_hex(s):
            raise ValueError(f"a seed is 64 lowercase hex digits, not {s!r}")
    return shuffled(cards, drawer(seed_hex, player_seeds, index))


def deck_salt(seed_hex: str, index: int = 0) -> str:
    """The commitment salt of deck ``index`` of a hand shuffled from ``seed_hex``."""
    return hmac.digest(bytes.fromhex(seed_hex), f"poker-shuffle/v1|salt|{index}".encode(),
                       "sha256")[:16].hex()
