"""Tables and small helpers shared by the rule-book example tests (tests/unit/test_rules_*.py):
option builders for each betting structure, seat lists, simple policies, and readers of a
finished Scenario's events."""

from __future__ import annotations

from shared.poker import events as E
from shared.poker.events import ActionKind
from shared.poker.handrunner import check_call_policy
from shared.poker.options import table_options

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


def shown(s) -> dict[int, str]:
    """The high hand named for each hand shown."""
    return {e.seat: e.high for e in s.of(E.HandShown)}


def portions(s) -> dict:
    """Chips awarded by (portion, seat), summed over the pots."""
    out: dict = {}
    for a in s.of(E.PotAwarded):
        for sh in a.shares:
            out[a.portion, sh.seat] = out.get((a.portion, sh.seat), 0) + sh.amount
    return out
