"""Cards of the one 52-card deck.

A card is a small int (fast to hash, compare and look up in the evaluator's tables) that prints
as ``"Ah"``. ``card = rank_index * 4 + suit_index`` where rank_index 0..12 is 2..A and
suit_index is clubs 0, diamonds 1, hearts 2, spades 3. Suits never rank hands; where the
rules need a suit order (stud bring-in, stud hi/lo odd chips) it comes from the table option
``suit_order`` through :func:`suit_rank`.

``UNKNOWN_CARD`` (``"??"``) stands for a card that was dealt but is not known to the reader:
a hand history that did not record it, or a redacted view. It is never evaluated.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "cdhs"


class Card(int):
    """One card; an int 0..51 (52 is the unknown card)."""

    __slots__ = ()

    @property
    def rank(self) -> int:
        """2..14 (ace is 14)."""
        return (self >> 2) + 2

    @property
    def suit(self) -> int:
        """0 clubs, 1 diamonds, 2 hearts, 3 spades."""
        return self & 3

    @property
    def known(self) -> bool:
        return self != 52

    def __str__(self) -> str:
        if self == 52:
            return "??"
        return RANK_CHARS[self >> 2] + SUIT_CHARS[self & 3]

    def __repr__(self) -> str:
        return f"Card('{self}')"


#: All 52 cards, by index.
DECK: tuple[Card, ...] = tuple(Card(i) for i in range(52))
UNKNOWN_CARD = Card(52)


class InvalidCard(ValueError):
    """A card string that does not name a card."""


def card(text: str) -> Card:
    """Parse ``"Ah"``, ``"td"`` or ``"10s"`` (``"??"`` is the unknown card)."""
    t = text.strip()
    if t == "??":
        return UNKNOWN_CARD
    if len(t) == 3 and t[:2] == "10":
        t = "T" + t[2]
    if len(t) != 2:
        raise InvalidCard(f"{text!r} is not a card (expected rank and suit, e.g. 'Ah', 'Td')")
    r = RANK_CHARS.find(t[0].upper())
    s = SUIT_CHARS.find(t[1].lower())
    if r < 0 or s < 0:
        raise InvalidCard(f"{text!r} is not a card (ranks 2-9 T J Q K A, suits c d h s)")
    return DECK[r * 4 + s]


def cards(text: str) -> tuple[Card, ...]:
    """Parse a run of cards: ``"AhKd"``, ``"Ah Kd"``, ``"AhKs??"``."""
    t = "".join(text.split()).replace("10", "T")
    if len(t) % 2:
        raise InvalidCard(f"{text!r} is not a list of cards")
    return tuple(card(t[i : i + 2]) for i in range(0, len(t), 2))


def cards_str(cs: Iterable[Card]) -> str:
    return "".join(str(c) for c in cs)


class SuitOrder(enum.Enum):
    """Table option ``suit_order``: which suit ranks highest where suits matter at all.

    ``SOURCES`` (default): source 001's order, clubs > diamonds > hearts > spades (2s is the
    lowest card by suit). ``BRIDGE``: spades > hearts > diamonds > clubs (2c lowest), what
    most rooms and PHH hand histories use.
    """

    SOURCES = "sources"
    BRIDGE = "bridge"


# suit_index -> strength (higher is stronger)
_SUIT_RANK = {
    SuitOrder.SOURCES: (3, 2, 1, 0),  # clubs highest, spades lowest
    SuitOrder.BRIDGE: (0, 1, 2, 3),  # spades highest, clubs lowest
}


def suit_rank(c: Card, order: SuitOrder) -> int:
    """Strength of a card's suit under ``order`` (0 weakest .. 3 strongest)."""
    return _SUIT_RANK[order][c & 3]


def card_strength(c: Card, order: SuitOrder, ace_low: bool = False) -> tuple[int, int]:
    """Order cards by rank, then suit: the key for "highest card by suit" and bring-in ties.

    ``ace_low`` counts the ace as 1 (stud hi/lo odd chip to the lowest low card).
    """
    r = c.rank
    if ace_low and r == 14:
        r = 1
    return (r, _SUIT_RANK[order][c & 3])
