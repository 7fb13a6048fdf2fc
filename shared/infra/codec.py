"""The codec: domain events (frozen dataclasses) to protobuf and back. Only this module
converts events to and from their ``_pb2`` messages (their enums: :mod:`shared.infra.protomap`;
a stored commit's bytes: :mod:`shared.infra.commits`).

Each domain class maps to the protobuf message of the same name, field by field with the
same names. One :class:`Plan` per class, made once from its type hints, says for each field
what it holds (:class:`Kind`: ints, bools and strings as they are, cards as uint32, domain
enums through :mod:`~shared.infra.protomap`, nested dataclasses as messages, tuples as repeated
fields, ``X | None`` as proto3 ``optional``); the encoder and the decoder both follow it. A
decoded value that the domain does not know (an enum left UNSPECIFIED, a card out of range)
raises :class:`CodecError`.

Secrecy (:mod:`shared.infra.secrecy`): given a :class:`Sealing`, :func:`encode_body` seals the
burned and face-down cards of ``CardsDealt`` and the whole of ``DeckRevealed`` under the hand
key, and wraps the hand key to compliance in ``DeckCommitted``. :func:`decode_body` opens them
with a :class:`Keyring` that holds the hand's key; without one, a sealed card decodes as the
unknown card and a sealed reveal as an empty one.
"""

from __future__ import annotations

import dataclasses
import enum
import re
import types
import typing
from collections.abc import Callable, Sequence
from functools import cache
from operator import attrgetter
from typing import Any

from google.protobuf.message import Message
from poker.events.v1 import events_pb2 as pb

from shared.poker import events as E
from shared.poker.cards import DECK, UNKNOWN_CARD, Card
from shared.poker.options import TableOptions

from .protomap import EnumMap, UnknownEnumValue, enum_map
from .secrecy import Keyring, Sealing, SecrecyError


class CodecError(ValueError):
    """Bytes or a message that do not decode to a valid domain event."""


EVENT_TYPES: tuple[type, ...] = (*E.TABLE_EVENTS, *E.HAND_EVENTS, *E.MONEY_EVENTS,
                                  *E.OPERATOR_EVENTS)
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


def _cards_from(values) -> tuple[Card, ...]:
    try:
        return tuple(map(_CARDS.__getitem__, values))  # an IndexError: a card above 52
    except IndexError:
        bad = next(v for v in values if v > 52)
        raise CodecError(f"card {bad} is out of range (0..52)") from None


def _decks_from(values) -> tuple[tuple[Card, ...], ...]:
    return tuple([_cards_from(d.cards) for d in values])


# --- the plan --------------------------------------------------------------------------------


class Kind(enum.Enum):
    """What one field holds, and so how it is encoded and decoded."""

    SCALAR = "scalar"  # int, bool, str: the same value in the message
    CARD = "card"  # uint32 0..52 (52: the unknown card)
    ENUM = "enum"  # the protobuf enum of the same name (protomap)
    MESSAGE = "message"  # a nested dataclass: the message of the same name
    SCALARS = "scalars"  # tuple of int, bool or str: repeated
    CARDS = "cards"  # tuple of cards: repeated uint32
    MESSAGES = "messages"  # tuple of a nested dataclass: repeated messages
    DECKS = "decks"  # tuple of card tuples: repeated Deck


_REPEATED = frozenset({Kind.SCALARS, Kind.CARDS, Kind.MESSAGES, Kind.DECKS})


@dataclasses.dataclass(frozen=True, slots=True)
class FieldPlan:
    name: str
    kind: Kind
    optional: bool = False  # ``X | None``: a proto3 optional field, None when unset
    enum: EnumMap | None = None  # ENUM
    nested: type | None = None  # MESSAGE, MESSAGES: the dataclass


@dataclasses.dataclass(frozen=True, slots=True)
class Plan:
    """How one domain class maps to its protobuf message, field by field."""

    cls: type
    message: type  # the protobuf message class
    fields: tuple[FieldPlan, ...]


