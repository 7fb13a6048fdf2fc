"""Differential test, Omaha: our engine against pokerkit 0.7.7, pot-limit Omaha (PO) and
fixed-limit Omaha hi/lo 8 or better (FO/8), hand by hand and decision by decision
(tests/helpers/differential.py says how), with the pokerkit facts the harness relies on and
the rule book's hi/lo award through the independent award model.

``pytest -s`` prints the per-variant summary; a failure prints a replay command.
"""

from __future__ import annotations

import pytest
from pokerkit import BettingStructure, FixedLimitOmahaHoldemHighLowSplitEightOrBetter

from tests.helpers.differential_runs import check_variant, scripted
from tests.helpers.pokerkit_oracle import AUTOMATIONS, fixed_limit_omaha_hilo_state
from tests.helpers.rules_model import rules_settlement


@pytest.mark.parametrize("name", ["PO", "FO/8"])
def test_differential(name: str) -> None:
    """RULES §2-§6 and §8, pot-limit Omaha and fixed-limit Omaha hi/lo: random hands in both
    engines, every disagreement documented, our stacks the rule book's award in every hand."""
    check_variant(name)


def test_pokerkit_fo8_class_is_pot_limit() -> None:
    """RULES §2 (Omaha hi/lo in fixed limit): why FO/8 uses fixed_limit_omaha_hilo_state: pokerkit's class is pot limit."""
    cls = FixedLimitOmahaHoldemHighLowSplitEightOrBetter
    assert cls.betting_structure is BettingStructure.POT_LIMIT
    assert cls.max_completion_betting_or_raising_count is None
    ours = fixed_limit_omaha_hilo_state(AUTOMATIONS, 0, True, (1, 2), 2, 4, (100, 100, 100), 3)
    assert ours.betting_structure is BettingStructure.FIXED_LIMIT
    assert [s.min_completion_betting_or_raising_amount for s in ours.streets] == [2, 2, 4, 4]


def test_rules_award_model_hilo_odd_unit_to_the_high_half() -> None:
    """RULES §6 hi/lo, through the independent award model: "each pot is halved ... between the
    two halves of a hi/lo pot the odd unit goes to the high half". FO/8 1/2, the small blind
    folds: a pot of 5, four kings (seat 2) take the high half 3, the wheel (seat 3) the low 2."""
    # dealt one at a time from the button's left (1, 2, 3), four rounds, then the board
    top = "QdKdAh JdKh5c Td9cQh 9hTcJh 6s 2s3h4d 7s Kc 8s Ks"
    run = scripted("FO/8", {1: 100, 2: 100, 3: 100}, 3,
                   [(3, "call", None), (1, "fold", None), (2, "check", None)],
                   top=top.replace(" ", ""), stop=False, small_bet=2, big_bet=4)
    book = rules_settlement(run.setup.options, run.events)
    assert dict(book.won) == {2: 3, 3: 2}
    assert book.stacks == {1: 99, 2: 101, 3: 100}


def test_rules_award_model_no_qualifying_low_high_takes_the_pot() -> None:
    """RULES §2/§6: "No qualifying low: the high hand wins the whole pot" (FO/8, the board
    has two low cards only)."""
    top = "QdKdAh JdKh5c Td9cQh 9hTcJh 6s 2s3hJs 7s Kc 8s Ks"
    run = scripted("FO/8", {1: 100, 2: 100, 3: 100}, 3,
                   [(3, "call", None), (1, "fold", None), (2, "check", None)],
                   top=top.replace(" ", ""), stop=False, small_bet=2, big_bet=4)
    book = rules_settlement(run.setup.options, run.events)
    assert dict(book.won) == {2: 5}
