"""A sit-and-go with rebuys and an add-on played to the end by bots through the real
services: a player rebuys during the rebuy period and takes the add-on (each price from their
wallet once, the chips on their stack between hands), the prize pool locks with both in it
when the period ends, the audits pass; rebuys and add-ons outside the rules are refused with
nothing appended and no money moved."""

from __future__ import annotations

import asyncio
import os
import random
import subprocess
import sys
from functools import partial

import grpc
import pytest
from poker.table.v1 import table_pb2_grpc
from poker.tournament.v1 import tournament_pb2 as tpb
from poker.tournament.v1 import tournament_pb2_grpc
from poker.wallet.v1 import wallet_pb2

from services.pokerctl import tournament_bots as TB
from services.tournament.log import STREAM, TournamentLog
from shared.audit.tournament import audit_tournament
from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import STREAM as TABLES
from shared.infra.identity import OPERATOR
from shared.infra.repository import TableRepository
from shared.infra.waiting import until
from shared.poker.tournament import events as TE
from tests.helpers.tournaments import check_audits, check_prizes, check_tables, table_events
from tests.system.test_tournaments import PLAY_S, fast_structure, settled

C = grpc.StatusCode


def rebuy_structure() -> tpb.Structure:
    """3 players, 500 chips, buy-in 100 + 10; rebuys of 500 chips for 100, once each, during
    the first level (30 s: room for a loaded machine), and then too the add-on, 1000 chips
    for 100; no action clock to speak of before the bots play."""
    st = fast_structure(3)
    st.levels[0].minutes = 0.5
    st.decision_seconds = 120
    st.rebuy_levels, st.rebuy_chips, st.rebuy_price, st.max_rebuys = 1, 500, 100, 1
    st.add_on_chips, st.add_on_price = 1000, 100
    return st


async def _seq(store) -> tuple[int, int]:
    return ((await store.js.stream_info(STREAM)).state.last_seq,
            (await store.js.stream_info(TABLES)).state.last_seq)


async def _refused(call, reason: str, code: C = C.FAILED_PRECONDITION) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert err.value.code() is code, err.value.details()
    assert reason in err.value.details(), err.value.details()