def _field_plan(name: str, hint: object) -> FieldPlan:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        inner = [a for a in args if a is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"the codec has no mapping for {hint!r}")
        return dataclasses.replace(_field_plan(name, inner[0]), optional=True)
    if hint is Card:
        return FieldPlan(name, Kind.CARD)
    if hint in (int, bool, str):
        return FieldPlan(name, Kind.SCALAR)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return FieldPlan(name, Kind.ENUM, enum=enum_map(hint))
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return FieldPlan(name, Kind.MESSAGE, nested=hint)
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        item = args[0]
        if item is Card:
            return FieldPlan(name, Kind.CARDS)
        if item in (int, bool, str):
            return FieldPlan(name, Kind.SCALARS)
        if typing.get_args(item) == (Card, Ellipsis):
            return FieldPlan(name, Kind.DECKS)
        if isinstance(item, type) and dataclasses.is_dataclass(item):
            return FieldPlan(name, Kind.MESSAGES, nested=item)
    raise TypeError(f"the codec has no mapping for {hint!r}")


@cache
def plan(cls: type) -> Plan:
    """The plan of one domain class (an event, or a dataclass nested in one), made once."""
    if (not dataclasses.is_dataclass(cls) or hasattr(cls, "__post_init__")
            or "__slots__" not in vars(cls)):
        raise TypeError(f"{cls.__name__}: the codec maps frozen, slotted dataclasses without "
                        f"__post_init__")
    hints = typing.get_type_hints(cls)
    fields = tuple(_field_plan(f.name, hints[f.name]) for f in dataclasses.fields(cls))
    return Plan(cls, getattr(pb, cls.__name__), fields)


# --- encoding --------------------------------------------------------------------------------


def _to_message(f: FieldPlan) -> Callable | None:
    """A field's domain value -> what the message takes (None: the value as it is)."""
    k = f.kind
    if k is Kind.SCALAR:
        return None
    if k is Kind.CARD:
        return int
    if k is Kind.ENUM:
        assert f.enum is not None  # an ENUM field's plan holds its map
        return f.enum.to_pb
    if k is Kind.MESSAGE:
        assert f.nested is not None  # a MESSAGE field's plan holds its dataclass
        return _encoder(f.nested)
    if k is Kind.SCALARS:
        return None
    if k is Kind.CARDS:
        return lambda v: [int(c) for c in v]
    if k is Kind.MESSAGES:
        assert f.nested is not None
        enc = _encoder(f.nested)
        return lambda v: [enc(x) for x in v]
    return lambda v: [pb.Deck(cards=[int(c) for c in d]) for d in v]  # DECKS


@cache
def _encoder(cls: type) -> Callable[[object], object]:
    p = plan(cls)
    steps = tuple((f.name, _to_message(f), f.optional,
                   "extend" if f.kind in _REPEATED else
                   "copy" if f.kind is Kind.MESSAGE else "set") for f in p.fields)
    message = p.message

    def encode(obj: object) -> object:
        msg = message()
        for name, conv, optional, how in steps:
            value = getattr(obj, name)
            if optional and value is None:
                continue
            if conv is not None:
                value = conv(value)
            if how == "set":
                setattr(msg, name, value)
            elif how == "extend":
                getattr(msg, name).extend(value)
            else:
                getattr(msg, name).CopyFrom(value)
        return msg

    encode.__doc__ = f"The protobuf message of a {cls.__name__}."
    return encode


# --- decoding --------------------------------------------------------------------------------


def _from_message(f: FieldPlan, nested: Callable[[type], Callable]) -> Callable | None:
    """What a message's field reads as -> the field's domain value (None: as it is);
    ``nested``: the decoder of a nested class."""
    k = f.kind
    if k is Kind.SCALAR:
        return None
    if k is Kind.CARD:
        return _card_from
    if k is Kind.ENUM:
        assert f.enum is not None  # an ENUM field's plan holds its map
        return f.enum.from_pb  # UnknownEnumValue: decode_body makes it a CodecError
    if k is Kind.MESSAGE:
        assert f.nested is not None  # a MESSAGE field's plan holds its dataclass
        return nested(f.nested)
    if k is Kind.SCALARS:
        return tuple
    if k is Kind.CARDS:
        return _cards_from
    if k is Kind.MESSAGES:
        assert f.nested is not None
        dec = nested(f.nested)
        return lambda v: tuple([dec(x) for x in v])
    return _decks_from  # DECKS


def _setter(cls: type, name: str) -> Callable[[object, object], None]:
    """The slot's own setter: the object is made the way ``evolve`` (shared/poker/evolve.py)
    makes one, each slot written through its descriptor, not through the frozen
    ``__init__``."""
    return next(vars(k)[name] for k in cls.__mro__ if name in vars(k)).__set__


