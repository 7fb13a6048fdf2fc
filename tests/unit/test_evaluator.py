"""Hand evaluator: rule pins, descriptions, and differential checks against a brute-force
reference written here (and pokerkit, a test-only dependency)."""

from __future__ import annotations

from collections import Counter
from itertools import combinations, combinations_with_replacement

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.poker.cards import DECK, cards, cards_str
from shared.poker.evaluator import (
    HandCategory,
    best_high_five,
    best_low_five,
    best_omaha_high_five,
    best_omaha_low_five,
    describe_high,
    describe_low,
    high_category,
    high_value,
    low8_value,
    omaha_high_value,
    omaha_low8_value,
)

# ---------------------------------------------------------------------------- reference


def ref_key5(five) -> tuple:
    """(category, tie-break ranks) of five cards, straight from the rule book."""
    ranks = sorted((c >> 2 for c in five), reverse=True)
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = [n for _, n in groups]
    kickers = tuple(r for r, _ in groups)
    flush = len({c & 3 for c in five}) == 1
    top = None
    if len(counts) == 5 and ranks[0] - ranks[4] == 4:
        top = ranks[0]
    elif ranks == [12, 3, 2, 1, 0]:
        top = 3  # the wheel is five high
    if top is not None:
        return (8 if flush else 4, (top,))
    if shape == [4, 1]:
        return (7, kickers)
    if shape == [3, 2]:
        return (6, kickers)
    if flush:
        return (5, kickers)
    cat = {(3, 1, 1): 3, (2, 2, 1): 2, (2, 1, 1, 1): 1}.get(tuple(shape), 0)
    return (cat, kickers)


def ref_low5(five) -> tuple | None:
    """Low ranks highest first (ace = 1) if the five qualify for an 8-or-better low."""
    ranks = [1 if c >> 2 == 12 else (c >> 2) + 2 for c in five]
    if len(set(ranks)) == 5 and max(ranks) <= 8:
        return tuple(sorted(ranks, reverse=True))
    return None


def ref_best(fives, key, low=False):
    keys = [k for k in map(key, fives) if k is not None]
    if not keys:
        return None
    return min(keys) if low else max(keys)


def ref_high(cs):
    return ref_best(combinations(cs, 5), ref_key5)


def ref_low(cs):
    return ref_best(combinations(cs, 5), ref_low5, low=True)


def omaha_fives(hole, board):
    return [h + b for h in combinations(hole, 2) for b in combinations(board, 3)]


def ref_omaha_high(hole, board):
    return ref_best(omaha_fives(hole, board), ref_key5)


def ref_omaha_low(hole, board):
    return ref_best(omaha_fives(hole, board), ref_low5, low=True)


def sign(a, b) -> int:
    return (a > b) - (a < b)


def value_sign(a, b) -> int:
    """Compare values where None (no low) loses to any value: ours and pokerkit's hands."""
    if a is None or b is None:
        return (a is not None) - (b is not None)
    return sign(a, b)


def ref_low_sign(a, b) -> int:
    """Compare reference lows: the smaller tuple (highest card first) is the better low."""
    if a is None or b is None:
        return (a is not None) - (b is not None)
    return sign(b, a)


# ---------------------------------------------------------------------------- pins


def hv(text: str) -> int:
    return high_value(cards(text))


def test_flush_queen_high_beats_flush_ten_high():
    assert hv("Qh9h7h4h2h") > hv("Th9h7h4h2h") > hv("As Kd Qc Jh 9s")


def test_board_5_5_7_ten_8_ace_kicker_and_split():
    board = "5c5d7hTs8c"
    a5, q5 = hv("Ah5s" + board), hv("Qh5h" + board)
    assert a5 > q5
    assert high_category(a5) is HandCategory.THREE_OF_A_KIND
    assert hv("2h5s" + board) == hv("3d5h" + board)  # trip fives, T-8 kickers: split


def test_wheel_is_five_high_straight_below_six_high():
    wheel, six = hv("Ac2d3h4s5c"), hv("2d3h4s5c6d")
    assert high_category(wheel) is HandCategory.STRAIGHT
    assert describe_high(wheel) == "straight, five high"
    assert hv("KsKdKhQs2c") < wheel < six < hv("7c3d4h5s6d")
    assert wheel > hv("AcAdAhKsQc")  # trips aces


def test_steel_wheel():
    steel = hv("Ah2h3h4h5h")
    assert high_category(steel) is HandCategory.STRAIGHT_FLUSH
    assert describe_high(steel) == "straight flush, five high"
    assert hv("AcAdAhAsKc") < steel < hv("2h3h4h5h6h")
    assert hv("Ah2h3h4h5h9c9d") == steel  # pairs never beat it


