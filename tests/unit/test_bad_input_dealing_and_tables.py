"""Bad input to the pure core's dealer, showdown, step and table decisions, and bad table
options (THREATS.md 1, 8, 9, 10): ``IllegalAction`` (or ``InvalidOptions``) with a reason a
person can read, and no events. The betting half: test_bad_input.py."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shared.poker import decide as D
from shared.poker.cards import UNKNOWN_CARD, Card, cards
from shared.poker.errors import IllegalAction, InvalidOptions
from shared.poker.handrunner import check_call_policy, new_table
from shared.poker.options import RakeCap, table_options
from tests.helpers.bad_input import finished, nl, preflop, readable, seats, showdown
from tests.helpers.scenario import Scenario, board_deck

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
