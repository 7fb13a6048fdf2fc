"""Whole hands of every game and structure through every service (gRPC servers in process, a
real nats-server), played by bots through the TableService API:

- chips are conserved (the fold of each table's log: seats' stacks + rake = buy-ins), and the
  log audits clean (hash chain, decks against their commitments, cards dealt in order);
- no view served to any seat or to a spectator, by Watch or GetState, during play, holds a
  card another seat holds face down before that seat shows it (checked against the cards
  dealt, read from the log);
- every view served equals the view of the fold of the log at the version it names.
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from services.pokerctl.botclient import play
from services.pokerctl.bots_cmd import create_and_seat, plan_tables
from shared.audit import audit_table
from shared.infra.eventstore import EventStore
from tests.helpers.tables import table_stub as player_stub
from tests.helpers.views import LogIndex, check_view, folded

HANDS = 3
SEATS = 4


async def _watch(stub, table_id: str, seat: int, token: str, out: list, first: asyncio.Event,
                 auth: tuple):
    call = stub.Watch(tpb.ViewRequest(table_id=table_id, seat=seat, seat_token=token),
                      metadata=auth)
    try:
        async for view in call:
            out.append((seat, view))
            first.set()
    except grpc.aio.AioRpcError as exc:
        if exc.code() is not grpc.StatusCode.CANCELLED:
            raise
    finally:
        call.cancel()


async def _sample(stub, bots, out: list, stop: asyncio.Event) -> None:
    """GetState from every seat and a spectator, over and over, while the bots play."""
    while not stop.is_set():
        for seat in (0, *bots.tokens):
            view = await stub.GetState(tpb.ViewRequest(
                table_id=bots.table_id, seat=seat, seat_token=bots.tokens.get(seat, "")),
                metadata=bots.auth.get(seat) or bots.watcher())
            out.append((seat, view))
        await asyncio.sleep(0)


async def test_every_game_and_structure_end_to_end(stack, client_stub, sponsor, nats_server):
    stub = client_stub
    plans = plan_tables(run_id="e2e")
    assert {(p.game, p.structure) for p in plans} == {
        ("holdem", "fixed_limit"), ("holdem", "pot_limit"), ("holdem", "no_limit"),
        ("omaha", "fixed_limit"), ("omaha", "pot_limit"), ("omaha", "no_limit"),
        ("omaha_hilo", "fixed_limit"), ("omaha_hilo", "pot_limit"),
        ("stud", "fixed_limit"), ("stud_hilo", "fixed_limit")}
    bots = await asyncio.gather(*(create_and_seat(stub, p, SEATS, sponsor) for p in plans))
    views: dict[str, list] = {b.table_id: [] for b in bots}
    watchers, firsts = [], []
    for b in bots:
        for seat in (0, *b.tokens):
            first = asyncio.Event()
            firsts.append(first)
            watchers.append(asyncio.create_task(_watch(
                stub, b.table_id, seat, b.tokens.get(seat, ""), views[b.table_id], first,
                b.auth.get(seat) or b.watcher())))
    await asyncio.wait_for(asyncio.gather(*(f.wait() for f in firsts)), timeout=20)
    stop = asyncio.Event()
    samplers = [asyncio.create_task(_sample(stub, b, views[b.table_id], stop)) for b in bots]
    try:
        played = await asyncio.wait_for(asyncio.gather(
            *(play(stub, b, HANDS, random.Random(i)) for i, b in enumerate(bots))), timeout=60)
    finally:
        stop.set()
        for w in watchers:
            w.cancel()
        await asyncio.gather(*samplers, *watchers, return_exceptions=True)
    for s in samplers:
        assert s.exception() is None

    store = await EventStore.connect(nats_server.url, create=False)
    try:
        for p, b in zip(plans, played):
            stored = await store.read(p.table_id)
            audit = audit_table(p.table_id, stored, stack.keyring())
            assert audit.ok, audit.failure
            assert audit.hands >= 1 and b.hands_seen == audit.hands
            brought = audit.buy_ins + audit.top_ups
            assert audit.buy_ins == SEATS * p.buy_in()
            assert audit.conserved, (p.table_id, audit.stacks, audit.rake, brought)
            table = folded(stored).state
            assert not table.hand_running
            assert sum(s.stack for s in table.seats) + audit.rake == brought

            log = LogIndex(stored, stack.keyring())
            served = views[p.table_id]
            assert {seat for seat, _ in served} == {0, *b.tokens}
            hands_watched = {v.hand_no for seat, v in served if seat == 0}
            assert hands_watched >= set(range(1, audit.hands + 1))
            secrets_kept = 0
            for seat, view in served:
                check_view(log, seat, view)
                secrets_kept += len(log.secret_from(seat, view.hand_no, view.version))
            assert secrets_kept > 0  # the check is not vacuous: there were cards to hide
            assert any("??" in s.cards for seat, v in served if seat == 0 for s in v.seats)
            # and the final state, as served now, is the fold of the whole log
            for seat in (0, *b.tokens):
                view = await stub.GetState(tpb.ViewRequest(
                    table_id=p.table_id, seat=seat, seat_token=b.tokens.get(seat, "")),
                    metadata=b.auth.get(seat) or b.watcher())
                assert view.version == log.last.seq
                check_view(log, seat, view)
    finally:
        await store.close()


async def test_a_seat_vacated_in_the_middle_of_a_hand_keeps_chips_conserved(stack, table_stub,
                                                                            nats_server):
    stub = table_stub
    settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                 small_blind=1, big_blind=2, rake_basis_points=0)
    await stub.CreateTable(tpb.CreateTableRequest(table_id="t1", settings=settings,
                                                  command_id="c"))
    tokens = {}
    for seat in (1, 2, 3):
        await stack.deposit(f"p{seat}", 400)
        tokens[seat] = (await stub.SitDown(tpb.SitDownRequest(
            table_id="t1", seat=seat, buy_in=400, command_id=f"sit-{seat}"))).seat_token

    async def act(seat, kind, n):
        v = await stub.GetState(tpb.ViewRequest(table_id="t1"))
        return (await stub.Act(tpb.ActRequest(table_id="t1", seat=seat,
                                              seat_token=tokens[seat], hand_no=v.hand_no,
                                              action=kind, command_id=f"a{n}"))).view

    view = await stub.GetState(tpb.ViewRequest(table_id="t1"))
    n = 0
    # Seat 3 joined a running table: it waits for the big blind to reach it. Until then the
    # first to act folds every hand.
    while len([s for s in view.seats if s.in_hand]) < 3:
        n += 1
        view = await act(view.to_act, ev.ACTION_KIND_FOLD, n)
    three_handed = view.hand_no
    leaver = view.to_act
    view = await act(leaver, ev.ACTION_KIND_FOLD, 100)
    await stub.Leave(tpb.SeatRequest(table_id="t1", seat=leaver, seat_token=tokens[leaver],
                                     command_id="leave"))
    # the seat frees when the hand ends: nobody may take it while its last hand runs
    newcomer = player_stub(stack, "newcomer")
    await stack.deposit("newcomer", 40)
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await newcomer.SitDown(tpb.SitDownRequest(table_id="t1", seat=leaver, buy_in=40,
                                                  command_id="sit-new-early"))
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "frees when the hand" in refused.value.details()
    problems = []
    view = await stub.GetState(tpb.ViewRequest(table_id="t1"))
    while view.hand_no == three_handed and view.to_act:
        n += 1
        mine = await stub.GetState(tpb.ViewRequest(table_id="t1", seat=view.to_act,
                                                   seat_token=tokens[view.to_act]))
        kind = ev.ACTION_KIND_CHECK if mine.legal.can_check else ev.ACTION_KIND_CALL
        view = await act(view.to_act, kind, n)
    # between hands the seat is free; the newcomer waits (two players keep playing)
    if view.hand_no == three_handed:
        tokens[leaver] = (await newcomer.SitDown(tpb.SitDownRequest(
            table_id="t1", seat=leaver, buy_in=40, command_id="sit-new"))).seat_token
    store = await EventStore.connect(nats_server.url, create=False)
    try:
        stored = await store.read("t1")
        audit = audit_table("t1", stored, stack.keyring())
    finally:
        await store.close()
    assert audit.hands >= 2 and audit.ok, audit.failure
    if not audit.conserved:
        problems.append(f"chips: stacks {audit.stacks} + rake {audit.rake} + taken away "
                        f"{audit.left_with} != buy-ins {audit.buy_ins + audit.top_ups}")
    seats = {s.seat: s for s in folded(stored).state.seats}
    if leaver in seats and seats[leaver].player_id == "newcomer" and seats[leaver].stack != 40:
        problems.append(f"the newcomer bought in for 40 and has {seats[leaver].stack}")
    assert not problems, problems