def test_kickers():
    board = "Kc9d7h4s2c"
    assert hv("AhQd" + board) > hv("AhJd" + board)  # second card decides
    assert hv("KhAd" + board) > hv("KdQh" + board)  # pair of kings, ace kicker
    assert hv("Kh8d" + board) > hv("Kd6h" + board)  # third kicker decides
    assert hv("Kh3d" + board) == hv("Kd3h" + board)
    # board plays: both kickers lower than the board's fifth card
    assert hv("3c3d" + "AhAdKsKdQc") == hv("2c2d" + "AhAdKsKdQc")
    assert hv("Jc2d" + "AhAdKsKdQc") == hv("Qd2c" + "AhAdKsKdQc")  # the board plays
    assert hv("Jc2d" + "AhAdKsKdTc") > hv("9d2c" + "AhAdKsKdTc")  # J kicker plays
    # two pair: the fifth card
    assert hv("JhJd5c5s" + "Ah") > hv("JcJs5h5d" + "Kh")
    # full house: trips first
    assert hv("3c3d3hAsAc") > hv("2c2d2hAhAd")


def test_suits_never_rank_hands():
    assert hv("AhKd9c7s2h") == hv("AsKc9d7h2c")
    assert hv("AhKhQhJhTh") == hv("AsKsQsJsTs")
    assert hv("Qh9h7h4h2h") == hv("Qc9c7c4c2c")


def test_lows_rule_examples():
    lv = lambda t: low8_value(cards(t))  # noqa: E731
    assert lv("AsKs2c3d4h7c") is not None  # 7-4-3-2-A from seven cards
    assert lv("Ah2c3d4s7h") > lv("Ad2h4c5s7d")  # A2347 beats A2457
    assert lv("2c3d4h5s7c") > lv("Ac2d3h4s8c")  # 7-5-4-3-2 beats 8-4-3-2-A
    wheel = lv("Ac2c3c4c5c")  # a straight flush for high, the best low too
    assert wheel > lv("Ac2d3h4s6c") > lv("2c3d4h5s6c")
    assert describe_low(wheel) == "5-4-3-2-A low"
    assert describe_low(lv("8c6d4h2sAc")) == "8-6-4-2-A low"
    assert lv("9c6d4h2sAc") is None  # a nine is not low
    assert lv("AcAd2c3d4h") is None  # needs five distinct ranks
    assert lv("AcAd2c3d4h5hKc") == wheel  # pairs are skipped
    assert lv("Kc8d8h7s6cQd") is None


def test_describe_high_names():
    assert describe_high(hv("AsKsQsJsTs")) == "royal flush"
    assert describe_high(hv("9h8h7h6h5h")) == "straight flush, nine high"
    assert describe_high(hv("AcAdAhAs2c")) == "four of a kind, aces"
    assert describe_high(hv("KcKdKh4s4c")) == "full house, kings full of fours"
    assert describe_high(hv("Qh9h7h3h2h")) == "flush, queen high"
    assert describe_high(hv("Ac2d3h4s5c")) == "straight, five high"
    assert describe_high(hv("7c7d7h2s3c")) == "three of a kind, sevens"
    assert describe_high(hv("JcJd5h5s2c")) == "two pair, jacks and fives"
    assert describe_high(hv("TcTd2h3s4c")) == "one pair, tens"
    assert describe_high(hv("Ac3d5h7s9c")) == "high card, ace"
    assert describe_high(hv("6c6d6h2s3c")) == "three of a kind, sixes"
    with pytest.raises(ValueError):
        describe_high(12345)
    with pytest.raises(ValueError):
        describe_low(0)


def test_bad_card_counts_raise():
    for n in (4, 8):
        with pytest.raises(ValueError):
            high_value(DECK[:n])
        with pytest.raises(ValueError):
            low8_value(DECK[:n])
    with pytest.raises(ValueError):
        omaha_high_value(DECK[:4], DECK[4:6])
    with pytest.raises(ValueError):
        omaha_low8_value(DECK[:1], DECK[4:9])


def test_every_rank_pattern_ranks_as_the_reference():
    """One hand per rank pattern (and per flush): value order == rule-book order, 1 to 1."""
    hands = []
    for ranks in combinations_with_replacement(range(13), 5):
        if ranks[0] == ranks[4]:
            continue
        seen: Counter = Counter()
        hand = []
        for r in ranks:
            hand.append(DECK[r * 4 + 3 - seen[r]])  # spades first
            seen[r] += 1
        if len(seen) == 5:
            hands.append(tuple(DECK[r * 4 + 2] for r in ranks))  # all hearts: a flush
            hand[0] = DECK[ranks[0] * 4]  # one club: not a flush
        hands.append(tuple(hand))
    assert len(hands) == 7_462
    by_value = sorted(hands, key=high_value)
    keys = [ref_key5(h) for h in by_value]
    assert keys == sorted(keys) and len(set(keys)) == 7_462
    assert len({high_value(h) for h in hands}) == 7_462


