"""The codec (shared/infra/codec.py): every domain event survives the protobuf round trip, and a
value the domain does not know (an enum left UNSPECIFIED or out of range, a card out of range),
at the top of an event or nested in it, raises CodecError."""

from __future__ import annotations

import dataclasses
import typing

import pytest
from poker.events.v1 import events_pb2 as pb

from shared.audit.sample import MIXED, play_decisions
from shared.infra import codec
from shared.infra.codec import (
    EVENT_TYPES,
    CodecError,
    Kind,
    decode_event,
    decode_options,
    encode_event,
    encode_options,
    plan,
)
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, Card, cards
from shared.poker.options import NO_RAKE_CAP, RakeCap, TableOptions, table_options


def _mixed_events() -> list:
    out = []
    for i, (game, structure, stakes) in enumerate(MIXED):
        options = table_options(game, structure, **stakes)
        for decision in play_decisions(f"codec-{i}", options, 12, seed=i, churn=0.1):
            out.extend(decision)
    # a table whose chips come from a wallet: the sagas (buy-ins refused too)
    wallet = table_options("holdem", "no_limit", small_blind=1, big_blind=2, wallet=True)
    for decision in play_decisions("codec-wallet", wallet, 30, seed=5, churn=0.15):
        out.extend(decision)
    return out


def test_every_event_of_played_tables_round_trips():
    events = _mixed_events()
    assert {type(e) for e in events} >= set(EVENT_TYPES) - {
        E.PlayerDisconnected, E.PlayerReconnected, E.TablePaused, E.TableConfigured,
        E.TableClosing, E.ClockRestarted, E.SeatTokenReplaced, E.SeedCommitted, E.SeedRevealed}
    for e in events:
        back = decode_event(encode_event(e))
        assert back == e
        assert type(back) is type(e)


@pytest.mark.parametrize("event", [
    E.PlayerDisconnected(3), E.PlayerReconnected(4), E.TablePaused(True), E.TableClosing("x"),
    E.ClockRestarted(2, 1_700_000_000_000), E.SeatTokenReplaced(2, "Alice@example", "ab" * 32),
    E.PlayerSeated(1, "sub|123", 100, "cd" * 32, False, "Alice (2)"),
    E.TableConfigured(table_options("stud", "fixed_limit", small_bet=20, wallet=True)),
    E.HandShown(2, cards("AhKh"), "high card", ""),
    E.CardsDealt(0, (UNKNOWN_CARD,), (E.HoleDeal(1, (UNKNOWN_CARD, Card(51)), (False, True)),),
                 ()),
    E.DeckRevealed((cards("2cAh"), cards("Ks")), ("ab", "cd")),
    E.DeckRevealed((cards("2cAh"),), ("ab",), "ef" * 32),
    E.DeckCommitted("c" * 64, 52, positions_root="d" * 64, shuffle="poker-shuffle/x",
                    seed_sha256="e" * 64, player_seeds=("01" * 32, "02" * 32),
                    next_seed_sha256="f" * 64),
    E.SeedCommitted(3, 7, "ab" * 32), E.SeedRevealed(3, 7, "cd" * 32),
    E.PotAwarded(1, E.Portion.LOW, (E.Share(2, 5), E.Share(3, 6)), "8-6-4-2-A"),
])
def test_edge_events_round_trip(event):
    assert decode_event(encode_event(event)) == event


def test_cards_decode_as_the_shared_card_objects():
    e = decode_event(encode_event(E.HandShown(2, cards("AhKh"))))
    assert all(type(c) is Card for c in e.cards)
    assert e.cards[0] is cards("Ah")[0]


def test_options_round_trip_with_optional_fields_set_and_unset():
    plain = table_options("holdem", "no_limit", small_blind=1, big_blind=2,
                          rake_cap=NO_RAKE_CAP)
    capped = table_options("omaha", "pot_limit", small_blind=1, big_blind=2,
                           rake_cap=RakeCap(heads_up=3, three_four=None, five_plus=7))
    for options in (plain, capped):
        assert decode_options(encode_options(options)) == options
    assert decode_options(encode_options(plain)).rake_cap.heads_up is None


def _bytes(**body) -> bytes:
    return pb.EventEnvelope(**body).SerializeToString()


@pytest.mark.parametrize("data, error", [
    (_bytes(action_taken=pb.ActionTaken(seat=1, action=0)), "ActionKind value 0 is not known"),
    (_bytes(action_taken=pb.ActionTaken(seat=1, action=99)), "ActionKind value 99 is not known"),
    (_bytes(hand_started=pb.HandStarted(hand_no=1, forced_bets=[pb.ForcedBet(seat=1, kind=0)])),
     "ForcedKind value 0 is not known"),
    (_bytes(pot_awarded=pb.PotAwarded(portion=0)), "Portion value 0 is not known"),
    (_bytes(hand_shown=pb.HandShown(seat=1, cards=[3, 53])), "card 53 is out of range"),
    (_bytes(cards_dealt=pb.CardsDealt(board=[1, 2, 300])), "card 300 is out of range"),
    (_bytes(cards_dealt=pb.CardsDealt(hole=[pb.HoleDeal(seat=1, cards=[60])])),
     "card 60 is out of range"),
    (_bytes(deck_revealed=pb.DeckRevealed(decks=[pb.Deck(cards=[0, 99])])),
     "card 99 is out of range"),
    (_bytes(table_created=pb.TableCreated(table_id="t", options=pb.TableOptions(game=0))),
     "Game value 0 is not known"),
    (_bytes(), "without a body"),
])
def test_values_the_domain_does_not_know_raise_codec_error(data, error):
    with pytest.raises(CodecError, match=error):
        decode_event(data)


