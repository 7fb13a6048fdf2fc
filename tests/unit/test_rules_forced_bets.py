"""Forced bets: every worked example of RULES.md §3, through the engine's
decisions and fold (split from the rule-book example tests by section).

Each test names the rule it checks (section of docs/RULES.md in the docstring or its
section header). Hands are dealt from fixed decks (tests/helpers/scenario.py) so the outcome
is known in advance.
"""

from __future__ import annotations

import pytest

from shared.poker import events as E
from shared.poker.errors import IllegalAction
from shared.poker.events import ForcedKind
from shared.poker.options import AnteType, table_options
from tests.helpers.rules_tables import (
    COMPLETE,
    RAISE,
    fl,
    nl,
    pl,
    seats,
    stud,
)
from tests.helpers.scenario import Scenario, stud_deck

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
    assert legal.seat == 3 and legal.call == 10 and s.hand.round.current_bet == 10
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
    assert s.legal.seat == 2 and s.hand.round.bring_in_seat == 2


def test_stud_bring_in_tie_broken_by_suit_order_bridge_clubs_lowest():
    hands = {1: "KcKd 2c", 2: "QcQd 2s", 3: "JcJd 2h"}
    s = Scenario(stud(suit_order="bridge"), seats(3), button=3, deck=stud_deck(hands, button=3))
    assert s.legal.seat == 1 and s.hand.round.bring_in_seat == 1


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
# §3 Later additions: two live big blinds, a dead small blind, a short bring-in
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