# ---------------------------------------------------------------------------- Omaha pins


def oh(hole: str, board: str) -> int:
    return omaha_high_value(cards(hole), cards(board))


def ol(hole: str, board: str) -> int | None:
    return omaha_low8_value(cards(hole), cards(board))


def test_omaha_one_suited_hole_card_is_no_flush():
    v = oh("AhKcQd2s", "9h7h5h3h2h")
    assert high_category(v) is HandCategory.ONE_PAIR  # 2s with the 2h
    assert oh("AhKhQd2s", "9h7h5h3c2d") == hv("AhKh9h7h5h")  # two hole hearts do


def test_omaha_board_quads_and_trips():
    # Four sevens on the board: only three of them play, with two hole cards.
    assert high_category(oh("AcKdQsJh", "7d7h7s7cKc")) is HandCategory.THREE_OF_A_KIND
    assert describe_high(oh("AcAdQsJh", "7d7h7s7cKc")) == "full house, sevens full of aces"
    # Board trips and one seven in the hole: 7 + A from the hole, 7-7-7 from the board.
    assert describe_high(oh("7cAdKsQh", "7d7h7sKc2d")) == "four of a kind, sevens"
    # A board pair and one matching hole card is trips, not a full house with the board pair.
    assert high_category(oh("9cAdKsQh", "9d9hKc5s2d")) is HandCategory.FULL_HOUSE  # K from hole
    assert high_category(oh("9cAdJsQh", "9d9hKc5s2d")) is HandCategory.THREE_OF_A_KIND


def test_omaha_one_card_straight_is_no_straight():
    assert high_category(oh("9cAdAs2h", "5d6h7s8cKd")) is HandCategory.ONE_PAIR
    assert describe_high(oh("9cTdAs2h", "5d6h7s8cKd")) == "straight, ten high"
    assert describe_high(oh("3c4dAs2h", "5d6h7s8cKd")) == "straight, seven high"
    assert high_category(oh("9c4dAs2h", "5d6h7s8cKd")) is HandCategory.HIGH_CARD


def test_omaha_low_needs_two_distinct_low_hole_ranks():
    assert ol("AcAdKsQh", "2d3h4s9cTd") is None  # one low rank in the hole
    assert ol("Ac2dKsQh", "2h3h4s9cTd") is None  # A-2 with 3-4 only: the 2 can't be used twice
    assert ol("Ac3dKsQh", "2h3h4s9cTd") is None  # A-3 leaves only 2-4 on the board
    assert describe_low(ol("Ac2dKsQh", "3h4s5c9cTd")) == "5-4-3-2-A low"
    assert describe_low(ol("Ac3dKsQh", "2h3h4s5c8d")) == "5-4-3-2-A low"  # 3 from the hole


def test_omaha_low_counterfeited_and_short_board():
    assert describe_low(ol("Ac2dKsKh", "3h5s8c")) == "8-5-3-2-A low"
    assert ol("Ac2dKsKh", "Ah2s7cKdKc") is None  # the board's A and 2 counterfeit the hole's
    # A two on the turn does not spoil A-2 with 3-5-8: the board's 2 just isn't used
    assert ol("Ac2dKsKh", "3h5s8c2c") == ol("Ac2dKsKh", "3h5s8c")
    assert ol("Ac2d3s4h", "2c3dKhQcJd") is None  # board: fewer than three distinct low ranks
    assert ol("Ac2d3s4h", "5c5d6hQcJd") is None
    assert ol("Ac2d3s4h", "5c5d6h7cJd") is not None


def test_omaha_low_independent_of_high():
    hole, board = cards("AcKc2d3d"), cards("4c5c8cTdJd")
    assert describe_high(omaha_high_value(hole, board)) == "flush, ace high"
    assert best_omaha_high_five(hole, board) == cards("AcKc8c5c4c")
    assert describe_low(omaha_low8_value(hole, board)) == "8-5-4-2-A low"
    assert best_omaha_low_five(hole, board) == cards("8c5c4c2dAc")


def test_omaha_five_and_six_hole_cards():
    assert describe_high(oh("AhKhQd2s3c", "9h7h5hJcTd")) == "flush, ace high"
    assert describe_high(oh("AhKcQd2s3c7d", "9h8h6hJcTd")) == "straight, king high"


def test_best_fives():
    assert best_high_five(cards("Ac2d3h4s5cKd")) == cards("5c4s3h2dAc")
    assert best_high_five(cards("KcKdKh4s4c")) == cards("KhKdKc4s4c")
    assert best_low_five(cards("8c6d4h2sAcKd3d")) == cards("6d4h3d2sAc")
    assert best_low_five(cards("KcKdKh4s4cQd9d")) is None
    assert best_omaha_low_five(cards("AsKs2c3d"), cards("QsJs4s5h8h")) == cards("8h5h4s2cAs")
    assert best_omaha_high_five(cards("AsKs2c3d"), cards("QsJsTs9h8h")) == cards("AsKsQsJsTs")


