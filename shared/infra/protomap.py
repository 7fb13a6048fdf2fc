"""Protobuf enums <-> the domain's enums: the one place they are matched.

Each domain enum has one :class:`EnumMap` to the protobuf enum of the same name in
``poker.events.v1``, member by member by name with the protobuf prefix (``Game.HOLDEM`` <->
``GAME_HOLDEM``, ``ActionKind.BRING_IN`` <-> ``ACTION_KIND_BRING_IN``). Both directions are
total over what they know and refuse anything else with :class:`UnknownEnumValue`, which says
what was given and what is known: a number the domain has no member for (``UNSPECIFIED``, a
value from a newer schema), a protobuf name that is not the enum's, a value that is not a
member of the domain enum. The two enums must match exactly (every protobuf value but
``UNSPECIFIED`` has a member, every member has a value): that is checked as this module is
imported, so a schema and a domain that drift apart fail at once, not on the first event.

The codec (shared/infra/codec.py) uses these for every enum field of an event; the services
use them for the enums of their requests and replies::

    ACTION_KIND.to_pb(ActionKind.CALL)  # -> events_pb2.ACTION_KIND_CALL (3)
    ACTION_KIND.from_pb(request.action)  # -> ActionKind.CALL, or UnknownEnumValue
    GAME.from_pb_name("GAME_HOLDEM")  # -> Game.HOLDEM

``to_pb`` and ``from_pb`` are dictionary lookups (the codec calls ``from_pb`` for every enum
field of every event it decodes).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterator
from typing import Generic, TypeVar

from poker.events.v1 import events_pb2 as pb
from poker.table.v1 import table_pb2

from shared.poker.betting import LegalActions
from shared.poker.cards import SuitOrder
from shared.poker.events import ActionKind, ForcedKind, Portion
from shared.poker.options import AnteType, Game, Structure, TimeoutPolicy

M = TypeVar("M", bound=enum.Enum)


class UnknownEnumValue(ValueError):
    """A protobuf number or name, or a domain value, that an :class:`EnumMap` does not know."""


def _prefix(domain_name: str) -> str:
    """``ActionKind`` -> ``ACTION_KIND_``: protobuf's convention for an enum's value names."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", domain_name).upper() + "_"


class _Lookup(dict):
    """A dict whose miss raises :class:`UnknownEnumValue` with the map's message (its
    ``__getitem__`` stays the dict's own, so a hit costs no Python call)."""

    def __init__(self, items: dict, miss) -> None:
        super().__init__(items)
        self._miss = miss

    def __missing__(self, key):
        raise UnknownEnumValue(self._miss(key))


class EnumMap(Generic[M]):
    """One domain enum <-> one protobuf enum (see the module docstring).

    ``to_pb(member) -> int``, ``from_pb(number) -> member``, ``pb_name(member) -> str``,
    ``from_pb_name(name) -> member``; each raises :class:`UnknownEnumValue` on what it does
    not know.
    """

    __slots__ = ("domain", "proto", "prefix", "to_pb", "from_pb", "pb_name", "from_pb_name")

    def __init__(self, domain: type[M], proto=None) -> None:
        proto = proto if proto is not None else getattr(pb, domain.__name__)
        prefix = _prefix(domain.__name__)
        self.domain, self.proto, self.prefix = domain, proto, prefix
        numbers = {name: number for name, number in proto.items()}
        unspecified = prefix + "UNSPECIFIED"
        missing = [m.name for m in domain if prefix + m.name not in numbers]
        extra = [n for n in numbers if n != unspecified and n[len(prefix):] not in domain.__members__]
        if missing or extra or numbers.get(unspecified) != 0:
            raise TypeError(f"{domain.__name__} and protobuf {proto.DESCRIPTOR.full_name} do not "
                            f"match: members without a protobuf value {missing}, protobuf values "
                            f"without a member {extra} ({unspecified} must be 0)")
        to_number = {m: numbers[prefix + m.name] for m in domain}
        #: domain member -> protobuf number
        self.to_pb = _Lookup(to_number, self._not_a_member).__getitem__
        #: protobuf number -> domain member
        self.from_pb = _Lookup({n: m for m, n in to_number.items()}, self._unknown_number
                               ).__getitem__
        #: domain member -> protobuf value name (``GAME_HOLDEM``)
        self.pb_name = _Lookup({m: prefix + m.name for m in domain}, self._not_a_member
                               ).__getitem__
        #: protobuf value name -> domain member
        self.from_pb_name = _Lookup({prefix + m.name: m for m in domain}, self._unknown_name
                                    ).__getitem__

    def __repr__(self) -> str:
        return f"EnumMap({self.domain.__name__} <-> {self.proto.DESCRIPTOR.full_name})"

    def __iter__(self) -> Iterator[tuple[M, int]]:
        """(member, protobuf number) of every member, in the domain's order."""
        return ((m, self.to_pb(m)) for m in self.domain)

    def _known(self) -> str:
        return ", ".join(f"{self.to_pb(m)} ({self.prefix}{m.name})" for m in self.domain)

    def _unknown_number(self, number: object) -> str:
        name = self.domain.__name__
        if number == 0:
            return (f"{name} value 0 is not known: it is {self.prefix}UNSPECIFIED (the field "
                    f"was left unset); the known values are {self._known()}")
        return f"{name} value {number!r} is not known: the known values are {self._known()}"

    def _unknown_name(self, value: object) -> str:
        return (f"{value!r} is not a known {self.proto.DESCRIPTOR.full_name} name: the known "
                f"names are {', '.join(self.prefix + m.name for m in self.domain)}")

    def _not_a_member(self, value: object) -> str:
        return (f"{value!r} is not a member of {self.domain.__name__} (one of "
                f"{', '.join(str(m) for m in self.domain)})")


GAME = EnumMap(Game)
STRUCTURE = EnumMap(Structure)
ANTE_TYPE = EnumMap(AnteType)
SUIT_ORDER = EnumMap(SuitOrder)
TIMEOUT_POLICY = EnumMap(TimeoutPolicy)
FORCED_KIND = EnumMap(ForcedKind)
ACTION_KIND = EnumMap(ActionKind)
PORTION = EnumMap(Portion)

#: every mapped domain enum -> its map
ENUM_MAPS: dict[type[enum.Enum], EnumMap] = {
    m.domain: m for m in (GAME, STRUCTURE, ANTE_TYPE, SUIT_ORDER, TIMEOUT_POLICY, FORCED_KIND,
                          ACTION_KIND, PORTION)}


def enum_map(domain: type[M]) -> EnumMap[M]:
    """The map of a domain enum (TypeError for an enum that has none)."""
    try:
        return ENUM_MAPS[domain]
    except KeyError:
        raise TypeError(f"there is no protobuf mapping for the enum {domain.__name__}") from None


def legal_from(seat: int, legal: table_pb2.Legal) -> LegalActions:
    """A view's legal actions (of seat ``seat``) as the core's, so that a client asks the core
    about them (betting.LegalActions.allows_raise_to, betting.raise_presets)."""
    return LegalActions(
        seat=seat, can_fold=legal.can_fold, can_check=legal.can_check, call=legal.call,
        bring_in=legal.bring_in,
        raise_kind=ACTION_KIND.from_pb(legal.raise_kind) if legal.raise_kind else None,
        raise_sizes=tuple(legal.raise_sizes), min_to=legal.min_to, max_to=legal.max_to)
