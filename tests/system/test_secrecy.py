"""Secrecy at rest through the real services: three players check hands down to showdowns where
losers muck. In the log, every burned and face-down card and every revealed deck is sealed:
the fold any service but the dealer makes holds only the board and the hands shown. Each seat
still sees its own cards (the dealer hands them to the table service, and to no other caller),
the compliance key opens everything and the audit passes; the dealer will not start without the compliance key."""

from __future__ import annotations

import grpc
import pytest
from poker.dealer.v1 import dealer_pb2, dealer_pb2_grpc
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from services.pokerctl.bots_cmd import decode_commit
from services.stack import SETUPS
from shared.audit import audit_table
from shared.infra.config import Config
from shared.infra.eventstore import EventStore
from shared.infra.repository import LoadedTable, fold_commit
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD

pytestmark = pytest.mark.asyncio
HANDS = 6


async def check_down(stack, stub, hands: int) -> dict[int, str]:
    """Seats 1 to 3 (players p1 to p3, ``stub`` calls as each) check down ``hands`` hands."""
    settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                 small_blind=1, big_blind=2, rake_basis_points=0)
    await stub.CreateTable(tpb.CreateTableRequest(table_id="t1", settings=settings,
                                                  command_id="c"))
    tokens = {}
    for seat in (1, 2, 3):
        await stack.deposit(f"p{seat}", 400)
        tokens[seat] = (await stub.SitDown(tpb.SitDownRequest(
            table_id="t1", seat=seat, buy_in=400, command_id=f"sit-{seat}"))).seat_token
    n = 0
    view = await stub.GetState(tpb.ViewRequest(table_id="t1"))
    while view.hand_no <= hands:
        assert view.to_act, view  # three players who only check and call never stop
        seat = view.to_act
        mine = await stub.GetState(tpb.ViewRequest(table_id="t1", seat=seat,
                                                   seat_token=tokens[seat]))
        own = next(s for s in mine.seats if s.seat == seat)
        assert len(own.cards) == 2 and "??" not in own.cards  # a seat sees its own cards
        others = [c for s in mine.seats if s.seat != seat for c in s.cards]
        assert set(others) <= {"??"}
        n += 1
        kind = ev.ACTION_KIND_CHECK if mine.legal.can_check else ev.ACTION_KIND_CALL
        view = (await stub.Act(tpb.ActRequest(
            table_id="t1", seat=seat, seat_token=tokens[seat], hand_no=view.hand_no,
            action=kind, command_id=f"a{n}"))).view
    return tokens


async def test_the_log_seals_every_card_nobody_saw(stack, table_stub, nats_server):
    await check_down(stack, table_stub, HANDS)
    store = await EventStore.connect(nats_server.url, create=False)
    try:
        stored = await store.read("t1")
    finally:
        await store.close()

    keyring = stack.keyring()
    assert audit_table("t1", stored, keyring).ok
    shown, mucked = 0, 0
    hand_no = 0
    blind = LoadedTable()  # what the betting, showdown, rake and table services fold
    for s in stored:
        blind = fold_commit(blind, s)
        plain, opened = decode_commit(s.data), decode_commit(s.data, keyring)
        for e, o in zip(plain, opened):
            if isinstance(e, E.HandStarted):
                hand_no = e.hand_no
            elif isinstance(e, E.CardsDealt):
                assert set(e.burned) <= {UNKNOWN_CARD} and e.board == o.board
                assert len(e.burned) == len(o.burned) == (e.street > 0)
                assert all(set(h.cards) == {UNKNOWN_CARD} for h in e.hole)
                assert UNKNOWN_CARD not in {c for h in o.hole for c in h.cards} | set(o.burned)
            elif isinstance(e, E.DeckRevealed):
                assert e == E.DeckRevealed((), ()) and len(o.decks[0]) == 52
            elif isinstance(e, E.HandShown):
                shown += 1
                assert e == o and UNKNOWN_CARD not in e.cards
            elif isinstance(e, E.HandMucked):
                mucked += 1
                hand = blind.state.hand
                assert hand.hand_no == hand_no
                assert set(hand.player(e.seat).hole) == {UNKNOWN_CARD}
    assert hand_no > HANDS and shown >= HANDS and mucked >= 1, (shown, mucked)


