"""Input that would corrupt the evidence, and absurd tables (the security issue's findings 4
and 5), at the real TableService: real nats-server, every service on a real gRPC server.

The player id is the caller's token's subject, exactly (shared/poker/players.py): one with a
control character is UNAUTHENTICATED; any other is an id, but what histories print is a name,
so an id that could forge a line or hide (and no name claim to print instead) cannot sit:
FAILED_PRECONDITION, nothing appended (the stream's last sequence and the table's version
unchanged); with a printable name it sits, and the name is what is shown. Ids that differ in
case or form are other players, shown apart; CreateTable with each absurd setting answers
INVALID_ARGUMENT and creates nothing.
"""

from __future__ import annotations

import secrets
import time
from functools import partial

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import STREAM, EventStore
from shared.infra.identity import PLAYER
from shared.poker.players import name_problem, subject_problem
from tests.helpers.tables import SeatStubs

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


def idp_token(stack, subject: str, name: str | None = None) -> str:
    """A player's token for ``subject`` exactly as given (and a ``name`` claim), signed with
    the stack's identity provider's key: what an identity provider that does not check ids
    would issue (the stack's issuer refuses a subject with a control character)."""
    key = serialization.load_pem_private_key(stack.issuer.key_file.read_bytes(), password=None)
    now = int(time.time())
    claims = {"iss": stack.issuer.ISSUER, "aud": stack.issuer.AUDIENCE, "sub": subject,
              "roles": [PLAYER], "iat": now, "nbf": now, "exp": now + 600,
              "jti": secrets.token_hex(8)}
    if name is not None:
        claims["name"] = name
    return jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": stack.issuer.kid})


def as_subject(stack, subject: str, name: str | None = None):
    """A SitDown as ``subject`` (its :func:`idp_token`)."""
    bare = table_pb2_grpc.TableServiceStub(stack.channel("table"))  # no token of its own
    auth = bearer_metadata(idp_token(stack, subject, name))
    return lambda request: bare.SitDown(request, metadata=auth)


@pytest.fixture
async def world(stack, nats_server):
    stub = SeatStubs(stack, {1: "alice"})
    await stack.deposit("alice", 200)
    await stub.CreateTable(tpb.CreateTableRequest(table_id="t1", settings=tpb.TableSettings(**NL),
                                                  command_id="create-t1"))
    await stub.SitDown(tpb.SitDownRequest(table_id="t1", seat=1, buy_in=200,
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
async def test_hostile_ids_never_reach_a_history(world, stack, player_id):
    stub, store = world
    assert "a name" in (name_problem(player_id) or "")  # it cannot be printed
    if subject_problem(player_id) is None:
        await stack.deposit(player_id, 200)
    sit = as_subject(stack, player_id)  # a token naming it, no name claim
    if subject_problem(player_id) is not None:  # a control character: no id at all
        with pytest.raises(ValueError, match="player id"):  # the issuer signs no such token
            stack.token(player_id)
        details = await refused(stub, store, lambda: sit(tpb.SitDownRequest(
            table_id="t1", seat=2, buy_in=200, command_id="sit-2")), C.UNAUTHENTICATED)
        assert "player id" in details
        return
    details = await refused(stub, store, lambda: sit(tpb.SitDownRequest(
        table_id="t1", seat=2, buy_in=200, command_id="sit-2")), C.FAILED_PRECONDITION)
    assert "no name that can be shown" in details
    # with a printable name it sits, and the name is what is shown
    await as_subject(stack, player_id, name="Mallory")(tpb.SitDownRequest(
        table_id="t1", seat=2, buy_in=200, command_id="sit-3"))
    seat = {s.seat: s for s in (await stub.GetState(tpb.ViewRequest(table_id="t1"))).seats}[2]
    assert (seat.player_id, seat.name) == (player_id, "Mallory")


async def test_ids_that_differ_in_case_or_form_are_other_players_shown_apart(world, stack):
    stub, store = world
    for seat, other in enumerate(["Alice", "ａｌｉｃｅ"], start=2):
        await stack.deposit(other, 200)  # their own wallets
        await as_subject(stack, other)(tpb.SitDownRequest(
            table_id="t1", seat=seat, buy_in=200, command_id=f"sit-{seat}"))
    seats = {s.seat: (s.player_id, s.name) for s in (await stub.GetState(
        tpb.ViewRequest(table_id="t1"))).seats}
    assert seats == {1: ("alice", "alice"), 2: ("Alice", "Alice (2)"),
                     3: ("ａｌｉｃｅ", "alice (3)")}
    # one id, one seat
    await stack.deposit("alice", 200)
    details = await refused(stub, store, partial(as_subject(stack, "alice"), tpb.SitDownRequest(
        table_id="t1", seat=4, buy_in=200, command_id="sit-again")), C.FAILED_PRECONDITION)
    assert "already have a seat" in details


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