def test_a_sealed_card_out_of_range_raises_codec_error_once_opened():
    from shared.infra.codec import decode_body
    from shared.infra.secrecy import DealerKeyring, HandKey
    key = HandKey("t1", 3, bytes(32))
    keyring = DealerKeyring()
    keyring.add(key)
    env = pb.EventEnvelope(table_id="t1", hand_no=3, cards_dealt=pb.CardsDealt(
        street=0, hole=[pb.HoleDeal(seat=1, cards=[52, 52], face_up=[False, False],
                                    sealed=key.seal(bytes([7, 99]), "hole|0|1"))]))
    with pytest.raises(CodecError, match="card 99 is out of range"):
        decode_body(env, keyring)
    env.cards_dealt.hole[0].sealed = key.seal(bytes([7, 9]), "hole|0|1")
    assert decode_body(env, keyring).hole[0].cards == (Card(7), Card(9))
    assert decode_body(env).hole[0].cards == (UNKNOWN_CARD, UNKNOWN_CARD)  # no key


# --- the plan: every event type, every kind of field -----------------------------------------

_SCALARS = {int: (7, 11), bool: (True, False), str: ("x-1", "y-2")}


def _sample(cls: type, variant: int) -> object:
    """An instance of ``cls`` with a value of the right kind in every field (no defaults:
    a field the codec dropped would come back as the message's zero). ``variant`` 1 leaves the
    optional fields unset (None)."""
    hints = typing.get_type_hints(cls)
    values = []
    for f in plan(cls).fields:
        hint = hints[f.name]
        if f.optional:
            if variant:
                values.append(None)
                continue
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
        k = f.kind
        if k is Kind.SCALAR:
            values.append(_SCALARS[hint][variant])
        elif k is Kind.CARD:
            values.append(Card(13 + variant))
        elif k is Kind.ENUM:
            values.append(list(f.enum.domain)[-1 - variant])
        elif k is Kind.MESSAGE:
            values.append(_sample(f.nested, variant))
        elif k is Kind.SCALARS:
            item = typing.get_args(hint)[0]
            values.append(_SCALARS[item] + _SCALARS[item][:1] if not variant else ())
        elif k is Kind.CARDS:
            values.append((Card(0), Card(51), UNKNOWN_CARD) if not variant else ())
        elif k is Kind.MESSAGES:
            values.append((_sample(f.nested, 0), _sample(f.nested, 1)))
        else:
            assert k is Kind.DECKS
            values.append(((Card(1), Card(2)), (), (Card(3),)))
    return cls(*values)


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("variant", [0, 1])
def test_every_event_type_round_trips_through_its_plan(cls, variant):
    event = _sample(cls, variant)
    assert decode_event(encode_event(event)) == event
    msg = codec._encoder(cls)(event)
    # the generated decoder and the loop over the same plan agree
    assert codec._decoder(cls)(msg) == event


@pytest.mark.parametrize("variant", [0, 1])
def test_table_options_round_trip_through_their_plan(variant):
    options = _sample(TableOptions, variant)
    assert decode_options(encode_options(options)) == options
    msg = encode_options(options)
    assert codec._decoder(TableOptions)(msg) == options


def _classes() -> list[type]:
    seen: list[type] = []
    todo = [*EVENT_TYPES, TableOptions]
    while todo:
        cls = todo.pop()
        if cls not in seen:
            seen.append(cls)
            todo.extend(f.nested for f in plan(cls).fields if f.nested is not None)
    return seen


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: c.__name__)
def test_each_plan_matches_its_protobuf_message(cls):
    p = plan(cls)
    assert p is plan(cls)  # made once
    fields = p.message.DESCRIPTOR.fields_by_name
    for f in p.fields:
        d = fields[f.name]
        repeated = f.kind in (Kind.SCALARS, Kind.CARDS, Kind.MESSAGES, Kind.DECKS)
        assert d.is_repeated == repeated, f.name
        assert (d.message_type is not None) == (f.kind in (Kind.MESSAGE, Kind.MESSAGES,
                                                           Kind.DECKS)), f.name
        if f.kind is Kind.ENUM:
            assert d.enum_type.full_name == f.enum.proto.DESCRIPTOR.full_name
        if f.optional:
            assert d.has_presence, f.name


def test_a_class_the_codec_cannot_map_is_refused_when_planned():
    @dataclasses.dataclass(frozen=True, slots=True)
    class Odd:
        values: dict[str, int]

    with pytest.raises(TypeError, match="no mapping"):
        plan(Odd)

    @dataclasses.dataclass(frozen=True)
    class Unslotted:
        seat: int

    with pytest.raises(TypeError, match="slotted"):
        plan(Unslotted)


def test_an_event_with_a_value_its_enum_does_not_have_does_not_encode():
    with pytest.raises(CodecError, match=r"ActionTaken: 'call' is not a member of ActionKind"):
        encode_event(E.ActionTaken(1, "call", 2, 0, False))
