"""Attacks found on the live API (THREATS.md 25, 26, 30, 31 and the stopped table of 27),
through every service on real gRPC servers and a real nats-server: a seated player who sends
the ids the system will use, a stranger who replays a SitDown (and another authenticated
player who holds a seat's token), malformed bytes, a follow-up step that fails, floods, and a
log whose hash chain breaks."""

from __future__ import annotations

import uuid
from functools import partial

import grpc
import pytest
import pytest_asyncio
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from shared.audit import audit_table
from shared.infra.eventstore import STREAM, EventStore
from shared.infra.limits import retry_after_s
from shared.infra.repository import build_commit
from shared.infra.seattokens import new_seat_token
from shared.infra.stepclient import StepStream
from shared.infra.waiting import until
from shared.poker import events as E
from shared.poker.events import ActionKind
from tests.helpers.steps import one_step
from tests.helpers.tables import CLOCK_MS, Table, clocked_stack, table_stub

NL = dict(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1, big_blind=2,
          rake_basis_points=0)


@pytest_asyncio.fixture
async def clocked(nats_server):
    """The stack on a fake clock; the keeper ticks only when a test calls ``tick()``; small
    Watch caps so that a flood is cheap to make."""
    async with clocked_stack(nats_server.url,
                             env={"POKER_LIMIT_WATCHES_PER_CALLER": "3"}) as clocked:
        yield clocked


async def commits(store: EventStore, table_id: str) -> int:
    return len(await store.read(table_id))


async def empty_table(stack, table_id: str):
    """A no-limit table nobody sits at yet; the stub that made it."""
    stub = table_stub(stack)
    await stub.CreateTable(tpb.CreateTableRequest(table_id=table_id,
                                                  settings=tpb.TableSettings(**NL),
                                                  command_id="create"))
    return stub


# --- 25: a client sends the ids the system uses for its own steps --------------------------

async def test_a_disconnect_with_the_keepers_time_out_id_does_not_stop_the_time_out(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "squat-timeout")
    v = await t.view()
    on_turn, hand = v.to_act, v.hand_no
    started = v.deadline_unix_ms - CLOCK_MS
    keeper_id = f"timeout:{hand}:{on_turn}:{started}"
    # the squat is just a disconnect: accepted, and nothing else
    await t.stub.Disconnect(t.seat_request(on_turn, command_id=keeper_id))

    clock.advance(CLOCK_MS)
    await stack.keeper.tick()
    assert [e.seat for e in await t.events(E.PlayerTimedOut)] == [on_turn]
    v = await t.view()
    assert v.hand_no > hand or v.to_act != on_turn  # the table played on
    assert_audit_passes(await store.read(t.table_id), stack, t.table_id)


def assert_audit_passes(stored, stack, table_id: str) -> None:
    audit = audit_table(table_id, stored, stack.keyring())
    assert audit.ok, audit.failure


async def test_an_action_with_the_drivers_next_id_does_not_stall_the_hand(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "squat-driver")
    v = await t.view()
    # The small blind calls with the id the driver would give its next step; then the big
    # blind checks with the id of the deal of the flop.
    nxt = v.version + 1
    v = await t.act(ActionKind.CALL, command_id=f"drv:{v.hand_no}:CloseRound:{nxt}")
    v = await t.act(ActionKind.CHECK, command_id=f"drv:{v.hand_no}:Deal:{v.version + 1}")
    assert len(v.board) == 3 and v.to_act, "the flop is dealt and a player is on turn"
    assert_audit_passes(await store.read(t.table_id), stack, t.table_id)


async def test_one_seat_cannot_take_the_next_id_of_another(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "squat-seat")
    v = await t.view()
    other = 1 if v.to_act == 2 else 2
    shared_id = "the-same-id"
    await t.stub.Disconnect(t.seat_request(other, command_id=shared_id))
    v = await t.act(ActionKind.CALL, command_id=shared_id)  # accepted: ids are per seat
    assert v.to_act == other


