"""Hand values: high hands (hold'em, stud, Omaha) and 8-or-better lows.

Every value is a plain int and higher is better, so hands compare with ``<`` and ``==``.
Suits never rank hands: two hands whose best five cards have the same rank pattern get the
same value (board 5 5 7 T 8: 2-5 and 3-5 both play trip fives with T-8, and split).

High values are eval7's hand values (category in the bits from 24 up, ranks below; see
:func:`high_category`). ``high_value`` calls eval7 (Cython) directly. Omaha takes the best of
every two hole cards with every three board cards (60 for 4 + 5) from a list indexed by the
sum of rank weights, holding eval7's value for every five-card rank pattern, and checks the
few two-plus-three suited choices against a flush table; the tables are built at import
(about 65 ms, after eval7's own import) so Omaha and ``high_value`` give the same numbers.

Low values are ``255 - mask`` where bit ``r - 1`` of ``mask`` is set for each of the five
low ranks (ace = 1): comparing masks is comparing the lows highest card first. Tables by
the mask of distinct low ranks (and, for Omaha, hole mask by board mask) answer at once.

Cards are :class:`~shared.poker.cards.Card` ints 0..51, all distinct; the unknown card is
never evaluated.
"""

from __future__ import annotations

import enum
import warnings
from collections.abc import Iterator, Sequence
from itertools import combinations, combinations_with_replacement

with warnings.catch_warnings():  # eval7's range parser uses pyparsing names it deprecates
    warnings.simplefilter("ignore", DeprecationWarning)
    import eval7

from .cards import DECK, Card


class HandCategory(enum.IntEnum):
    HIGH_CARD = 0
    ONE_PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8


_C = HandCategory
_WHEEL = (3, 2, 1, 0, 12)  # 5-4-3-2-A as rank indexes, in the order it is read

# Rank weights (index 0..12 = 2..A) whose sums over any five ranks, at most four of a rank,
# are all distinct: each is the smallest that keeps them distinct given the ones before. The
# largest sum is 4 * 79415 + 43258 = 360918, so a sum can index a list.
_WEIGHTS = (0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415)

# Per-card tables, indexed by Card (0..51).
EVAL7_CARDS = tuple(eval7.Card(str(c)) for c in DECK)  # eval7 uses the same rank and suit order
_WEIGHT = tuple(_WEIGHTS[c >> 2] for c in range(52))
_SUIT_NIBBLE = tuple(1 << 4 * (c & 3) for c in range(52))  # summed: 4 bits of count per suit
# A low card's bit: ace -> bit 0, 2 -> bit 1 ... 8 -> bit 7; 9 and up -> 0.
_LOW_BIT = tuple(1 if c >> 2 == 12 else 1 << (c >> 2) + 1 if c >> 2 <= 6 else 0 for c in range(52))


# ---------------------------------------------------------------------------- high tables


def _pattern(ranks: Sequence[int], suited: bool) -> tuple[HandCategory, tuple[int, ...]]:
    """Category of five rank indexes and the ranks in reading order (the order they rank)."""
    counts = {r: ranks.count(r) for r in ranks}
    order = tuple(sorted(ranks, key=lambda r: (counts[r], r), reverse=True))
    wheel = set(ranks) == set(_WHEEL)
    if len(counts) == 5 and (wheel or order[0] - order[4] == 4):
        return (_C.STRAIGHT_FLUSH if suited else _C.STRAIGHT), _WHEEL if wheel else order
    if suited:
        return _C.FLUSH, order
    shape = tuple(sorted(counts.values(), reverse=True))
    cat = {
        (4, 1): _C.FOUR_OF_A_KIND,
        (3, 2): _C.FULL_HOUSE,
        (3, 1, 1): _C.THREE_OF_A_KIND,
        (2, 2, 1): _C.TWO_PAIR,
        (2, 1, 1, 1): _C.ONE_PAIR,
    }.get(shape, _C.HIGH_CARD)
    return cat, order


