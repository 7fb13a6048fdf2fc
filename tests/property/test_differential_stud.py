"""Differential test, seven-card stud: our engine against pokerkit 0.7.7, stud (F7S) and stud
hi/lo 8 or better (F7S/8), hand by hand and decision by decision (tests/helpers/differential.py
says how), with the minimal reproductions of the stud divergences and the rule book's stud
odd-chip rules through the independent award model.

``pytest -s`` prints the per-variant summary; a failure prints a replay command.
"""

from __future__ import annotations

import pytest

from shared.poker.events import ActionKind
from shared.poker.handrunner import check_call_policy
from shared.poker.options import table_options
from tests.helpers.differential_runs import check_variant, scripted
from tests.helpers.rules_model import rules_settlement
from tests.helpers.scenario import Scenario, stud_deck


@pytest.mark.parametrize("name", ["F7S", "F7S/8"])
def test_differential(name: str) -> None:
    """RULES §1-§6, stud and stud hi/lo: random hands in both engines, every disagreement
    documented, our stacks the rule book's award in every hand."""
    check_variant(name)


def test_repro_stud_stand_in_fold() -> None:
    """RULES §3: the stand-in for a bring-in all in from the ante may fold: STUD_STAND_IN_FOLD."""
    # stud $10/$20, ante 2, bring-in 1: seat 2 has the lowest upcard (2c) and is all in from
    # the ante; seat 3 stands in and may fold (RULES §3); pokerkit refuses the fold
    run = scripted("F7S", {1: 100, 2: 2, 3: 100}, 3, [],
                   top="Ah Kh Qh  As Ks Qs  Ad 2c 9d", small_bet=10, big_bet=20, ante=2,
                   bring_in=1)
    seat, ours, theirs, _ = run.at_end
    assert seat == 3 and ours.bring_in and ours.can_fold
    assert theirs.bring_in and not theirs.can_fold


def test_repro_pk_allin_bring_in_completes() -> None:
    """RULES §3: a bring-in with no chips beyond it only posts it: PK_ALLIN_BRING_IN_COMPLETES."""
    # stud $10/$20, ante 1, bring-in 3: seat 2 (2c) has 3 chips after the ante: bring-in only
    run = scripted("F7S", {1: 100, 2: 4, 3: 100}, 3, [],
                   top="Ah Kh Qh  As Ks Qs  Ad 2c 9d", small_bet=10, big_bet=20, ante=1,
                   bring_in=3)
    seat, ours, theirs, _ = run.at_end
    assert seat == 2 and ours.bring_in == 3 and ours.raise_kind is None
    assert theirs.bring_in == 3 and theirs.can_raise and theirs.min_to == theirs.max_to == 3


# ------------------------------------------------------------------------------------------
# RULES §6 stud odd chips through the independent award model (the hands of the rule-book
# examples in tests/unit/test_rules_showdown.py, settled from their events alone)
# ------------------------------------------------------------------------------------------

def _calls_except(folders: set[int]):
    def policy(hand, legal):
        if legal.seat in folders and legal.can_fold and not legal.can_check:
            return ActionKind.FOLD, None
        return check_call_policy(hand, legal)
    return policy


def _settle(game: str, hands: dict, button: int, folders=frozenset(), **opts):
    o = table_options(game, "fixed_limit", small_bet=10, rake_basis_points=0, **opts)
    s = Scenario(o, [(seat, 200) for seat in sorted(hands)], button=button,
                 deck=stud_deck(hands, button=button))
    s.finish(_calls_except(set(folders)))
    book = rules_settlement(o, s.events)
    assert book.stacks == s.stacks  # and the engine agrees
    return dict(book.won)


_STRAIGHTS = {1: "9cTc 9h Jd Qd Kc Th", 2: "9dTd 9s Jh Qh Kd Ts", 3: "2c3c Ah"}


def test_rules_award_model_stud_high_odd_chip_clockwise_from_the_button() -> None:
    """RULES §6: stud high, the odd chip to the first winner clockwise from the button."""
    assert _settle("stud", _STRAIGHTS, 1, {3}) == {2: 5, 1: 4}
    assert _settle("stud", _STRAIGHTS, 3, {3}) == {1: 5, 2: 4}


@pytest.mark.parametrize("suit_order,won", [("sources", {1: 5, 2: 4}),
                                            ("bridge", {2: 5, 1: 4})])
def test_rules_award_model_stud_hilo_tied_high_by_highest_card_by_suit(suit_order, won) -> None:
    """RULES §6: stud hi/lo, tied high hands get odd chips by their highest card by suit."""
    assert _settle("stud_hilo", _STRAIGHTS, 1, {3}, suit_order=suit_order) == won


@pytest.mark.parametrize("suit_order,won", [("sources", {3: 8, 2: 4, 1: 3}),
                                            ("bridge", {3: 8, 1: 4, 2: 3})])
def test_rules_award_model_stud_hilo_tied_low_by_lowest_card_by_suit(suit_order, won) -> None:
    """RULES §6: stud hi/lo, tied low hands by their lowest card by suit (ace as 1); the odd
    unit between the halves to the high half (15: 8 high, 7 low split 4 / 3)."""
    hands = {1: "2c3c Kc Ah 4d 6h Qc", 2: "2d3d Kd As 4h 6s Qd", 3: "9c9d Tc 9h 9s Td Jh"}
    assert _settle("stud_hilo", hands, 3, ante=2, suit_order=suit_order) == won


@pytest.mark.parametrize("suit_order,won", [("sources", {1: 6, 2: 5}),
                                            ("bridge", {2: 6, 1: 5})])
def test_rules_award_model_stud_hilo_tie_for_both_whole_pot(suit_order, won) -> None:
    """RULES §6: stud hi/lo, two players who tie for both high and low split the whole pot,
    the odd unit to the one holding the highest card by suit."""
    hands = {1: "2c3d Kh Ac 4d 5h 9c", 2: "2s3h Ks As 4h 5d 9s", 3: "QcJc Ad"}
    assert _settle("stud_hilo", hands, 3, {3}, bring_in=4, suit_order=suit_order) == won