async def test_only_the_table_service_gets_a_seats_cards_from_the_dealer(stack, table_stub):
    await check_down(stack, table_stub, 0)  # seated, hand 1 dealt
    view = await table_stub.GetState(tpb.ViewRequest(table_id="t1"))
    # as the table service asks: for the player it authenticated, whose seat it is
    request = dealer_pb2.SeatCardsRequest(table_id="t1", hand_no=view.hand_no, seat=1,
                                          player_id="p1")
    # an anonymous caller in plaintext does not get through the handshake: no cards
    async with grpc.aio.insecure_channel(stack.addresses["dealer"]) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await dealer_pb2_grpc.DealerServiceStub(channel).SeatCards(request, timeout=10)
        assert err.value.code() is grpc.StatusCode.UNAVAILABLE
    # a player's client certificate is not the table service's
    async with stack.channel("dealer", identity="client") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await dealer_pb2_grpc.DealerServiceStub(channel).SeatCards(request, timeout=10)
        assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "'client'" in err.value.details()
    # the table service (its certificate) asks for a seat's own cards, through checks
    async with stack.channel("dealer", identity="table") as channel:
        dealer = dealer_pb2_grpc.DealerServiceStub(channel)
        reply = await dealer.SeatCards(request)
        assert len(reply.cards) == 2 and "??" not in reply.cards
        assert not any(s.in_hand for s in view.seats if s.seat == 3)  # p3 waits for hand 2
        for request, code in (
                (dealer_pb2.SeatCardsRequest(table_id="t1", hand_no=view.hand_no, seat=0,
                                             player_id="p1"),
                 grpc.StatusCode.INVALID_ARGUMENT),
                (dealer_pb2.SeatCardsRequest(table_id="t1", hand_no=view.hand_no + 1, seat=1,
                                             player_id="p1"),
                 grpc.StatusCode.FAILED_PRECONDITION),
                # seated, but not dealt in this hand
                (dealer_pb2.SeatCardsRequest(table_id="t1", hand_no=view.hand_no, seat=3,
                                             player_id="p3"),
                 grpc.StatusCode.FAILED_PRECONDITION),
                # an empty seat, and a seat for a player it is not: nobody's cards
                (dealer_pb2.SeatCardsRequest(table_id="t1", hand_no=view.hand_no, seat=7,
                                             player_id="p1"),
                 grpc.StatusCode.PERMISSION_DENIED),
                (dealer_pb2.SeatCardsRequest(table_id="t1", hand_no=view.hand_no, seat=1,
                                             player_id="p2"),
                 grpc.StatusCode.PERMISSION_DENIED),
                (dealer_pb2.SeatCardsRequest(table_id="t1", hand_no=view.hand_no, seat=1),
                 grpc.StatusCode.PERMISSION_DENIED)):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await dealer.SeatCards(request)
            assert err.value.code() is code, err.value.details()
    # a seat token opens only its own seat's view, a spectator sees no hole card
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await table_stub.GetState(tpb.ViewRequest(table_id="t1", seat=2, seat_token="x" * 64))
    assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
    spectator = await table_stub.GetState(tpb.ViewRequest(table_id="t1"))
    assert {c for s in spectator.seats for c in s.cards} == {"??"}


async def test_the_dealer_does_not_start_without_the_compliance_key(nats_server):
    store = await EventStore.connect(nats_server.url)
    try:
        config = Config(nats_url=nats_server.url, host="127.0.0.1", port=0, addresses={},
                        log_level="WARNING", stream_replicas=1)
        with pytest.raises(SystemExit, match="POKER_COMPLIANCE_PUBLIC_KEY"):
            await SETUPS["dealer"](grpc.aio.server(), None, store, config)
    finally:
        await store.close()