def _build_high_tables() -> tuple[list[int], dict[int, int],
                                  dict[int, tuple[HandCategory, tuple[int, ...]]]]:
    """All 7,462 five-card rank patterns, keyed by the sum of their rank weights.

    Returns (unsuited, suited, info): a list giving the value of five ranks not all of one
    suit, a dict giving the value of five distinct ranks all of one suit, and value ->
    (category, ranks in reading order). Values are eval7's for a hand of that pattern.
    """
    unsuited = [0] * (4 * _WEIGHTS[12] + _WEIGHTS[11] + 1)
    suited: dict[int, int] = {}
    info: dict[int, tuple[HandCategory, tuple[int, ...]]] = {}
    for ranks in combinations_with_replacement(range(13), 5):
        if ranks[0] == ranks[4]:
            continue  # five of a rank
        seen: dict[int, int] = {}
        hand = []
        for r in ranks:
            seen[r] = seen.get(r, 0) + 1
            hand.append(r * 4 + seen[r] - 1)  # suit = how many of this rank came before
        distinct = len(seen) == 5
        if distinct:
            hand[0] += 1  # every card was a club: make one a diamond
        key = sum(_WEIGHTS[r] for r in ranks)
        if unsuited[key]:
            raise AssertionError(f"rank weights collide at {ranks}")
        value = eval7.evaluate([EVAL7_CARDS[c] for c in hand])
        unsuited[key] = value
        info[value] = _pattern(ranks, False)
        if distinct:
            value = eval7.evaluate([EVAL7_CARDS[r * 4] for r in ranks])
            suited[key] = value
            info[value] = _pattern(ranks, True)
    return unsuited, suited, info


_UNSUITED, _SUITED, _HIGH_INFO = _build_high_tables()


# ---------------------------------------------------------------------------- low tables


def _lowest_bits(mask: int, n: int) -> int:
    """The ``n`` lowest set bits of ``mask``, or 0 if it has fewer."""
    out = 0
    for _ in range(n):
        if not mask:
            return 0
        bit = mask & -mask
        out |= bit
        mask ^= bit
    return out


def _build_low_tables() -> tuple[tuple[int | None, ...], tuple[int | None, ...]]:
    """(low8 by mask of distinct low ranks; Omaha low by hole mask << 8 | board mask).

    A low from a set of distinct low ranks is its five lowest. In Omaha, for each pair of
    distinct low hole ranks the best board part is the three lowest board ranks left after
    removing the pair's ranks; the hand's low is the best over the pairs.
    """
    low5 = tuple(_lowest_bits(m, 5) for m in range(256))
    low8 = tuple(255 - low5[m] if low5[m] else None for m in range(256))
    by_pair = {}  # pair mask -> 256 values by board mask (0 = no low)
    for a, b in combinations((1 << i for i in range(8)), 2):
        pm = a | b
        row = []
        for board in range(256):
            three = _lowest_bits(board & ~pm, 3)
            row.append(255 - (pm | three) if three else 0)
        by_pair[pm] = row
    empty = (None,) * 256
    omaha: list[int | None] = []
    for hole in range(256):
        rows = [row for pm, row in by_pair.items() if pm & hole == pm]
        omaha.extend((max(col) or None for col in zip(*rows)) if rows else empty)
    return low8, tuple(omaha)


_LOW8, _OMAHA_LOW8 = _build_low_tables()
_LOW_VALUES = frozenset(v for v in _LOW8 if v is not None)


# ---------------------------------------------------------------------------- values


def high_value(cards: Sequence[Card]) -> int:
    """Value of the best five-card high hand among 5, 6 or 7 cards."""
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"high_value needs 5 to 7 cards, got {len(cards)}")
    value: int = eval7.evaluate([EVAL7_CARDS[c] for c in cards])  # (eval7 is untyped)
    return value


def omaha_high_value(hole: Sequence[Card], board: Sequence[Card]) -> int:
    """Omaha high: the best hand of exactly two hole cards and exactly three board cards.

    Any two of 4 (or 5, 6) hole cards with any three of 3..5 board cards. A flush or a
    straight needs two hole cards in it: four suited board cards and one suited hole card is
    no flush. Four of a kind on the board plays only three of them; board trips and a hole
    card of that rank is four of a kind (that card, any other hole card, the three).
    """
    if len(hole) < 2 or not 3 <= len(board) <= 5:
        raise ValueError(f"Omaha needs 2+ hole and 3-5 board cards, not {len(hole)}+{len(board)}")
    w = _WEIGHT
    pairs = [x + y for x, y in combinations([w[c] for c in hole], 2)]
    triples = [x + y + z for x, y, z in combinations([w[c] for c in board], 3)]
    best = max([_UNSUITED[h + t] for h in pairs for t in triples])  # 60 lookups for 4 + 5
    three = (sum([_SUIT_NIBBLE[c] for c in board]) + 0x5555) & 0x8888
    if three:  # bit 4s+3 set: suit s has 3+ of the board's 3..5 cards (one suit at most)
        suit = three.bit_length() // 4 - 1
        hole_s = [w[c] for c in hole if c & 3 == suit]
        if len(hole_s) >= 2:
            pairs = [x + y for x, y in combinations(hole_s, 2)]
            board_s = [w[c] for c in board if c & 3 == suit]
            triples = [x + y + z for x, y, z in combinations(board_s, 3)]
            flush = max([_SUITED[h + t] for h in pairs for t in triples])
            if flush > best:
                best = flush
    return best


