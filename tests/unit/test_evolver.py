"""@value's ``evolve`` (shared/poker/evolve.py): it copies a frozen slotted value with some
fields changed, like ``dataclasses.replace``; the copy is a real object of the class (built
through a plain twin of the same layout where it can be) and stays frozen."""

from __future__ import annotations

import dataclasses

import pytest

from shared.poker import betting, state, steps
from shared.poker import events as E
from shared.poker.evolve import Value, _twin, value
from shared.poker.options import table_options

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
PLAYER = state.Player(seat=3, stack=100, start_stack=100)
STATES = [
    PLAYER,
    state.BettingRound(current_bet=2, min_raise=2),
    state.HandState(OPTIONS, 1, 3, (PLAYER,), (), positions=(-1, -1, -1, 0)),
    state.Saga("k1", state.SagaKind.BUY_IN, 100, seat=3, player_id="p"),
    state.Seat(3, "p", 100, "d"),
    state.TableState("t", OPTIONS),
]
SAMPLES = [
    *STATES,
    E.ActionTaken(3, E.ActionKind.CALL, 2, 2, False),
    betting.LegalActions(3, True, False, 2, 0, E.ActionKind.RAISE, (), 4, 100),
    steps.Deal(1, 4),  # a step: its slots are split over Step and Deal (no twin)
]


@pytest.mark.parametrize("obj", STATES, ids=lambda o: type(o).__name__)
def test_every_state_class_copies_through_its_twin(obj):
    cls = type(obj)
    assert _twin(cls, [f.name for f in dataclasses.fields(cls)]) is not None


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
def test_evolve_equals_replace_and_stays_frozen(obj):
    cls = type(obj)
    first = dataclasses.fields(cls)[0].name
    assert obj.evolve() == dataclasses.replace(obj) and obj.evolve() is not obj
    changed = obj.evolve(**{first: 99})
    assert type(changed) is cls
    assert changed == dataclasses.replace(obj, **{first: 99})
    assert hash(changed) == hash(dataclasses.replace(obj, **{first: 99}))
    assert getattr(obj, first) != 99  # the original is untouched
    every = {f.name: getattr(changed, f.name) for f in dataclasses.fields(cls)}
    assert obj.evolve(**every) == changed
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(changed, first, 1)
    with pytest.raises(TypeError):
        obj.evolve(no_such_field=1)
    with pytest.raises(TypeError, match="keywords only"):  # the changes are keywords only
        obj.evolve(99)
    with pytest.raises(TypeError):
        obj.evolve(_positional=99)


def test_evolve_runs_post_init_like_replace():
    @value
    class Chips(Value):
        amount: int
        note: str = ""

        def __post_init__(self) -> None:
            if self.amount < 0:
                raise ValueError("chips are never negative")

    assert _twin(Chips, ["amount", "note"]) is not None
    chips = Chips(5)
    assert chips.evolve(note="x") == Chips(5, "x")
    with pytest.raises(ValueError, match="never negative"):
        chips.evolve(amount=-1)
    with pytest.raises(ValueError, match="never negative"):
        dataclasses.replace(chips, amount=-1)


def test_no_twin_for_slots_split_over_two_classes():
    @value
    class Base(Value):
        a: int

    @value
    class Derived(Base):
        b: int = 0

    assert _twin(Derived, ["a", "b"]) is None
    d = Derived(1, 2)
    assert d.evolve(b=3) == Derived(1, 3) and type(d.evolve(a=0)) is Derived
