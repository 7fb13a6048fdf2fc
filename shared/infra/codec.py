"""The codec: domain events (frozen dataclasses) to protobuf and back. Only this module
touches ``_pb2`` event types.

Each domain class maps to the protobuf message of the same name, field by field with the
same names; the conversions are derived once per class from its type hints: ints, bools and
strings as they are, cards as uint32, domain enums to the protobuf enum of the same name
(``Game.HOLDEM`` <-> ``GAME_HOLDEM``), nested dataclasses to messages, tuples to repeated
fields, ``int | None`` to proto3 ``optional``. A decoded value that the domain does not know
(an enum left UNSPECIFIED, a card out of range) raises :class:`CodecError`.

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
from collections.abc import Callable
from functools import cache

from poker.events.v1 import events_pb2 as pb

from shared.poker import events as E
from shared.poker.cards import DECK, UNKNOWN_CARD, Card
from shared.poker.options import TableOptions

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


def _enum_encoder(domain: type[enum.Enum]) -> Callable[[enum.Enum], int]:
    pb_enum = getattr(pb, domain.__name__)
    prefix = _snake(domain.__name__).upper() + "_"
    return {m: pb_enum.Value(prefix + m.name) for m in domain}.__getitem__


def _field_encoder(hint: object) -> tuple[str, Callable]:
    """(kind, encode) for one field's type hint.

    kind: "scalar" (assign), "repeated" (extend), "message" (CopyFrom), "optional".
    """
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint is Card:
        return "scalar", int
    if hint in (int, bool, str):
        return "scalar", (lambda v: v)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return "scalar", _enum_encoder(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return "message", _encoder(hint)
    if origin in (types.UnionType, typing.Union) and type(None) in args:
        inner = next(a for a in args if a is not type(None))
        _, enc = _field_encoder(inner)
        return "optional", enc
    if origin is tuple:
        item = args[0]
        if typing.get_origin(item) is tuple:  # tuple of card tuples: repeated Deck
            return "repeated", lambda v: [pb.Deck(cards=[int(c) for c in d]) for d in v]
        _, enc = _field_encoder(item)
        return "repeated", (lambda v: [enc(x) for x in v])
    raise TypeError(f"the codec has no mapping for {hint!r}")


@cache
def _plan(cls: type) -> tuple[type, tuple[tuple[str, str, Callable], ...]]:
    hints = typing.get_type_hints(cls)
    fields = tuple((f.name, *_field_encoder(hints[f.name])) for f in dataclasses.fields(cls))
    return getattr(pb, cls.__name__), fields


@cache
def _encoder(cls: type) -> Callable[[object], object]:
    def encode(obj: object) -> object:
        message_type, fields = _plan(cls)
        msg = message_type()
        for name, kind, enc in fields:
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


class _EnumTable(dict):
    """protobuf enum value -> domain member; an unknown value raises CodecError."""

    def __init__(self, domain: type[enum.Enum], from_pb: dict) -> None:
        super().__init__(from_pb)
        self.domain = domain

    def __missing__(self, v: int) -> enum.Enum:
        raise CodecError(f"{self.domain.__name__} value {v} is not known")


def _cards_from(values) -> tuple[Card, ...]:
    try:
        return tuple(map(_CARDS.__getitem__, values))  # an IndexError: a card above 52
    except IndexError:
        bad = next(v for v in values if v > 52)
        raise CodecError(f"card {bad} is out of range (0..52)") from None


def _decode_expr(hint: object, value: str, namespace: dict) -> str:
    """A Python expression decoding ``value`` (an expression reading a protobuf field) as
    ``hint``; the helpers it names go into ``namespace``."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)

    def helper(obj: object) -> str:
        name = f"_h{len(namespace)}"
        namespace[name] = obj
        return name

    if hint is Card:
        return f"{helper(_card_from)}({value})"
    if hint in (int, bool, str):
        return value
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return f"{helper(_enum_table(hint))}[{value}]"
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return f"{helper(_decoder(hint))}({value})"
    if origin is tuple:
        item = args[0]
        if item is Card:
            return f"{helper(_cards_from)}({value})"
        if typing.get_origin(item) is tuple:  # tuple of card tuples: repeated Deck
            return f"tuple([{helper(_cards_from)}(d.cards) for d in {value}])"
        if item in (int, bool, str):
            return f"tuple({value})"
        return f"tuple([{_decode_expr(item, 'x', namespace)} for x in {value}])"
    raise TypeError(f"the codec has no mapping for {hint!r}")