def low8_value(cards: Sequence[Card]) -> int | None:
    """8-or-better low from 5..7 cards, or None if there is none.

    A low is five cards of distinct ranks, each 8 or lower, the ace counting as 1; straights
    and flushes do not count against it. Lows compare highest card first (7-5-4-3-2 beats
    8-4-3-2-A; 7-4-3-2-A beats 7-5-4-2-A) and 5-4-3-2-A is the best.
    """
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"low8_value needs 5 to 7 cards, got {len(cards)}")
    mask = 0
    for c in cards:
        mask |= _LOW_BIT[c]
    return _LOW8[mask]


def omaha_low8_value(hole: Sequence[Card], board: Sequence[Card]) -> int | None:
    """Omaha 8-or-better low: exactly two hole cards and three board cards, or None.

    The two hole cards need two distinct low ranks that, with the three board cards used,
    make five distinct ranks 8 or lower; chosen independently of the high hand. No low is
    possible while the board shows fewer than three distinct low ranks.
    """
    if len(hole) < 2 or not 3 <= len(board) <= 5:
        raise ValueError(f"Omaha needs 2+ hole and 3-5 board cards, not {len(hole)}+{len(board)}")
    lb = _LOW_BIT
    h = 0
    for c in hole:
        h |= lb[c]
    b = 0
    for c in board:
        b |= lb[c]
    return _OMAHA_LOW8[h << 8 | b]


# ---------------------------------------------------------------------------- descriptions

#: how a high hand is named, per category, in two voices: the engine's (showdown events, the
#: table's views) and PokerStars' (hand histories). Fields: ``n0``/``n4`` the name of the
#: hand's first/fifth rank in reading order, ``p0``/``p2``/``p3`` the plural of its first,
#: third and fourth; a royal flush has its own name.
ENGINE, POKERSTARS = "engine", "pokerstars"
_HAND_NAMES: dict[str, dict[HandCategory | str, str]] = {
    ENGINE: {
        "royal": "royal flush",
        _C.STRAIGHT_FLUSH: "straight flush, {n0} high",
        _C.FOUR_OF_A_KIND: "four of a kind, {p0}",
        _C.FULL_HOUSE: "full house, {p0} full of {p3}",
        _C.FLUSH: "flush, {n0} high",
        _C.STRAIGHT: "straight, {n0} high",
        _C.THREE_OF_A_KIND: "three of a kind, {p0}",
        _C.TWO_PAIR: "two pair, {p0} and {p2}",
        _C.ONE_PAIR: "one pair, {p0}",
        _C.HIGH_CARD: "high card, {n0}",
    },
    POKERSTARS: {  # a wheel reads 5-4-3-2-A: "a straight, Ace to Five"
        "royal": "a Royal Flush",
        _C.STRAIGHT_FLUSH: "a straight flush, {n4} to {n0}",
        _C.FOUR_OF_A_KIND: "four of a kind, {p0}",
        _C.FULL_HOUSE: "a full house, {p0} full of {p3}",
        _C.FLUSH: "a flush, {n0} high",
        _C.STRAIGHT: "a straight, {n4} to {n0}",
        _C.THREE_OF_A_KIND: "three of a kind, {p0}",
        _C.TWO_PAIR: "two pair, {p0} and {p2}",
        _C.ONE_PAIR: "a pair of {p0}",
        _C.HIGH_CARD: "high card {n0}",
    },
}
#: rank names 2..A (rank index 0..12) in each voice
_RANK_NAMES = {ENGINE: "two three four five six seven eight nine ten jack queen king ace".split(),
               POKERSTARS: "Deuce Three Four Five Six Seven Eight Nine Ten Jack Queen King Ace"
                           .split()}


