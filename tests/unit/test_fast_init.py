"""@value's constructor (shared/poker/evolve.py): the core's value classes keep the constructor
a dataclass gives them (parameters, defaults, errors), stay frozen, and may validate themselves
in ``__post_init__``."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import InitVar

import pytest

from shared.poker import betting, clock, state, steps
from shared.poker import events as E
from shared.poker.evolve import Value, value

MODULES = (E, state, steps, betting, clock)
CLASSES = [c for m in MODULES for c in vars(m).values()
           if isinstance(c, type) and c.__module__ == m.__name__ and dataclasses.is_dataclass(c)]
#: the classes the engine makes on every decision (fast_init's list before @value)
HOT = [*E.TABLE_EVENTS, *E.HAND_EVENTS, *E.MONEY_EVENTS, *E.OPERATOR_EVENTS, E.ForcedBet,
       E.SeatStack, E.HoleDeal, E.Pot, E.Share, state.Player, state.BettingRound,
       state.HandState, state.Saga, state.Seat, state.TableState, betting.LegalActions,
       clock.TurnClock, steps.DealPlan, steps.Act, steps.Deal, steps.Show, steps.Reshuffle]


def _reference(cls: type) -> type:
    """The same class as dataclasses alone make it."""
    ns = {"__annotations__": {f.name: f.type for f in dataclasses.fields(cls)}}
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            ns[f.name] = f.default
    return dataclasses.dataclass(frozen=True, slots=True)(type(cls.__name__, (), ns))


def test_every_dataclass_of_the_core_is_a_value_class():
    assert set(HOT) <= set(CLASSES)
    for cls in CLASSES:
        assert issubclass(cls, Value), cls
        assert cls.__dataclass_params__.frozen and "__slots__" in vars(cls), cls
        assert vars(cls)["__init__"] is not cls.__dataclass_init__, cls  # the generated one


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_constructor_keeps_its_parameters_and_defaults(cls):
    got = inspect.signature(cls.__init__).parameters
    want = {f.name: f.default for f in dataclasses.fields(cls)}
    assert list(got)[1:] == list(want)
    assert got == inspect.signature(cls.__dataclass_init__).parameters
    for name, default in want.items():
        expected = inspect.Parameter.empty if default is dataclasses.MISSING else default
        assert got[name].default == expected


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_objects_equal_the_dataclass_ones_and_stay_frozen(cls):
    names = [f.name for f in dataclasses.fields(cls)]
    args = {n: i for i, n in enumerate(names)}
    obj = cls(**args)
    assert dataclasses.astuple(obj) == dataclasses.astuple(_reference(cls)(**args))
    by_dataclass = object.__new__(cls)
    cls.__dataclass_init__(by_dataclass, **args)
    assert by_dataclass == obj and hash(by_dataclass) == hash(obj)
    assert cls(*args.values()) == obj and hash(obj) == hash(cls(**args))
    if names:
        assert cls(**{**args, names[0]: -1}) != obj
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, names[0], -1)
    with pytest.raises((AttributeError, TypeError)):  # slotted: no other attributes
        object.__setattr__(obj, "colour", "red")


def test_wrong_arguments_are_refused_as_before():
    with pytest.raises(TypeError, match=r"ActionTaken.__init__\(\) missing 3 required"):
        E.ActionTaken(1, E.ActionKind.CALL)
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        E.PlayerLeft(seat=1, colour="red")
    with pytest.raises(TypeError, match="multiple values for argument 'seat'"):
        E.PlayerLeft(1, seat=1)
    assert E.PlayerSeated(1, "p", 100, "d") == E.PlayerSeated(1, "p", 100, "d", False)


def test_post_init_validates_every_new_object():
    @value
    class Chips(Value):
        amount: int
        note: str = ""

        def __post_init__(self) -> None:
            if self.amount < 0:
                raise ValueError("chips are never negative")

    assert Chips(5).amount == 5 and Chips(5, "x") == Chips(amount=5, note="x")
    with pytest.raises(ValueError, match="never negative"):
        Chips(-1)


def test_classes_it_cannot_build_are_refused():
    class WithFactory(Value):
        items: list[int] = dataclasses.field(default_factory=list)

    class KeywordOnly(Value):
        x: int = dataclasses.field(kw_only=True)

    class NotInit(Value):
        x: int = dataclasses.field(default=0, init=False)

    class WithInitVar(Value):
        x: int
        scale: InitVar[int]

        def __post_init__(self, scale: int) -> None:
            pass

    for cls in (WithFactory, KeywordOnly, NotInit, WithInitVar):
        with pytest.raises(TypeError, match="@value"):
            value(cls)

    class NotAValue:
        x: int

    with pytest.raises(TypeError, match="must derive from Value"):
        value(NotAValue)
