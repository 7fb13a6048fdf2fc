"""The codec: domain events (frozen dataclasses) to protobuf and back. Only this module
touches ``_pb2`` event types.

Each domain class maps to the protobuf message of the same name, field by field with the
same names; the conversions are derived once per class from its type hints: ints, bools and
strings as they are, cards as uint32, domain enums to the protobuf enum of the same name
(``Game.HOLDEM`` <-> ``GAME_HOLDEM``), nested dataclasses to messages, tuples to repeated
fields, ``int | None`` to proto3 ``optional``. A decoded value that the domain does not know
(an enum left UNSPECIFIED, a card out of range) raises :class:`CodecError`.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Callable
from functools import cache

from poker.events.v1 import events_pb2 as pb

from shared.poker import events as E
from shared.poker.cards import DECK, UNKNOWN_CARD, Card
from shared.poker.options import TableOptions


class CodecError(ValueError):
    """Bytes or a message that do not decode to a valid domain event."""


EVENT_TYPES: tuple[type, ...] = (*E.TABLE_EVENTS, *E.HAND_EVENTS)
_CARDS = DECK + (UNKNOWN_CARD,)


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


#: oneof field name in EventEnvelope for each event class (HandStarted -> hand_started)
BODY_FIELD = {cls: _snake(cls.__name__) for cls in EVENT_TYPES}
_CLASS_OF_BODY = {v: k for k, v in BODY_FIELD.items()}


def _card_from(v: int) -> Card:
    if v > 52:
        raise CodecError(f"card {v} is out of range (0..52)")
    return _CARDS[v]


def _enum_codec(domain: type[enum.Enum]) -> tuple[Callable, Callable]:
    pb_enum = getattr(pb, domain.__name__)
    prefix = _snake(domain.__name__).upper() + "_"
    to_pb = {m: pb_enum.Value(prefix + m.name) for m in domain}
    from_pb = {v: k for k, v in to_pb.items()}

    def decode(v: int) -> enum.Enum:
        try:
            return from_pb[v]
        except KeyError:
            raise CodecError(f"{domain.__name__} value {v} is not known") from None

    return to_pb.__getitem__, decode


def _field_codec(hint: object) -> tuple[str, Callable, Callable]:
    """(kind, encode, decode) for one field's type hint.

    kind: "scalar" (assign), "repeated" (extend), "message" (CopyFrom), "optional".
    """
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Card:
        return "scalar", int, _card_from
    if hint in (int, bool, str):
        return "scalar", (lambda v: v), (lambda v: v)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        enc, dec = _enum_codec(hint)
        return "scalar", enc, dec
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return "message", _encoder(hint), _decoder(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        inner = next(a for a in args if a is not type(None))
        _, enc, dec = _field_codec(inner)
        return "optional", enc, dec
    if origin is tuple:
        item = args[0]
        if typing.get_origin(item) is tuple:  # tuple of card tuples: repeated Deck
            return ("repeated",
                    lambda v: [pb.Deck(cards=[int(c) for c in d]) for d in v],
                    lambda v: tuple(tuple(_card_from(c) for c in d.cards) for d in v))
        _, enc, dec = _field_codec(item)
        return "repeated", (lambda v: [enc(x) for x in v]), (lambda v: tuple(dec(x) for x in v))
    raise TypeError(f"the codec has no mapping for {hint!r}")


@cache
def _plan(cls: type) -> tuple[type, tuple[tuple[str, str, Callable, Callable], ...]]:
    hints = typing.get_type_hints(cls)
    fields = tuple((f.name, *_field_codec(hints[f.name])) for f in dataclasses.fields(cls))
    return getattr(pb, cls.__name__), fields


@cache
def _encoder(cls: type) -> Callable[[object], object]:
    def encode(obj: object) -> object:
        message_type, fields = _plan(cls)
        msg = message_type()
        for name, kind, enc, _ in fields:
            value = getattr(obj, name)
            if kind == "scalar":
                setattr(msg, name, enc(value))
            elif kind == "repeated":
                getattr(msg, name).extend(enc(value))
            elif kind == "message":
                getattr(msg, name).CopyFrom(enc(value))
            elif value is not None:
                setattr(msg, name, enc(value))
        return msg

    return encode


@cache
def _decoder(cls: type) -> Callable[[object], object]:
    def decode(msg: object) -> object:
        _, fields = _plan(cls)
        kwargs = {}
        for name, kind, _, dec in fields:
            if kind == "optional":
                kwargs[name] = dec(getattr(msg, name)) if msg.HasField(name) else None
            else:
                kwargs[name] = dec(getattr(msg, name))
        return cls(**kwargs)

    return decode


def encode_body(event: object, envelope: pb.EventEnvelope) -> None:
    """Set the envelope's oneof body from a domain event."""
    try:
        name = BODY_FIELD[type(event)]
    except KeyError:
        raise CodecError(f"{type(event).__name__} is not an event") from None
    getattr(envelope, name).CopyFrom(_encoder(type(event))(event))


def decode_body(envelope: pb.EventEnvelope) -> object:
    name = envelope.WhichOneof("body")
    if name is None:
        raise CodecError("an event envelope without a body (written by a newer version?)")
    return _decoder(_CLASS_OF_BODY[name])(getattr(envelope, name))


def encode_options(options: TableOptions) -> pb.TableOptions:
    return _encoder(TableOptions)(options)


def decode_options(msg: pb.TableOptions) -> TableOptions:
    return _decoder(TableOptions)(msg)


def encode_event(event: object) -> bytes:
    """A bare event (no envelope) as bytes: for round-trip tests and exports."""
    env = pb.EventEnvelope()
    encode_body(event, env)
    return env.SerializeToString()


def decode_event(data: bytes) -> object:
    env = pb.EventEnvelope()
    try:
        env.ParseFromString(data)
    except Exception as exc:  # protobuf raises DecodeError, a bare Exception subclass
        raise CodecError(f"not an event envelope: {exc}") from None
    return decode_body(env)