# --- 26: a stranger replays another player's SitDown ---------------------------------------

async def last_seq(store: EventStore) -> int:
    return (await store.nc.jsm().stream_info(STREAM)).state.last_seq


async def denied(store: EventStore, call) -> str:
    """``call`` is PERMISSION_DENIED and appends nothing; the reason."""
    before = await last_seq(store)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await call()
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED, refused.value
    assert await last_seq(store) == before, "a refused command appended to the log"
    return refused.value.details()


async def test_a_replayed_sitdown_returns_no_token(clocked):
    stack, clock, store = clocked
    await empty_table(stack, "replay")
    alice, bob, mallory = (table_stub(stack, p) for p in ("alice", "bob", "mallory"))
    for player in ("alice", "bob", "mallory"):
        await stack.deposit(player, 100)
    # A client that chose its own token: the table never returns one.
    token, digest = new_seat_token()
    sit = tpb.SitDownRequest(table_id="replay", seat=1, buy_in=100,
                             command_id="sit-1", seat_token_sha256=digest)
    first = await alice.SitDown(sit)
    replayed = await alice.SitDown(sit)
    assert first.seat_token == "" and replayed.seat_token == ""
    assert replayed.version == first.version
    # A token the table made goes to the first reply only.
    sit2 = tpb.SitDownRequest(table_id="replay", seat=2, buy_in=100, command_id="sit-2")
    made = await bob.SitDown(sit2)
    assert len(made.seat_token) >= 40
    again = await bob.SitDown(sit2)
    assert again.seat_token == "" and again.version == made.version
    # A stranger (authenticated as herself) who replays either SitDown gets no token and no
    # seat: the command is someone else's.
    for request in (sit, sit2):
        before = await last_seq(store)
        with pytest.raises(grpc.aio.AioRpcError) as stolen:
            await mallory.SitDown(request)
        assert stolen.value.code() is grpc.StatusCode.INVALID_ARGUMENT, stolen.value
        assert "command id" in stolen.value.details()
        assert await last_seq(store) == before
    # Both tokens hold their seats; the replies to the replays hold nothing.
    tokens = {1: token, 2: made.seat_token}
    players = {1: alice, 2: bob}
    for seat, tok in tokens.items():
        view = await players[seat].GetState(tpb.ViewRequest(table_id="replay", seat=seat,
                                                            seat_token=tok))
        assert view.table_id == "replay"
    await denied(store, lambda: alice.Leave(tpb.SeatRequest(table_id="replay", seat=1,
                                                            seat_token="", command_id="leave")))

    # Another authenticated player, even with the seat's right token, cannot act for it, see
    # its cards or move it: a stranger, and the player of the other seat.
    view = await alice.GetState(tpb.ViewRequest(table_id="replay"))
    assert view.hand_no == 1 and view.to_act
    for seat, tok in tokens.items():
        others = (("mallory", mallory), ("bob" if seat == 1 else "alice", players[3 - seat]))
        for name, stub in others:
            seat_req = tpb.SeatRequest(table_id="replay", seat=seat, seat_token=tok,
                                       command_id=f"{name}-{seat}")
            calls = {
                "Act": partial(stub.Act, tpb.ActRequest(
                    table_id="replay", seat=seat, seat_token=tok, hand_no=view.hand_no,
                    action=ev.ACTION_KIND_FOLD, command_id=f"{name}-act-{seat}")),
                "GetState": partial(stub.GetState, tpb.ViewRequest(
                    table_id="replay", seat=seat, seat_token=tok)),
                "Leave": partial(stub.Leave, seat_req),
                "SitOut": partial(stub.SitOut, tpb.SitOutRequest(seat=seat_req, sit_out=True)),
                "TopUp": partial(stub.TopUp, tpb.TopUpRequest(seat=seat_req, amount=10)),
                "Disconnect": partial(stub.Disconnect, seat_req),
            }
            for method, call in calls.items():
                details = await denied(store, call)
                assert f"seat {seat}" in details and name in details, (method, details)
    after = await alice.GetState(tpb.ViewRequest(table_id="replay"))
    assert (after.version, after.to_act) == (view.version, view.to_act)  # nobody acted


