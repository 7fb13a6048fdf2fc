"""The table states the bad-input tests of the pure core start from, and their check that a
refusal's reason is readable (tests/unit/test_bad_input*.py)."""

from __future__ import annotations

from shared.poker import decide as D
from shared.poker.errors import IllegalAction
from shared.poker.handrunner import check_call_policy
from shared.poker.options import table_options
from tests.helpers.scenario import Scenario, board_deck


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
