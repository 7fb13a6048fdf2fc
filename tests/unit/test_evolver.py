"""evolver (shared/poker/evolve.py): ``evolve`` copies a frozen slotted value with some fields
changed, like ``dataclasses.replace``; the copy is a real object of the class (built through a
plain twin of the same layout) and stays frozen."""

from __future__ import annotations

import dataclasses

import pytest

from shared.poker import state
from shared.poker.evolve import _twin
from shared.poker.options import table_options

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
PLAYER = state.Player(seat=3, stack=100, start_stack=100)
SAMPLES = [
    PLAYER,
    state.HandState(OPTIONS, 1, 3, (PLAYER,), (), positions=(-1, -1, -1, 0)),
    state.Seat(3, "p", 100, "d"),
    state.TableState("t", OPTIONS),
]


@pytest.mark.parametrize("obj", SAMPLES, ids=lambda o: type(o).__name__)
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
    assert getattr(obj, first) != 99  # the original is untouched
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(changed, first, 1)
    with pytest.raises(TypeError):
        obj.evolve(no_such_field=1)
    with pytest.raises(TypeError):  # the changes are keywords only
        obj.evolve(99)
    with pytest.raises(TypeError):
        obj.evolve(_positional=99)


def test_no_twin_for_slots_split_over_two_classes():
    @dataclasses.dataclass(frozen=True, slots=True)
    class Base:
        a: int

    @dataclasses.dataclass(frozen=True, slots=True)
    class Derived(Base):
        b: int = 0

    assert _twin(Derived, ["a", "b"]) is None
