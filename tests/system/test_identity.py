"""Who may do what at the table service (services/table/server.py's ACCESS), against the real
stack over mutual TLS with real tokens: a missing or bad token is UNAUTHENTICATED, a wrong
role or another player's seat PERMISSION_DENIED, and neither appends anything; the services
behind the table service check the player it passes on, too."""

from __future__ import annotations

import asyncio
import time

import grpc
import jwt
import pytest
from poker.betting.v1 import betting_pb2
from poker.dealer.v1 import dealer_pb2, dealer_pb2_grpc
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from shared.infra.devissuer import DevIssuer
from tests.helpers.steps import StepStub
from tests.helpers.tables import Table

pytestmark = pytest.mark.asyncio

SETTINGS = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                             small_blind=1, big_blind=2)


def forged(stack, subject: str = "alice", **claims) -> str:
    """A token signed with the stack's own issuer key, with ``claims`` changed."""
    now = int(time.time())
    body = {"iss": DevIssuer.ISSUER, "aud": DevIssuer.AUDIENCE, "sub": subject,
            "roles": ["player", "operator"], "iat": now, "exp": now + 600, **claims}
    return jwt.encode(body, stack.issuer._key, algorithm="EdDSA",
                      headers={"kid": stack.issuer.kid})


def stub_with(stack, token: str | None) -> table_pb2_grpc.TableServiceStub:
    channel = stack.channel("table", token=token)
    stub = table_pb2_grpc.TableServiceStub(channel)
    stub.channel = channel  # a grpc.aio channel closes when nothing holds it
    return stub


async def messages(store) -> int:
    return (await store.js.stream_info(store.stream)).state.messages


def bad_tokens(stack, tmp_path) -> dict[str, str | None]:
    return {
        "no token": None,
        "expired": stack.issuer.token("alice", ("player", "operator"), ttl_s=60,
                                      now=time.time() - 3600),
        "another issuer's key": DevIssuer.create(tmp_path / "other").token(
            "alice", ("player", "operator")),
        "another issuer": forged(stack, iss="someone-else"),
        "another audience": forged(stack, aud="another-service"),
        "not a JWT": "not-a-token",
    }


async def test_without_a_valid_token_every_call_is_unauthenticated_and_nothing_is_appended(
        stack, store, tmp_path):
    t = await Table.open(stack, store, "auth1", seats=2)
    before = await messages(store)
    view = await t.view()
    for what, token in bad_tokens(stack, tmp_path).items():
        stub = stub_with(stack, token)
        calls = {
            "CreateTable": stub.CreateTable(tpb.CreateTableRequest(
                table_id="auth-new", settings=SETTINGS, command_id="c1")),
            "SitDown": stub.SitDown(tpb.SitDownRequest(table_id="auth1", seat=3, buy_in=100,
                                                       command_id="s1")),
            "Act": stub.Act(tpb.ActRequest(
                table_id="auth1", seat=view.to_act, seat_token=t.tokens[view.to_act],
                hand_no=view.hand_no, action=ev.ACTION_KIND_FOLD, command_id="a1")),
            "Leave": stub.Leave(t.seat_request(1)),
            "GetState": stub.GetState(tpb.ViewRequest(table_id="auth1")),
            "CloseTable": stub.CloseTable(tpb.CloseRequest(table_id="auth1", command_id="x")),
        }
        for rpc, call in calls.items():
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await call
            assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED, (what, rpc)
            assert refused.value.details(), (what, rpc)
        watch = stub.Watch(tpb.ViewRequest(table_id="auth1"))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await watch.read()
        assert refused.value.code() is grpc.StatusCode.UNAUTHENTICATED, what
    assert await messages(store) == before
    expired = stub_with(stack, bad_tokens(stack, tmp_path)["expired"])
    assert "expired" in await _details(expired)


async def _details(stub) -> str:
    try:
        await stub.GetState(tpb.ViewRequest(table_id="auth1"))
    except grpc.aio.AioRpcError as exc:
        return exc.details()
    raise AssertionError("accepted")


async def test_a_player_cannot_create_a_table_an_operator_can(stack, store):
    for roles in (("player",), ("compliance",)):
        stub = stub_with(stack, stack.token("mallory", *roles))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.CreateTable(tpb.CreateTableRequest(table_id="ops1", settings=SETTINGS,
                                                          command_id="c"))
        assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "operator" in refused.value.details()
    assert await store.read("ops1") == []
    operator = stub_with(stack, stack.token("ops", "operator"))
    reply = await operator.CreateTable(
        tpb.CreateTableRequest(table_id="ops1", settings=SETTINGS, command_id="c"))
    assert reply.version > 0