# ---------------------------------------------------------------------------- differential

deals = st.permutations(DECK)
FAST = settings(max_examples=1000, deadline=None)


@FAST
@given(deals, st.integers(5, 7), st.integers(5, 7))
def test_high_and_low_match_reference(deck, n, m):
    a, b = deck[:n], deck[n : n + m]
    va, vb = high_value(a), high_value(b)
    ka, kb = ref_high(a), ref_high(b)
    assert sign(va, vb) == sign(ka, kb)
    assert high_category(va) == ka[0]
    assert high_value(best_high_five(a)) == va
    la, lb = low8_value(a), low8_value(b)
    ra, rb = ref_low(a), ref_low(b)
    assert (la is None) == (ra is None)
    assert value_sign(la, lb) == ref_low_sign(ra, rb)
    if la is not None:
        assert describe_low(la) == "-".join("A" if r == 1 else str(r) for r in ra) + " low"
        assert low8_value(best_low_five(a)) == la


@FAST
@given(deals)
def test_holdem_showdown_matches_reference(deck):
    board, h1, h2 = deck[:5], deck[5:7], deck[7:9]  # shared board: many ties and kickers
    assert sign(high_value(h1 + board), high_value(h2 + board)) == sign(
        ref_high(h1 + board), ref_high(h2 + board)
    )


@FAST
@given(deals, st.integers(4, 6), st.integers(3, 5))
def test_omaha_matches_reference(deck, nh, nb):
    board = deck[:nb]
    h1, h2 = deck[nb : nb + nh], deck[nb + nh : nb + 2 * nh]
    v1, v2 = omaha_high_value(h1, board), omaha_high_value(h2, board)
    assert sign(v1, v2) == sign(ref_omaha_high(h1, board), ref_omaha_high(h2, board))
    assert high_category(v1) == ref_omaha_high(h1, board)[0]
    assert v1 == max(high_value(f) for f in omaha_fives(h1, board))
    l1, l2 = omaha_low8_value(h1, board), omaha_low8_value(h2, board)
    r1, r2 = ref_omaha_low(h1, board), ref_omaha_low(h2, board)
    assert (l1 is None) == (r1 is None)
    assert value_sign(l1, l2) == ref_low_sign(r1, r2)
    five = best_omaha_high_five(h1, board)
    assert high_value(five) == v1 and len(set(five) & set(h1)) == 2
    if l1 is not None:
        five = best_omaha_low_five(h1, board)
        assert low8_value(five) == l1 and len(set(five) & set(h1)) == 2


# pokerkit: an independent implementation (test-only dependency).
import pokerkit as pk  # noqa: E402  (a test dependency: missing is a failure)

PK = settings(max_examples=400, deadline=None)


@PK
@given(deals)
def test_holdem_matches_pokerkit(deck):
    board, h1, h2 = deck[:5], deck[5:7], deck[7:9]
    p1 = pk.StandardHighHand.from_game(cards_str(h1), cards_str(board))
    p2 = pk.StandardHighHand.from_game(cards_str(h2), cards_str(board))
    assert sign(high_value(h1 + board), high_value(h2 + board)) == sign(p1, p2)
    q1 = pk.EightOrBetterLowHand.from_game_or_none(cards_str(h1), cards_str(board))
    q2 = pk.EightOrBetterLowHand.from_game_or_none(cards_str(h2), cards_str(board))
    assert value_sign(low8_value(h1 + board), low8_value(h2 + board)) == value_sign(q1, q2)


@PK
@given(deals, st.integers(3, 5))
def test_omaha_matches_pokerkit(deck, nb):
    board, h1, h2 = deck[:nb], deck[nb : nb + 4], deck[nb + 4 : nb + 8]
    b = cards_str(board)
    p1 = pk.OmahaHoldemHand.from_game(cards_str(h1), b)
    p2 = pk.OmahaHoldemHand.from_game(cards_str(h2), b)
    assert sign(omaha_high_value(h1, board), omaha_high_value(h2, board)) == sign(p1, p2)
    q1 = pk.OmahaEightOrBetterLowHand.from_game_or_none(cards_str(h1), b)
    q2 = pk.OmahaEightOrBetterLowHand.from_game_or_none(cards_str(h2), b)
    ours = omaha_low8_value(h1, board), omaha_low8_value(h2, board)
    assert (ours[0] is None) == (q1 is None)
    assert value_sign(*ours) == value_sign(q1, q2)
