"""Rules the table service used to keep to itself, now in the core (shared/poker/clock.py),
where the betting decision asks them: an action after the deadline is refused, and an action
or step for another hand than the table's running one is refused."""

from __future__ import annotations

import pytest

from shared.poker import decide as D
from shared.poker.clock import TurnClock, refuse_late_action, running_hand
from shared.poker.errors import IllegalAction
from shared.poker.fold import apply
from shared.poker.handrunner import check_call_policy, new_table, run_hand
from shared.poker.options import table_options

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
CLOCK = TurnClock(hand_no=3, seat=2, started_ms=1_000_000)
DEADLINE = CLOCK.deadline_ms(OPTIONS)


def test_an_action_after_the_deadline_is_refused():
    with pytest.raises(IllegalAction, match=f"seat 2's time ran out at {DEADLINE}.*the table "
                                            f"acts for it"):
        refuse_late_action(CLOCK, OPTIONS, 2, 3, DEADLINE)


def test_an_action_before_the_deadline_is_taken():
    refuse_late_action(CLOCK, OPTIONS, 2, 3, DEADLINE - 1)


@pytest.mark.parametrize("seat, hand_no", [(1, 3), (2, 4)])
def test_another_seats_or_hands_clock_refuses_nothing(seat, hand_no):
    """The clock that ran out is seat 2's in hand 3: it says nothing of another decision
    (whether that one is anyone's turn is the betting decision's to say)."""
    refuse_late_action(CLOCK, OPTIONS, seat, hand_no, DEADLINE + 10_000)


def test_no_clock_refuses_nothing():
    refuse_late_action(None, OPTIONS, 2, 3, DEADLINE + 10_000)


def _table_in_hand(hand_no: int):
    table = new_table(OPTIONS)
    table, _ = run_hand(table, hand_no - 1, 1, [(1, 100), (2, 100)], check_call_policy) \
        if hand_no > 1 else (table, [])
    for e in D.start_hand(table, hand_no, 1, [(1, 100), (2, 100)]):
        table = apply(table, e)
    return table


def test_a_step_for_the_running_hand_is_taken():
    table = _table_in_hand(2)
    assert running_hand(table, 2) is table.hand


def test_a_step_for_another_hand_than_the_tables_is_refused():
    table = _table_in_hand(2)
    with pytest.raises(IllegalAction, match="hand 1 is not the table's hand .it is at hand 2."):
        running_hand(table, 1)


def test_a_step_before_any_hand_is_refused():
    with pytest.raises(IllegalAction, match="no hand has started at this table"):
        running_hand(new_table(OPTIONS), 1)
