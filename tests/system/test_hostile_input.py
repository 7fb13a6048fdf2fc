"""Input that would corrupt the evidence, and absurd tables (the security issue's findings 4
and 5), at the real TableService: real nats-server, every service on a real gRPC server.

Hostile player ids are refused with INVALID_ARGUMENT and nothing is appended (the stream's
last sequence and the table's version unchanged); one player is one seat by the folded id
(``Alice`` cannot sit where ``alice`` sits); CreateTable with each absurd setting answers
INVALID_ARGUMENT and creates nothing.
"""

from __future__ import annotations

import grpc
import pytest
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from shared.infra.eventstore import STREAM, EventStore

C = grpc.StatusCode
NL = dict(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1, big_blind=2)

HOSTILE_IDS = [
    "mallory\nSeat 1: alice (9999999 in chips)",  # a forged history line
    "mallory\x00",  # invalid TOML in the PHH export
    "\x1b[31mmallory\x1b[0m",  # ANSI escapes
    "\u202eyrollam",  # a right-to-left override
    "mallory\u200b",  # zero-width
    "mallory\u2028x",  # a line separator
    "mallory\ue000",  # private use
    " mallory", "mallory ", "mal  lory",  # whitespace is refused, not trimmed
    "m" * 65, "\ufdfa" * 4,  # too long, also after NFKC
    "\u0430lice",  # a Cyrillic а among Latin letters: a look-alike of alice
]

ABSURD_SETTINGS = {
    "100% rake": dict(rake_basis_points=10_000),
    "rake just over 10%": dict(rake_basis_points=1001),
    "a 0 s decision": dict(decision_seconds=0),
    "a 68-year decision": dict(decision_seconds=2**31 - 1),
    "an 11-minute countdown": dict(countdown_seconds=601),
    "a 68-year reconnect bonus": dict(reconnect_bonus_seconds=2**31 - 1),
    "a 2**53 maximum buy-in": dict(max_buy_in=2**53),
    "10 seats of 2**53 / 10 + 1": dict(max_buy_in=2**53 // 10 + 1),
    "a default buy-in over the bound": dict(big_blind=2**53 // 2000 + 1),
    "a big blind over MAX_CHIPS": dict(big_blind=2**53 + 1, max_buy_in=1000),
    "a rake cap over MAX_CHIPS": dict(rake_cap=2**53 + 1),
    "a minimum buy-in above the default maximum": dict(min_buy_in=401),
}


async def last_seq(store: EventStore) -> int:
    return (await store.nc.jsm().stream_info(STREAM)).state.last_seq


@pytest.fixture
async def world(table_stub, nats_server):
    stub = table_stub
    await stub.CreateTable(tpb.CreateTableRequest(table_id="t1", settings=tpb.TableSettings(**NL),
                                                  command_id="create-t1"))
    await stub.SitDown(tpb.SitDownRequest(table_id="t1", seat=1, player_id="alice", buy_in=200,
                                          command_id="sit-alice"))
    store = await EventStore.connect(nats_server.url, create=False)
    yield stub, store
    await store.close()


async def refused(stub, store, call, code: grpc.StatusCode) -> str:
    """``call`` fails with ``code`` and a readable reason; the log and t1 are unchanged."""
    seq = await last_seq(store)
    version = (await stub.GetState(tpb.ViewRequest(table_id="t1"))).version
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call()
    assert info.value.code() is code, (info.value.code(), info.value.details())
    details = info.value.details() or ""
    assert len(details) >= 10 and details.isprintable() and "Traceback" not in details
    assert await last_seq(store) == seq, "a refused command appended to the log"
    assert (await stub.GetState(tpb.ViewRequest(table_id="t1"))).version == version
    return details


@pytest.mark.parametrize("player_id", HOSTILE_IDS, ids=repr)
async def test_hostile_player_ids_are_invalid_and_append_nothing(world, player_id):
    stub, store = world
    details = await refused(stub, store, lambda: stub.SitDown(tpb.SitDownRequest(
        table_id="t1", seat=2, player_id=player_id, buy_in=200, command_id="sit-2")),
        C.INVALID_ARGUMENT)
    assert "player id" in details


async def test_alice_cannot_sit_where_alice_sits(world):
    stub, store = world
    for i, other in enumerate(["Alice", "ALICE", "ａｌｉｃｅ", "𝐚𝐥𝐢𝐜𝐞"]):
        details = await refused(stub, store, lambda: stub.SitDown(tpb.SitDownRequest(
            table_id="t1", seat=2, player_id=other, buy_in=200, command_id=f"sit-{i}")),
            C.FAILED_PRECONDITION)
        assert "already has a seat" in details
    await stub.SitDown(tpb.SitDownRequest(table_id="t1", seat=2, player_id="bob", buy_in=200,
                                          command_id="sit-bob"))
    seats = {s.seat: s.player_id for s in (await stub.GetState(
        tpb.ViewRequest(table_id="t1"))).seats}
    assert seats == {1: "alice", 2: "bob"}


async def test_a_compatibility_form_is_seated_as_its_normal_form(world):
    stub, _ = world
    await stub.SitDown(tpb.SitDownRequest(table_id="t1", seat=2, player_id="ｂｏｂ", buy_in=200,
                                          command_id="sit-bob"))
    seats = {s.seat: s.player_id for s in (await stub.GetState(
        tpb.ViewRequest(table_id="t1"))).seats}
    assert seats[2] == "bob"


@pytest.mark.parametrize("name", list(ABSURD_SETTINGS))
async def test_absurd_tables_are_invalid_and_create_nothing(world, name):
    stub, store = world
    settings = tpb.TableSettings(**{**NL, **ABSURD_SETTINGS[name]})
    await refused(stub, store, lambda: stub.CreateTable(tpb.CreateTableRequest(
        table_id="t9", settings=settings, command_id="create-t9")), C.INVALID_ARGUMENT)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await stub.GetState(tpb.ViewRequest(table_id="t9"))
    assert info.value.code() is C.NOT_FOUND


async def test_tables_at_the_bounds_are_created(world):
    stub, _ = world
    at_bounds = dict(rake_basis_points=1000, decision_seconds=600, countdown_seconds=0,
                     reconnect_bonus_seconds=600, max_seats=10, max_buy_in=2**53 // 10)
    reply = await stub.CreateTable(tpb.CreateTableRequest(
        table_id="t8", settings=tpb.TableSettings(**{**NL, **at_bounds}), command_id="c-t8"))
    assert reply.version > 0