@cache
def _enum_table(domain: type[enum.Enum]) -> _EnumTable:
    pb_enum = getattr(pb, domain.__name__)
    prefix = _snake(domain.__name__).upper() + "_"
    return _EnumTable(domain, {pb_enum.Value(prefix + m.name): m for m in domain})


@cache
def _decoder(cls: type) -> Callable[[object], object]:
    """The decoder of one domain class, generated once as straight-line code: the audit decodes
    every event of a log, and a loop over the fields dispatching on each one's kind cost most
    of that time. The object is made the way ``evolve`` (shared/poker/evolve.py) makes one:
    each slot written through its descriptor, not through the frozen ``__init__`` (one
    ``object.__setattr__`` per field). ``PotAwarded`` becomes::

        def decode(msg):
            new = _new(_cls)
            _set_pot_index(new, msg.pot_index)
            _set_portion(new, _h3[msg.portion])  # _h3: the Portion table
            _set_shares(new, tuple([_h5(x) for x in msg.shares]))  # _h5: Share's decoder
            _set_hand(new, msg.hand)
            return new
    """
    if hasattr(cls, "__post_init__") or not hasattr(cls, "__slots__"):
        raise TypeError(f"{cls.__name__}: the codec makes frozen, slotted dataclasses without "
                        f"__post_init__")
    hints = typing.get_type_hints(cls)
    namespace: dict = {"_cls": cls, "_new": object.__new__}
    lines = ["def decode(msg):", "    new = _new(_cls)"]
    for f in dataclasses.fields(cls):
        hint, value = hints[f.name], f"msg.{f.name}"
        origin = typing.get_origin(hint)
        if origin in (types.UnionType, typing.Union) and type(None) in typing.get_args(hint):
            inner = next(a for a in typing.get_args(hint) if a is not type(None))
            expr = (f"({_decode_expr(inner, value, namespace)} "
                    f"if msg.HasField({f.name!r}) else None)")
        else:
            expr = _decode_expr(hint, value, namespace)
        namespace[f"_set_{f.name}"] = cls.__dict__[f.name].__set__
        lines.append(f"    _set_{f.name}(new, {expr})")
    lines.append("    return new\n")
    exec("\n".join(lines), namespace)  # noqa: S102 - generated from the class's own type hints
    decode = namespace["decode"]
    decode.__doc__ = f"A {cls.__name__} from its protobuf message."
    return decode


def encode_body(event: object, envelope: pb.EventEnvelope, sealing: Sealing | None = None) -> None:
    """Set the envelope's oneof body from a domain event; ``sealing``: seal its secret cards
    (the envelope's table and hand must be set first)."""
    try:
        name = BODY_FIELD[type(event)]
    except KeyError:
        raise CodecError(f"{type(event).__name__} is not an event") from None
    msg = _encoder(type(event))(event)
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
    if name in _OPEN:
        return _OPEN[name](msg, envelope, keyring)
    return _decoder(_CLASS_OF_BODY[name])(msg)


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


_SEAL = {E.DeckCommitted: _seal_commitment, E.CardsDealt: _seal_deal,
         E.DeckRevealed: _seal_reveal}


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
    burned = msg.burned
    if msg.sealed_burned:
        burned = _opened(key, msg.sealed_burned, f"burned|{street}", len(burned))
    opened = []  # every sealed piece is opened before any card is read, as in a plain decode
    for deal in msg.hole:
        cards = deal.cards
        if deal.sealed:
            down = [i for i, up in enumerate(deal.face_up) if not up]
            plain = _opened(key, deal.sealed, f"hole|{street}|{deal.seat}", len(down))
            cards = list(cards)
            for i, c in zip(down, plain):
                cards[i] = c
        opened.append((deal.seat, cards, deal.face_up))
    burned = _cards_from(burned)
    hole = tuple([E.HoleDeal(seat, _cards_from(cards), tuple(face_up))
                  for seat, cards, face_up in opened])
    return E.CardsDealt(street, burned, hole, _cards_from(msg.board))


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


_OPEN = {"deck_committed": _open_commitment, "cards_dealt": _open_deal,
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
