"""The production topology on one machine: three nats-server nodes as one JetStream cluster
(R3 stream), two processes of every service (peers balance round robin), supervised as
`pokerctl up --cluster 3 --replicas 2` runs them. Bots play a table of every game; mid-play
the stream's leader node is killed -9, and a service replica too. Every commit acknowledged
before the kill is still in the log, the supervisor brings both back, and play carries on:
the bots retry through the failover with the same command ids.

Every command the bots sent is recorded as it ends (acknowledged, refused, unknown:
tests/helpers/history.py) and checked against the log read back: no acknowledged command is
missing from it, none is in it twice, no refused one is in it."""

from __future__ import annotations

import asyncio

import grpc
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.bots_cmd import plan_tables, play_tables
from services.pokerctl.up import LocalCluster
from services.pokerctl.up_processes import ClusterError
from shared.audit import audit_table
from shared.infra.eventstore import STREAM, EventStore
from shared.infra.waiting import until
from tests.helpers.history import History, RecordingStub, check, table_log
from tests.helpers.retrying import RetryingStub

RETRY = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
         grpc.StatusCode.ABORTED)


async def wait_for(condition, timeout: float = 30.0, what: str = "condition"):
    return await until(condition, timeout, what)


async def test_hands_of_every_game_survive_a_leader_kill_on_a_three_node_cluster(tmp_path):
    cluster = LocalCluster(tmp_path, base_port=None, nats_nodes=3, replica_count=2,
                           log_level="WARNING")
    await cluster.start()
    restarted: list[str] = []
    supervisor = asyncio.create_task(cluster.supervise(lambda n, rc: restarted.append(n)))
    store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
    try:
        info = await store.js.stream_info(STREAM)
        assert info.config.num_replicas == 3
        assert len(cluster.instances["betting"]) == 2
        assert "," in cluster.env("table")["POKER_BETTING_ADDR"]

        plans = plan_tables(run_id="cluster")  # one table of every game and structure
        # The bots call one table instance: views read through the other may lag a commit
        # (its cache; direct gets served by a follower), and a bot re-deciding on a stale
        # view makes a new decision with a new command id. Peers of
        # the table service (and the clock keepers) use both instances of everything.
        history = History()  # every command the bots send, one entry per command id
        async with cluster.channel("table") as ch:
            # recorded around the retries (each command's outcome) and inside them (its
            # attempts)
            stub = RecordingStub(RetryingStub(RecordingStub(
                table_pb2_grpc.TableServiceStub(ch), history, attempts=True)), history)
            playing = asyncio.create_task(play_tables(stub, plans, hands=3, seats=3,
                                                      sponsor=cluster.sponsor(), seed=11))

            async def some_play():
                info = await store.js.stream_info(STREAM)
                return info.state.messages >= 20 * len(plans) and info

            info = await wait_for(some_play, what="commits before the kill")
            acknowledged = {p.table_id: await store.read(p.table_id) for p in plans}
            leader = info.cluster.leader
            assert not playing.done(), "the kill must land mid-play"
            old_betting = cluster.pid("betting-2")
            cluster.kill_node(leader)
            cluster.kill("betting-2")

            played = await asyncio.wait_for(playing, timeout=90)

        async def healed():  # a leader and two current followers (the killed node is back)
            info = await store.js.stream_info(STREAM)
            replicas = info.cluster.replicas or []
            return info.cluster.leader and len(replicas) == 2 and \
                all(r.current for r in replicas)

        await wait_for(healed, what="stream with all 3 replicas current")
        # The history against the log, as the stream's leader has it (a direct get may be
        # answered by a follower a commit behind): every table's create, 3 sit-downs and 3
        # leaves at least, and no acknowledged command lost, none doubled, no refused one
        # applied, no client command in the log that the bots did not send. Checked before
        # the bots' own results: a bot that gave up leaves its command unknown here.
        logs = {p.table_id: table_log(c.data for c in await store.read_current(p.table_id))
                for p in plans}
        verdict = check(history.entries, logs)
        print(verdict.line())
        print("\n".join(verdict.outcomes()))
        assert verdict.acknowledged >= 7 * len(plans), verdict.details()
        assert verdict.lost == (), verdict.details()
        assert verdict.doubled == (), verdict.details()
        assert verdict.refused_applied == (), verdict.details()
        assert verdict.unrecorded == (), verdict.details()
        assert [p.error for p in played if p.error] == []
        assert all(p.bots.hands_seen >= 3 for p in played)
        await wait_for(lambda: _async(cluster.pid("betting-2") != old_betting
                                      and "betting-2" in restarted), what="betting-2 restart")
        await wait_for(lambda: _async(leader in restarted or supervisor.done()),
                       what="node restart")
        assert not supervisor.done(), supervisor.exception()
        await wait_for(lambda: _healthy(cluster, "betting-2"), timeout=60,
                       what="betting-2 healthy")
        for plan in plans:
            after = await store.read(plan.table_id)
            before = acknowledged[plan.table_id]
            assert [(c.seq, c.data) for c in after[:len(before)]] == \
                [(c.seq, c.data) for c in before], plan.table_id
            assert len(after) > len(before)
            audit = audit_table(plan.table_id, after, cluster.keyring())
            assert audit.ok, (plan.label, audit.failure)
    finally:
        supervisor.cancel()
        await asyncio.gather(supervisor, return_exceptions=True)
        await store.close()
        await cluster.stop()


async def _async(value):
    return value


async def _healthy(cluster: LocalCluster, name: str) -> bool:
    """Whether ``name`` answers its health check; a start that died meanwhile (its NATS node
    was still electing a leader) is restarted by the supervisor, so it is looked at again."""
    try:
        await cluster.wait_healthy([name], timeout=5)
    except (ClusterError, TimeoutError):
        return False
    return True


async def test_a_service_replica_killed_mid_hand_while_its_twin_serves_reaches_no_player(
        tmp_path):
    """Two replicas of every service on one node; one betting and one dealer replica die
    mid-play. The table service retries the idempotent step on the twin (same command id): the
    bots, calling without any retry of their own, never see an error."""
    cluster = LocalCluster(tmp_path, base_port=None, nats_nodes=1, replica_count=2,
                           log_level="WARNING")
    await cluster.start()
    store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
    try:
        plans = plan_tables(3, run_id="twins")
        async with cluster.channel("table") as ch:
            stub = table_pb2_grpc.TableServiceStub(ch)  # no retries: an error would show
            playing = asyncio.create_task(play_tables(stub, plans, hands=4, seats=3,
                                                      sponsor=cluster.sponsor(), seed=5,
                                                      retry_s=0))  # one attempt per call

            async def some_play():
                info = await store.js.stream_info(STREAM)
                return info.state.messages >= 15 * len(plans)

            await wait_for(some_play, what="commits before the kill")
            assert not playing.done(), "the kill must land mid-play"
            cluster.kill("betting-2")
            cluster.kill("dealer-2")
            played = await asyncio.wait_for(playing, timeout=90)
        assert [p.error for p in played if p.error] == []
        assert all(p.bots.hands_seen >= 4 for p in played)
        for plan in plans:
            audit = audit_table(plan.table_id, await store.read(plan.table_id),
                                cluster.keyring())
            assert audit.ok, (plan.label, audit.failure)
    finally:
        await store.close()
        await cluster.stop()
