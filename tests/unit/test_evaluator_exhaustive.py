"""Every five-card hand, counted: the known category counts, 7,462 distinct high values, and
the 8-or-better lows. Runs in a few seconds, so it is not marked slow."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations, combinations_with_replacement
from math import comb, prod

import pytest

from shared.poker.cards import DECK
from shared.poker.evaluator import (
    HandCategory,
    describe_high,
    describe_low,
    high_category,
    high_value,
    low8_value,
    omaha_high_value,
    omaha_low8_value,
)

KNOWN_COUNTS = {
    HandCategory.STRAIGHT_FLUSH: 40,
    HandCategory.FOUR_OF_A_KIND: 624,
    HandCategory.FULL_HOUSE: 3_744,
    HandCategory.FLUSH: 5_108,
    HandCategory.STRAIGHT: 10_200,
    HandCategory.THREE_OF_A_KIND: 54_912,
    HandCategory.TWO_PAIR: 123_552,
    HandCategory.ONE_PAIR: 1_098_240,
    HandCategory.HIGH_CARD: 1_302_540,
}
# Distinct values per category (rank patterns): 7,462 in all.
KNOWN_CLASSES = {
    HandCategory.STRAIGHT_FLUSH: 10,
    HandCategory.FOUR_OF_A_KIND: 156,
    HandCategory.FULL_HOUSE: 156,
    HandCategory.FLUSH: 1_277,
    HandCategory.STRAIGHT: 10,
    HandCategory.THREE_OF_A_KIND: 858,
    HandCategory.TWO_PAIR: 858,
    HandCategory.ONE_PAIR: 2_860,
    HandCategory.HIGH_CARD: 1_277,
}


@pytest.fixture(scope="module")
def high_counts() -> Counter:
    return Counter(map(high_value, combinations(DECK, 5)))


def test_all_five_card_hands_by_category(high_counts):
    assert sum(high_counts.values()) == 2_598_960
    by_cat: Counter = Counter()
    classes: Counter = Counter()
    for value, n in high_counts.items():
        by_cat[high_category(value)] += n
        classes[high_category(value)] += 1
    assert by_cat == KNOWN_COUNTS
    assert classes == KNOWN_CLASSES
    assert len(high_counts) == 7_462
    assert all(v >> 24 == high_category(v) for v in high_counts)  # eval7's layout, as documented
    royals = [v for v in high_counts if describe_high(v) == "royal flush"]
    assert len(royals) == 1 and high_counts[royals[0]] == 4


def test_all_five_card_lows():
    counts = Counter(map(low8_value, combinations(DECK, 5)))
    none = counts.pop(None)
    # five distinct ranks of the eight A..8, any suits: C(8, 5) * 4**5
    assert sum(counts.values()) == 56 * 1024 == 57_344
    assert none == 2_598_960 - 57_344
    assert len(counts) == 56 and set(counts.values()) == {1024}


def test_seven_card_lows_take_the_five_lowest_ranks():
    """Seven of the 28 cards A, 2..6, 9: every low counted against a count by rank multiset."""
    deck = DECK[:20] + DECK[28:32] + DECK[48:]
    got = Counter(map(low8_value, combinations(deck, 7)))
    assert sum(got.values()) == comb(28, 7) == 1_184_040
    want: Counter = Counter()
    for ranks in combinations_with_replacement((1, 2, 3, 4, 5, 6, 9), 7):  # 1 = ace
        n = Counter(ranks)
        if max(n.values()) <= 4:
            low = sorted(r for r in n if r <= 8)[:5]
            key = "-".join("A" if r == 1 else str(r) for r in reversed(low)) + " low"
            want[key if len(low) == 5 else None] += prod(comb(4, k) for k in n.values())
    assert {(describe_low(v) if v else None): n for v, n in got.items()} == want


def test_omaha_against_brute_force():
    """Omaha values == the best of every 2 + 3 five-card hand, on random deals of all sizes."""
    rng = random.Random(7462)
    for i in range(6_000):
        nh, nb = 4 + i % 3, 3 + i // 3 % 3
        deal = rng.sample(DECK, nh + nb)
        hole, board = deal[:nh], deal[nh:]
        fives = [h + b for h in combinations(hole, 2) for b in combinations(board, 3)]
        assert omaha_high_value(hole, board) == max(map(high_value, fives))
        lows = [v for v in map(low8_value, fives) if v is not None]
        assert omaha_low8_value(hole, board) == (max(lows) if lows else None)
