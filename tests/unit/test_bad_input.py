"""Bad commands to the pure core (THREATS.md 1, 8, 9, 10; dealing and showing too).

Every decision must answer bad input with ``IllegalAction`` carrying a reason a player can read,
and return no events (so nothing could be appended). ``Scenario.reject`` checks all three.
Bad table options raise ``InvalidOptions``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import pytest

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, Card, cards
from shared.poker.driver import check_call_policy, new_table
from shared.poker.errors import IllegalAction, InvalidOptions
from shared.poker.events import ActionKind
from shared.poker.options import RakeCap, table_options
from tests.helpers.scenario import Scenario, board_deck, stud_deck


def nl(sb: int = 10, bb: int = 20, **kw):
    return table_options("holdem", "no_limit", small_blind=sb, big_blind=bb, **kw)


def seats(n: int, stack: int = 1000, **special: int) -> list[tuple[int, int]]:
    return [(i, special.get(f"s{i}", stack)) for i in range(1, n + 1)]


def preflop() -> Scenario:
    """NL 10/20, three players of 1000, button 3: seat 3 is on turn facing 20."""
    s = Scenario(nl(), seats(3), button=3)
    assert s.on_turn == 3
    return s


def flop() -> Scenario:
    """Three limpers; on the flop seat 1 is on turn with nothing to call."""
    s = preflop()
    s.play("3 call", "1 call", "2 check")
    assert s.hand.street == 1 and s.on_turn == 1
    return s


def showdown() -> Scenario:
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(), seats(3), button=3, deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    while not isinstance(s.advance(), D.Show):
        step = s.step
        s.act(step.seat, *check_call_policy(s.hand, step.legal))
    return s


def finished() -> Scenario:
    s = preflop()
    s.finish(check_call_policy)
    return s


def readable(err: IllegalAction, *words: str) -> None:
    reason = err.reason
    assert reason and len(reason) < 200 and "Traceback" not in reason
    for w in words:
        assert w.lower() in reason.lower(), f"{w!r} not in {reason!r}"


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


# =============================================================================================
# Dealing
# =============================================================================================

def _at_deal(street: int = 0) -> Scenario:
    s = Scenario(nl(), seats(2), button=2, deck=board_deck({1: "AhKh", 2: "QhJh"}, "2c3c4c5c6c",
                                                           button=2))
    if street:
        s.play("2 call", "1 check")
    s.advance(stop=(D.Deal,))
    assert isinstance(s.step, D.Deal) and s.hand.street == street
    return s


@pytest.mark.parametrize("n", [0, 1, 3, 5, 52])
def test_dealing_the_wrong_number_of_cards(n):
    s = _at_deal()
    readable(s.reject(D.deal, cards("2d3d4d5d6d7d8d9dTdJdQdKdAd2s3s4s5s6s7s8s9sTsJsQsKsAs"
                                    "2h3h4h5h6h7h8h9hThJhQhKhAh2c3c4c5c6c7c8c9cTcJcQcKcAc")[:n]),
             "takes 4 cards")


def test_dealing_a_duplicate_card():
    s = _at_deal()
    readable(s.reject(D.deal, cards("AhKhQhAh")), "dealt twice")


def test_dealing_a_card_already_dealt_this_hand():
    s = _at_deal(street=1)
    readable(s.reject(D.deal, cards("9d AhTc9c")), "dealt twice")  # Ah is in seat 1's hand
    s._apply(D.deal(s.hand, cards("9d Tc9c8c")))
    s.play("1 check", "2 check")
    s.advance(stop=(D.Deal,))
    readable(s.reject(D.deal, cards("2s 9d")), "dealt twice")  # the flop's burn
    readable(s.reject(D.deal, cards("2s 8c")), "dealt twice")  # a flop card


@pytest.mark.parametrize("bad", [["Ah", "Kh", "Qh", "Jh"], [60, 61, 62, 63], [-1, 1, 2, 3],
                                 [Card(99), Card(1), Card(2), Card(3)], [1.0, 2.0, 3.0, 4.0],
                                 None],
                         ids=["str", "int-over-51", "negative", "Card(99)", "float", "None"])
def test_dealing_values_that_are_not_cards(bad):
    s = _at_deal()
    s.reject(D.deal, bad)


# =============================================================================================
# Showing and mucking
# =============================================================================================

def test_showing_cards_not_held():
    s = showdown()
    seat = s.step.seat
    assert seat == 1  # nobody bet on the river: the first to act shows first
    readable(s.reject(D.show, 1, cards("AsAh")), "does not hold")
    readable(s.reject(D.show, 1, cards("KcKd")), "does not hold")  # seat 2's cards
    readable(s.reject(D.show, 1, cards("2h3h")), "does not hold")  # board cards
    readable(s.reject(D.show, 1, cards("Ac")), "does not hold")
    readable(s.reject(D.show, 1, cards("AcAd2c")), "does not hold")


def test_showing_part_of_an_omaha_hand():
    hole = {1: "AcAdKhQh", 2: "KcKd2s3s"}
    s = Scenario(table_options("omaha", "pot_limit", small_blind=1, big_blind=2), seats(2, 100),
                 button=2, deck=board_deck(hole, "2h7h4s 9d 7c", button=2))
    while not isinstance(s.advance(), D.Show):
        s.act(s.step.seat, *check_call_policy(s.hand, s.step.legal))
    seat = s.step.seat
    held = s.player(seat).hole
    readable(s.reject(D.show, seat, held[:2]), "whole hand")


def test_showing_or_mucking_out_of_turn():
    s = showdown()
    readable(s.reject(D.show, 2), "seat 1")
    readable(s.reject(D.muck, 3), "seat 1")
    readable(s.reject(D.showdown_default, 2), "seat 1")


def test_showing_from_a_folded_or_absent_seat():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(), seats(3), button=3, deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 fold")
    while not isinstance(s.advance(), D.Show):
        s.act(s.step.seat, *check_call_policy(s.hand, s.step.legal))
    s.reject(D.show, 3)
    s.reject(D.show, 9)


def test_mucking_in_an_all_in_showdown():
    s = Scenario(nl(), seats(3, 100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 call")
    readable(s.reject(D.muck, s.to_showdown().seat), "every hand is shown")


def test_showing_during_betting_and_after_the_hand():
    s = preflop()
    readable(s.reject(D.show, 3), "cannot show")
    readable(s.reject(D.muck, 3), "cannot show")
    s = finished()
    s.reject(D.show, 1)
    s.reject(D.muck, 1)


# =============================================================================================
# Every other decision at the wrong step
# =============================================================================================

def test_every_decision_rejects_the_wrong_step():
    s = preflop()  # a betting round is open
    hand = s.hand
    readable(s.reject(D.commit_deck, "c0ffee"), "commit")
    readable(s.reject(D.post_forced_bets), "forced bets")
    readable(s.reject(D.deal, cards("2c3c4c")), "deal")
    readable(s.reject(D.reshuffle, "c0ffee", 10), "reshuffle")
    readable(s.reject(D.form_pots), "pots")
    readable(s.reject(D.take_rake), "rake")
    readable(s.reject(D.award_pots), "award")
    readable(s.reject(D.reveal_deck, s.dealer.decks, s.dealer.salts), "reveal")
    assert s.hand is hand


def test_decisions_after_the_hand_are_rejected():
    s = finished()
    for decision, args in ((D.commit_deck, ("c0ffee",)), (D.post_forced_bets, ()),
                           (D.deal, (cards("2c3c4c"),)), (D.form_pots, ()), (D.take_rake, ()),
                           (D.award_pots, ()), (D.reveal_deck, (s.dealer.decks, s.dealer.salts))):
        s.reject(decision, *args)


def test_reveal_deck_that_does_not_match_its_commitment():
    s = preflop()
    s.play("3 fold", "1 fold")
    s.advance(stop=(D.RevealDeck,))
    decks, salts = s.dealer.decks, s.dealer.salts
    swapped = [decks[0][1:2] + decks[0][:1] + decks[0][2:]]
    readable(s.reject(D.reveal_deck, swapped, salts), "does not match")
    readable(s.reject(D.reveal_deck, decks, ["other salt"]), "does not match")
    readable(s.reject(D.reveal_deck, decks + decks, salts + salts), "committed")
    readable(s.reject(D.reveal_deck, decks, []), "salt")


def test_reshuffle_of_the_wrong_size():
    s = Scenario(table_options("stud", "fixed_limit", small_bet=10), seats(7), button=7)
    while s.hand.street < 4:
        step = s.to_act()
        s.act(step.seat, *check_call_policy(s.hand, step.legal))
    step = s.advance(stop=(D.Reshuffle,))
    assert isinstance(step, D.Reshuffle)
    readable(s.reject(D.reshuffle, "c0ffee", step.deck_size + 1), str(step.deck_size))


# =============================================================================================
# Starting a hand
# =============================================================================================

def _table():
    return new_table(nl())


@pytest.mark.parametrize("stacks, words", [
    ([(1, 100)], "two players"),
    ([], "two players"),
    ([(s, 100) for s in range(1, 12)], "at most 10"),
    ([(1, 100), (1, 200)], "twice"),
    ([(1, 100), (2, 0)], "no chips"),
    ([(1, 100), (2, -5)], "no chips"),
])
def test_start_hand_rejects_bad_seatings(stacks, words):
    with pytest.raises(IllegalAction) as info:
        D.start_hand(_table(), 1, 1, stacks)
    readable(info.value, words)


def test_start_hand_while_a_hand_is_running():
    s = preflop()
    with pytest.raises(IllegalAction) as info:
        D.start_hand(s.table, 2, 1, seats(3))
    readable(info.value, "already running")


@pytest.mark.parametrize("stack", [100.0, 99.5, "100", True, None, Decimal(100)], ids=repr)
def test_start_hand_rejects_stacks_that_are_not_whole_chips(stack):
    with pytest.raises(IllegalAction):
        D.start_hand(_table(), 1, 1, [(1, 100), (2, stack)])


# =============================================================================================
# Table options
# =============================================================================================

BAD_OPTIONS = [
    pytest.param(("poker", "no_limit"), dict(big_blind=2), id="unknown-game"),
    pytest.param(("holdem", "spread_limit"), dict(big_blind=2), id="unknown-structure"),
    pytest.param(("stud", "no_limit"), dict(big_blind=2), id="stud-no-limit"),
    pytest.param(("stud", "pot_limit"), dict(big_blind=2), id="stud-pot-limit"),
    pytest.param(("stud_hilo", "no_limit"), dict(big_blind=2), id="stud-hilo-no-limit"),
    pytest.param(("holdem", "fixed_limit"), dict(), id="fixed-limit-without-small-bet"),
    pytest.param(("holdem", "fixed_limit"), dict(small_bet=0), id="small-bet-zero"),
    pytest.param(("holdem", "fixed_limit"), dict(small_bet=-10), id="small-bet-negative"),
    pytest.param(("holdem", "fixed_limit"), dict(small_bet=10.5), id="small-bet-float"),
    pytest.param(("holdem", "fixed_limit"), dict(small_bet="10"), id="small-bet-str"),
    pytest.param(("holdem", "fixed_limit"), dict(small_bet=True), id="small-bet-bool"),
    pytest.param(("holdem", "fixed_limit"), dict(small_bet=10, big_bet=5), id="big-bet-below-small"),
    pytest.param(("stud", "fixed_limit"), dict(), id="stud-without-small-bet"),
    pytest.param(("holdem", "no_limit"), dict(), id="no-limit-without-blinds"),
    pytest.param(("holdem", "pot_limit"), dict(small_blind=1), id="pot-limit-without-big-blind"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=0), id="big-blind-zero"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=-2), id="big-blind-negative"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2.0), id="big-blind-float"),
    pytest.param(("holdem", "no_limit"), dict(small_blind=5, big_blind=2), id="sb-above-bb"),
    pytest.param(("holdem", "no_limit"), dict(small_blind=0, big_blind=2), id="sb-zero"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, ante=-1), id="ante-negative"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, ante=1, ante_type="none"),
                 id="ante-without-type"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, ante=1, ante_type="everyone"),
                 id="ante-type-unknown"),
    pytest.param(("stud", "fixed_limit"), dict(small_bet=10, bring_in=11), id="bring-in-over-bet"),
    pytest.param(("stud", "fixed_limit"), dict(small_bet=10, bring_in=0), id="bring-in-zero"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, max_seats=1), id="one-seat"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, max_seats=11), id="eleven-seats"),
    pytest.param(("stud", "fixed_limit"), dict(small_bet=10, max_seats=9), id="stud-nine-seats"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, max_seats=0), id="zero-seats"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, max_seats=2.5), id="seats-float"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, chip_unit=0), id="chip-unit-zero"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, chip_unit=-1), id="chip-unit-negative"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, chip_unit=0.5), id="chip-unit-float"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, chip_unit=True), id="chip-unit-bool"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, max_bets=0), id="max-bets-zero"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, max_bets=101), id="max-bets-101"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, max_bets="4"), id="max-bets-str"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, rake_basis_points=-1), id="rake-negative"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, rake_basis_points=10_001),
                 id="rake-over-100-percent"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, rake_basis_points=2.5), id="rake-float"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, rake_cap=-1), id="rake-cap-negative"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, rake_cap=RakeCap(heads_up=-1)),
                 id="rake-cap-by-players-negative"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, rake_cap=2.5), id="rake-cap-float"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, suit_order="alphabetical"),
                 id="suit-order-unknown"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, timeout_policy="bogus"),
                 id="timeout-policy-unknown"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, heads_up_uncapped="yes"),
                 id="heads-up-uncapped-str"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, no_flop_no_drop=1), id="nfnd-int"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, decision_seconds=-1),
                 id="decision-seconds-negative"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, min_buy_in=500, max_buy_in=100),
                 id="min-buy-in-above-max"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2**63), id="big-blind-2**63"),
    pytest.param(("holdem", "no_limit"), dict(big_blind=2, bogus_option=1), id="unknown-option"),
]


@pytest.mark.parametrize("args, kw", BAD_OPTIONS)
def test_table_options_rejects(args, kw):
    with pytest.raises(InvalidOptions) as info:
        table_options(*args, **kw)
    assert isinstance(info.value, ValueError)
    assert info.value.reason and len(info.value.reason) < 300


def test_table_options_defaults_are_valid():
    for game, structure in (("holdem", "no_limit"), ("omaha", "pot_limit"),
                            ("omaha_hilo", "fixed_limit"), ("omaha_hilo", "no_limit")):
        kw = dict(small_bet=10) if structure == "fixed_limit" else dict(big_blind=2)
        table_options(game, structure, **kw)
    table_options("stud", "fixed_limit", small_bet=10)
    table_options("stud_hilo", "fixed_limit", small_bet=10)


def test_unknown_card_is_allowed_in_deal_for_hand_histories():
    s = _at_deal()
    out = D.deal(s.hand, [UNKNOWN_CARD] * 4)
    assert len(out) == 1
