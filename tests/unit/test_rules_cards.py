"""Cards, deck, dealing and hand ranks: every worked example of RULES.md §1 and §2, through the engine's
decisions and fold (split from the rule-book example tests by section).

Each test names the rule it checks (section of docs/RULES.md in the docstring or its
section header). Hands are dealt from fixed decks (tests/helpers/scenario.py) so the outcome
is known in advance.
"""

from __future__ import annotations

import pytest

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import DECK, SuitOrder, cards
from shared.poker.evaluator import HandCategory as C
from shared.poker.evaluator import high_category, high_value
from shared.poker.events import Portion
from shared.poker.handrunner import check_call_policy
from tests.helpers.rules_tables import (
    calls_except,
    fl,
    nl,
    pl,
    seats,
    shown,
    stud,
)
from tests.helpers.scenario import Scenario, board_deck, stud_deck

# =============================================================================================
# §1 Cards, deck, dealing
# =============================================================================================

def test_deal_order_one_card_at_a_time_clockwise_from_small_blind():
    s = Scenario(nl(), seats(3), button=3, deck="AhKhQh AsKsQs")
    s.to_act()
    [dealt] = s.of(E.CardsDealt)
    assert [(h.seat, h.cards) for h in dealt.hole] == [
        (1, cards("AhAs")), (2, cards("KhKs")), (3, cards("QhQs"))]
    assert dealt.burned == () and dealt.board == ()


def test_deal_order_button_in_the_middle_starts_left_of_button():
    s = Scenario(nl(), seats(4), button=2, deck="2c3c4c5c 2d3d4d5d")
    s.to_act()
    [dealt] = s.of(E.CardsDealt)
    assert [(h.seat, h.cards) for h in dealt.hole] == [
        (3, cards("2c2d")), (4, cards("3c3d")), (1, cards("4c4d")), (2, cards("5c5d"))]


def test_heads_up_first_card_to_big_blind():
    s = Scenario(nl(), [(1, 500), (2, 500)], button=1, deck="AhKh AsKs")
    s.to_act()
    [dealt] = s.of(E.CardsDealt)
    assert [(h.seat, h.cards) for h in dealt.hole] == [(2, cards("AhAs")), (1, cards("KhKs"))]


def test_omaha_deals_four_cards_one_at_a_time():
    s = Scenario(pl(1, 2, "omaha"), seats(2), button=2,
                 deck="2c2d 3c3d 4c4d 5c5d")
    s.to_act()
    [dealt] = s.of(E.CardsDealt)
    assert [(h.seat, h.cards) for h in dealt.hole] == [
        (1, cards("2c3c4c5c")), (2, cards("2d3d4d5d"))]


def test_holdem_burns_one_before_flop_turn_and_river():
    deck = board_deck({1: "2c7d", 2: "3c8d", 3: "4c9d"}, board="AhKhQh JsTs",
                      burns="2h 3h 4h", button=3)
    s = Scenario(nl(), seats(3), button=3, deck=deck)
    s.finish(check_call_policy)
    streets = {e.street: e for e in s.of(E.CardsDealt)}
    assert streets[1].burned == cards("2h") and streets[1].board == cards("AhKhQh")
    assert streets[2].burned == cards("3h") and streets[2].board == cards("Js")
    assert streets[3].burned == cards("4h") and streets[3].board == cards("Ts")
    assert s.hand.board == cards("AhKhQhJsTs")


def test_stud_deal_two_down_one_up_then_burns_before_4th_to_7th_not_3rd():
    hands = {1: "2c2d Kh 3c 4c 5c 6c", 2: "7c7d Ks 8c 9c Tc Jc"}
    s = Scenario(stud(), seats(2), button=2, deck=stud_deck(hands, button=2, burns="As Ah Ad Ac"))
    s.finish(check_call_policy)
    dealt = s.of(E.CardsDealt)
    assert [d.street for d in dealt] == [0, 1, 2, 3, 4]
    assert dealt[0].burned == ()
    assert [d.burned for d in dealt[1:]] == [cards("As"), cards("Ah"), cards("Ad"), cards("Ac")]
    assert dealt[0].hole[0] == E.HoleDeal(1, cards("2c2dKh"), (False, False, True))
    assert dealt[0].hole[1] == E.HoleDeal(2, cards("7c7dKs"), (False, False, True))
    assert [h.face_up for h in dealt[4].hole] == [(False,), (False,)]  # 7th street down
    assert [h.face_up for h in dealt[2].hole] == [(True,), (True,)]
    assert s.player(1).hole == cards("2c2dKh3c4c5c6c")
    assert s.player(2).hole == cards("7c7dKs8c9cTcJc")


