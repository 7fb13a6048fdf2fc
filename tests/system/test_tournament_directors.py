"""Two directors on one tournament, and what a director keeps of a tournament once it is
over: the seeds of its draws, the leases, the cache and the locks (issue 30)."""

from __future__ import annotations

import asyncio
import random
from functools import partial

from poker.tournament.v1 import tournament_pb2 as tpb
from poker.tournament.v1 import tournament_pb2_grpc

from services.pokerctl import tournament_bots as TB
from services.tournament.director import SEEDS, lease_name
from services.tournament.log import TournamentLog
from services.tournament.server import director_for, open_director
from shared.audit.tournament import audit_tournament
from shared.infra.bearer import bearer_metadata
from shared.infra.config import Config
from shared.infra.identity import OPERATOR
from shared.infra.repository import TableRepository
from shared.infra.rpc import Unavailable
from shared.infra.waiting import until
from shared.poker.tournament import events as E
from shared.poker.tournament.draw import check_reveal
from shared.poker.tournament.state import Status
from tests.system.test_tournaments import PLAY_S, fast_structure

RACES = 6


async def _director(stack, store, name: str):
    env = {**stack.service_env("tournament"), "POKER_INSTANCE_ID": name}
    return await open_director(TableRepository(store, producer="tournament"), store,
                               Config.from_env("tournament", env))


async def test_two_directors_racing_start_leave_a_log_that_loads_and_audits(tstack, store):
    """Directors A and B are both told to start each of several tournaments at once: each
    tournament starts once, its seating draw reveals the seed its log committed (the log
    loads, the audit re-draws it), and the seed kept for a takeover is that one."""
    sponsor = tstack.sponsor()
    channel = tstack.channel("tournament")
    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
    ops = bearer_metadata(sponsor.token("ops", OPERATOR))
    tids = [f"race{i}" for i in range(RACES)]
    for tid in tids:
        await stub.CreateTournament(tpb.CreateTournamentRequest(
            tournament_id=tid, structure=fast_structure(6, scheduled=True, per_table=3),
            command_id="c"), metadata=ops)
        await TB.register_bots(stub, sponsor, tid, 5, prefix=tid)
    await channel.close()
    await tstack.stop_service("tournament")  # its director lets go of every lease
    (a, close_a), (b, close_b) = (await _director(tstack, store, "dir-a"),
                                  await _director(tstack, store, "dir-b"))
    try:
        results = await asyncio.gather(*(d.start(tid) for tid in tids for d in (a, b)),
                                       return_exceptions=True)
        for pair in zip(results[::2], results[1::2]):  # each tournament: A's, B's
            # one starts it under its lease; the other is told who drives it
            (refusal,) = [r for r in pair if r is not None]
            assert isinstance(refusal, Unavailable), repr(refusal)
            assert "is driven by dir-" in str(refusal)
        seeds = await store.js.key_value(SEEDS)
        for tid in tids:
            tlog = TournamentLog(store.nc, store.js, lambda: 0)
            state = (await tlog.get(tid)).state  # the log folds: every reveal checks
            assert state.status is Status.RUNNING and len(state.in_field()) == 5
            events = await tlog.events(tid)
            assert sum(isinstance(e, E.TournamentStarted) for e in events) == 1
            assert audit_tournament(events, {t.table_id: [] for t in state.tables}) == []
            (committed,) = [e for e in events if isinstance(e, E.SeedCommitted)]
            (drawn,) = [e for e in events if isinstance(e, E.PlayersSeated)]
            kept = bytes((await seeds.get(f"{tid}.{committed.draw_no}")).value)
            check_reveal(kept, committed.commitment)
            assert kept.hex() == drawn.seed
        # a draw's seed is written once: two directors asking for the next draw's seed at
        # once (a late seat, a table to break) get the same one, the one the log commits
        for tid in tids:
            mine, theirs = await asyncio.gather(a.seed(tid), b.seed(tid))
            state = (await TournamentLog(store.nc, store.js, lambda: 0).get(tid)).state
            assert mine == theirs and state.draws == 2
            check_reveal(mine, state.pending_commitment)
    finally:
        await close_a()
        await close_b()



async def _let_go(director, tid: str) -> None:
    """Wait until ``director`` is done with ``tid``; then it holds nothing of it."""
    async def done():
        return tid in director.done
    await until(done, 30, f"the director done with {tid}")
    name = lease_name(tid)
    assert name not in director.leases.held() and await director.leases.holder(name) is None
    assert director.log.kept(tid) == set()
    state = (await TournamentLog(director.log.store.nc, director.log.store.js,
                                 lambda: 0).get(tid)).state
    assert not any(director.repo.cached(t.table_id) for t in state.tables)


async def test_a_tournament_over_leaves_no_lease_cache_or_lock_behind(tstack, store):
    """A sit-and-go played to the end, and a tournament cancelled with an entry refunded:
    once their money is settled the director lets go of their leases, folds and locks."""
    from poker.table.v1 import table_pb2_grpc
    sponsor = tstack.sponsor()
    director = director_for(tstack.servers["tournament"].server)
    channel, table_channel = tstack.channel("tournament"), tstack.channel("table")
    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
    ops = bearer_metadata(sponsor.token("ops", OPERATOR))
    for tid in ("over", "called-off"):
        await stub.CreateTournament(tpb.CreateTournamentRequest(
            tournament_id=tid, structure=fast_structure(3), command_id="c"), metadata=ops)
    await until(partial(_holds, director, "over"), 30, "the director driving 'over'")
    botfield = await TB.register_bots(stub, sponsor, "over", 3)
    final = await asyncio.wait_for(TB.play(
        stub, table_pb2_grpc.TableServiceStub(table_channel), botfield, random.Random(1), ops),
        PLAY_S)
    assert final.status == "finished"
    await _let_go(director, "over")
    await TB.register_bots(stub, sponsor, "called-off", 1)
    await stub.Cancel(tpb.TournamentCommand(tournament_id="called-off", reason="rain",
                                            command_id="x"), metadata=ops)
    await _let_go(director, "called-off")
    await channel.close()
    await table_channel.close()


async def _holds(director, tid: str) -> bool:
    return lease_name(tid) in director.leases.held()
