"""The codec (shared/infra/codec.py): every domain event survives the protobuf round trip, and a
value the domain does not know (an enum left UNSPECIFIED or out of range, a card out of range),
at the top of an event or nested in it, raises CodecError."""

from __future__ import annotations

import pytest
from poker.events.v1 import events_pb2 as pb

from shared.audit.sample import MIXED, play_decisions
from shared.infra.codec import (CodecError, EVENT_TYPES, decode_event, decode_options,
                                encode_event, encode_options)
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, Card, cards
from shared.poker.options import RakeCap, table_options


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
        E.TableClosing}
    for e in events:
        back = decode_event(encode_event(e))
        assert back == e
        assert type(back) is type(e)


@pytest.mark.parametrize("event", [
    E.PlayerDisconnected(3), E.PlayerReconnected(4), E.TablePaused(True), E.TableClosing("x"),
    E.TableConfigured(table_options("stud", "fixed_limit", small_bet=20, wallet=True)),
    E.HandShown(2, cards("AhKh"), "high card", ""),
    E.CardsDealt(0, (UNKNOWN_CARD,), (E.HoleDeal(1, (UNKNOWN_CARD, Card(51)), (False, True)),),
                 ()),
    E.DeckRevealed((cards("2cAh"), cards("Ks")), ("ab", "cd")),
    E.PotAwarded(1, E.Portion.LOW, (E.Share(2, 5), E.Share(3, 6)), "8-6-4-2-A"),
])
def test_edge_events_round_trip(event):
    assert decode_event(encode_event(event)) == event


def test_cards_decode_as_the_shared_card_objects():
    e = decode_event(encode_event(E.HandShown(2, cards("AhKh"))))
    assert all(type(c) is Card for c in e.cards)
    assert e.cards[0] is cards("Ah")[0]


def test_options_round_trip_with_optional_fields_set_and_unset():
    plain = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
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
