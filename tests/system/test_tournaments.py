"""Tournaments played to the end by bots through the real services (NATS, the table service
and its peers, the wallet, the director)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import socket
import subprocess
import sys

import pytest
from poker.tournament.v1 import tournament_pb2 as tpb
from poker.tournament.v1 import tournament_pb2_grpc
from poker.wallet.v1 import wallet_pb2

from services.pokerctl import tournament_bots as TB
from services.tournament.log import TournamentLog
from shared.infra.bearer import bearer_metadata
from shared.infra.identity import OPERATOR
from shared.infra.waiting import until
from tests.helpers.tournaments import FAST, check_audits, check_prizes, check_tables

#: the most a tournament here may take to play (they take seconds)
PLAY_S = 120


def fast_structure(players: int, scheduled: bool = False, per_table: int = 9,
                   minutes: float = 0.05, late: int = 0, entries: int = 1) -> tpb.Structure:
    blinds = [(10, 20), (25, 50), (50, 100), (100, 200), (200, 400), (400, 800),
              (800, 1600), (1500, 3000), (3000, 6000), (6000, 12000)]
    return tpb.Structure(
        scheduled=scheduled, starting_stack=500, buy_in=100, fee=10, max_players=players,
        min_players=2 if scheduled else players, seats_per_table=per_table,
        late_levels=late, max_entries=entries, decision_seconds=5,
        levels=[tpb.Level(small_blind=sb, big_blind=bb, ante=bb // 10, minutes=minutes)
                for sb, bb in blinds])


async def settled(store, tid: str):
    """The tournament once every prize it asked for is paid."""
    tlog = TournamentLog(store.nc, store.js, lambda: 0)

    async def paid():
        s = (await tlog.get(tid)).state
        return s if s.prize_requests and all(
            s.entry(p.player_id, p.entry_no).prize_paid for p in s.prize_requests) else None
    return await until(paid, 30, "every prize paid")


async def _played(play, store, tid: str):
    """The bots' game to its end, within PLAY_S; else what the tournament and each of its
    tables were doing then, in the failure."""
    try:
        return await asyncio.wait_for(play, PLAY_S)
    except TimeoutError:
        from shared.infra.repository import TableRepository
        s = (await TournamentLog(store.nc, store.js, lambda: 0).get(tid)).state
        repo = TableRepository(store, producer="test")
        tables = []
        for t in s.tables:
            ts = (await repo.load(t.table_id)).state
            tables.append((t.table_id, t.players, ts and ts.paused, ts and ts.hand_running,
                           ts and [(x.seat, x.player_id, x.stack) for x in ts.seats]))
        raise AssertionError(f"not over in {PLAY_S} s: {s.status} level {s.level}, "
                             f"{len(s.in_field())} in, tables {tables}") from None


async def _balance(sponsor, player: str) -> int:
    reply = await sponsor.wallet.Balance(wallet_pb2.BalanceRequest(
        account=wallet_pb2.Account(player_id=player)))
    return reply.balance


async def test_a_sit_and_go_is_played_to_the_end(tstack, store):
    sponsor = tstack.sponsor()
    channel = tstack.channel("tournament")
    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
    ops = bearer_metadata(sponsor.token("ops", OPERATOR))
    created = await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="sng1", structure=fast_structure(9), command_id="c1"), metadata=ops)
    assert created.status == "registering"
    botfield = await TB.register_bots(stub, sponsor, "sng1", 9)
    for bot in botfield.bots.values():
        assert await _balance(sponsor, bot.player) == 0  # 110 debited
    from poker.table.v1 import table_pb2_grpc
    table_channel = tstack.channel("table")
    final = await asyncio.wait_for(TB.play(
        stub, table_pb2_grpc.TableServiceStub(table_channel), botfield, random.Random(5), ops),
        PLAY_S)
    assert final.status == "finished" and final.winner
    state = await settled(store, "sng1")
    await check_tables(store, state)
    check_prizes(state)
    await check_audits(store, state, tstack.keyring())
    # `pokerctl audit --all` runs the tournament audit and counts what the tournament holds
    audit = await asyncio.to_thread(subprocess.run, [
        sys.executable, "-m", "services.pokerctl", "audit", "--all", "--nats",
        tstack.nats_url, "--key", tstack.key_file], capture_output=True, text=True,
        timeout=120, env={k: v for k, v in os.environ.items() if k != "POKER_COMPLIANCE_KEY"})
    assert audit.returncode == 0, audit.stdout + audit.stderr
    # the fees are the house's; the tournament holds nothing
    assert "audit passed" in audit.stdout and "house 90" in audit.stdout
    assert "in 1 tournaments 0" in audit.stdout
    paid = {p.player_id: p.amount for p in state.prize_requests}
    assert sorted(paid.values(), reverse=True) == [450, 270, 180]
    for bot in botfield.bots.values():
        assert await _balance(sponsor, bot.player) == paid.get(bot.player, 0)
    await channel.close()
    await table_channel.close()


async def test_a_30_player_tournament_with_late_entries_and_a_re_entry(tstack, store):
    """Five tables of six: 28 register, the operator starts it, two more register late, and
    the first player busted buys in again while late registration is open; tables are
    balanced and broken down to one, played to the end."""
    from poker.table.v1 import table_pb2_grpc
    sponsor = tstack.sponsor()
    channel, table_channel = tstack.channel("tournament"), tstack.channel("table")
    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
    ops = bearer_metadata(sponsor.token("ops", OPERATOR))
    await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="mtt1", command_id="c1", structure=fast_structure(
            40, scheduled=True, per_table=6, minutes=0.15, late=2, entries=2)), metadata=ops)
    botfield = await TB.register_bots(stub, sponsor, "mtt1", 28)
    started = await stub.Start(tpb.TournamentCommand(tournament_id="mtt1", command_id="s"),
                               metadata=ops)
    assert started.status == "running" and len(started.tables) == 5
    late = await TB.register_bots(stub, sponsor, "mtt1", 2, prefix="late")
    botfield.bots.update(late.bots)

    async def re_entry():
        async def busted():
            v = await stub.GetTournament(tpb.GetTournamentRequest(tournament_id="mtt1"),
                                         metadata=ops)
            out = [e.player_id for e in v.entries if e.status == "busted"]
            return out[0] if out else None
        player = await until(busted, 60, "a player busted")
        bot = botfield.bots[player]
        await sponsor.fund(player, 110)
        return await TB.register(stub, botfield, bot)

    tables = table_pb2_grpc.TableServiceStub(table_channel)
    play = asyncio.ensure_future(TB.play(stub, tables, botfield, random.Random(9), ops))
    again = await re_entry()
    assert not again.registration_closed
    final = await _played(play, store, "mtt1")
    assert final.status == "finished"
    state = await settled(store, "mtt1")
    assert state.paid_entries() == 31 and len(state.prizes) == 7
    assert any(e.entry_no == 2 and e.status.value == "busted" or e.player_id == state.winner
               for e in state.entries if e.entry_no == 2)
    await check_tables(store, state)
    check_prizes(state)
    await check_audits(store, state, tstack.keyring())
    for bot in botfield.bots.values():
        won = sum(p.amount for p in state.prize_requests if p.player_id == bot.player)
        assert await _balance(sponsor, bot.player) == won
    await channel.close()
    await table_channel.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _director(stack, name: str, port: int, **extra: str) -> subprocess.Popen:
    env = {**os.environ, **stack.service_env("tournament", port), "POKER_INSTANCE_ID": name,
           "POKER_LOG_LEVEL": "WARNING", **extra}
    return subprocess.Popen([sys.executable, "-m", "services.tournament"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


@pytest.fixture
async def leased_stack(nats_server):
    from services.stack import start_local
    s = await start_local(nats_server.url, env={**FAST, "POKER_LEASE_TTL_MS": "1000"})
    yield s
    await s.stop()


async def test_a_director_killed_mid_move_is_replaced_and_nobody_is_lost(leased_stack, store):
    """Director A (a process of its own) is killed -9 right after it took a moving player off
    their table, before it seated them at the next; director B takes the lease over, seats
    them with their stack, and the tournament is played to the end."""
    from poker.table.v1 import table_pb2_grpc
    stack, sponsor = leased_stack, leased_stack.sponsor()
    port_a, port_b = _free_port(), _free_port()
    a = _director(stack, "dir-a", port_a, POKER_FAILPOINTS="tournament.mid_move=kill")
    b = None
    channels = []
    try:
        stub_a = tournament_pb2_grpc.TournamentServiceStub(
            _channel_to(stack, port_a, channels))
        ops = bearer_metadata(sponsor.token("ops", OPERATOR))
        await stub_a.CreateTournament(tpb.CreateTournamentRequest(
            tournament_id="kill1", command_id="c1", structure=fast_structure(
                14, scheduled=True, per_table=7, minutes=0.1)), metadata=ops,
            wait_for_ready=True, timeout=30)
        botfield = await TB.register_bots(stub_a, sponsor, "kill1", 14)
        await stub_a.Start(tpb.TournamentCommand(tournament_id="kill1", command_id="s"),
                           metadata=ops)
        channels.append(stack.channel("table"))
        tables = table_pb2_grpc.TableServiceStub(channels[-1])
        play = asyncio.ensure_future(TB.play(stub_a, tables, botfield, random.Random(3), ops))
        await until(lambda: _exited(a), 90, "director A killed at a move")
        assert a.returncode == -signal.SIGKILL
        play.cancel()
        b = _director(stack, "dir-b", port_b)
        stub_b = tournament_pb2_grpc.TournamentServiceStub(_channel_to(stack, port_b, channels))
        await stub_b.GetTournament(tpb.GetTournamentRequest(tournament_id="kill1"),
                                   metadata=ops, wait_for_ready=True, timeout=30)
        final = await asyncio.wait_for(TB.play(stub_b, tables, botfield, random.Random(4), ops),
                                       PLAY_S)
        assert final.status == "finished"
        state = await settled(store, "kill1")
        await check_tables(store, state)
        check_prizes(state)
        await check_audits(store, state, stack.keyring())
    finally:
        for proc in (a, b):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                proc.wait(10)
        for ch in channels:
            await ch.close()


async def _exited(proc: subprocess.Popen) -> bool:
    return proc.poll() is not None


def _channel_to(stack, port: int, channels: list):
    from shared.infra.tls import channel
    ch = channel(f"127.0.0.1:{port}", stack.tls("client"), "tournament")
    channels.append(ch)
    return ch


async def test_the_house_takes_the_fees_and_pays_a_guarantees_overlay(tstack, store):
    """Two 3-player sit-and-gos, fee 50. The first guarantees 400 (buy-ins 300): the house
    is credited its 150 of fees, then pays the 100 of overlay, and the winner gets 400. The
    second guarantees 600: the house, holding 200 with its fees, cannot pay the 300 of
    overlay, so the prize waits for it (nothing is paid from a pool not funded) while the
    tournament is played to its end. The money
    audit balances throughout: buy-ins + overlay = prizes + fees + held."""
    from poker.table.v1 import table_pb2_grpc

    from services.tournament.server import director_for
    from services.wallet.ledger import fold_ledger, read_ledger
    from shared.audit.money import audit_money
    from shared.poker.tournament.ranking import money_audit
    sponsor = tstack.sponsor()
    channel, table_channel = tstack.channel("tournament"), tstack.channel("table")
    stub = tournament_pb2_grpc.TournamentServiceStub(channel)
    tables = table_pb2_grpc.TableServiceStub(table_channel)
    ops = bearer_metadata(sponsor.token("ops", OPERATOR))
    house = wallet_pb2.Account(house=True)

    async def played(tid: str, guarantee: int):
        structure = fast_structure(3)
        structure.fee, structure.guarantee = 50, guarantee
        await stub.CreateTournament(tpb.CreateTournamentRequest(
            tournament_id=tid, structure=structure, command_id="c"), metadata=ops)
        bots = await TB.register_bots(stub, sponsor, tid, 3)
        final = await asyncio.wait_for(TB.play(stub, tables, bots, random.Random(2), ops),
                                       PLAY_S)
        assert final.status == "finished"
        return bots

    await played("covered", 400)
    state = await settled(store, "covered")
    assert (state.pool, state.fees_paid, state.overlay_paid) == (400, 150, 100)
    assert [p.amount for p in state.prize_requests] == [400]
    assert await _balance(sponsor, state.winner) == 400
    assert (await sponsor.wallet.Balance(wallet_pb2.BalanceRequest(account=house))).balance \
        == 50
    check_prizes(state)
    await check_tables(store, state)

    await played("short", 600)
    tlog = TournamentLog(store.nc, store.js, lambda: 0)

    async def fees_in():
        s = (await tlog.get("short")).state
        return s if s.fees_paid and s.prize_requests else None
    short = await until(fees_in, 30, "the short tournament's fees credited")
    # the house is 100 short: the money is settled as far as it goes, and the prize waits
    await director_for(tstack.servers["tournament"].server).settle_money("short")
    short = (await tlog.get("short")).state
    assert not short.overlay_paid and not any(e.prize_paid for e in short.entries)
    assert await _balance(sponsor, short.winner) == 0
    audit = money_audit(short)
    assert audit.balanced and (audit.held, audit.pool_held) == (300, 300)
    money = audit_money([], fold_ledger(await read_ledger(store.js)), [state, short])
    assert money.ok, money.problems
    assert (money.house, money.in_tournaments) == (200, 300)
    await channel.close()
    await table_channel.close()
