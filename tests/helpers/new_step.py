"""A kind of step the rule book does not have, defined in the test suite as a newcomer would
add one (shared/poker/steprules.py): a class, a decision and one entry. The rake is taken by
the showdown service, with a note, in place of the rake service's step. Its tests
(tests/unit/test_a_new_step.py, tests/system/test_a_new_step.py) see every consumer of the
map take it with no other change."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.evolve import value
from shared.poker.state import HandState
from shared.poker.steprules import STEPS, StepRule
from shared.poker.steps import Step, TakeRake

#: the reason the new step's rake carries
NOTE = "taken by the showdown service (a step the tests add)"


@value
class TakeRakeNoted(Step):
    """The rake, taken by the showdown service with :data:`NOTE`."""


def take_rake_noted(hand: HandState) -> list[object]:
    """The new step's decision: the rake the rules give, with the note."""
    [rake] = D.take_rake(hand)
    TAKEN.append(hand.hand_no)
    return [E.RakeTaken(rake.amount, rake.from_pots, NOTE)]


#: the hands the new step's decision was made for (whoever made it)
TAKEN: list[int] = []

#: the one entry
RULE = StepRule("showdown", "TakeRakeNoted", house=take_rake_noted,
                fingerprint=lambda step, hand_no, version: ("rake noted", hand_no),
                before=TakeRake, due=lambda hand, pending: TakeRakeNoted())


@contextmanager
def new_step() -> Iterator[list[int]]:
    """The map with the new step while the context lasts; the hands it was taken for."""
    TAKEN.clear()
    with STEPS.added(TakeRakeNoted, RULE):
        yield TAKEN
