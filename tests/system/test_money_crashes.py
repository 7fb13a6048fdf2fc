"""Money moves exactly once through crashes (services/table/cashier.py), with every service
as its own process (services/pokerctl/up.py): the table service killed -9 between the
wallet's debit and BuyInConfirmed, and between CashOutRequested and the wallet's credit
(failpoints, shared/infra/failpoints.py, kill the process at exactly that point); and bots
playing while the wallet, the table service and the dealer are killed. Afterwards every
player's money moved once and the money audit (shared/audit/money.py) balances to the chip."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc
from poker.wallet.v1 import wallet_pb2

from services.pokerctl.bots_cmd import plan_tables, play_tables
from services.pokerctl.up import LocalCluster
from services.wallet.ledger import fold_ledger, read_ledger
from shared.audit import audit_table
from shared.audit.money import audit_money
from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import STREAM, EventStore
from shared.infra.retry import PEER_RETRY, retrying
from shared.infra.seattokens import new_seat_token
from shared.infra.waiting import until
from shared.poker import events as E
from tests.helpers.retrying import RetryingStub

pytestmark = pytest.mark.asyncio
NL = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1,
                       big_blind=2)


async def _cluster(tmp_path, failpoint: str = "") -> tuple[LocalCluster, EventStore]:
    env = {"POKER_FAILPOINTS": failpoint} if failpoint else {}
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING",
                           replica_env={"table": env})
    await cluster.start()
    store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
    return cluster, store


async def _events(store, table_id: str, kind: type) -> list:
    from services.pokerctl.bots_cmd import decode_commit
    return [e for s in await store.read(table_id) for e in decode_commit(s.data)
            if isinstance(e, kind)]


async def _money(cluster, store, table_ids):
    audits = [audit_table(t, await store.read(t), cluster.keyring()) for t in table_ids]
    return audits, audit_money(audits, fold_ledger(await read_ledger(store.js)))


async def _restart_table_without_failpoint(cluster: LocalCluster) -> None:
    cluster.replica_env["table"] = {}
    await cluster.restart("table")


async def test_killed_between_the_debit_and_the_confirmation_the_buy_in_moves_once(tmp_path):
    cluster, store = await _cluster(tmp_path, "cashier.after_debit=kill")
    try:
        sponsor = cluster.sponsor()
        await sponsor.fund("alice", 300)
        alice = bearer_metadata(sponsor.token("alice"))
        token, token_sha256 = new_seat_token()
        sit = tpb.SitDownRequest(table_id="crash1", seat=1, buy_in=100, command_id="sit-a",
                                 seat_token_sha256=token_sha256)
        async with cluster.channel("table") as ch:
            stub = table_pb2_grpc.TableServiceStub(ch)
            await stub.CreateTable(tpb.CreateTableRequest(table_id="crash1", settings=NL,
                                                          command_id="c"),
                                   metadata=sponsor.operator())
            with pytest.raises(grpc.aio.AioRpcError) as died:
                await stub.SitDown(sit, metadata=alice, timeout=20)
            assert died.value.code() is grpc.StatusCode.UNAVAILABLE
        async def table_died():  # killed right after the debit (reaped a moment later)
            return cluster.dead().get("table") is not None
        await until(table_died, 20, "the table service killed by its failpoint")
        debits = [e for _, e in await read_ledger(store.js)
                  if e.movement == wallet_pb2.MOVEMENT_DEBIT]
        assert [(d.idempotency_key, d.amount) for d in debits] == [("crash1/c.sit1.sit-a", 100)]
        assert await _events(store, "crash1", E.BuyInConfirmed) == []  # the saga is open

        await _restart_table_without_failpoint(cluster)

        async def confirmed():  # the keeper of the table's lease finishes it
            return await _events(store, "crash1", E.BuyInConfirmed)
        await until(confirmed, 40, "the open buy-in finished after the restart")
        async with cluster.channel("table") as ch:  # the client's retry: its original answer
            retry = await retrying(table_pb2_grpc.TableServiceStub(ch).SitDown, sit, alice, PEER_RETRY)
        assert retry.version > 0
        ledger = fold_ledger(await read_ledger(store.js))
        assert ledger.debits == 100 and ledger.deposits == 300
        _, money = await _money(cluster, store, ["crash1"])
        assert money.ok and money.in_transit == 0, money.problems
        assert money.at_tables == 100 and money.player_balances == 200
    finally:
        await store.close()
        await cluster.stop()


async def test_killed_between_the_cash_out_and_the_credit_the_money_moves_once(tmp_path):
    cluster, store = await _cluster(tmp_path)
    try:
        sponsor = cluster.sponsor()
        await sponsor.fund("bob", 100)
        bob = bearer_metadata(sponsor.token("bob"))
        token, token_sha256 = new_seat_token()
        async with cluster.channel("table") as ch:
            stub = table_pb2_grpc.TableServiceStub(ch)
            await stub.CreateTable(tpb.CreateTableRequest(table_id="crash2", settings=NL,
                                                          command_id="c"),
                                   metadata=sponsor.operator())
            await stub.SitDown(tpb.SitDownRequest(table_id="crash2", seat=1, buy_in=100,
                                                  command_id="sit-b",
                                                  seat_token_sha256=token_sha256),
                               metadata=bob)
        cluster.replica_env["table"] = {"POKER_FAILPOINTS": "cashier.before_credit=kill"}
        await cluster.restart("table")
        leave = tpb.SeatRequest(table_id="crash2", seat=1, seat_token=token,
                                command_id="leave-b")
        async with cluster.channel("table") as ch:
            with pytest.raises(grpc.aio.AioRpcError) as died:
                await table_pb2_grpc.TableServiceStub(ch).Leave(leave, metadata=bob,
                                                                timeout=20)
            assert died.value.code() is grpc.StatusCode.UNAVAILABLE
        assert await _events(store, "crash2", E.CashOutRequested)  # chips off the seat
        assert fold_ledger(await read_ledger(store.js)).credits == 0  # not yet credited
        _, money = await _money(cluster, store, ["crash2"])
        assert money.ok and money.in_transit == 100  # in transit, and named so

        await _restart_table_without_failpoint(cluster)

        async def credited():
            return await _events(store, "crash2", E.CashOutConfirmed)
        await until(credited, 40, "the open cash-out finished after the restart")
        async with cluster.channel("table") as ch:  # a retry of the leave changes nothing
            await retrying(table_pb2_grpc.TableServiceStub(ch).Leave, leave, bob, PEER_RETRY)
        ledger = fold_ledger(await read_ledger(store.js))
        assert ledger.credits == 100 and ledger.debits == 100
        _, money = await _money(cluster, store, ["crash2"])
        assert money.ok and money.in_transit == 0 and money.player_balances == 100
    finally:
        await store.close()
        await cluster.stop()


async def test_bots_play_while_the_wallet_table_and_dealer_die_and_the_money_balances(
        tmp_path):
    cluster, store = await _cluster(tmp_path)
    supervisor = asyncio.create_task(cluster.supervise())
    try:
        plans = plan_tables(3, game="holdem", run_id="chaos")
        async with cluster.channel("table") as ch:
            stub = RetryingStub(table_pb2_grpc.TableServiceStub(ch), total_s=80)
            playing = asyncio.create_task(play_tables(stub, plans, hands=8, seats=3,
                                                      sponsor=cluster.sponsor(), seed=3))
            killed = []
            for victim, commits in (("wallet", 20), ("table", 50), ("dealer", 80)):
                target = commits * len(plans)
                async def grown(n=target):
                    held = (await store.js.stream_info(STREAM)).state.messages
                    return held >= n or playing.done()
                await until(grown, 60, f"play before {victim} is killed")
                if playing.done():
                    break
                cluster.kill(victim)
                killed.append(victim)
            played = await asyncio.wait_for(playing, timeout=120)
        assert [p.error for p in played if p.error] == []
        assert killed == ["wallet", "table", "dealer"], "every kill must land mid-play"
        table_ids = [p.table_id for p in plans]

        async def settled():  # every saga a crash left open is finished by the keeper
            audits, money = await _money(cluster, store, table_ids)
            return money if not any(a.open_sagas for a in audits) else None
        money = await until(settled, 60, "every saga settled")
        assert money.ok and money.in_transit == 0, money.problems
        assert money.at_tables == 0  # the bots left: every chip is back in a wallet
        assert money.deposits == money.player_balances + money.house
    finally:
        supervisor.cancel()
        await asyncio.gather(supervisor, return_exceptions=True)
        await store.close()
        await cluster.stop()
