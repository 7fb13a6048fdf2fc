"""Every worked example of RULES.md, through the engine's decisions and fold.

Each test names the rule it checks (section of /work/shared/RULES.md in the docstring). Hands
are dealt from fixed decks (tests/helpers/scenario.py) so the outcome is known in advance.
"""

from __future__ import annotations

import pytest

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import DECK, SuitOrder, cards
from shared.poker.driver import check_call_policy
from shared.poker.errors import IllegalAction
from shared.poker.evaluator import HandCategory as C
from shared.poker.evaluator import high_category, high_value
from shared.poker.events import ActionKind, ForcedKind, Portion
from shared.poker.options import AnteType, RakeCap, table_options
from tests.helpers.scenario import Scenario, board_deck, stud_deck

BET, RAISE, COMPLETE = ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE


# --- tables ------------------------------------------------------------------------------------

def nl(sb: int = 10, bb: int = 20, game: str = "holdem", **kw):
    return table_options(game, "no_limit", small_blind=sb, big_blind=bb, **kw)


def pl(sb: int, bb: int, game: str = "holdem", **kw):
    return table_options(game, "pot_limit", small_blind=sb, big_blind=bb, **kw)


def fl(small_bet: int = 10, game: str = "holdem", **kw):
    return table_options(game, "fixed_limit", small_bet=small_bet, **kw)


def stud(small_bet: int = 10, game: str = "stud", **kw):
    return table_options(game, "fixed_limit", small_bet=small_bet, **kw)


def seats(n: int, stack: int = 1000, **special: int) -> list[tuple[int, int]]:
    """Seats 1..n with ``stack`` each; ``s3=150`` gives seat 3 a stack of 150."""
    return [(i, special.get(f"s{i}", stack)) for i in range(1, n + 1)]


def calls_except(folders: set[int]):
    """Check/call/bring in, except that the seats in ``folders`` fold when they may."""
    def policy(hand, legal):
        if legal.seat in folders and legal.can_fold and not legal.can_check:
            return ActionKind.FOLD, None
        return check_call_policy(hand, legal)
    return policy


def shape(legal) -> tuple:
    """The parts of LegalActions a rule fixes: call, kind of raise, its bounds."""
    return (legal.call, legal.raise_kind, legal.min_to, legal.max_to)


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


def _shown(s) -> dict[int, str]:
    return {e.seat: e.high for e in s.of(E.HandShown)}


def test_flush_queen_high_beats_flush_ten_high():
    s = _holdem_showdown({1: "Qh3h", 2: "Th4h"}, board="2h5h8h 9c Kd")
    assert s.won == {1: 4}
    assert _shown(s)[1] == "flush, queen high"


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
    assert _shown(s)[2] == "straight, six high"
    s = _holdem_showdown({1: "Ac2d", 2: "KcQs"}, board="3h4s5c Kd Qh")
    assert s.won == {1: 4}
    assert _shown(s)[1] == "straight, five high"


def test_ace_high_straight_flush_is_a_royal_flush():
    s = _holdem_showdown({1: "AhKh", 2: "AcAd"}, board="QhJhTh 2c 3d")
    assert s.won == {1: 4}
    assert _shown(s)[1] == "royal flush"


def test_hand_categories_rank_in_order():
    # four of a kind beats a full house beats a flush beats a straight, at one showdown: every
    # seat holds the category it is dealt for, and the best takes the whole pot
    board = "9c9d8c 7c Kh"
    hole = {1: "9h9s", 2: "KdKs", 3: "Ac2c", 4: "Ts6h"}
    assert [high_category(high_value(cards(hole[seat] + board.replace(" ", ""))))
            for seat in (1, 2, 3, 4)] == [C.FOUR_OF_A_KIND, C.FULL_HOUSE, C.FLUSH, C.STRAIGHT]
    s = _holdem_showdown(hole, board=board, button=4)
    assert s.won == {1: 8}
    assert _shown(s)[1] == "four of a kind, nines"


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


def _portions(s) -> dict:
    """Chips awarded by (portion, seat), summed over the pots."""
    out: dict = {}
    for a in s.of(E.PotAwarded):
        for sh in a.shares:
            out[a.portion, sh.seat] = out.get((a.portion, sh.seat), 0) + sh.amount
    return out


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


# =============================================================================================
# §3 Forced bets
# =============================================================================================

def test_fixed_limit_5_10_small_blind_is_2():
    o = fl(5)
    assert (o.small_blind, o.big_blind, o.big_bet) == (2, 5, 10)
    s = Scenario(o, seats(3), button=3)
    s.to_act()
    assert [(e.seat, e.kind, e.amount) for e in s.of(E.ForcedBetPosted)] == [
        (1, ForcedKind.SMALL_BLIND, 2), (2, ForcedKind.BIG_BLIND, 5)]


def test_stud_10_20_antes_1():
    o = stud(10)
    assert (o.ante, o.ante_type) == (1, AnteType.PER_SEAT)
    s = Scenario(o, seats(3), button=3)
    s.to_act()
    assert [(e.seat, e.kind, e.amount) for e in s.of(E.ForcedBetPosted)] == [
        (1, ForcedKind.ANTE, 1), (2, ForcedKind.ANTE, 1), (3, ForcedKind.ANTE, 1)]


def test_stud_15_30_brings_in_5():
    o = stud(15)
    assert (o.bring_in, o.big_bet) == (5, 30)
    hands = {1: "2c2d Kh", 2: "7c7d 3s", 3: "8c8d Qs"}
    s = Scenario(o, seats(3), button=3, deck=stud_deck(hands, button=3))
    legal = s.legal
    assert legal.seat == 2  # the lowest upcard
    assert (legal.bring_in, legal.can_fold, legal.can_check) == (5, False, False)
    assert (legal.raise_kind, legal.raise_sizes) == (COMPLETE, (15,))


def test_chip_unit_derived_amounts_round_down_never_below_one_unit():
    o = table_options("holdem", "fixed_limit", small_bet=15, chip_unit=5)
    assert o.small_blind == 5  # half of 15 = 7, rounded down to the unit
    o = table_options("holdem", "fixed_limit", small_bet=5, chip_unit=5)
    assert o.small_blind == 5  # 2 rounds down to 0, but a blind is never below a unit
    o = table_options("stud", "fixed_limit", small_bet=20, chip_unit=5)
    assert o.bring_in == 5 and o.ante == 0  # a third of 20 = 6 -> 5; a tenth = 2 -> 0
    o = table_options("stud", "fixed_limit", small_bet=10, chip_unit=5)
    assert o.bring_in == 5  # 3 -> 0, never below a unit