def _reader(f: FieldPlan) -> Callable[[Message], object]:
    get = attrgetter(f.name)
    conv = _from_message(f, _decoder)
    if f.optional:
        name = f.name
        if conv is None:
            return lambda msg: get(msg) if msg.HasField(name) else None
        return lambda msg: conv(get(msg)) if msg.HasField(name) else None
    if conv is None:
        return get
    return lambda msg: conv(get(msg))


@cache
def _decoder(cls: type) -> Callable[[Message], object]:
    """The plan's decoder: a loop over its fields. (A decoder unrolled by ``exec`` was
    measured against it: about 0.85-0.9 of its time on decoding alone, but 2.4% on the
    audit, 1-4% on a table's fold, under the 5% a generator must earn here; it is gone.)"""
    p = plan(cls)
    steps = tuple((_setter(cls, f.name), _reader(f)) for f in p.fields)
    new = object.__new__

    def decode(msg: Message) -> object:
        obj: object = new(cls)
        for set_, read in steps:
            set_(obj, read(msg))
        return obj

    decode.__doc__ = f"A {cls.__name__} from its protobuf message."
    return decode




def encode_body(event: object, envelope: pb.EventEnvelope, sealing: Sealing | None = None) -> None:
    """Set the envelope's oneof body from a domain event; ``sealing``: seal its secret cards
    (the envelope's table and hand must be set first)."""
    try:
        name = BODY_FIELD[type(event)]
    except KeyError:
        raise CodecError(f"{type(event).__name__} is not an event") from None
    cls: type = type(event)  # (typed so: mypy takes type[object] as unhashable)
    try:
        msg = _encoder(cls)(event)
    except UnknownEnumValue as exc:
        raise CodecError(f"{type(event).__name__}: {exc}") from None
    if sealing is not None and type(event) in _SEAL:
        _SEAL[type(event)](msg, sealing)
    getattr(envelope, name).CopyFrom(msg)


def decode_body(envelope: pb.EventEnvelope, keyring: Keyring | None = None) -> object:
    """The domain event of an envelope; ``keyring``: what the reader may open (see the module
    docstring)."""
    name = envelope.WhichOneof("body")
    if name is None:
        raise CodecError("an event envelope without a body (written by a newer version?)")
    msg = getattr(envelope, name)
    try:
        if name in _OPEN:
            return _OPEN[name](msg, envelope, keyring)
        return _decoder(_CLASS_OF_BODY[name])(msg)
    except UnknownEnumValue as exc:
        raise CodecError(str(exc)) from None


# --- secrecy ---------------------------------------------------------------------------------

_UNKNOWN = int(UNKNOWN_CARD)


def _seal_commitment(msg: pb.DeckCommitted, sealing: Sealing) -> None:
    msg.compliance_wrap = sealing.compliance.wrap(sealing.hand)
    msg.compliance_key_id = sealing.compliance.key_id


def _seal_deal(msg: pb.CardsDealt, sealing: Sealing) -> None:
    hand = sealing.hand
    if len(msg.burned):
        msg.sealed_burned = hand.seal(bytes(msg.burned), f"burned|{msg.street}")
        msg.burned[:] = [_UNKNOWN] * len(msg.burned)
    for deal in msg.hole:
        down = [i for i, up in enumerate(deal.face_up) if not up]
        if down:
            deal.sealed = hand.seal(bytes(deal.cards[i] for i in down),
                                    f"hole|{msg.street}|{deal.seat}")
            for i in down:
                deal.cards[i] = _UNKNOWN


def _seal_reveal(msg: pb.DeckRevealed, sealing: Sealing) -> None:
    plain = msg.SerializeToString()
    msg.Clear()
    msg.sealed = sealing.hand.seal(plain, "reveal")


#: event class -> its sealer (each takes its own message type)
_SEAL: dict[type, Callable[[Any, Sealing], None]] = {
    E.DeckCommitted: _seal_commitment, E.CardsDealt: _seal_deal, E.DeckRevealed: _seal_reveal}


def _hand_key(envelope: pb.EventEnvelope, keyring: Keyring | None):
    return keyring.hand_key(envelope.table_id, envelope.hand_no) if keyring is not None else None


