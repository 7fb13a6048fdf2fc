"""Bad commands to the pure core's betting decisions (THREATS.md 1, 8, 9, 10); dealing,
showing, steps, starting a hand and table options: test_bad_input_dealing_and_tables.py.

Every decision must answer bad input with ``IllegalAction`` carrying a reason a player can read,
and return no events (so nothing could be appended). ``Scenario.reject`` checks all three.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.events import ActionKind
from shared.poker.options import table_options
from tests.helpers.bad_input import finished, flop, nl, preflop, readable, seats, showdown
from tests.helpers.scenario import Scenario, stud_deck

# =============================================================================================
# 1. Acting out of turn, after folding, after all in, during showdown, after the hand
# =============================================================================================

def test_acting_out_of_turn():
    s = preflop()
    for seat in (1, 2):
        for action, to in (("call", None), ("fold", None), ("raise", 60), ("check", None)):
            readable(s.reject_act(seat, action, to), "seat 3's turn")


def test_acting_from_a_seat_not_in_the_hand():
    s = preflop()
    readable(s.reject_act(7, "call"), "not in this hand")


@pytest.mark.parametrize("seat", ["3", None, -3])
def test_acting_with_a_malformed_seat(seat):
    s = preflop()
    s.reject_act(seat, "call")


def test_acting_with_a_float_seat_number():
    s = preflop()
    s.reject_act(3.0, "call")


def test_acting_with_a_boolean_seat_number():
    s = preflop()
    s.play("3 call")
    assert s.on_turn == 1
    s.reject_act(True, "call")


def test_acting_after_folding():
    s = preflop()
    s.play("3 fold")
    for action in ("call", "fold", "check"):
        readable(s.reject_act(3, action), "folded")
    readable(s.reject_act(3, "raise", 60), "folded")


def test_acting_after_going_all_in():
    s = Scenario(nl(), seats(3, s3=100), button=3)
    s.play("3 raise 100", "1 call", "2 call")
    assert s.hand.street == 1 and s.on_turn == 1
    for action, to in (("check", None), ("bet", 20), ("fold", None)):
        readable(s.reject_act(3, action, to), "all in")


def test_acting_before_the_cards_are_dealt():
    s = Scenario(nl(), seats(3), button=3)
    readable(s.reject(D.act, 3, "call"), "no betting round")
    s.advance(stop=(D.Deal,))
    readable(s.reject(D.act, 3, "call"), "no betting round")


def test_acting_during_showdown():
    s = showdown()
    for seat in (1, 2, 3):
        readable(s.reject_act(seat, "check"), "showdown")
        readable(s.reject_act(seat, "bet", 20), "showdown")


def test_acting_after_the_hand():
    s = finished()
    assert isinstance(s.step, D.HandComplete)
    for seat in (1, 2, 3):
        readable(s.reject(D.act, seat, "check"), "no betting round")
        readable(s.reject(D.act, seat, "fold"), "no betting round")


# =============================================================================================
# 10. Checking facing a bet; calling with nothing to call
# =============================================================================================

def test_checking_facing_a_bet():
    s = preflop()
    readable(s.reject_act(3, "check"), "20", "call")
    s = flop()
    s.play("1 bet 40")
    readable(s.reject_act(2, "check"), "40")


def test_calling_with_nothing_to_call_is_rejected_check_instead():
    s = flop()
    readable(s.reject_act(1, "call"), "nothing to call", "check instead")


def test_big_blind_calling_its_own_blind_is_rejected():
    s = preflop()
    s.play("3 call", "1 call")
    readable(s.reject_act(2, "call"), "check instead")


@pytest.mark.parametrize("action", ["allin", "all_in", "", "RAISE", "Check", "check ", "pass",
                                    None, 3, ["fold"], b"fold", ActionKind])
def test_unknown_action(action):
    s = preflop()
    readable(s.reject_act(3, action), "unknown action")


def test_bring_in_when_none_is_due():
    s = preflop()
    readable(s.reject_act(3, "bring_in"), "no bring-in")


# =============================================================================================
# 8. Amounts
# =============================================================================================

NOT_WHOLE_CHIPS = [40.0, 40.5, Fraction(40), Fraction(81, 2), Decimal("40"), "40", "forty", b"40",
                   True, False, math.nan, math.inf, -math.inf, [40], (40,), 40 + 0j, object()]
OUT_OF_RANGE = [-40, -1, 0, 1, 39, 1001, 2**31, 2**63 - 1, 2**63, 2**64, 2**64 + 40, 10**30]


@pytest.mark.parametrize("amount", NOT_WHOLE_CHIPS, ids=repr)
def test_raise_amount_that_is_not_whole_chips(amount):
    s = preflop()
    readable(s.reject_act(3, "raise", amount), "whole numbers")


@pytest.mark.parametrize("amount", NOT_WHOLE_CHIPS, ids=repr)
def test_bet_amount_that_is_not_whole_chips(amount):
    s = flop()
    readable(s.reject_act(1, "bet", amount), "whole numbers")


@pytest.mark.parametrize("amount", OUT_OF_RANGE, ids=repr)
def test_raise_amount_out_of_range(amount):
    s = preflop()  # raise to 40 .. 1000
    err = s.reject_act(3, "raise", amount)
    readable(err, str(amount))


@pytest.mark.parametrize("amount", [a for a in OUT_OF_RANGE if not 20 <= a <= 980] + [19, 981],
                         ids=repr)
def test_bet_amount_out_of_range(amount):
    s = flop()  # bet 20 .. 980
    readable(s.reject_act(1, "bet", amount), str(amount))


@pytest.mark.parametrize("action", ["bet", "raise"])
def test_bet_or_raise_without_an_amount(action):
    s = flop() if action == "bet" else preflop()
    readable(s.reject_act(s.on_turn, action, None), "needs an amount")


def test_raise_to_more_than_the_stack():
    s = preflop()
    readable(s.reject_act(3, "raise", 1001), "more than you have", "1000")


def test_no_limit_raise_below_the_minimum():
    s = flop()
    s.play("1 bet 100")
    readable(s.reject_act(2, "raise", 199), "200")
    readable(s.reject_act(2, "raise", 100), "200")  # a "raise" to the current bet


def test_no_limit_bet_below_the_big_blind():
    s = flop()
    readable(s.reject_act(1, "bet", 19), "20")


def test_pot_limit_bet_over_the_pot():
    s = Scenario(table_options("holdem", "pot_limit", small_blind=1, big_blind=2), seats(3, 100),
                 button=3)
    s.play("3 fold")
    readable(s.reject_act(1, "raise", 7), "6")
    s.play("1 raise 6")
    readable(s.reject_act(2, "raise", 19), "18")  # 6 + (8 + 4)


def test_fixed_limit_wrong_sizes():
    s = Scenario(table_options("holdem", "fixed_limit", small_bet=10), seats(3), button=3)
    for to in (15, 30, 25, 40, 10):
        readable(s.reject_act(3, "raise", to), "raise to 20")


def test_bet_when_facing_a_bet_and_raise_when_there_is_none():
    s = preflop()
    readable(s.reject_act(3, "bet", 40), "raise", "not bet")
    s = flop()
    readable(s.reject_act(1, "raise", 40), "bet", "not raise")


# =============================================================================================
# 9. Raising one's own bet; re-raising after a short all-in; past the cap
# =============================================================================================

def test_raising_ones_own_bet_before_anyone_answers_it():
    s = flop()
    s.play("1 bet 100")
    readable(s.reject_act(1, "raise", 300), "seat 2's turn")


def test_a_bet_everyone_only_called_gives_no_further_turn():
    s = flop()
    s.play("1 bet 100", "2 call", "3 call")
    assert s.of(E.BettingRoundClosed)[-1] == E.BettingRoundClosed(1)
    assert s.hand.street == 2


def test_raising_when_every_other_player_is_all_in():
    s = Scenario(nl(), seats(2, s2=300), button=2)
    s.play("2 call", "1 check", "1 bet 100", "2 raise 280")
    readable(s.reject_act(1, "raise", 600), "all in")


def test_re_raising_after_a_short_all_in_that_did_not_reopen_no_limit():
    s = Scenario(nl(), seats(3, s3=150), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 bet 100", "2 call", "3 raise 130")
    readable(s.reject_act(1, "raise", 300), "short all-in")


def test_re_raising_after_a_short_all_in_that_did_not_reopen_fixed_limit():
    s = Scenario(table_options("holdem", "fixed_limit", small_bet=10), seats(3, s3=23), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 bet 10", "2 call", "3 raise 13")
    readable(s.reject_act(1, "raise", 23), "short all-in")


def test_raising_past_the_fixed_limit_cap():
    s = Scenario(table_options("holdem", "fixed_limit", small_bet=10), seats(4), button=4)
    s.play("3 raise 20", "4 raise 30", "1 raise 40")
    readable(s.reject_act(2, "raise", 50), "capped")
    s.play("2 call", "3 call", "4 call")
    s.play("1 bet 10", "2 raise 20", "3 raise 30", "4 raise 40")
    readable(s.reject_act(1, "raise", 50), "capped")


def test_raising_past_the_stud_cap():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah", 4: "TcTd 8h"}
    s = Scenario(table_options("stud", "fixed_limit", small_bet=15), seats(4), button=4,
                 deck=stud_deck(hands, button=4))
    s.play("2 bring_in", "3 complete 15", "4 raise 30", "1 raise 45", "2 raise 60")
    readable(s.reject_act(3, "raise", 75), "capped")


# =============================================================================================
# Stud bring-in
# =============================================================================================

def _stud() -> Scenario:
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah"}
    s = Scenario(table_options("stud", "fixed_limit", small_bet=15), seats(3, 200), button=3,
                 deck=stud_deck(hands, button=3))
    assert s.on_turn == 2
    return s


def test_wrong_seat_bringing_in():
    s = _stud()
    readable(s.reject_act(3, "bring_in"), "seat 2's turn")
    readable(s.reject_act(1, "complete", 15), "seat 2's turn")


def test_bring_in_player_folding():
    s = _stud()
    readable(s.reject_act(2, "fold"), "bring-in is forced")


@pytest.mark.parametrize("action", ["check", "call"])
def test_bring_in_player_checking_or_calling_is_told_to_bring_in(action):
    s = _stud()
    readable(s.reject_act(2, action), "bring")


def test_bring_in_player_checking_or_calling_is_rejected():
    s = _stud()
    s.reject_act(2, "check")
    s.reject_act(2, "call")


@pytest.mark.parametrize("to", [5, 10, 14, 16, 30])
def test_completing_to_anything_but_the_small_bet(to):
    s = _stud()
    readable(s.reject_act(2, "complete", to), "complete to 15")


@pytest.mark.parametrize("action", ["raise", "bet"])
def test_raise_or_bet_instead_of_completing(action):
    s = _stud()
    readable(s.reject_act(2, action, 15), "complete to 15")
    s.play("2 bring_in")
    readable(s.reject_act(3, action, 15), "complete to 15")


def test_bringing_in_twice():
    s = _stud()
    s.play("2 bring_in")
    readable(s.reject_act(3, "bring_in"), "no bring-in")