async def test_a_digest_that_is_not_one_is_refused(clocked):
    stack, clock, store = clocked
    await empty_table(stack, "digest")
    await stack.deposit("al", 100)
    al = table_stub(stack, "al")
    before = await commits(store, "digest")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await al.SitDown(tpb.SitDownRequest(
            table_id="digest", seat=1, buy_in=100, command_id="s",
            seat_token_sha256="my-password"))
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "64 lowercase hex" in refused.value.details()
    assert await commits(store, "digest") == before


# --- 30: statuses, never UNKNOWN -------------------------------------------------------------

@pytest.mark.parametrize("service,method,identity", [
    ("table", "/poker.table.v1.TableService/SitDown", "client"),
    ("table", "/poker.table.v1.TableService/GetState", "client"),
    ("table", "/poker.table.v1.TableService/Watch", "client"),
    ("dealer", "/poker.dealer.v1.DealerService/SeatCards", "table"),
])
async def test_malformed_bytes_are_invalid_argument(clocked, service, method, identity):
    stack, clock, store = clocked
    # a player's token at the table service (which checks it first): the bytes are refused
    token = stack.token("p1") if service == "table" else None
    channel = stack.channel(service, identity, token=token)
    call = (channel.unary_stream if method.endswith("Watch") else channel.unary_unary)(method)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        reply = call(b"\xff\xff\xff\xff")
        if method.endswith("Watch"):
            async for _ in reply:
                pass
        else:
            await reply
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT, refused.value
    assert "does not parse" in refused.value.details()
    await channel.close()


async def test_malformed_bytes_of_a_step_are_invalid_argument(clocked):
    """A step's call on the step stream (no unary call takes a step) whose bytes do not
    parse as its message."""
    stack, clock, store = clocked
    async with stack.channel("betting", "table") as chan:
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await one_step(chan, "Act", step_pb2.StepRequest(table_id="t1",
                                                             call=b"\xff\xff\xff\xff"))
    assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT, refused.value
    assert "does not parse" in refused.value.details()


async def test_a_failed_follow_up_step_answers_ok_and_the_driver_carries_on(clocked):
    """The second SitDown starts a hand; the deal's service fails (here: the table service's
    dealer channel leads to a service that is not the dealer). The SitDown is in the log, so
    it answers OK with the table as it stands; once the dealer is back the hand goes on."""
    stack, clock, store = clocked
    driver = stack.keeper.driver
    dealer = driver.peers.steps.streams["dealer"]
    wrong = stack.channel("rake", "table")  # the rake takes no dealer step: UNIMPLEMENTED
    driver.peers.steps.streams["dealer"] = [StepStream(wrong, "dealer")]
    t = await Table.open(stack, store, "follow-up", seats=1)
    await t.sit(2)  # OK although the deck commitment failed
    v = await t.view()
    assert v.hand_no == 1 and v.to_act == 0
    assert [type(e) for e in await t.events(E.DeckCommitted)] == []

    await driver.peers.steps.streams["dealer"][0].close()
    driver.peers.steps.streams["dealer"] = dealer
    driver.failures.ok("follow-up")  # (it would look again after its wait)
    v = await until(lambda: _on_turn(t), timeout=10, what="the hand going on")
    assert v.hand_no == 1
    await wrong.close()


async def _on_turn(t: Table):
    v = await t.view()
    return v if v.to_act else None


# --- 31: floods --------------------------------------------------------------------------------