def test_folded_stud_hand_gets_no_more_cards():
    hands = {1: "2c2d Kh 3c 4c 5c 6c", 2: "7c7d Ks 8c 9c Tc Jc", 3: "8h9h Ad"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.finish(calls_except({3}))
    assert len(s.player(3).hole) == 3
    for d in s.of(E.CardsDealt)[1:]:
        assert [h.seat for h in d.hole] == [1, 2]


# The 8-player run-out deck: seats' cards are down, down, up (3rd), up (4th, 5th, 6th).
# Only seat 1 shows a deuce; the common card is the 2d, which pairs it (RULES §1).
_EIGHT = {
    1: "3c3d 2c 4c 6c 8c", 2: "3h3s 4d 6d 8d Tc", 3: "5c5d 4h 6h 8h Td",
    4: "5h5s 4s 6s 8s Th", 5: "7c7d Ac Kc Qc Jc", 6: "9c9d Ah Kh Qh 9h",
    7: "7h7s Ad Kd Qd Ts", 8: "2hJh As Ks Qs 9s",
}


def test_stud_eight_players_run_out_reshuffle_then_common_card():
    deck = stud_deck(_EIGHT, button=8, burns="2d Js Jd")  # leaves the 2s undealt
    s = Scenario(stud(), seats(8), button=8, deck=deck, reshuffles=["Js 2d"])
    # every player stays to 7th street
    while s.hand.street < 4:
        step = s.to_act()
        action, to = check_call_policy(s.hand, step.legal)
        s.act(step.seat, action, to)
    step = s.advance(stop=(D.Act, D.Reshuffle, D.Deal))
    assert isinstance(step, D.Reshuffle) and step.deck_size == 4  # 1 undealt + 3 burned
    s._apply(D.reshuffle(s.hand, s.dealer.new_deck(s.dealer.undealt_and_burned(s.hand)), 4))
    assert s.events[-1] == E.DeckCommitted(s.events[-1].commitment, 4, reshuffle=True)
    step = s.advance(stop=(D.Act, D.Deal))
    assert isinstance(step, D.Deal) and step.count == 2  # too few for 9: burn + one common
    s.advance()
    seventh = s.of(E.CardsDealt)[-1]
    assert seventh.street == 4 and seventh.hole == ()
    assert seventh.burned == cards("Js") and seventh.board == cards("2d")
    # the best showing hand counting the common card acts first: seat 1's pair of deuces
    # (without it seat 5's A-K-Q-J would)
    assert s.on_turn == 1
    s.finish(check_call_policy)
    assert sorted(s.shown_order()) == list(range(1, 9))  # all eight reached the showdown
    assert len(s.of(E.DeckRevealed)[0].decks) == 2


def test_stud_seven_players_reshuffle_suffices():
    s = Scenario(stud(), seats(7), button=7, deck=DECK)
    while s.hand.street < 4:
        step = s.to_act()
        s.act(step.seat, *check_call_policy(s.hand, step.legal))
    step = s.advance(stop=(D.Act, D.Reshuffle, D.Deal))
    assert isinstance(step, D.Reshuffle) and step.deck_size == 7 + 3  # undealt + burned
    s._apply(D.reshuffle(s.hand, s.dealer.new_deck(s.dealer.undealt_and_burned(s.hand)), 10))
    step = s.advance(stop=(D.Act, D.Deal))
    assert isinstance(step, D.Deal) and step.count == 1 + 7
    s.advance()
    seventh = s.of(E.CardsDealt)[-1]
    assert seventh.board == () and len(seventh.burned) == 1 and len(seventh.hole) == 7
    assert all(len(p.hole) == 7 for p in s.hand.players)
    s.finish(check_call_policy)
    all_cards = [c for p in s.hand.players for c in p.hole]
    assert len(set(all_cards)) == 49


def test_suit_order_default_is_sources_clubs_high_spades_low():
    assert fl().suit_order is SuitOrder.SOURCES


# =============================================================================================
# §2 Hand ranks and lows, through the showdown
# =============================================================================================

def _holdem_showdown(hole: dict, board: str, button: int = 2, **opts):
    o = nl(1, 2, rake_basis_points=0, **opts)
    s = Scenario(o, [(seat, 100) for seat in hole], button=button,
                 deck=board_deck(hole, board, button=button))
    s.finish(check_call_policy)
    return s


def test_flush_queen_high_beats_flush_ten_high():
    s = _holdem_showdown({1: "Qh3h", 2: "Th4h"}, board="2h5h8h 9c Kd")
    assert s.won == {1: 4}
    assert shown(s)[1] == "flush, queen high"


def test_board_5_5_7_10_8_ace_five_beats_queen_five():
    s = _holdem_showdown({1: "Qc5d", 2: "Ad5h"}, board="5s5c7h TdTs".replace("TdTs", "Td8s"))
    assert s.won == {2: 4}
    assert s.of(E.PotAwarded)[0].hand == "three of a kind, fives"


def test_two_five_against_three_five_splits_on_board_5_5_7_10_8():
    s = _holdem_showdown({1: "2c5d", 2: "3d5h"}, board="5s5c7h Td 8s")
    assert s.won == {1: 2, 2: 2}


def test_wheel_is_a_five_high_straight_and_loses_to_six_high():
    s = _holdem_showdown({1: "Ac2d", 2: "6c2c"}, board="3h4s5c Kd Qh")
    assert s.won == {2: 4}
    assert shown(s)[2] == "straight, six high"
    s = _holdem_showdown({1: "Ac2d", 2: "KcQs"}, board="3h4s5c Kd Qh")
    assert s.won == {1: 4}
    assert shown(s)[1] == "straight, five high"


def test_ace_high_straight_flush_is_a_royal_flush():
    s = _holdem_showdown({1: "AhKh", 2: "AcAd"}, board="QhJhTh 2c 3d")
    assert s.won == {1: 4}
    assert shown(s)[1] == "royal flush"


def test_hand_categories_rank_in_order():
    # four of a kind beats a full house beats a flush beats a straight, at one showdown: every
    # seat holds the category it is dealt for, and the best takes the whole pot
    board = "9c9d8c 7c Kh"
    hole = {1: "9h9s", 2: "KdKs", 3: "Ac2c", 4: "Ts6h"}
    assert [high_category(high_value(cards(hole[seat] + board.replace(" ", ""))))
            for seat in (1, 2, 3, 4)] == [C.FOUR_OF_A_KIND, C.FULL_HOUSE, C.FLUSH, C.STRAIGHT]
    s = _holdem_showdown(hole, board=board, button=4)
    assert s.won == {1: 8}
    assert shown(s)[1] == "four of a kind, nines"


@pytest.mark.parametrize("low,high", [
    ("2c5d8h9sJc3d4h", "2c2d8h9sJc3d4h"),   # high card < one pair
    ("2c2d8h9sJc3d4h", "2c2d8h8sJc3d4h"),   # one pair < two pair
    ("2c2d8h8sJc3d4h", "2c2d2h8sJc3d4h"),   # two pair < three of a kind
    ("2c2d2h8sJc3d4h", "2c5d6h9sJc3d4h"),   # three of a kind < straight
    ("2c5d6h9sJc3d4h", "2c5c6c9sJc3c4h"),   # straight < flush
    ("2c5c6c9sJc3c4h", "2c2d2h8s8cJd4h"),   # flush < full house
    ("2c2d2h8s8cJd4h", "2c2d2h2s8cJd4h"),   # full house < four of a kind
    ("2c2d2h2s8cJd4h", "2c3c4c5c6c9sJd"),   # four of a kind < straight flush
])
def test_each_category_beats_the_one_below(low, high):
    lo, hi = high_value(cards(low)), high_value(cards(high))
    assert high_category(hi) == high_category(lo) + 1
    assert hi > lo


def test_suits_never_rank_hands_identical_flush_values_split():
    s = _holdem_showdown({1: "2c3d", 2: "2d3c"}, board="AhKhQhJh9h")
    assert s.won == {1: 2, 2: 2}


def test_omaha_needs_exactly_two_hole_cards_for_a_flush():
    # seat 1 holds one heart with four hearts on board: no flush in Omaha
    hole = {1: "Ah2c3d4s", 2: "KcKd7s8s"}
    s = Scenario(pl(1, 2, "omaha", rake_basis_points=0), seats(2, 100), button=2,
                 deck=board_deck(hole, board="Kh9h5h Th 2h", button=2))
    s.finish(check_call_policy)
    assert s.won == {2: 4}  # trip kings beat ace high
    names = {e.seat: e.high for e in s.of(E.HandShown)}
    assert "flush" not in names[1]


def test_omaha_uses_exactly_three_board_cards():
    # board four to a straight: a single connecting hole card does not make it
    hole = {1: "9c2d2h3s", 2: "QcQd4c4d"}
    s = Scenario(pl(1, 2, "omaha", rake_basis_points=0), seats(2, 100), button=2,
                 deck=board_deck(hole, board="5h6s7h 8d Kc", button=2))
    s.finish(check_call_policy)
    assert s.won == {2: 4}


def _stud_hilo_showdown(hands: dict, button: int, **opts):
    o = stud(10, "stud_hilo", rake_basis_points=0, **opts)
    s = Scenario(o, [(seat, 200) for seat in hands], button=button,
                 deck=stud_deck(hands, button=button))
    s.finish(check_call_policy)
    return s



def test_low_a2347_beats_a2457():
    # seat 2 wins high with kings; the low half goes to 7-4-3-2-A over 7-5-4-2-A
    hands = {1: "Ac2c 3d 4d 7h Kh Qs", 2: "Ad2d 4h 5h 7s Ks Kd"}
    s = _stud_hilo_showdown(hands, button=2)
    low = [a for a in s.of(E.PotAwarded) if a.portion is Portion.LOW]
    assert [sh.seat for a in low for sh in a.shares] == [1]
    assert low[0].hand == "7-4-3-2-A low"


def test_low_2_3_4_5_7_beats_a_2_3_4_8():
    hands = {1: "2c3c 4d 5d 7h Kh Qs", 2: "Ad2d 3h 4h 8s Ks Kd"}
    s = _stud_hilo_showdown(hands, button=2)
    low = [a for a in s.of(E.PotAwarded) if a.portion is Portion.LOW]
    assert [sh.seat for a in low for sh in a.shares] == [1]


def test_no_qualifying_low_high_wins_the_whole_pot():
    hands = {1: "9c9d Th Jh 5s 6h 2c", 2: "Ad2d 3h 9h Ts Ks Kd"}
    s = _stud_hilo_showdown(hands, button=2)
    assert [a.portion for a in s.of(E.PotAwarded)] == [Portion.WHOLE]
    assert set(s.won) == {2}


def test_wheel_wins_high_and_low_scoop():
    hands = {1: "Ac2d 3h 4s 5c Kd Qh", 2: "KcKs 9h 9s Th Jd Tc"}
    s = _stud_hilo_showdown(hands, button=2)
    assert set(s.won) == {1}
    assert sum(s.won.values()) == sum(p.contributed for p in s.hand.players)


def test_omaha_hilo_high_and_low_chosen_separately():
    # seat 1: high trip kings (Kd Kh + board K), low 7-5-3-2-A (Ac 3d + 7 5 2)
    hole = {1: "KdKhAc3d", 2: "QcQdJc9s", 3: "Ts9c8h4c"}
    o = pl(1, 2, "omaha_hilo", rake_basis_points=0)
    s = Scenario(o, seats(3, 100), button=3,
                 deck=board_deck(hole, board="Ks7s5h 2c Jd", button=3))
    s.finish(check_call_policy)
    assert s.won == {1: 6}
    shown = {e.seat: (e.high, e.low) for e in s.of(E.HandShown)}
    assert shown[1] == ("three of a kind, kings", "7-5-3-2-A low")
