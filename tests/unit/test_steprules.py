"""The one map of a hand's and a table's steps (shared/poker/steprules.py): every step type
``next_step`` and ``table_step`` can return has a rule, every rule that is not the house's
names a method its owner's service really has (the house's are served from the map), and
each rule's kind of decision is the one its step needs."""

from __future__ import annotations

import inspect

import pytest

from services.betting.server import BettingService
from services.dealer.server import DealerService
from services.rake.server import RakeService
from services.showdown.server import ShowdownService
from shared.poker import events as E
from shared.poker import steps
from shared.poker import table as T
from shared.poker.steprules import STEPS, house

SERVICES = {"dealer": DealerService, "betting": BettingService, "showdown": ShowdownService,
            "rake": RakeService}


def test_every_step_type_has_a_rule():
    kinds = {c for _, c in inspect.getmembers(steps, inspect.isclass)
             if issubclass(c, steps.Step) and c is not steps.Step}
    assert kinds | {T.StartHand, T.FreeSeat, T.FoldLeaver} == set(STEPS)


@pytest.mark.parametrize("step", [s for s, r in STEPS.items() if r.owner != "table"],
                         ids=lambda s: s.__name__)
def test_each_rule_names_a_method_of_its_owner(step):
    """A house step has no method: its owner's step stream decides it from the map (and no
    unary call takes it); any other is its owner's method."""
    rule = STEPS[step]
    assert hasattr(SERVICES[rule.owner], rule.rpc) == (rule.house is None), \
        f"{rule.owner}.{rule.rpc}"


@pytest.mark.parametrize("step", [s for s, r in STEPS.items() if r.on_table],
                         ids=lambda s: s.__name__)
def test_each_table_step_is_due_and_decided_on_the_table(step):
    rule = STEPS[step]
    assert rule.due is not None and rule.table is not None and rule.fingerprint is not None
    assert set(rule.table_again) <= {E.HandStarted, E.PlayerLeft, E.CashOutRequested}


@pytest.mark.parametrize("step", list(STEPS), ids=lambda s: s.__name__)
def test_each_step_is_decided_one_way(step):
    """A house step from the state alone; a dealer step with the deck and from its recorded
    event; a player's step from the recorded event, with a rule for one who does not act."""
    rule = STEPS[step]
    kinds = [k for k in ("house", "dealer", "default", "table") if getattr(rule, k) is not None]
    assert len(kinds) <= 1
    if kinds and kinds[0] in ("house", "dealer"):
        assert rule.fingerprint is not None, f"{step.__name__}: no command fingerprint"
    if rule.house is None and rule.owner != "table" and not rule.on_table:
        assert rule.again, f"{step.__name__}: the audit cannot decide it again"
    assert set(rule.again) <= set(E.HAND_EVENTS)  # a step is answered by hand events


def test_house_refuses_a_step_that_is_not_the_houses():
    assert house(steps.FormPots) is STEPS[steps.FormPots].house
    with pytest.raises(KeyError, match="Act is not a house step"):
        house(steps.Act)