async def test_an_operator_cannot_sit_down_or_act(stack, store):
    """The operator role alone may neither take a seat nor act from one: not even a token
    whose subject is the seat's own player, holding the seat's real token, on its turn (so
    only the role refuses it: the handler's seat checks would let that player act)."""
    t = await Table.open(stack, store, "ops2", seats=2)  # p1 and p2, a hand running
    await stack.deposit("ops", 100)
    operator = stub_with(stack, stack.token("ops", "operator"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await operator.SitDown(tpb.SitDownRequest(table_id="ops2", seat=3, buy_in=100,
                                                  command_id="s"))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    view = await t.view()
    seat = view.to_act
    assert seat, "a hand is running and a seat is on turn"
    before = await messages(store)
    for operator in (stub_with(stack, stack.token(f"p{seat}", "operator")),
                     stub_with(stack, stack.token("ops", "operator"))):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await operator.Act(tpb.ActRequest(
                table_id="ops2", seat=seat, seat_token=t.tokens[seat], hand_no=view.hand_no,
                action=ev.ACTION_KIND_FOLD, command_id="op-fold"))
        assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "player" in refused.value.details()  # the role refused it, not the seat
    assert await messages(store) == before
    assert (await t.view()).to_act == seat
    # the same request from the seat's player is accepted: the refusal was the role's
    await t.stub.Act(tpb.ActRequest(table_id="ops2", seat=seat, seat_token=t.tokens[seat],
                                    hand_no=view.hand_no, action=ev.ACTION_KIND_FOLD,
                                    command_id="op-fold"))
    assert await messages(store) > before


async def test_another_player_cannot_use_a_seat_even_with_its_number_table_and_token(
        stack, store):
    """Bob knows alice's seat number, the table id and even alice's seat token: every
    command and private view for her seat is refused, and nothing is appended."""
    t = await Table.open(stack, store, "steal", seats=2)  # p1 and p2
    view = await t.view()
    victim = view.to_act
    bob = stub_with(stack, stack.token("bob"))
    before = await messages(store)
    seat = t.seat_request(victim)
    calls = [
        bob.Act(tpb.ActRequest(table_id="steal", seat=victim, seat_token=t.tokens[victim],
                               hand_no=view.hand_no, action=ev.ACTION_KIND_FOLD,
                               command_id="x1")),
        bob.Leave(seat),
        bob.TopUp(tpb.TopUpRequest(seat=seat, amount=10)),
        bob.SitOut(tpb.SitOutRequest(seat=seat, sit_out=True)),
        bob.Disconnect(seat),
        bob.GetState(tpb.ViewRequest(table_id="steal", seat=victim,
                                     seat_token=t.tokens[victim])),
    ]
    for call in calls:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await call
        assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
        assert f"seat {victim}" in refused.value.details()
    watch = bob.Watch(tpb.ViewRequest(table_id="steal", seat=victim,
                                      seat_token=t.tokens[victim]))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await watch.read()
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    # the other seated player is just another player too
    other = 1 if victim == 2 else 2
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await t.stub.of(other).Act(tpb.ActRequest(
            table_id="steal", seat=victim, seat_token=t.tokens[victim], hand_no=view.hand_no,
            action=ev.ACTION_KIND_FOLD, command_id="x2"))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert await messages(store) == before
    # bob may spectate a public table: no hole cards
    public = await bob.GetState(tpb.ViewRequest(table_id="steal"))
    assert all(c == "??" for s in public.seats for c in s.cards)


async def test_a_private_table_shows_spectators_only_to_operators_compliance_and_its_players(
        stack, store):
    await Table.open(stack, store, "priv", seats=2, private=True)
    request = tpb.ViewRequest(table_id="priv")
    stranger = stub_with(stack, stack.token("stranger"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stranger.GetState(request)
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert "private" in refused.value.details()
    for token in (stack.token("ops", "operator"), stack.token("auditor", "compliance"),
                  stack.token("p1")):
        viewer = stub_with(stack, token)
        assert (await viewer.GetState(request)).table_id == "priv"


async def test_the_services_behind_the_table_check_the_player_it_passes_on(stack, store):
    """Even a caller holding the table service's own certificate cannot act or see cards for
    a seat as another player: the betting and dealer services check the seat's player on
    their own fold."""
    t = await Table.open(stack, store, "inner", seats=2)
    view = await t.view()
    seat = view.to_act
    before = await messages(store)
    betting = StepStub(stack.channel("betting", identity="table"))  # its step stream
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await betting.Act(betting_pb2.ActRequest(
            step=step_pb2.StepRequest(table_id="inner", hand_no=view.hand_no,
                                      command_id="c.s1.forged", version=view.version),
            seat=seat, action=ev.ACTION_KIND_FOLD, player_id="mallory"))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    dealer = dealer_pb2_grpc.DealerServiceStub(stack.channel("dealer", identity="table"))
    for player in ("mallory", ""):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await dealer.SeatCards(dealer_pb2.SeatCardsRequest(
                table_id="inner", hand_no=view.hand_no, seat=seat, player_id=player))
        assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    own = await dealer.SeatCards(dealer_pb2.SeatCardsRequest(
        table_id="inner", hand_no=view.hand_no, seat=seat, player_id=f"p{seat}"))
    assert len(own.cards) == 2
    assert await messages(store) == before


async def test_every_rpc_of_the_table_service_has_one_declared_rule():
    from poker.tournament.v1 import tournament_pb2

    from services.table.server import ACCESS
    methods = {m.name for m in tpb.DESCRIPTOR.services_by_name["TableService"].methods}
    # and the commands a tournament's director gives its tables (TournamentTables)
    director = tournament_pb2.DESCRIPTOR.services_by_name["TournamentTables"]
    methods |= {f"/{director.full_name}/{m.name}" for m in director.methods}
    assert set(ACCESS) == methods


async def test_a_watch_ends_when_its_token_expires(stack, store):
    await Table.open(stack, store, "expiry", seats=2)
    # a token that expires in 2 s (verified now, so within its lifetime)
    short = stub_with(stack, stack.issuer.token("p1", ("player",), ttl_s=2))
    call = short.Watch(tpb.ViewRequest(table_id="expiry"))
    first = await call.read()
    assert first.table_id == "expiry"
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        while True:  # views until the token runs out, then the stream ends
            await asyncio.wait_for(call.read(), timeout=10)
    assert ended.value.code() is grpc.StatusCode.UNAUTHENTICATED
    assert "expired" in ended.value.details()