def _opened(key, blob: bytes, place: str, count: int) -> bytes:
    try:
        plain = key.open(blob, place)
    except SecrecyError as exc:
        raise CodecError(str(exc)) from None
    if len(plain) != count:
        raise CodecError(f"the sealed {place} holds {len(plain)} cards, not {count}")
    return plain


def _open_commitment(msg: pb.DeckCommitted, envelope: pb.EventEnvelope,
                     keyring: Keyring | None) -> object:
    if keyring is not None and msg.compliance_wrap:
        try:
            keyring.learn(envelope.table_id, envelope.hand_no, msg.compliance_key_id,
                          msg.compliance_wrap)
        except SecrecyError as exc:
            raise CodecError(str(exc)) from None
    return _decoder(E.DeckCommitted)(msg)


def _open_deal(msg: pb.CardsDealt, envelope: pb.EventEnvelope,
               keyring: Keyring | None) -> object:
    key = _hand_key(envelope, keyring)
    if key is None or not (msg.sealed_burned or any(d.sealed for d in msg.hole)):
        return _decoder(E.CardsDealt)(msg)
    # The opened cards go straight into the domain event, not into a copy of the message
    # decoded afterwards: the audit opens every deal of a log.
    street = msg.street
    burned: Sequence[int] = msg.burned
    if msg.sealed_burned:
        burned = _opened(key, msg.sealed_burned, f"burned|{street}", len(burned))
    opened = []  # every sealed piece is opened before any card is read, as in a plain decode
    for deal in msg.hole:
        cards: Sequence[int] = deal.cards
        if deal.sealed:
            down = [i for i, up in enumerate(deal.face_up) if not up]
            plain = _opened(key, deal.sealed, f"hole|{street}|{deal.seat}", len(down))
            whole = list(cards)
            for i, c in zip(down, plain):
                whole[i] = c
            cards = whole
        opened.append((deal.seat, cards, deal.face_up))
    burned_cards = _cards_from(burned)
    hole = tuple([E.HoleDeal(seat, _cards_from(cards), tuple(face_up))
                  for seat, cards, face_up in opened])
    return E.CardsDealt(street, burned_cards, hole, _cards_from(msg.board))


def _open_reveal(msg: pb.DeckRevealed, envelope: pb.EventEnvelope,
                 keyring: Keyring | None) -> object:
    if msg.sealed:
        key = _hand_key(envelope, keyring)
        if key is None:
            return E.DeckRevealed((), ())
        try:
            plain = key.open(msg.sealed, "reveal")
        except SecrecyError as exc:
            raise CodecError(str(exc)) from None
        msg = pb.DeckRevealed()
        try:
            msg.ParseFromString(plain)
        except Exception as exc:  # protobuf's DecodeError
            raise CodecError(f"the sealed reveal does not parse: {exc}") from None
    return _decoder(E.DeckRevealed)(msg)


#: body field -> its opener (each takes its own message type)
_OPEN: dict[str, Callable[[Any, pb.EventEnvelope, Keyring | None], object]] = {
    "deck_committed": _open_commitment, "cards_dealt": _open_deal,
    "deck_revealed": _open_reveal}


#: the events that hold secret cards or a hand key: :func:`is_sealed` is None for every other
SEALABLE = frozenset({E.CardsDealt, E.DeckRevealed, E.DeckCommitted})


def is_sealed(envelope: pb.EventEnvelope) -> bool | None:
    """For a ``CardsDealt`` or ``DeckRevealed``: whether its secret cards are sealed (None for
    an event with nothing secret). A plain burn, face-down card or reveal is in the clear."""
    name = envelope.WhichOneof("body")
    if name == "cards_dealt":
        msg = envelope.cards_dealt
        if len(msg.burned) and not msg.sealed_burned:
            return False
        return all(d.sealed or all(d.face_up) for d in msg.hole)
    if name == "deck_revealed":
        return bool(envelope.deck_revealed.sealed) or not len(envelope.deck_revealed.decks)
    if name == "deck_committed":
        return bool(envelope.deck_committed.compliance_wrap)
    return None


def encode_options(options: TableOptions) -> pb.TableOptions:
    return typing.cast(pb.TableOptions, _encoder(TableOptions)(options))


def decode_options(msg: pb.TableOptions) -> TableOptions:
    try:
        return typing.cast(TableOptions, _decoder(TableOptions)(msg))
    except UnknownEnumValue as exc:
        raise CodecError(str(exc)) from None


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
