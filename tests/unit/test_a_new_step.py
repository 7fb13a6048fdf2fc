"""A new kind of step is a class, a decision and one entry (shared/poker/steprules.py): the
step the test suite adds (tests/helpers/new_step.py) is taken by the in-process driver and
by the sample generator (which takes a table's steps as the table service's driver does), is
decided again by the audit and taken by the PHH replay, with nothing else changed. The table
service's driver and the step streams: tests/system/test_a_new_step.py."""

from __future__ import annotations

from shared.audit import audit_table
from shared.audit.sample import sample_keyring, sample_table
from shared.phh.parse import loads_one
from shared.phh.replay import replay
from shared.poker import events as E
from shared.poker.handrunner import new_table, run_hand
from shared.poker.options import table_options
from tests.helpers.new_step import NOTE, new_step

HAND = '''variant = "NT"
antes = [0, 0]
blinds_or_straddles = [10, 20]
min_bet = 20
starting_stacks = [1000, 1000]
actions = ["d dh p1 KsKh", "d dh p2 QsQh", "p2 cc", "p1 cc", "d db 2s3c4d", "p1 cc",
           "p2 cc", "d db 9h", "p1 cc", "p2 cc", "d db Td", "p1 cc", "p2 cc",
           "p1 sm KsKh", "p2 sm QsQh"]
'''


def _notes(events) -> list[str]:
    return [e.reason for e in events if isinstance(e, E.RakeTaken)]


def test_the_in_process_driver_takes_the_new_step():
    table = new_table(table_options("holdem", "no_limit", small_blind=1, big_blind=2))
    with new_step() as taken:
        _, events = run_hand(table, 1, 1, [(1, 100), (2, 100), (3, 100)])
    assert taken == [1] and _notes(events) == [NOTE]
    _, events = run_hand(table, 1, 1, [(1, 100), (2, 100), (3, 100)])
    assert _notes(events) != [NOTE]  # without the entry: the rake service's step


def test_the_sample_takes_the_new_step_and_the_audit_decides_it_again():
    with new_step() as taken:
        log = sample_table("t1", hands=6, seed=3)
        audit = audit_table("t1", log, sample_keyring())
    assert audit.ok, audit.failure
    assert audit.hands == 6 and len(taken) >= 6
    # the audit reads the map: without the entry, the same log is not what the rules decide
    without = audit_table("t1", log, sample_keyring())
    assert not without.ok and without.failure is not None
    assert without.failure.event_type == "RakeTaken"
    assert "reason" in without.failure.reason


def test_the_phh_replay_takes_the_new_step():
    with new_step() as taken:
        result = replay(loads_one(HAND))
    assert result.ok, result.error
    assert taken == [1]
