"""Bad commands at the TableService API (THREATS.md 1-13): each is answered with a gRPC status
and a readable reason, and NOTHING is appended to the log (the stream's last sequence is the
same before and after). Real nats-server, every service on a real gRPC server (in process).
Every call is authenticated: seat N's as player ``pN`` (tests/helpers/tables.SeatStubs), who
has chips in the wallet; the player is the token's subject, never a field of the request."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from functools import partial

import grpc
import pytest
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import STREAM, EventStore

C = grpc.StatusCode
INVALID, DENIED, PRECONDITION = C.INVALID_ARGUMENT, C.PERMISSION_DENIED, C.FAILED_PRECONDITION
NL = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1,
                       big_blind=2)  # buy-in 40 to 400


@dataclass
class Tables:
    stub: object  # SeatStubs: seat N's calls as player pN, seat 0's as an operator
    store: EventStore
    tokens: dict[int, str]  # t1's seats
    other_token: str  # seat 1 of t2
    bare: object  # the table service with no token of its own: calls bring theirs

    async def view(self, seat: int = 0, table_id: str = "t1") -> tpb.TableView:
        token = self.tokens.get(seat, "") if seat else ""
        return await self.stub.GetState(tpb.ViewRequest(table_id=table_id, seat=seat,
                                                        seat_token=token))

    async def act_request(self, **override) -> tpb.ActRequest:
        """A valid call (or check) by the seat to act, with fields overridden."""
        v = await self.view()
        seat = override.pop("seat", v.to_act)
        req = tpb.ActRequest(table_id="t1", seat=seat, seat_token=self.tokens.get(seat, ""),
                             hand_no=v.hand_no, action=ev.ACTION_KIND_CALL,
                             command_id="act-under-test")
        for k, val in override.items():
            setattr(req, k, val)
        return req


async def last_seq(store: EventStore) -> int:
    return (await store.nc.jsm().stream_info(STREAM)).state.last_seq


async def refused(t: Tables, call, *codes: grpc.StatusCode) -> grpc.aio.AioRpcError:
    """``call`` fails with one of ``codes`` and a readable reason, and nothing is appended."""
    before = await last_seq(t.store)
    with pytest.raises(grpc.aio.AioRpcError) as info:
        result = call()
        if hasattr(result, "__aiter__"):  # a stream: the error comes with the first message
            async for _ in result:
                break
        else:
            await result
    exc = info.value
    assert exc.code() in codes, (exc.code(), exc.details())
    details = exc.details() or ""
    assert len(details) >= 10 and "Traceback" not in details and "Exception" not in details, \
        details
    assert await last_seq(t.store) == before, "a refused command appended to the log"
    return exc


@pytest.fixture
async def tables(stack, table_stub, nats_server):
    stub = table_stub
    for seat in range(1, 6):  # enough for every buy-in below: a refusal is never the balance
        await stack.deposit(f"p{seat}", 1000)
    await stub.CreateTable(tpb.CreateTableRequest(table_id="t1", settings=NL, command_id="c1"))
    tokens = {}
    for seat in (1, 2, 3):  # the hand starts when seat 2 sits; seat 3 waits for hand 2
        reply = await stub.SitDown(tpb.SitDownRequest(table_id="t1", seat=seat, buy_in=200,
                                                      command_id=f"sit-{seat}"))
        tokens[seat] = reply.seat_token
    await stub.CreateTable(tpb.CreateTableRequest(table_id="t2", settings=NL, command_id="c2"))
    other = await stub.SitDown(tpb.SitDownRequest(table_id="t2", seat=1,  # p1 again
                                                  buy_in=200, command_id="sit-1"))
    store = await EventStore.connect(nats_server.url, create=False)
    t = Tables(stub, store, tokens, other.seat_token,
               table_pb2_grpc.TableServiceStub(stack.channel("table")))
    v = await t.view()
    assert v.hand_no == 1 and v.to_act in (1, 2)
    yield t
    await store.close()


# --- unknown and malformed tables ------------------------------------------------------------

async def test_unknown_table_is_not_found(tables):
    t = tables
    s = t.stub
    e = await refused(t, lambda: s.GetState(tpb.ViewRequest(table_id="nope")), C.NOT_FOUND)
    assert "nope" in e.details()
    await refused(t, lambda: s.Watch(tpb.ViewRequest(table_id="nope")), C.NOT_FOUND)
    await refused(t, lambda: s.SitDown(tpb.SitDownRequest(
        table_id="nope", seat=1, buy_in=200, command_id="x")), C.NOT_FOUND)
    await refused(t, lambda: s.Act(tpb.ActRequest(
        table_id="nope", seat=1, seat_token=t.tokens[1], hand_no=1,
        action=ev.ACTION_KIND_CALL, command_id="x")), C.NOT_FOUND)
    await refused(t, lambda: s.Leave(tpb.SeatRequest(
        table_id="nope", seat=1, seat_token=t.tokens[1], command_id="x")), C.NOT_FOUND)
    await refused(t, lambda: s.SitOut(tpb.SitOutRequest(seat=tpb.SeatRequest(
        table_id="nope", seat=1, seat_token=t.tokens[1], command_id="x"), sit_out=True)),
        C.NOT_FOUND)


async def test_a_watch_resumed_from_a_negative_version_is_invalid(tables):
    t = tables
    e = await refused(t, lambda: t.stub.Watch(tpb.ViewRequest(table_id="t1",
                                                              after_version=-1)), INVALID)
    assert "after_version" in e.details()


@pytest.mark.parametrize("table_id", ["", "has space", "poker.table.>", "t1.x", "*", "\nt1",
                                      "é", "x" * 65, "x" * 100_000])
async def test_malformed_table_ids_are_invalid(tables, table_id):
    t = tables
    s = t.stub
    if table_id:  # an empty id at CreateTable means "make one"
        await refused(t, lambda: s.CreateTable(tpb.CreateTableRequest(
            table_id=table_id, settings=NL, command_id="x")), INVALID)
    await refused(t, lambda: s.GetState(tpb.ViewRequest(table_id=table_id)), INVALID)
    await refused(t, lambda: s.Watch(tpb.ViewRequest(table_id=table_id)), INVALID)
    await refused(t, lambda: s.SitDown(tpb.SitDownRequest(
        table_id=table_id, seat=1, buy_in=200, command_id="x")), INVALID)
    await refused(t, lambda: s.Act(tpb.ActRequest(
        table_id=table_id, seat=1, seat_token=t.tokens[1], hand_no=1,
        action=ev.ACTION_KIND_CALL, command_id="x")), INVALID, C.NOT_FOUND)




async def test_bad_receipt_requests_are_refused(tables, stack):
    t = tables
    as_p1 = bearer_metadata(stack.token("p1"))

    def receipt(table_id: str = "t1", hand_no: int = 1):
        return t.bare.GetReceipt(tpb.ReceiptRequest(table_id=table_id, hand_no=hand_no),
                                 metadata=as_p1)

    for table_id in ("", "has space", "t1.x", "x" * 65):
        await refused(t, partial(receipt, table_id), INVALID)
    for hand_no in (0, -1):
        e = await refused(t, partial(receipt, hand_no=hand_no), INVALID)
        assert "hand number" in e.details()
    await refused(t, partial(receipt, "nope"), C.NOT_FOUND)
    e = await refused(t, receipt, PRECONDITION)  # hand 1 is running
    assert "not finished" in e.details()
    await refused(t, lambda: t.bare.GetReceipt(tpb.ReceiptRequest(table_id="t1", hand_no=1)),
                  C.UNAUTHENTICATED)


async def test_a_table_id_with_a_trailing_newline_is_invalid(tables):
    await refused(tables, lambda: tables.stub.CreateTable(tpb.CreateTableRequest(
        table_id="t9\n", settings=NL, command_id="x")), INVALID)


async def test_a_command_id_with_a_trailing_newline_is_invalid(tables):
    await refused(tables, lambda: tables.stub.SitDown(tpb.SitDownRequest(
        table_id="t1", seat=4, buy_in=200, command_id="sit-4\n")), INVALID)


async def test_command_ids_differing_by_a_newline_are_not_silently_merged(tables):
    t = tables
    try:
        await t.stub.SitDown(tpb.SitDownRequest(table_id="t1", seat=4, buy_in=200,
                                                command_id="x\n"))
    except grpc.aio.AioRpcError as exc:
        assert exc.code() is INVALID
    reply = await t.stub.SitDown(tpb.SitDownRequest(table_id="t1", seat=5, buy_in=200,
                                                    command_id="x"))
    assert reply.seat_token
    seats = {s.seat: s.player_id for s in (await t.view()).seats}
    assert seats.get(5) == "p5", f"SitDown answered OK but seat 5 is {seats.get(5)!r}"


# --- seat tokens -----------------------------------------------------------------------------

async def test_acting_without_holding_the_seat_is_denied(tables):
    t = tables
    v = await t.view()
    seat = v.to_act
    other_seat = 3 - seat  # the other player in hand 1
    cases = {
        "another seat's token": dict(seat_token=t.tokens[other_seat]),
        "a waiting seat's token": dict(seat_token=t.tokens[3]),
        "a wrong token": dict(seat_token="f" * 64),
        "an oversized token": dict(seat_token="f" * 500_000),
        "a token from another table": dict(seat_token=t.other_token),
        "no token": dict(seat_token=""),
        "an unknown seat": dict(seat=9, seat_token=t.tokens[seat]),
        "a seat out of range": dict(seat=-1, seat_token=t.tokens[seat]),
        "a spectator (seat 0), no token": dict(seat=0, seat_token=""),
        "a spectator with a seat's token": dict(seat=0, seat_token=t.tokens[seat]),
    }
    holder = t.stub.of(seat)  # the seat's own player: only the named field is wrong
    for name, override in cases.items():
        req = await t.act_request(**{"seat": seat, **override})
        e = await refused(t, partial(holder.Act, req), DENIED)
        assert "token" in e.details() or "seat" in e.details(), (name, e.details())
    # the seat's right token, sent by another authenticated player: the seat is not theirs
    req = await t.act_request(seat=seat)
    for player in (other_seat, 3, 9):  # the other player in the hand, a waiting one, a stranger
        e = await refused(t, partial(t.stub.of(player).Act, req), DENIED)
        assert f"seat {seat}" in e.details(), (player, e.details())


async def test_private_views_and_seat_commands_need_the_seats_token(tables):
    t = tables
    s = t.stub.of(1)  # seat 1's player, who holds only seat 1 (and seat 1 of t2)
    for seat, token in ((1, t.tokens[2]), (1, ""), (1, t.other_token), (7, t.tokens[1])):
        await refused(t, partial(s.GetState, tpb.ViewRequest(table_id="t1", seat=seat,
                                                             seat_token=token)), DENIED)
        await refused(t, partial(s.Watch, tpb.ViewRequest(table_id="t1", seat=seat,
                                                          seat_token=token)), DENIED)
        await refused(t, partial(s.Leave, tpb.SeatRequest(
            table_id="t1", seat=seat, seat_token=token, command_id="leave-x")), DENIED)
        await refused(t, partial(s.SitOut, tpb.SitOutRequest(seat=tpb.SeatRequest(
            table_id="t1", seat=seat, seat_token=token, command_id="out-x"), sit_out=True)),
            DENIED)


# --- the rules of the hand -------------------------------------------------------------------

async def test_a_stale_or_future_hand_number_is_refused(tables):
    t = tables
    for hand_no in (0, -1, 2, 1000, 2**63 - 1):
        req = await t.act_request(hand_no=hand_no)
        e = await refused(t, partial(t.stub.Act, req), PRECONDITION)
        assert "hand" in e.details()


async def test_acting_out_of_turn_and_illegal_actions_are_refused(tables):
    t = tables
    v = await t.view()
    not_on_turn = 3 - v.to_act
    for seat in (not_on_turn, 3):  # the other player; the seat waiting for the next hand
        req = await t.act_request(seat=seat)
        e = await refused(t, partial(t.stub.Act, req), PRECONDITION)
        assert "turn" in e.details() or "not in this hand" in e.details(), e.details()
    req = await t.act_request(action=ev.ACTION_KIND_CHECK)  # facing the big blind
    await refused(t, lambda: t.stub.Act(req), PRECONDITION)
    req = await t.act_request(action=ev.ACTION_KIND_BRING_IN)  # not a stud table
    await refused(t, lambda: t.stub.Act(req), PRECONDITION)


async def test_acting_after_folding_is_refused(tables):
    t = tables
    s = t.stub
    await s.SitOut(tpb.SitOutRequest(seat=tpb.SeatRequest(  # keep hand 2 from starting
        table_id="t1", seat=3, seat_token=t.tokens[3], command_id="out-3"), sit_out=True))
    await s.SitOut(tpb.SitOutRequest(seat=tpb.SeatRequest(
        table_id="t1", seat=2, seat_token=t.tokens[2], command_id="out-2"), sit_out=True))
    folder = (await t.view()).to_act
    await s.Act(await t.act_request(action=ev.ACTION_KIND_FOLD, command_id="fold-1"))
    v = await t.view()
    assert v.hand_no == 1 and v.phase == "done"  # heads-up: the fold ended the hand
    for action in (ev.ACTION_KIND_CALL, ev.ACTION_KIND_FOLD, ev.ACTION_KIND_CHECK):
        req = await t.act_request(seat=folder, action=action, command_id="late")
        await refused(t, partial(s.Act, req), PRECONDITION)


async def test_two_simultaneous_commands_from_one_seat_exactly_one_wins(tables):
    t = tables
    call = await t.act_request(command_id="call-now")
    fold = await t.act_request(action=ev.ACTION_KIND_FOLD, command_id="fold-now")
    before = await last_seq(t.store)
    results = await asyncio.gather(t.stub.Act(call), t.stub.Act(fold), return_exceptions=True)
    wins = [r for r in results if not isinstance(r, BaseException)]
    losses = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
    assert len(wins) == 1 and len(losses) == 1, results
    assert losses[0].code() is PRECONDITION
    stored = await t.store.read("t1", after_seq=before)
    assert sum(s.msg_id.endswith((".call-now", ".fold-now")) for s in stored) == 1


async def test_bad_amounts_are_refused(tables):
    t = tables
    mine = await t.view(seat=(await t.view()).to_act)
    assert mine.legal.max_to > 0
    for amount in (-1, -(2**63), 0, 2**63 - 1, 2**53 + 1):
        req = await t.act_request(action=ev.ACTION_KIND_RAISE, amount=amount)
        e = await refused(t, partial(t.stub.Act, req), INVALID, PRECONDITION)
        assert str(amount) in e.details() or "amount" in e.details(), e.details()
    for amount in (mine.legal.max_to + 1, 10**6):  # more than the stack
        req = await t.act_request(action=ev.ACTION_KIND_RAISE, amount=amount)
        e = await refused(t, partial(t.stub.Act, req), PRECONDITION, INVALID)
        assert "more than you have" in e.details(), e.details()
    below_min = mine.legal.min_to - 1
    req = await t.act_request(action=ev.ACTION_KIND_RAISE, amount=below_min)
    await refused(t, lambda: t.stub.Act(req), PRECONDITION)
    req = await t.act_request(action=ev.ACTION_KIND_RAISE)  # no amount at all
    e = await refused(t, lambda: t.stub.Act(req), PRECONDITION, INVALID)
    assert "amount" in e.details()
    req = await t.act_request(action=ev.ACTION_KIND_BET, amount=mine.legal.min_to)  # not a bet
    await refused(t, lambda: t.stub.Act(req), PRECONDITION)


async def test_unknown_enum_values_are_invalid(tables):
    t = tables
    for action in (0, 8, 99, -5, 2**31 - 1):
        req = await t.act_request(action=action)
        e = await refused(t, partial(t.stub.Act, req), INVALID)
        assert "action" in e.details()
    for game, structure in ((0, 3), (99, 3), (1, 0), (1, 99), (-1, 3)):
        settings = tpb.TableSettings(game=game, structure=structure, small_blind=1,
                                     big_blind=2)
        await refused(t, partial(t.stub.CreateTable, tpb.CreateTableRequest(
            table_id="t9", settings=settings, command_id="x")), INVALID)
    stud_nl = tpb.TableSettings(game=ev.GAME_STUD, structure=ev.STRUCTURE_NO_LIMIT)
    await refused(t, lambda: t.stub.CreateTable(tpb.CreateTableRequest(
        table_id="t9", settings=stud_nl, command_id="x")), INVALID)


@pytest.mark.parametrize("field", ["suit_order", "ante_type"])
async def test_unknown_option_enums_are_invalid(tables, field):
    settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                 small_blind=1, big_blind=2)
    setattr(settings, field, 99)
    await refused(tables, lambda: tables.stub.CreateTable(tpb.CreateTableRequest(
        table_id="t9", settings=settings, command_id="x")), INVALID)


async def test_bad_table_settings_are_invalid(tables):
    t = tables
    bad = [dict(small_blind=5, big_blind=2), dict(small_blind=1, big_blind=0),
           dict(small_blind=-1, big_blind=2), dict(small_blind=1, big_blind=2, max_seats=1),
           dict(small_blind=1, big_blind=2, max_seats=11),
           dict(small_blind=1, big_blind=2, rake_basis_points=10_001),
           dict(small_blind=1, big_blind=2, chip_unit=0)]
    for fields in bad:
        settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                     **fields)
        await refused(t, partial(t.stub.CreateTable, tpb.CreateTableRequest(
            table_id="t9", settings=settings, command_id="x")), INVALID)


# --- strings, ids and seats ------------------------------------------------------------------

async def test_oversized_and_malformed_ids_are_refused(tables):
    t = tables
    s = t.stub
    for command_id in ("", "x" * 129, "x" * 100_000, "has space", "naïve", "a\nb"):
        await refused(t, partial(s.SitDown, tpb.SitDownRequest(
            table_id="t1", seat=4, buy_in=200, command_id=command_id)),
            INVALID)
        req = await t.act_request(command_id=command_id)
        await refused(t, partial(s.Act, req), INVALID)
        await refused(t, partial(s.CreateTable, tpb.CreateTableRequest(
            table_id="t9", settings=NL, command_id=command_id)), INVALID)
    # The player id is the token's subject, no longer a field (an issuer will not sign a bad
    # one): what the caller sends for its identity is the token, and a bad one is refused.
    # A 9,000-character token is over the 8,192 a token may be (tests/unit/test_identity.py
    # checks that refusal itself) and, with the other headers, between gRPC's soft and hard
    # metadata limits, where gRPC refuses at random first: either refusal, nothing appended.
    for bearer, codes in (("", {C.UNAUTHENTICATED}), ("not-a-jwt", {C.UNAUTHENTICATED}),
                          ("x" * 9000, {C.UNAUTHENTICATED, C.RESOURCE_EXHAUSTED}),
                          ("x" * 100_000, {C.RESOURCE_EXHAUSTED})):  # over gRPC's hard limit
        await refused(t, partial(t.bare.SitDown, tpb.SitDownRequest(
            table_id="t1", seat=4, buy_in=200, command_id="sit-4"),
            metadata=(("authorization", f"Bearer {bearer}"),)), *codes)
    # beyond the server's 1 MiB message limit: refused before any handler runs
    await refused(t, lambda: s.SitDown(tpb.SitDownRequest(
        table_id="t1", seat=4, buy_in=200, command_id="x" * 2_000_000)),
        C.RESOURCE_EXHAUSTED)


async def test_the_same_command_id_with_a_different_payload_is_refused(tables):
    t = tables
    s = t.stub
    e = await refused(t, lambda: s.of(4).SitDown(tpb.SitDownRequest(  # sit-1: seat 1 for p1
        table_id="t1", seat=1, buy_in=200, command_id="sit-1")), INVALID)
    assert "command id" in e.details()
    await refused(t, lambda: s.CreateTable(tpb.CreateTableRequest(  # c1 created t1 NL
        table_id="t1", settings=tpb.TableSettings(game=ev.GAME_OMAHA,
                                                  structure=ev.STRUCTURE_POT_LIMIT,
                                                  small_blind=1, big_blind=2),
        command_id="c1")), INVALID)
    await refused(t, lambda: s.CreateTable(tpb.CreateTableRequest(  # another id, same table
        table_id="t1", settings=NL, command_id="c1-again")), PRECONDITION)
    # an action, then the same command id for another action
    req = await t.act_request(command_id="act-1")
    first = await s.Act(req)
    before = await last_seq(t.store)
    retry = await s.Act(req)  # a retry: one effect
    assert await last_seq(t.store) == before and retry.version == first.version
    other = tpb.ActRequest()
    other.CopyFrom(req)
    other.action = ev.ACTION_KIND_FOLD
    e = await refused(t, lambda: s.Act(other), INVALID)
    assert "command id" in e.details()


async def test_one_account_cannot_take_two_seats(tables):
    t = tables
    e = await refused(t, lambda: t.stub.of(1).SitDown(tpb.SitDownRequest(  # p1, seated at 1
        table_id="t1", seat=4, buy_in=200, command_id="sit-4")), PRECONDITION)
    assert "already have a seat" in e.details()
    await refused(t, lambda: t.stub.of(9).SitDown(tpb.SitDownRequest(  # a taken seat, for p9
        table_id="t1", seat=2, buy_in=200, command_id="sit-9")), PRECONDITION)


async def test_a_buy_in_outside_the_limits_is_refused(tables):
    t = tables
    p4 = t.stub.of(4)  # with 1000 chips in the wallet: the table's limits refuse these
    for buy_in in (0, -200, 39, 401, 2**63 - 1, -(2**63)):
        e = await refused(t, partial(p4.SitDown, tpb.SitDownRequest(
            table_id="t1", seat=4, buy_in=buy_in, command_id="sit-4")),
            PRECONDITION, INVALID)
        assert "40 to 400" in e.details(), e.details()
    for seat in (0, -1, 11, 2**31 - 1):
        await refused(t, partial(p4.SitDown, tpb.SitDownRequest(
            table_id="t1", seat=seat, buy_in=200, command_id="sit-4")),
            PRECONDITION, INVALID)


async def test_leaving_or_sitting_out_twice_in_the_middle_of_a_hand_is_refused(tables):
    t = tables
    s = t.stub
    v = await t.view()
    seat = v.to_act
    # leaving during a hand folds it (the seat frees after the hand); twice is refused
    await s.Leave(tpb.SeatRequest(table_id="t1", seat=seat, seat_token=t.tokens[seat],
                                  command_id="leave-1"))
    still_seated = any(x.seat == seat for x in (await t.view()).seats)
    e = await refused(t, lambda: s.Leave(tpb.SeatRequest(
        table_id="t1", seat=seat, seat_token=t.tokens[seat], command_id="leave-2")),
        PRECONDITION if still_seated else grpc.StatusCode.PERMISSION_DENIED)
    # gone: the seat is no longer the player's (checked before the token, which it was)
    assert ("already leaving" if still_seated
            else f"seat {seat} at this table is not p{seat}'s") in e.details()
    await s.SitOut(tpb.SitOutRequest(seat=tpb.SeatRequest(
        table_id="t1", seat=3, seat_token=t.tokens[3], command_id="out-3"), sit_out=True))
    await refused(t, lambda: s.SitOut(tpb.SitOutRequest(seat=tpb.SeatRequest(
        table_id="t1", seat=3, seat_token=t.tokens[3], command_id="out-3b"), sit_out=True)),
        PRECONDITION)


async def test_after_every_refusal_the_table_plays_on(tables):
    """The refusals above leave no trace: the player on turn can still act, and the hand
    goes on."""
    t = tables
    for action in (99, 0):
        req = await t.act_request(action=action)
        await refused(t, partial(t.stub.Act, req), INVALID)
    before = await t.view()
    req = await t.act_request(action=ev.ACTION_KIND_FOLD, command_id="fold-1")
    reply = await t.stub.Act(req)
    # the fold landed: the seat is out of this hand, or the hand ended on it
    folded = any(s.seat == req.seat and s.folded for s in reply.view.seats)
    assert reply.view.version > before.version
    assert folded or reply.view.hand_no > before.hand_no