def test_stud_ante_rounding_to_zero_means_no_ante():
    o = stud(5)
    assert (o.ante, o.ante_type, o.bring_in) == (0, AnteType.NONE, 1)
    s = Scenario(o, seats(3), button=3)
    s.to_act()
    assert s.of(E.ForcedBetPosted) == []


def test_big_blind_is_live_and_gets_the_option_when_unraised():
    s = Scenario(nl(), seats(3), button=3)
    s.play("3 call", "1 call")
    legal = s.legal
    assert legal.seat == 2 and legal.can_check
    assert (legal.raise_kind, legal.min_to) == (RAISE, 40)
    s.play("2 raise 60")
    assert s.on_turn == 3


def test_small_blind_is_live_and_may_raise_when_the_action_returns_unraised():
    s = Scenario(fl(10), seats(3), button=3)
    s.play("3 call")
    legal = s.legal
    assert legal.seat == 1 and legal.call == 5
    assert (legal.raise_kind, legal.raise_sizes) == (RAISE, (20,))


def test_heads_up_button_posts_small_blind_acts_first_preflop_last_after():
    s = Scenario(nl(), [(1, 500), (2, 500)], button=2)
    assert [(f.seat, f.kind) for f in s.hand.forced_bets] == [
        (2, ForcedKind.SMALL_BLIND), (1, ForcedKind.BIG_BLIND)]
    assert s.on_turn == 2
    s.play("2 call")
    assert s.on_turn == 1  # the big blind's option
    s.play("1 check")
    assert s.hand.street == 1 and s.on_turn == 1
    s.play("1 check")
    assert s.on_turn == 2


def test_per_seat_ante_is_dead_money_not_part_of_any_bet():
    o = table_options("holdem", "pot_limit", small_blind=1, big_blind=2, ante=1)
    assert o.ante_type is AnteType.PER_SEAT
    s = Scenario(o, seats(3), button=3)
    legal = s.legal
    assert legal.seat == 3 and legal.call == 2  # the ante is not part of the bet
    assert s.player(2).round_bet == 2 and s.player(2).contributed == 3
    s.play("3 fold")
    # pot limit counts the antes: 2 + (3 antes + 3 blinds + 1 call) = 9
    assert s.legal.seat == 1 and s.legal.max_to == 9


def test_big_blind_ante_is_posted_by_the_big_blind_alone():
    o = nl(5, 10, ante=10, ante_type="big_blind")
    s = Scenario(o, seats(4), button=4)
    legal = s.legal
    posted = [(e.seat, e.kind, e.amount) for e in s.of(E.ForcedBetPosted)]
    assert sorted(posted, key=str) == sorted([
        (2, ForcedKind.ANTE, 10), (1, ForcedKind.SMALL_BLIND, 5),
        (2, ForcedKind.BIG_BLIND, 10)], key=str)
    assert legal.seat == 3 and legal.call == 10 and s.hand.current_bet == 10
    s.play("3 call", "4 call", "1 call")
    assert s.legal.seat == 2 and s.legal.can_check  # the ante is dead: the option remains


def test_big_blind_ante_big_blind_folds_to_a_raise_raiser_wins_everything():
    o = nl(5, 10, ante=10, ante_type="big_blind")
    s = Scenario(o, seats(3), button=3)
    s.play("3 raise 30", "1 fold", "2 fold")
    s.finish()
    assert s.won == {3: 5 + 10 + 10 + 10}  # SB, BB ante, BB, own 10 after 20 returned
    assert s.stacks == {1: 995, 2: 980, 3: 1025}