async def test_a_player_rebuys_and_the_pool_pays_it_out(tstack, store):
    sponsor = tstack.sponsor()
    stub = tournament_pb2_grpc.TournamentServiceStub(tstack.channel("tournament"))
    ops = bearer_metadata(sponsor.token("ops", OPERATOR))
    tlog = TournamentLog(store.nc, store.js, lambda: 0)
    await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="rb1", structure=rebuy_structure(), command_id="c"), metadata=ops)
    field = await TB.register_bots(stub, sponsor, "rb1", 2)
    first, poor = field.bots.values()
    await sponsor.fund(first.player, 200)  # one rebuy's price and the add-on's

    def rebuy(bot_auth, cid: str):
        return stub.Rebuy(tpb.TournamentCommand(tournament_id="rb1", command_id=cid),
                          metadata=bot_auth)

    def add_on(bot_auth, cid: str):
        return stub.AddOn(tpb.TournamentCommand(tournament_id="rb1", command_id=cid),
                          metadata=bot_auth)

    async def balance(player: str) -> int:
        return (await sponsor.wallet.Balance(wallet_pb2.BalanceRequest(
            account=wallet_pb2.Account(player_id=player)))).balance

    before = await _seq(store)
    await _refused(rebuy(first.auth, "early"), "rebuys open when rb1 starts")
    assert await _seq(store) == before
    field.bots.update((await TB.register_bots(stub, sponsor, "rb1", 1, prefix="late")).bots)

    repo = TableRepository(store, producer="test")

    async def seated():
        s = (await tlog.get("rb1")).state
        e = s.latest(first.player)
        if not e.table_id:
            return None
        t = (await repo.load(e.table_id)).state
        # dealt, blinds posted, a player on the clock: the table waits for the bots
        return t is not None and t.hand_running and t.hand is not None \
            and t.hand.to_act is not None and any(x.player_id == first.player
                                                  for x in t.seats)
    await until(seated, 30, "the first hand waiting for a bot, the rebuyer seated")

    # in the period, 500 chips (the starting stack) before this hand: rebuys once
    reply = await rebuy(first.auth, "r1")
    assert [e.rebuys for e in reply.entries if e.player_id == first.player] == [1]
    assert await balance(first.player) == 100
    again = await rebuy(first.auth, "r1")  # the same command again: a retry, once
    assert again.version == reply.version and await balance(first.player) == 100

    before = await _seq(store)
    await _refused(rebuy(first.auth, "r2"), "last rebuy's chips reach your stack")
    await _refused(add_on(first.auth, "a0"), "last rebuy's chips reach your stack")
    await _refused(rebuy(poor.auth, "p1"), "your wallet holds 0: a rebuy costs 100")
    await _refused(add_on(poor.auth, "p2"), "your wallet holds 0: the add-on costs 100")
    await tstack.deposit("alice", 1000)
    alice = bearer_metadata(sponsor.token("alice"))
    await _refused(rebuy(alice, "a1"), "alice has no entry in play in rb1")
    await _refused(rebuy(ops, "o1"), "player", C.PERMISSION_DENIED)
    assert await _seq(store) == before
    assert await balance(poor.player) == 0 and await balance("alice") == 1000

    play = asyncio.create_task(TB.play(
        stub, table_pb2_grpc.TableServiceStub(tstack.channel("table")), field,
        random.Random(7), ops))

    async def added(n: int):
        s = (await tlog.get("rb1")).state
        return s if len(s.rebuys) >= n and s.rebuys[n - 1].added else None
    await until(partial(added, 1), 30, "the rebuy's chips added")
    await _refused(rebuy(first.auth, "r3"), "has made 1 of the 1 rebuys allowed")
    # the add-on: any stack, once
    reply = await add_on(first.auth, "a1")
    assert [e.add_on for e in reply.entries if e.player_id == first.player] == [True]
    assert await balance(first.player) == 0
    await until(partial(added, 2), 30, "the add-on's chips added")
    await _refused(add_on(first.auth, "a2"), "has taken the add-on: one a player")

    async def closed():
        return (await tlog.get("rb1")).state.registration_closed
    await until(closed, 60, "the rebuy period over")
    late = next(iter(field.bots.values()))
    await _refused(rebuy(late.auth, "r4"), "the rebuy period of rb1 is over")
    cli = await _pokerctl(tstack, sponsor.token(late.player), "rebuy", "rb1")
    assert cli.returncode == 1 and "FAILED_PRECONDITION: the rebuy period of rb1 is over" \
        in cli.stderr, cli.stderr
    cli = await _pokerctl(tstack, sponsor.token(late.player), "addon", "rb1")
    assert cli.returncode == 1 and "the add-on is offered during level 1" in cli.stderr
    await _refused(add_on(late.auth, "a3"), "the add-on is offered during level 1")
    s = (await tlog.get("rb1")).state
    assert [(r.player_id, r.status.value, r.add_on) for r in s.rebuys] == [
        (first.player, "paid", False), (first.player, "paid", True)]

    final = await asyncio.wait_for(play, PLAY_S)
    assert final.status == "finished" and final.winner
    state = await settled(store, "rb1")
    # the pool: 3 buy-ins of 100, the rebuy's 100 and the add-on's; the winner takes it all
    assert state.pool == 500 and state.prizes == (500,)
    assert [(p.player_id, p.amount) for p in state.prize_requests if p.place == 1] == [
        (state.winner, 500)]
    await check_tables(store, state)  # 3 x 500 + 500 + 1000 chips, the winner's at the end
    check_prizes(state)
    await check_audits(store, state, tstack.keyring())
    # the audit finds a rebuy's chips that the tournament's log does not account for
    events = await tlog.events("rb1")
    tables = {t.table_id: [e for _, evs in await table_events(store, t.table_id) for e in evs]
              for t in state.tables}
    without = [e for e in events if not isinstance(e, TE.RebuyChipsAdded)]
    assert any("are not the rebuys'" in p for p in audit_tournament(without, tables))


async def _pokerctl(stack, token: str, *argv: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "POKER_TLS_DIR": str(stack.tls_dir), "POKER_TOKEN": token}
    return await asyncio.to_thread(subprocess.run, [
        sys.executable, "-m", "services.pokerctl", "tournament", *argv,
        "--addr", stack.addresses["tournament"]], env=env, capture_output=True, text=True,
        timeout=60)


async def test_pokerctl_creates_a_tournament_with_rebuys_and_refuses_bad_options(tstack):
    ops = tstack.sponsor().token("ops", OPERATOR)
    made = await _pokerctl(tstack, ops, "create", "--id", "rb2", "--players", "3",
                           "--rebuy-levels", "2", "--rebuy-chips", "1500", "--rebuy-price",
                           "100", "--max-rebuys", "3", "--add-on-chips", "3000",
                           "--add-on-price", "100")
    assert made.returncode == 0 and made.stdout.strip() == "rb2", made.stderr
    shown = await _pokerctl(tstack, ops, "status", "rb2", "--json")
    assert '"rebuyLevels": 2' in shown.stdout and '"maxRebuys": 3' in shown.stdout
    assert '"addOnChips": "3000"' in shown.stdout
    bad = await _pokerctl(tstack, ops, "create", "--id", "rb3", "--rebuy-levels", "2",
                          "--rebuy-chips", "1500")
    assert bad.returncode == 1 and "a player may rebuy 1 to 10 times" in bad.stderr, bad.stderr
    bad = await _pokerctl(tstack, ops, "create", "--id", "rb4", "--max-rebuys", "1")
    assert bad.returncode == 1 and "need a rebuy period" in bad.stderr, bad.stderr
