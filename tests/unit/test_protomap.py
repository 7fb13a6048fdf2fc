"""Protobuf enums <-> domain enums (shared/infra/protomap.py): every member of every mapped enum
round-trips both ways, by number and by name; an unknown number, name or member is refused
with UnknownEnumValue saying what was given and what is known; two enums that do not match
exactly cannot be mapped at all."""

from __future__ import annotations

import enum
import typing

import pytest
from poker.events.v1 import events_pb2 as pb

from shared.infra import protomap as P
from shared.infra.codec import EVENT_TYPES, Kind, plan
from shared.infra.protomap import ENUM_MAPS, EnumMap, UnknownEnumValue, enum_map
from shared.poker.events import ActionKind
from shared.poker.options import Game, Structure, TableOptions

MAPS = sorted(ENUM_MAPS.values(), key=lambda m: m.domain.__name__)


@pytest.mark.parametrize("m", MAPS, ids=lambda m: m.domain.__name__)
def test_every_member_round_trips_by_number_and_by_name(m: EnumMap):
    numbers = set()
    for member in m.domain:
        number = m.to_pb(member)
        name = m.pb_name(member)
        assert m.proto.Value(name) == number  # the protobuf value of the same name
        assert name == m.prefix + member.name
        assert m.from_pb(number) is member
        assert m.from_pb_name(name) is member
        numbers.add(number)
    # and every protobuf value but UNSPECIFIED is some member's
    assert numbers == {v for n, v in m.proto.items() if not n.endswith("_UNSPECIFIED")}
    assert dict(m) == {member: m.to_pb(member) for member in m.domain}


def test_the_maps_are_the_names_of_the_protobuf_enums():
    assert (P.ACTION_KIND.to_pb(ActionKind.BRING_IN), P.GAME.to_pb(Game.OMAHA_HILO),
            P.STRUCTURE.to_pb(Structure.NO_LIMIT)) == (
        pb.ACTION_KIND_BRING_IN, pb.GAME_OMAHA_HILO, pb.STRUCTURE_NO_LIMIT)
    assert P.ACTION_KIND.prefix == "ACTION_KIND_" and P.TIMEOUT_POLICY.prefix == "TIMEOUT_POLICY_"


def _enums_in(cls: type, seen: set) -> set:
    out = set()
    if cls in seen:
        return out
    seen.add(cls)
    hints = typing.get_type_hints(cls)
    for f in plan(cls).fields:
        if f.kind is Kind.ENUM:
            hint = hints[f.name]
            out.add(next(a for a in (hint, *typing.get_args(hint))
                         if isinstance(a, type) and issubclass(a, enum.Enum)))
        if f.nested is not None:
            out |= _enums_in(f.nested, seen)
    return out


def test_every_enum_of_the_events_has_a_map():
    used = set()
    for cls in (*EVENT_TYPES, TableOptions):
        used |= _enums_in(cls, set())
    assert used == set(ENUM_MAPS)


@pytest.mark.parametrize("m", MAPS, ids=lambda m: m.domain.__name__)
@pytest.mark.parametrize("number", [0, 99, -1])
def test_an_unknown_number_is_refused_with_what_is_known(m: EnumMap, number: int):
    with pytest.raises(UnknownEnumValue) as info:
        m.from_pb(number)
    message = str(info.value)
    assert message.startswith(f"{m.domain.__name__} value {number} is not known")
    for member in m.domain:  # the known values are listed, number and name
        assert f"{m.to_pb(member)} ({m.prefix}{member.name})" in message
    if number == 0:
        assert f"{m.prefix}UNSPECIFIED" in message and "left unset" in message


def test_an_unknown_name_is_refused_with_the_known_names():
    with pytest.raises(UnknownEnumValue, match=r"'GAME_POKER' is not a known poker\.events\.v1"
                                               r"\.Game name: the known names are GAME_HOLDEM, "
                                               r"GAME_OMAHA, "):
        P.GAME.from_pb_name("GAME_POKER")
    for name in ("GAME_UNSPECIFIED", "HOLDEM", "game_holdem", "ACTION_KIND_FOLD"):
        with pytest.raises(UnknownEnumValue, match="is not a known"):
            P.GAME.from_pb_name(name)


@pytest.mark.parametrize("value", [ActionKind.CALL, "holdem", 1, None])
def test_a_value_that_is_not_a_member_is_refused(value):
    with pytest.raises(UnknownEnumValue,
                       match=r"is not a member of Game \(one of Game\.HOLDEM, "):
        P.GAME.to_pb(value)
    with pytest.raises(UnknownEnumValue, match="is not a member of Game"):
        P.GAME.pb_name(value)


def test_unknown_values_are_value_errors():
    assert issubclass(UnknownEnumValue, ValueError)


def test_enums_that_do_not_match_cannot_be_mapped():
    class Game(enum.Enum):  # noqa: PLR0903 - a domain enum missing a protobuf member
        HOLDEM = "holdem"
    with pytest.raises(TypeError, match=r"protobuf values without a member \['GAME_OMAHA'"):
        EnumMap(Game)

    class Portion(enum.Enum):  # a member the protobuf enum does not have
        WHOLE = "whole"
        HIGH = "high"
        LOW = "low"
        MIDDLE = "middle"
    with pytest.raises(TypeError, match=r"members without a protobuf value \['MIDDLE'\]"):
        EnumMap(Portion)
    with pytest.raises(TypeError, match=r"do not match"):
        EnumMap(Structure, pb.Game)  # a different protobuf enum


def test_an_enum_without_a_map():
    class Colour(enum.Enum):
        RED = 1
    with pytest.raises(TypeError, match="no protobuf mapping for the enum Colour"):
        enum_map(Colour)
    assert enum_map(ActionKind) is P.ACTION_KIND
