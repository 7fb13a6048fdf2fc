"""fast_init (shared/poker/evolve.py): the core's frozen value classes keep the constructor a
dataclass gives them (parameters, defaults, errors) and stay frozen."""

from __future__ import annotations

import dataclasses
import inspect

import pytest

from shared.poker import betting, clock, events as E, state, steps
from shared.poker.evolve import fast_init

CLASSES = [*E.TABLE_EVENTS, *E.HAND_EVENTS, E.ForcedBet, E.SeatStack, E.HoleDeal, E.Pot, E.Share,
           state.Player, state.HandState, state.Seat, state.TableState, betting.LegalActions,
           clock.TurnClock, steps.DealPlan, steps.Act, steps.Deal, steps.Show, steps.Reshuffle,
           steps.CommitDeck]


def _reference(cls: type) -> type:
    """The same class as dataclasses alone make it."""
    ns = {"__annotations__": {f.name: f.type for f in dataclasses.fields(cls)}}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            ns[f.name] = f.default
    return dataclasses.dataclass(frozen=True, slots=True)(type(cls.__name__, (), ns))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_constructor_keeps_its_parameters_and_defaults(cls):
    got = inspect.signature(cls.__init__).parameters
    want = {f.name: f.default for f in dataclasses.fields(cls)}
    assert list(got)[1:] == list(want)
    for name, default in want.items():
        expected = inspect.Parameter.empty if default is dataclasses.MISSING else default
        assert got[name].default == expected


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_objects_equal_the_dataclass_ones_and_stay_frozen(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    args = {n: i for i, n in enumerate(names)}
    obj = cls(**args)
    assert dataclasses.astuple(obj) == dataclasses.astuple(_reference(cls)(**args))
    assert cls(*args.values()) == obj and hash(obj) == hash(cls(**args))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(obj, names[0], -1)


def test_wrong_arguments_are_refused_as_before():
    with pytest.raises(TypeError, match=r"ActionTaken.__init__\(\) missing 3 required"):
        E.ActionTaken(1, E.ActionKind.CALL)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        E.PlayerLeft(seat=1, colour="red")
    assert E.PlayerSeated(1, "p", 100, "d") == E.PlayerSeated(1, "p", 100, "d", False)


def test_classes_it_cannot_build_are_refused():
    @dataclasses.dataclass(frozen=True, slots=True)
    class WithFactory:
        items: list = dataclasses.field(default_factory=list)

    @dataclasses.dataclass(frozen=True, slots=True)
    class WithPostInit:
        x: int

        def __post_init__(self) -> None:
            pass

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        x: int

    for cls in (WithFactory, WithPostInit, NoSlots):
        with pytest.raises(TypeError, match="fast_init"):
            fast_init(cls)