def high_shape(value: int) -> tuple[HandCategory, tuple[int, ...]]:
    """A high value's category and its five ranks in reading order (rank index 0..12 is
    2..A): what any naming of the hand (the engine's, PokerStars') is made from."""
    try:
        return _HIGH_INFO[value]
    except KeyError:
        raise ValueError(f"{value!r} is not a high hand value") from None


def high_category(value: int) -> HandCategory:
    """The category of a high value (straight flush, four of a kind, ...)."""
    return high_shape(value)[0]


def name_high(value: int, voice: str = ENGINE) -> str:
    """A high value named in ``voice`` (:data:`ENGINE` or :data:`POKERSTARS`): "full house,
    kings full of fours" or "a full house, Kings full of Fours"."""
    cat, r = high_shape(value)
    names = _HAND_NAMES[voice]
    if cat is _C.STRAIGHT_FLUSH and r[0] == 12:
        return names["royal"]
    rank = _RANK_NAMES[voice]
    plural = [n + ("es" if n.lower() == "six" else "s") for n in rank]
    return names[cat].format(n0=rank[r[0]], n4=rank[r[4]], p0=plural[r[0]], p2=plural[r[2]],
                             p3=plural[r[3]])


def describe_high(value: int) -> str:
    """Readable name of a high value: "full house, kings full of fours", "royal flush"."""
    return name_high(value, ENGINE)


def low_ranks(value: int) -> list[int]:
    """Low ranks 1..8 (ace = 1), highest first."""
    if value not in _LOW_VALUES:
        raise ValueError(f"{value!r} is not a low value")
    mask = 255 - value
    return [r + 1 for r in range(7, -1, -1) if mask >> r & 1]


def describe_low(value: int) -> str:
    """Readable name of a low value: "8-6-4-2-A low", "5-4-3-2-A low"."""
    return "-".join("A" if r == 1 else str(r) for r in low_ranks(value)) + " low"


# ---------------------------------------------------------------------------- the five cards


def _high_order(five: Sequence[Card]) -> tuple[Card, ...]:
    """The five cards in reading order: by rank count, then rank; a wheel reads 5-4-3-2-A."""
    _, order = _HIGH_INFO[high_value(five)]
    left = sorted((DECK[c] for c in five), reverse=True)
    out = []
    for r in order:
        c = next(c for c in left if c >> 2 == r)
        left.remove(c)
        out.append(c)
    return tuple(out)


def _low_order(five: Sequence[Card]) -> tuple[Card, ...]:
    """Highest low card first, the ace (1) last."""
    return tuple(sorted((DECK[c] for c in five), key=lambda c: ((c >> 2) + 1) % 13, reverse=True))


def _omaha_fives(hole: Sequence[Card], board: Sequence[Card]) -> Iterator[tuple[Card, ...]]:
    for two in combinations(tuple(hole), 2):
        for three in combinations(tuple(board), 3):
            yield two + three


def best_high_five(cards: Sequence[Card]) -> tuple[Card, ...]:
    """The five cards that make ``high_value(cards)``, in reading order."""
    value = high_value(cards)
    return _high_order(next(f for f in combinations(cards, 5) if high_value(f) == value))


def best_low_five(cards: Sequence[Card]) -> tuple[Card, ...] | None:
    """The five cards that make ``low8_value(cards)``, highest first; None without a low."""
    value = low8_value(cards)
    if value is None:
        return None
    return _low_order(next(f for f in combinations(cards, 5) if low8_value(f) == value))


def best_omaha_high_five(hole: Sequence[Card], board: Sequence[Card]) -> tuple[Card, ...]:
    """The two hole and three board cards that make ``omaha_high_value``, in reading order."""
    value = omaha_high_value(hole, board)
    return _high_order(next(f for f in _omaha_fives(hole, board) if high_value(f) == value))


def best_omaha_low_five(hole: Sequence[Card], board: Sequence[Card]) -> tuple[Card, ...] | None:
    """The two hole and three board cards that make ``omaha_low8_value``; None without a low."""
    value = omaha_low8_value(hole, board)
    if value is None:
        return None
    return _low_order(next(f for f in _omaha_fives(hole, board) if low8_value(f) == value))
