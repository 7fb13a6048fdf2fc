"""Tournaments played to the end by bots through the real services (NATS, the table service
and its peers, the wallet, the director)."""

from __future__ import annotations

import random

import pytest
from poker.tournament.v1 import tournament_pb2 as tpb
from poker.tournament.v1 import tournament_pb2_grpc
from poker.wallet.v1 import wallet_pb2

from services.pokerctl import tournament_bots as TB
from services.tournament.log import TournamentLog
from shared.infra.identity import OPERATOR, bearer_metadata
from shared.infra.waiting import until
from tests.helpers.tournaments import check_prizes, check_tables

FAST = {"POKER_CLOCK_TICK_MS": "20"}


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


@pytest.fixture
async def tstack(nats_server):
    from services.stack import start_local
    s = await start_local(nats_server.url, env=FAST)
    await s.start_service("tournament")
    yield s
    await s.stop()


async def settled(store, tid: str):
    """The tournament once every prize it asked for is paid."""
    tlog = TournamentLog(store.nc, store.js, lambda: 0)

    async def paid():
        s = (await tlog.get(tid)).state
        return s if s.prize_requests and all(
            s.entry(p.player_id, p.entry_no).prize_paid for p in s.prize_requests) else None
    return await until(paid, 30, "every prize paid")


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
    final = await TB.play(stub, table_pb2_grpc.TableServiceStub(table_channel), botfield,
                          random.Random(5), ops)
    assert final.status == "finished" and final.winner
    state = await settled(store, "sng1")
    await check_tables(store, state)
    check_prizes(state)
    paid = {p.player_id: p.amount for p in state.prize_requests}
    assert sorted(paid.values(), reverse=True) == [450, 270, 180]
    for bot in botfield.bots.values():
        assert await _balance(sponsor, bot.player) == paid.get(bot.player, 0)
    await channel.close()
    await table_channel.close()