async def test_a_toggle_flood_is_refused_and_bounded_while_other_tables_play(clocked):
    stack, clock, store = clocked
    flood = await Table.open(stack, store, "flood")
    calm = await Table.open(stack, store, "calm")
    before = await commits(store, "flood")
    refused = None
    sent = 0
    for i in range(40):
        rpc = flood.stub.Disconnect if i % 2 == 0 else flood.stub.Reconnect
        try:
            await rpc(flood.seat_request(1))
            sent += 1
        except grpc.aio.AioRpcError as exc:
            refused = exc
            break
    assert refused is not None and refused.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "retry in" in refused.details()
    wait = retry_after_s(refused)
    assert wait is not None and wait > 0
    assert sent <= 10 and await commits(store, "flood") - before == sent  # bounded
    # another table plays on
    v = await calm.call_or_check()
    assert v.to_act


async def test_watch_streams_are_capped_per_caller(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "watched")
    streams = [t.stub.Watch(tpb.ViewRequest(table_id="watched")) for _ in range(3)]
    for s in streams:
        assert (await s.read()).table_id == "watched"
    extra = t.stub.Watch(tpb.ViewRequest(table_id="watched"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await extra.read()
    assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    streams[0].cancel()

    async def reopened():
        again = t.stub.Watch(tpb.ViewRequest(table_id="watched"))
        try:
            return (await again.read()).table_id == "watched" and again
        except grpc.aio.AioRpcError:
            return None

    again = await until(reopened, timeout=10, what="a Watch slot freed by a closed stream")
    v = await t.call_or_check()  # the table plays on meanwhile
    assert v.version > 0
    for s in (*streams[1:], again):
        s.cancel()


@pytest_asyncio.fixture
async def few_spectators(nats_server):
    async with clocked_stack(nats_server.url,
                             env={"POKER_LIMIT_WATCHES_PER_TABLE": "2"}) as clocked:
        yield clocked


async def test_strangers_filling_a_tables_watch_cap_do_not_shut_out_its_players(few_spectators):
    stack, clock, store = few_spectators
    t = await Table.open(stack, store, "crowded")
    streams = [t.stub.Watch(tpb.ViewRequest(table_id="crowded")) for _ in range(2)]
    for s in streams:
        assert (await s.read()).table_id == "crowded"
    stranger = t.stub.Watch(tpb.ViewRequest(table_id="crowded"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await stranger.read()
    assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    player = t.stub.Watch(tpb.ViewRequest(table_id="crowded", seat=1, seat_token=t.tokens[1]))
    view = await player.read()
    assert view.table_id == "crowded" and any(s.cards for s in view.seats if s.seat == 1)
    for s in (*streams, player):
        s.cancel()


# --- 27: a commit whose chain link does not check stops the table ------------------------------

async def test_a_broken_chain_link_stops_the_table_and_the_others_play_on(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "broken")
    calm = await Table.open(stack, store, "calm2")
    last = (await store.read("broken"))[-1].seq
    forged = build_commit("broken", 1, "forged", b"x" * 32, "table",
                          [E.PlayerToppedUp(1, 1_000_000)], b"\x00" * 32)
    await store.append("broken", forged, last, msg_id="broken:forged")

    for _ in range(2):  # refused, and again without serving it
        with pytest.raises(grpc.aio.AioRpcError) as stopped:
            await t.view()
        assert stopped.value.code() is grpc.StatusCode.DATA_LOSS
        assert "stopped" in stopped.value.details()
        assert "hash chain breaks" in stopped.value.details()
    held = await commits(store, "broken")
    with pytest.raises(grpc.aio.AioRpcError) as acting:
        await t.stub.Act(tpb.ActRequest(table_id="broken", seat=1, seat_token=t.tokens[1],
                                        hand_no=1, action=ev.ACTION_KIND_FOLD,
                                        command_id=uuid.uuid4().hex))
    assert acting.value.code() is grpc.StatusCode.DATA_LOSS
    assert await commits(store, "broken") == held  # nothing appended
    await stack.keeper.tick()  # the keeper leaves it alone
    assert stack.keeper.repo.halted("broken")
    v = await calm.call_or_check()
    assert v.to_act