def test_stud_bring_in_tie_broken_by_suit_order_sources_spades_lowest():
    hands = {1: "KcKd 2c", 2: "QcQd 2s", 3: "JcJd 2h"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    assert s.legal.seat == 2 and s.hand.bring_in_seat == 2


def test_stud_bring_in_tie_broken_by_suit_order_bridge_clubs_lowest():
    hands = {1: "KcKd 2c", 2: "QcQd 2s", 3: "JcJd 2h"}
    s = Scenario(stud(suit_order="bridge"), seats(3), button=3, deck=stud_deck(hands, button=3))
    assert s.legal.seat == 1 and s.hand.bring_in_seat == 1


@pytest.mark.parametrize("game", ["stud", "stud_hilo"])
def test_stud_bring_in_ace_is_high(game):
    hands = {1: "KcKd Ah", 2: "QcQd Ks", 3: "JcJd As"}
    s = Scenario(stud(game=game), seats(3), button=3, deck=stud_deck(hands, button=3))
    assert s.legal.seat == 2


def test_stud_bring_in_is_forced_post_it_or_complete():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    legal = s.legal
    assert legal.seat == 2 and not legal.can_fold and not legal.can_check
    assert legal.bring_in == 3 and legal.raise_sizes == (10,)
    s.play("2 bring_in")
    legal = s.legal
    assert legal.seat == 3 and legal.can_fold and legal.call == 3
    assert (legal.raise_kind, legal.raise_sizes) == (COMPLETE, (10,))


def test_stud_bring_in_player_without_chips_beyond_it_is_told_so_when_completing():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah"}
    # seat 2 (lowest upcard) has the ante and the bring-in (1 + 3) and nothing more
    s = Scenario(stud(), [(1, 200), (2, 4), (3, 200)], button=3,
                 deck=stud_deck(hands, button=3))
    legal = s.legal
    assert legal.seat == 2 and legal.bring_in == 3 and legal.raise_kind is None
    with pytest.raises(IllegalAction, match="no chips beyond the bring-in: bring in for 3"):
        s.play("2 complete 10")


def test_stud_bring_in_player_all_in_from_ante_next_player_may_fold_bring_in_or_complete():
    hands = {1: "KcKd 9h", 2: "QcQd 2s", 3: "JcJd Ah"}
    # seat 2 (lowest upcard) has only the ante
    s = Scenario(stud(), [(1, 200), (2, 1), (3, 200)], button=3,
                 deck=stud_deck(hands, button=3))
    legal = s.legal
    assert s.player(2).all_in
    assert legal.seat == 3
    assert legal.can_fold and legal.bring_in == 3
    assert (legal.raise_kind, legal.raise_sizes) == (COMPLETE, (10,))


def test_stud_bring_in_player_all_in_from_ante_next_player_brings_in():
    hands = {1: "KcKd 9h", 2: "QcQd 2s", 3: "JcJd Ah"}
    s = Scenario(stud(), [(1, 200), (2, 1), (3, 200)], button=3,
                 deck=stud_deck(hands, button=3))
    s.play("3 bring_in")
    assert s.legal.seat == 1 and s.legal.call == 3


def test_short_big_blind_all_in_others_still_call_the_full_amount():
    s = Scenario(nl(5, 10), seats(3, s2=4), button=3)
    s.to_act()
    posted = {e.seat: (e.amount, e.all_in) for e in s.of(E.ForcedBetPosted)}
    assert posted == {1: (5, False), 2: (4, True)}
    legal = s.legal
    assert legal.seat == 3 and legal.call == 10
    assert (legal.raise_kind, legal.min_to) == (RAISE, 20)  # raise sizes of the full blind
    s.play("3 call")
    assert s.legal.seat == 1 and s.legal.call == 5


def test_short_small_blind_all_in_others_still_call_the_full_amount():
    s = Scenario(fl(10), seats(3, s1=3), button=3)
    legal = s.legal
    assert legal.seat == 3 and legal.call == 10 and legal.raise_sizes == (20,)


def test_short_big_blind_fixed_limit_raise_sizes_stay_those_of_the_full_blind():
    s = Scenario(fl(10), seats(3, s2=6), button=3)
    legal = s.legal
    assert (legal.call, legal.raise_kind, legal.raise_sizes) == (10, RAISE, (20,))


# =============================================================================================
# §4 Betting
# =============================================================================================
def test_round_end_big_blind_all_in_for_one_the_small_blind_is_covered_and_has_no_turn():
    """RULES §4, round end: "$1/$2, the big blind all in for $1 and the button folds: the small
    blind's $1 covers it, so the board is dealt at once (the small blind is not asked to call
    the full $2, and cannot fold)"."""
    s = Scenario(nl(1, 2), seats(3, s2=1), button=3)
    assert s.on_turn == 3
    s.play("3 fold")
    s.finish()  # no player has a decision left: an Act step would fail here
    assert [a.seat for a in s.actions] == [3]  # the small blind was never asked
    assert len(s.hand.board) == 5
    assert sum(s.won.values()) == 2  # the $1 and the $1: nothing more went in


def test_round_end_heads_up_big_blind_all_in_for_the_small_blind_no_turn():
    s = Scenario(nl(1, 2), seats(2, s2=1), button=1)
    s.finish()
    assert s.actions == [] and len(s.hand.board) == 5
    assert sum(s.won.values()) == 2


def test_round_end_the_call_is_capped_at_the_largest_all_in_of_the_others():
    """Every other player still in is all in: the small blind calls up to the big blind's
    all-in of 7 (2 more, not 5) or folds; no raise (nobody could answer it)."""
    s = Scenario(nl(5, 10), seats(3, s2=7), button=3)
    s.play("3 fold")
    legal = s.legal
    assert legal.seat == 1 and legal.call == 2 and not legal.can_check
    assert legal.raise_kind is None
    s.play("1 call")
    assert s.player(1).contributed == 7 and s.player(1).stack == 993
    s.finish()
    assert sum(s.won.values()) == 14



def test_order_preflop_left_of_big_blind_postflop_left_of_button():
    s = Scenario(nl(), seats(5), button=3)  # SB 4, BB 5
    assert s.on_turn == 1
    s.play("1 call", "2 call", "3 call", "4 call", "5 check")
    assert s.hand.street == 1 and s.on_turn == 4


def test_postflop_first_live_player_left_of_button_skips_folded():
    s = Scenario(nl(), seats(4), button=4)
    s.play("3 call", "4 call", "1 fold", "2 check")
    assert s.hand.street == 1 and s.on_turn == 2


def test_stud_later_streets_best_showing_hand_acts_first():
    # 4th street: seat 3 shows a pair of kings; seat 1 shows A-Q
    hands = {1: "2c2d Ad Qs", 2: "3c3d 5s 4h", 3: "6c6d Kh Kd"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.hand.street == 1 and s.on_turn == 3


def test_stud_showing_tie_goes_to_first_clockwise_from_button():
    # seats 1 and 3 both show A-K; button 1: clockwise 2, 3, 1 -> seat 3
    hands = {1: "2c2d Ad Ks", 2: "3c3d 5s 4h", 3: "6c6d Ah Kd"}
    s = Scenario(stud(), seats(3), button=1, deck=stud_deck(hands, button=1))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.hand.street == 1 and s.on_turn == 3


def test_stud_hilo_first_to_act_by_high_showing_hand():
    hands = {1: "2c2d Ad Qs", 2: "3c3d 5s 4h", 3: "6c6d Kh Kd"}
    s = Scenario(stud(game="stud_hilo"), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.on_turn == 3


def test_fixed_limit_10_20_bet_is_10_raise_to_20():
    s = Scenario(fl(10), seats(3), button=3)
    s.play("3 call", "1 call", "2 check")
    assert s.legal.raise_kind is BET and s.legal.raise_sizes == (10,)
    s.play("1 bet 10")
    assert s.legal.raise_kind is RAISE and s.legal.raise_sizes == (20,)


def test_fixed_limit_10_20_caps_at_40_and_80():
    s = Scenario(fl(10), seats(4), button=4)
    s.play("3 raise 20", "4 raise 30", "1 raise 40")
    legal = s.legal
    assert legal.seat == 2 and legal.raise_kind is None and legal.call == 30
    s.play("2 call", "3 call", "4 call")
    s.play("1 check", "2 check", "3 check", "4 check")  # flop
    assert s.hand.street == 2
    assert s.legal.raise_sizes == (20,)  # big bet on the turn
    s.play("1 bet 20", "2 raise 40", "3 raise 60", "4 raise 80")
    legal = s.legal
    assert legal.seat == 1 and legal.raise_kind is None and legal.call == 60


def test_max_bets_option_sets_the_cap():
    s = Scenario(fl(10, max_bets=3), seats(4), button=4)
    s.play("3 raise 20", "4 raise 30")
    assert s.legal.seat == 1 and s.legal.raise_kind is None and s.legal.call == 25


def test_heads_up_capped_by_default():
    s = Scenario(fl(10), seats(2), button=2)
    s.play("2 raise 20", "1 raise 30", "2 raise 40")
    assert s.legal.raise_kind is None


def test_heads_up_uncapped_when_two_players_start_the_round():
    s = Scenario(fl(10, heads_up_uncapped=True), seats(2), button=2)
    s.play("2 raise 20", "1 raise 30", "2 raise 40", "1 raise 50", "2 raise 60")
    assert s.legal.raise_sizes == (70,)


def test_heads_up_uncapped_when_folds_leave_two_before_the_cap():
    s = Scenario(fl(10, heads_up_uncapped=True), seats(3), button=3)
    s.play("3 raise 20", "1 fold", "2 raise 30", "3 raise 40", "2 raise 50")
    assert s.legal.raise_sizes == (60,)


def test_heads_up_uncapped_not_after_the_cap_was_reached_three_handed():
    s = Scenario(fl(10, heads_up_uncapped=True), seats(3), button=3)
    s.play("3 raise 20", "1 raise 30", "2 raise 40")
    assert s.legal.raise_kind is None
    s.play("3 fold")
    assert s.legal.raise_kind is None


def test_stud_posting_bring_in_counts_as_acting_round_ends_when_all_call():
    hands = {1: "KcKd 9h 2c", 2: "QcQd 3s 2d", 3: "JcJd Ah 2h"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.hand.street == 1
    assert [e for e in s.of(E.BettingRoundClosed)] == [E.BettingRoundClosed(0)]


def test_stud_15_30_completion_and_raises_cap_at_60():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah", 4: "TcTd 8h"}
    s = Scenario(stud(15), seats(4), button=4, deck=stud_deck(hands, button=4))
    s.play("2 bring_in")
    assert s.legal.raise_kind is COMPLETE and s.legal.raise_sizes == (15,)
    s.play("3 complete 15")
    assert s.legal.raise_kind is RAISE and s.legal.raise_sizes == (30,)
    s.play("4 raise 30", "1 raise 45")
    legal = s.legal
    assert legal.seat == 2 and legal.call == 40 and legal.raise_sizes == (60,)
    s.play("2 raise 60")
    legal = s.legal
    assert legal.seat == 3 and legal.raise_kind is None and legal.call == 45


def test_stud_bring_in_player_may_complete_instead():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah"}
    s = Scenario(stud(15), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 complete 15")
    assert s.legal.seat == 3 and s.legal.call == 15 and s.legal.raise_sizes == (30,)


def _open_pair_on_4th(game: str):
    # 4th street: seat 1 shows K-K (an open pair); $5/$10
    hands = {1: "2c3d Kh Kd", 2: "4c5d 2s 9h"}
    s = Scenario(stud(5, game=game), seats(2), button=2, deck=stud_deck(hands, button=2))
    s.play("2 bring_in", "1 call")
    assert s.hand.street == 1
    return s


def test_stud_4th_street_open_pair_5_10():
    s = _open_pair_on_4th("stud")
    legal = s.legal
    assert legal.seat == 1 and legal.raise_kind is BET and legal.raise_sizes == (5, 10)
    s.play("1 bet 5")
    legal = s.legal
    assert legal.call == 5 and legal.raise_sizes == (10, 15)


def test_stud_4th_street_open_pair_big_bet_makes_later_raises_big():
    s = _open_pair_on_4th("stud")
    s.play("1 bet 5", "2 raise 15")
    assert s.legal.raise_sizes == (25,)
    s = _open_pair_on_4th("stud")
    s.play("1 bet 10")
    assert s.legal.raise_sizes == (20,)


def test_stud_hilo_open_pair_changes_nothing():
    s = _open_pair_on_4th("stud_hilo")
    assert s.legal.raise_sizes == (5,)
    s.play("1 bet 5")
    assert s.legal.raise_sizes == (10,)


def test_no_limit_bet_is_at_least_the_big_blind():
    s = Scenario(nl(10, 20), seats(2), button=2)
    s.play("2 call", "1 check")
    assert shape(s.legal) == (0, BET, 20, 980)


def test_no_limit_100_bet_min_raise_200():
    s = Scenario(nl(10, 20), seats(2), button=2)
    s.play("2 call", "1 check", "1 bet 100")
    assert shape(s.legal) == (100, RAISE, 200, 980)


def test_no_limit_50_bet_min_raise_100():
    s = Scenario(nl(10, 20), seats(2), button=2)
    s.play("2 call", "1 check", "1 bet 50")
    assert s.legal.min_to == 100


def test_no_limit_min_raise_is_the_largest_previous_bet_or_raise():
    s = Scenario(nl(10, 20), seats(3), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 raise 300")
    assert s.legal.min_to == 500


def test_no_limit_preflop_min_raise_is_a_big_blind_more():
    s = Scenario(nl(10, 20), seats(3), button=3)
    assert shape(s.legal) == (20, RAISE, 40, 1000)


def test_pot_limit_200_pot_150_bet_150_call_allows_800():
    s = Scenario(pl(25, 50), seats(4, 2000), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    assert s.hand.pot_total == 200
    s.play("1 bet 150", "2 call")
    legal = s.legal
    assert legal.seat == 3 and shape(legal) == (150, RAISE, 300, 800)


def test_pot_limit_100_75_75_max_400():
    s = Scenario(pl(10, 20), seats(5), button=5)
    s.play("3 call", "4 call", "5 call", "1 call", "2 check")
    assert s.hand.pot_total == 100
    s.play("1 bet 75", "2 call")
    assert s.legal.max_to == 400


def test_pot_limit_first_bet_is_at_most_the_pot():
    s = Scenario(pl(10, 20), seats(5), button=5)
    s.play("3 call", "4 call", "5 call", "1 call", "2 check")
    assert shape(s.legal) == (0, BET, 20, 100)


def test_pot_limit_1_2_folded_to_small_blind_max_6():
    s = Scenario(pl(1, 2), seats(3, 100), button=3)
    s.play("3 fold")
    legal = s.legal
    assert legal.seat == 1 and shape(legal) == (1, RAISE, 4, 6)


def test_pot_limit_bb_option_after_three_limpers_max_12():
    s = Scenario(pl(1, 2), seats(5, 100), button=5)  # SB 1, BB 2
    s.play("3 call", "4 call", "5 call", "1 call")
    assert s.hand.pot_total == 10
    legal = s.legal
    assert legal.seat == 2 and legal.can_check and shape(legal) == (0, RAISE, 4, 12)


def test_no_limit_below_the_minimum_only_as_all_in():
    s = Scenario(nl(10, 20), seats(3, s3=150), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 call")
    legal = s.legal  # seat 3 has 130 behind: the minimum raise (200) is out of reach
    assert legal.seat == 3 and shape(legal) == (100, RAISE, 130, 130)
    s.play("3 raise 130")
    assert s.actions[-1].all_in


def test_pot_limit_below_the_minimum_only_as_all_in():
    s = Scenario(pl(10, 20), seats(3, s3=50), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 20")
    legal = s.legal
    assert legal.seat == 2 and shape(legal) == (20, RAISE, 40, 120)  # 20 + (80 + 20)
    s.play("2 call")
    assert shape(s.legal) == (20, RAISE, 30, 30)


def test_no_limit_short_all_in_does_not_reopen_for_players_who_acted():
    s = Scenario(nl(10, 20), seats(4, s3=150), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    s.play("1 bet 100", "2 call", "3 raise 130", "4 call")  # 130 is 30 more: short
    legal = s.legal
    assert legal.seat == 1 and legal.call == 30 and legal.raise_kind is None
    s.play("1 call")
    assert s.legal.seat == 2 and s.legal.raise_kind is None


def test_no_limit_short_all_in_player_yet_to_act_may_raise_a_full_raise_over_it():
    s = Scenario(nl(10, 20), seats(4, s3=150), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    s.play("1 bet 100", "2 call", "3 raise 130")
    legal = s.legal
    assert legal.seat == 4 and shape(legal) == (130, RAISE, 230, 980)


def test_no_limit_short_all_ins_adding_up_to_a_full_raise_reopen():
    s = Scenario(nl(10, 20), seats(4, s2=170, s3=230), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    s.play("1 bet 100", "2 raise 150", "3 raise 210", "4 call")
    legal = s.legal  # 210 is 110 over the 100 seat 1 last faced: a full raise in total
    assert legal.seat == 1 and shape(legal) == (110, RAISE, 310, 980)


def test_fixed_limit_15_allin_on_20_round_next_raise_35():
    s = Scenario(fl(10), seats(3, s3=25), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 check", "2 check", "3 check")
    s.play("1 check", "2 check")
    assert s.hand.street == 2 and s.legal.raise_sizes == (15,)  # all in for 15 of 20
    s.play("3 bet 15")
    legal = s.legal
    assert legal.seat == 1 and legal.call == 15
    assert (legal.raise_kind, legal.raise_sizes) == (RAISE, (35,))


def test_fixed_limit_all_in_raise_under_half_a_bet_does_not_reopen():
    s = Scenario(fl(10), seats(3, s3=23), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 bet 10", "2 call", "3 raise 13")
    legal = s.legal
    assert legal.seat == 1 and legal.call == 3 and legal.raise_kind is None


def test_fixed_limit_all_in_raise_under_half_a_bet_next_player_may_complete():
    s = Scenario(fl(10), seats(3, s2=23), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 bet 10", "2 raise 13")
    legal = s.legal
    assert legal.seat == 3 and legal.call == 13 and legal.raise_sizes == (20,)


def test_fixed_limit_all_in_bet_under_half_a_bet_next_player_may_complete():
    s = Scenario(fl(10), seats(3, s1=14), button=3)
    s.play("3 call", "1 call", "2 check")
    assert s.legal.raise_sizes == (4,)
    s.play("1 bet 4")
    legal = s.legal
    assert legal.seat == 2 and legal.call == 4
    assert (legal.raise_kind, legal.raise_sizes) == (COMPLETE, (10,))


def test_one_player_left_the_hand_ends_at_once():
    s = Scenario(nl(), seats(3), button=3)
    s.play("3 raise 60", "1 fold", "2 fold")
    s.finish()
    assert [d.street for d in s.of(E.CardsDealt)] == [0]
    assert s.of(E.HandShown) == []
    assert s.won == {3: 30 + 20}
    assert s.stacks == {1: 990, 2: 980, 3: 1030}


def test_everyone_all_in_remaining_cards_dealt_without_betting():
    s = Scenario(nl(), seats(3, 100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 call")
    s.finish()
    assert [d.street for d in s.of(E.CardsDealt)] == [0, 1, 2, 3]
    assert s.of(E.BettingRoundClosed) == [E.BettingRoundClosed(0)]
    assert len(s.actions) == 3


def test_all_in_and_one_caller_left_the_rest_is_dealt_without_betting():
    s = Scenario(nl(), seats(3, s1=100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 fold", "1 raise 100", "2 call")
    s.finish()
    assert len(s.actions) == 3
    assert s.of(E.BettingRoundClosed) == [E.BettingRoundClosed(0)]


# =============================================================================================
# §5 All-in and pots
# =============================================================================================

def test_uncalled_bet_is_returned():
    s = Scenario(nl(), seats(3), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 fold", "3 fold")
    assert s.of(E.BetReturned) == [E.BetReturned(1, 100)]
    s.finish()
    assert s.pots == (E.Pot(60, (1,)),)
    assert s.stacks == {1: 1040 - s.rake, 2: 980, 3: 980}


def test_uncalled_part_of_an_all_in_raise_is_returned():
    s = Scenario(nl(), seats(3, s1=300), button=3)
    s.play("3 raise 1000", "1 call", "2 fold")
    assert s.of(E.BetReturned) == [E.BetReturned(3, 700)]


def test_uncalled_part_of_a_blind_is_returned_when_the_other_player_is_all_in_from_the_blind():
    # heads-up: the button posts the small blind with all it has (30); the big blind's 70 over
    # it is uncalled
    s = Scenario(nl(50, 100), [(1, 30), (2, 1000)], button=1,
                 deck=board_deck({1: "AcAd", 2: "KcKd"}, "2h3h4s 9d 7c", button=1))
    s.finish()
    assert s.of(E.BetReturned) == [E.BetReturned(2, 70)]
    assert s.pots == (E.Pot(60, (1, 2)),)
    assert s.rake == 3  # 5% of 60, not of 130


def test_side_pots_each_contested_by_their_contributors():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, rake_basis_points=0), [(1, 50), (2, 100), (3, 200)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 200", "1 call", "2 call")
    assert s.of(E.BetReturned) == [E.BetReturned(3, 100)]
    s.finish()
    assert s.pots == (E.Pot(150, (1, 2, 3)), E.Pot(100, (2, 3)))
    assert s.won == {1: 150, 2: 100}
    assert s.stacks == {1: 150, 2: 100, 3: 100}
    # the last side pot is awarded first
    assert [a.pot_index for a in s.of(E.PotAwarded)] == [1, 0]


def test_folded_players_chips_stay_in_the_pots_they_fed():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(10, 20, rake_basis_points=0), [(1, 50), (2, 1000), (3, 1000)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 fold")
    s.finish()
    assert s.pots == (E.Pot(120, (1, 3)),)
    assert s.won == {1: 120}


# =============================================================================================
# §6 Showdown and awarding
# =============================================================================================

def _river(button: int = 3, **opts) -> Scenario:
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(10, 20, rake_basis_points=0, **opts), seats(3), button=button,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=button))
    for _ in range(3):  # pre-flop and two streets checked/called around
        while s.hand.street < 3:
            step = s.to_act()
            s.act(step.seat, *check_call_policy(s.hand, step.legal))
    return s


def test_showdown_last_aggressor_on_the_final_round_shows_first():
    s = _river()
    s.play("1 check", "2 bet 50", "3 call", "1 call")
    step = s.to_showdown()
    assert step.seat == 2 and not step.must_show
    assert s.hand.show_order == (2, 3, 1)


def test_showdown_nobody_bet_first_to_act_on_the_final_round_shows_first():
    s = _river(button=1)
    s.play("2 check", "3 check", "1 check")
    assert s.to_showdown().seat == 2
    assert s.hand.show_order == (2, 3, 1)


def test_showdown_later_players_may_muck_and_a_mucked_hand_has_no_claim():
    s = _river()
    s.play("1 bet 50", "2 call", "3 call")
    s.show(1)
    s.muck(2)
    s.muck(3)
    s.finish()
    assert s.won == {1: 210}
    s = _river()
    s.play("1 check", "2 bet 50", "3 call", "1 call")
    s.show(2)
    s.show(3)
    s.muck(1)  # the best hand, mucked: no claim
    s.finish()
    assert s.won == {2: 210}


def test_showdown_a_player_who_does_not_act_has_a_winning_hand_shown_and_a_losing_one_mucked():
    s = _river()
    s.play("1 check", "2 bet 50", "3 call", "1 call")
    s.finish()
    assert s.shown_order() == [2, 3, 1]
    assert [e.seat for e in s.of(E.HandShown)] == [2, 1]
    assert [e.seat for e in s.of(E.HandMucked)] == [3]
    assert s.won == {1: 210}


def test_all_in_showdown_shows_every_hand():
    s = Scenario(nl(rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 call")
    step = s.to_showdown()
    assert step.must_show
    err = s.reject(D.muck, step.seat)
    assert "shown" in err.reason
    s.finish()
    assert sorted(e.seat for e in s.of(E.HandShown)) == [1, 2, 3]
    assert s.of(E.HandMucked) == []


def test_omaha_the_whole_four_card_hand_is_shown():
    hole = {1: "AcAdKhQh", 2: "KcKd2s3s"}
    s = Scenario(pl(1, 2, "omaha", rake_basis_points=0), seats(2, 100), button=2,
                 deck=board_deck(hole, "2h7h4s 9d 7c", button=2))
    s.finish(check_call_policy)
    assert {e.seat: e.cards for e in s.of(E.HandShown) if e.seat == 1} == {1: cards("AcAdKhQh")}


def test_hilo_pot_is_halved_odd_unit_to_the_high_half():
    # pot 5: seat 2 wins high (trip kings), seat 3 wins low (7-4-3-2-A)
    hole = {1: "8s8c8d8h", 2: "KsQsJd9h", 3: "Ac3c9dTs"}
    s = Scenario(pl(1, 2, "omaha_hilo", rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck(hole, "KhKd7c 4s 2h", button=3))
    s.play("3 call", "1 fold", "2 check")
    s.finish(check_call_policy)
    assert _portions(s) == {(Portion.HIGH, 2): 3, (Portion.LOW, 3): 2}


def test_hilo_each_half_is_split_on_its_own():
    # pot 6: high 3 to seat 3; low 3 split between seats 1 and 2, odd unit to seat 1
    # (first clockwise from the button, seat 3)
    hole = {1: "Ac3c9dTs", 2: "Ad3dTcJc", 3: "KsQsJd9h"}
    s = Scenario(pl(1, 2, "omaha_hilo", rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck(hole, "KhKd7c 4s 2h", button=3))
    s.finish(check_call_policy)
    assert _portions(s) == {(Portion.HIGH, 3): 3, (Portion.LOW, 1): 2, (Portion.LOW, 2): 1}


def test_holdem_odd_chip_to_the_first_winner_clockwise_from_the_button():
    # button 2: SB 3, BB 4; pot 5 split between seats 4 and 1; clockwise from the button
    # seat 4 comes first (seat order would give seat 1)
    hole = {1: "2c3d", 2: "AhAs", 3: "KhKs", 4: "2d3c"}
    s = Scenario(nl(1, 2, rake_basis_points=0), seats(4, 100), button=2,
                 deck=board_deck(hole, "9cTdJh Qs Kc", button=2))
    s.play("1 call", "2 fold", "3 fold", "4 check")
    s.finish(check_call_policy)
    assert s.won == {4: 3, 1: 2}


def test_omaha_odd_chip_to_the_first_winner_clockwise_from_the_button():
    hole = {1: "2c3d4h5s", 2: "AhAsAdAc", 3: "KhKsKdKc", 4: "2d3c4s5h"}
    s = Scenario(pl(1, 2, "omaha", rake_basis_points=0), seats(4, 100), button=2,
                 deck=board_deck(hole, "9cTdJh Qs 7c", button=2))
    s.play("1 call", "2 fold", "3 fold", "4 check")
    s.finish(check_call_policy)
    # both play Q-J-T with 5-4
    assert s.won == {4: 3, 1: 2}


def _stud_tied_straights(game: str, button: int, **opts):
    # seats 1 and 2 both make a king-high straight; seat 3 folds on 3rd street. Pot 9.
    hands = {1: "9cTc 9h Jd Qd Kc Th", 2: "9dTd 9s Jh Qh Kd Ts", 3: "2c3c Ah"}
    s = Scenario(stud(10, game, rake_basis_points=0, **opts), seats(3, 200), button=button,
                 deck=stud_deck(hands, button=button))
    s.finish(calls_except({3}))
    assert sum(s.won.values()) == 9
    return s


def test_stud_high_odd_chip_to_the_first_winner_clockwise_from_the_button():
    s = _stud_tied_straights("stud", button=1)  # clockwise 2, 3, 1
    assert s.won == {2: 5, 1: 4}
    s = _stud_tied_straights("stud", button=3)  # clockwise 1, 2, 3
    assert s.won == {1: 5, 2: 4}


def test_stud_hilo_tied_high_odd_chip_by_highest_card_by_suit_sources():
    s = _stud_tied_straights("stud_hilo", button=1)  # Kc beats Kd: clubs highest
    assert s.won == {1: 5, 2: 4}


def test_stud_hilo_tied_high_odd_chip_by_highest_card_by_suit_bridge():
    s = _stud_tied_straights("stud_hilo", button=3, suit_order="bridge")  # Kd beats Kc
    assert s.won == {2: 5, 1: 4}


def _stud_hilo_tied_lows(**opts):
    # seat 3 wins high with four nines; seats 1 and 2 tie for low 6-4-3-2-A.
    # Pot 15 (antes 2 x 3, bring-in 3, two calls): high 8, low 7 split 4 / 3.
    hands = {1: "2c3c Kc Ah 4d 6h Qc", 2: "2d3d Kd As 4h 6s Qd", 3: "9c9d Tc 9h 9s Td Jh"}
    s = Scenario(stud(10, "stud_hilo", ante=2, rake_basis_points=0, **opts), seats(3, 200),
                 button=3, deck=stud_deck(hands, button=3))
    s.finish(check_call_policy)
    return s


def test_stud_hilo_tied_low_odd_chip_by_lowest_card_by_suit_sources():
    s = _stud_hilo_tied_lows()  # As is lower than Ah: spades lowest
    assert _portions(s) == {(Portion.HIGH, 3): 8, (Portion.LOW, 2): 4, (Portion.LOW, 1): 3}


def test_stud_hilo_tied_low_odd_chip_by_lowest_card_by_suit_bridge():
    s = _stud_hilo_tied_lows(suit_order="bridge")  # Ah is lower than As
    assert _portions(s) == {(Portion.HIGH, 3): 8, (Portion.LOW, 1): 4, (Portion.LOW, 2): 3}


def _stud_hilo_tie_both(**opts):
    # seats 1 and 2 both hold A-2-3-4-5 (wheel: tie for high and for low), K, 9; seat 3 folds.
    # Pot 11 (antes 3, bring-in 4, call 4). Seat 1 holds Kh and Ac, seat 2 Ks and As.
    hands = {1: "2c3d Kh Ac 4d 5h 9c", 2: "2s3h Ks As 4h 5d 9s", 3: "QcJc Ad"}
    s = Scenario(stud(10, "stud_hilo", bring_in=4, rake_basis_points=0, **opts),
                 seats(3, 200), button=3, deck=stud_deck(hands, button=3))
    s.finish(calls_except({3}))
    return s


def test_stud_hilo_tie_for_high_and_low_split_whole_pot_odd_unit_to_highest_card_sources():
    s = _stud_hilo_tie_both()  # Kh beats Ks (sources: spades lowest)
    assert s.won == {1: 6, 2: 5}


def test_stud_hilo_tie_for_high_and_low_split_whole_pot_odd_unit_to_highest_card_bridge():
    s = _stud_hilo_tie_both(suit_order="bridge")  # Ks beats Kh
    assert s.won == {2: 6, 1: 5}


def test_chip_unit_odd_chip_is_a_whole_unit():
    # unit 5, blinds 5/10: pot 25 = 5 units split 3 / 2 units
    hole = {1: "AhAs", 2: "2c3d", 3: "2d3c"}
    s = Scenario(nl(5, 10, chip_unit=5, rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck(hole, "9cTdJh Qs Kc", button=3))
    s.play("3 call", "1 fold", "2 check")
    s.finish(check_call_policy)
    assert s.won == {2: 15, 3: 10}


# =============================================================================================
# §8 Rake
# =============================================================================================

def _raked_hand(**opts) -> Scenario:
    """Pot 230 after the flop: three limp for 10, seat 1 bets 100, seat 2 calls, seat 3 folds."""
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, **opts), seats(3), button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 call", "3 fold")
    s.finish(check_call_policy)
    return s


def test_rake_is_5_percent_of_the_pot_rounded_down():
    s = _raked_hand()
    assert s.rake == 11  # 5% of 230 = 11.5
    assert s.won == {1: 219}
    [taken] = s.of(E.RakeTaken)
    assert taken.from_pots == (11,)


def test_rake_is_capped():
    assert _raked_hand(rake_cap=5).rake == 5


def test_rake_cap_by_number_of_players_dealt_in():
    cap = RakeCap(heads_up=1, three_four=2, five_plus=3)
    assert _raked_hand(rake_cap=cap).rake == 2


def test_rake_rounds_down_to_the_chip_unit():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, chip_unit=5), seats(3), button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 call", "3 fold")
    s.finish(check_call_policy)
    assert s.rake == 10  # 11.5 -> 10


def test_rake_percent_option():
    assert _raked_hand(rake_basis_points=1000).rake == 23


def test_no_flop_no_drop():
    s = Scenario(nl(), seats(3), button=3)
    s.play("3 raise 100", "1 call", "2 raise 300", "3 fold", "1 fold")
    s.finish()
    assert s.of(E.RakeTaken)[0].amount == 0 and s.won == {2: 300}


def test_no_flop_no_drop_off_rakes_a_preflop_pot():
    s = Scenario(nl(no_flop_no_drop=False), seats(3), button=3)
    s.play("3 raise 100", "1 call", "2 raise 300", "3 fold", "1 fold")
    s.finish()
    assert s.rake == 15 and s.won == {2: 285}  # 5% of 300


def test_no_flop_no_drop_stud_hand_ending_on_3rd_street():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 complete 10", "1 fold", "2 fold")
    s.finish()
    assert s.rake == 0 and s.won == {3: 9}  # antes 3, bring-in 3, own 3 after 7 returned


def test_stud_hand_ending_on_4th_street_is_raked():
    hands = {1: "KcKd 9h 9s", 2: "QcQd 3s 2d", 3: "JcJd Ah Ad"}
    s = Scenario(stud(10, rake_cap=100, rake_basis_points=1000), seats(3), button=3,
                 deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    s.play("3 bet 10", "1 fold", "2 fold")
    s.finish()
    assert s.rake == 1  # 10% of 12


def test_hand_all_in_preflop_is_raked_once_the_flop_is_dealt():
    s = Scenario(nl(), seats(3, 100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 call")
    s.finish()
    assert s.rake == 15


def test_rake_is_taken_from_the_main_pot_first():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, rake_basis_points=1000), [(1, 50), (2, 100), (3, 200)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 200", "1 call", "2 call")
    s.finish()
    [taken] = s.of(E.RakeTaken)
    assert taken.amount == 25 and taken.from_pots == (25, 0)  # 10% of 250, from the 150
    assert s.won == {1: 125, 2: 100}


def test_rake_larger_than_the_main_pot_continues_into_side_pots():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    # (a short all-in from the small blind keeps the main pot below the 10% ceiling's rake)
    s = Scenario(nl(5, 10, rake_basis_points=1000), [(1, 5), (2, 100), (3, 200)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 200", "2 call")
    s.finish()
    [taken] = s.of(E.RakeTaken)
    assert s.pots == (E.Pot(15, (1, 2, 3)), E.Pot(190, (2, 3)))
    assert taken.amount == 20 and taken.from_pots == (15, 5)  # 10% of 205, rounded down
    assert s.won == {2: 185}


# =============================================================================================
# Later additions: two live big blinds, a dead small blind, stud showdown order
# =============================================================================================

def test_two_big_blinds_can_be_live_in_one_hand():
    # a newcomer in seat 3 posts a live big blind to be dealt in at once (RULES §3)
    forced = (E.ForcedBet(1, ForcedKind.SMALL_BLIND, 10), E.ForcedBet(2, ForcedKind.BIG_BLIND, 20),
              E.ForcedBet(3, ForcedKind.BIG_BLIND, 20))
    s = Scenario(nl(), seats(4), button=4, forced_bets=forced)
    legal = s.legal
    assert legal.seat == 3 and legal.can_check  # the newcomer's blind is live: their option
    assert (legal.raise_kind, legal.min_to) == (RAISE, 40)
    s.play("3 check", "4 call", "1 call")
    legal = s.legal
    assert legal.seat == 2 and legal.can_check and legal.raise_kind is RAISE


def test_returning_players_missed_small_blind_is_dead():
    forced = (E.ForcedBet(1, ForcedKind.SMALL_BLIND, 1), E.ForcedBet(2, ForcedKind.BIG_BLIND, 2),
              E.ForcedBet(3, ForcedKind.DEAD_SMALL_BLIND, 1),
              E.ForcedBet(3, ForcedKind.BIG_BLIND, 2))
    s = Scenario(pl(1, 2), seats(4, 100), button=4, forced_bets=forced)
    s.to_act()
    p3 = s.player(3)
    assert (p3.round_bet, p3.contributed) == (2, 3)  # the dead blind is not part of the bet
    assert s.hand.pot_total == 6
    legal = s.legal
    assert legal.seat == 3 and legal.can_check
    assert legal.max_to == 2 + 6  # pot limit counts the dead blind


def test_stud_showdown_nobody_bet_on_7th_the_best_showing_hand_shows_first():
    hands = {1: "2c2d Ad Qs 3h 4h 6s 9c", 2: "3c3d 5s 7h 8h Js Tc", 3: "6c6d Kh Kd 5d 7c Jc"}
    s = Scenario(stud(rake_basis_points=0), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.finish(check_call_policy)
    assert s.shown_order()[0] == 3  # pair of kings showing acted first on 7th street


def test_stud_short_bring_in_is_all_in_and_others_still_owe_the_full_bring_in():
    hands = {1: "KcKd 9h", 2: "QcQd 2s", 3: "JcJd Ah"}
    s = Scenario(stud(15), [(1, 200), (2, 3), (3, 200)], button=3,  # seat 2: ante 1, 2 behind
                 deck=stud_deck(hands, button=3))
    legal = s.legal
    assert legal.seat == 2 and legal.bring_in == 2 and legal.raise_kind is None
    s.play("2 bring_in")
    assert s.actions[-1].all_in
    legal = s.legal
    assert legal.seat == 3 and legal.call == 5 and legal.raise_sizes == (15,)


def test_hilo_each_pot_is_halved_on_its_own_with_side_pots():
    # seat 1 (all in for 30) wins the main pot's low; seat 2 wins both highs; seat 3 wins the
    # side pot's low. Main pot 90 (45 / 45), side pot 40 (20 / 20).
    hole = {1: "Ac3c9dTs", 2: "KsQsJd9h", 3: "Ad5dTcJc"}
    o = pl(5, 10, "omaha_hilo", rake_basis_points=0)
    s = Scenario(o, [(1, 30), (2, 200), (3, 200)], button=3,
                 deck=board_deck(hole, "KhKd7c 4s 2h", button=3))
    s.play("3 raise 30", "1 call", "2 call")
    s.play("2 bet 20", "3 call")
    s.finish(check_call_policy)
    assert s.pots == (E.Pot(90, (1, 2, 3)), E.Pot(40, (2, 3)))
    assert _portions(s) == {(Portion.HIGH, 2): 65, (Portion.LOW, 1): 45, (Portion.LOW, 3): 20}
    assert s.won == {1: 45, 2: 65, 3: 20}


def test_omaha_hilo_no_qualifying_low_high_wins_the_whole_pot():
    hole = {1: "AcAd2c3d", 2: "KsKcQdJh"}  # the board has only two low cards: no low at all
    s = Scenario(pl(1, 2, "omaha_hilo", rake_basis_points=0), seats(2, 100), button=2,
                 deck=board_deck(hole, "KhTd7c 4s Qh", button=2))
    s.finish(check_call_policy)
    assert [a.portion for a in s.of(E.PotAwarded)] == [Portion.WHOLE]
    assert s.won == {2: 4}


def test_odd_chips_three_way_split_one_unit_each_from_the_button_left():
    # pot 8 (four limp for 2); seats 1, 3 and 4 tie with king-high straights, seat 2 has a
    # queen-high one. 8 = 3 x 2 + 2 units left: one each to seats 3 and 4, the first winners
    # clockwise from the button (seat 2).
    hole = {1: "Kc2d", 2: "7h8s", 3: "Kd3c", 4: "Kh2h"}
    s = Scenario(nl(1, 2, rake_basis_points=0), seats(4, 100), button=2,
                 deck=board_deck(hole, "9cTdJh Qs 4d", button=2))
    s.play("1 call", "2 call", "3 call", "4 check")
    s.finish(check_call_policy)
    assert s.won == {3: 3, 4: 3, 1: 2}


def _bb_all_in_from_its_ante(sb_stack: int) -> Scenario:
    # heads-up, big-blind ante 10: the big blind (seat 2) has exactly the ante and posts no
    # blind; the small blind (the button, seat 1) holds the best hand
    o = nl(5, 10, ante=10, ante_type="big_blind", rake_basis_points=0)
    s = Scenario(o, [(1, sb_stack), (2, 10)], button=1,
                 deck=board_deck({1: "AcAd", 2: "7c2d"}, "KhQs9d 5c 4h", button=1))
    s.finish(check_call_policy)
    return s


def test_big_blind_all_in_from_its_ante_contests_the_ante_only():
    # the big-blind ante is dead money in the main pot, which every live player contests; the
    # small blind's bet is uncalled (the big blind has no live bet) and comes back whole: its
    # 5 already cover the big blind's nothing, so it has no turn (RULES §4, round end)
    s = _bb_all_in_from_its_ante(100)
    assert s.of(E.BetReturned) == [E.BetReturned(1, 5)]
    assert s.actions == []
    assert s.pots == (E.Pot(10, (1, 2)),)
    assert sum(s.stacks.values()) == 110


def test_big_blind_all_in_from_its_ante_small_blind_all_in_too():
    # both all in: the ante (dead) and the small blind's 5 against the big blind's nothing
    s = _bb_all_in_from_its_ante(5)
    assert s.of(E.BetReturned) == [E.BetReturned(1, 5)]
    assert s.pots == (E.Pot(10, (1, 2)),)
    assert sum(s.stacks.values()) == 15
