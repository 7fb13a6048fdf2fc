"""The step streams (engine.v1.StepService/Steps: shared/infra/stepstream.py serves them,
shared/infra/stepclient.py holds them) under faults, with real services:

- a peer killed -9 mid-hand, after it appended a step and before its reply went out: the
  table service opens the stream again once the peer is back and sends the step again with
  its command id; it answers with the step's first outcome, nothing is doubled or lost, the
  bots play on and every table's log audits;
- two table-service processes hold a stream each to one betting service;
- a peer that stops reading: the calls end at their deadline, and nothing waits beyond the
  bounded queue; a caller that stops reading has its stream ended, its service's side held
  to the calls in flight;
- one table's burst of calls waits in its own line (at most PER_TABLE in flight) while
  another table's calls go through;
- a caller without the table service's certificate is refused on the stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import urllib.request

import grpc
import pytest
from poker.engine.v1 import step_pb2, step_pb2_grpc
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.bots_cmd import plan_tables, play_tables
from services.pokerctl.up import LocalCluster
from shared.audit import audit_table
from shared.infra import metrics, stepstream, waiting
from shared.infra.eventstore import EventStore
from shared.infra.stepclient import StepStream
from tests.system.test_faults import command_ids


def scraped(port: int, name: str) -> float:
    """The sample ``name`` (with its labels, as exposed) of a process's /metrics (0: none)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        for line in reply.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


async def until(condition, what: str, timeout: float = 60.0):
    """shared/infra/waiting.py's wait on a condition, with this module's default deadline."""
    return await waiting.until(condition, timeout, what)


async def audit_all(cluster: LocalCluster, store: EventStore, plans) -> None:
    for plan in plans:
        stored = await store.read(plan.table_id)
        ids = command_ids(stored)
        assert len(ids) == len(set(ids)), plan.table_id  # no command applied twice
        audit = audit_table(plan.table_id, stored, cluster.keyring())
        assert audit.ok, (plan.table_id, audit.failure)


async def test_a_peer_killed_mid_step_gets_the_step_again_and_nothing_doubles(tmp_path):
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING",
                           replica_env={"betting": {"POKER_FAILPOINTS":
                                                    "steps.before_reply=kill"}})
    await cluster.start()
    store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
    try:
        plans = plan_tables(2, run_id="killed")
        async with cluster.channel("table") as ch:
            playing = asyncio.create_task(play_tables(
                table_pb2_grpc.TableServiceStub(ch), plans, hands=3, seats=3,
                sponsor=cluster.sponsor(), seed=3))
            betting = cluster.procs["betting"]
            # the first betting step (a hand's forced bets) is appended, then the process dies
            await until(lambda: asyncio.to_thread(lambda: betting.poll() is not None),
                        "the betting service killed by its failpoint")
            assert not playing.done(), "the kill must land mid-play"
            cluster.replica_env["betting"] = {}
            await cluster.restart("betting")
            played = await asyncio.wait_for(playing, timeout=120)
        assert [p.error for p in played if p.error] == []
        assert all(p.bots.hands_seen >= 3 for p in played)
        assert scraped(cluster.metrics_ports["table"], "poker_steps_resent_total") >= 1
        await audit_all(cluster, store, plans)
    finally:
        await store.close()
        await cluster.stop()


async def test_two_table_service_processes_each_hold_a_stream_to_one_peer(tmp_path):
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING", table_services=2)
    await cluster.start()
    store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
    try:
        plans = plan_tables(4, run_id="two")
        async with cluster.channel("table") as one, cluster.channel("table-2") as two:
            played = await asyncio.gather(*(
                play_tables(table_pb2_grpc.TableServiceStub(ch), part, hands=2, seats=3,
                            sponsor=cluster.sponsor(), seed=i)
                for i, (ch, part) in enumerate(((one, plans[:2]), (two, plans[2:])))))
        assert [p.error for ps in played for p in ps if p.error] == []
        for name in ("table", "table-2"):
            assert scraped(cluster.metrics_ports[name], "poker_step_streams_open") == 4
        assert scraped(cluster.metrics_ports["betting"], "poker_step_streams_served") == 2
        await audit_all(cluster, store, plans)
        # the bots left: the table services saw each table turn vacant, and the services
        # they send steps to (which never folded the leaves) released it too
        folds = 'poker_cached_tables{cache="folds"}'
        for name in ("dealer", "betting", "showdown", "rake", "table", "table-2"):
            port = cluster.metrics_ports[name]

            async def released(p: int = port) -> bool:
                return await asyncio.to_thread(scraped, p, folds) == 0.0

            await until(released, f"{name} holding no fold", timeout=30)
    finally:
        await store.close()
        await cluster.stop()


class Deaf(step_pb2_grpc.StepServiceServicer):
    """A peer that takes the stream and never reads it or answers."""

    def __init__(self) -> None:
        self.opened = asyncio.Event()

    async def Steps(self, requests, context) -> None:
        self.opened.set()
        await asyncio.Event().wait()


@contextlib.asynccontextmanager
async def stream_to(peer: step_pb2_grpc.StepServiceServicer, **settings):
    """A StepStream (with ``settings``) to ``peer`` served by a gRPC server on port 0."""
    server = grpc.aio.server()
    step_pb2_grpc.add_StepServiceServicer_to_server(peer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    chan = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    stream = StepStream(chan, "betting", **settings)
    try:
        yield stream
    finally:
        await stream.close()
        await chan.close()
        await server.stop(0)


async def test_a_peer_that_stops_reading_ends_each_call_at_its_deadline():
    deaf = Deaf()
    async with stream_to(deaf, queue=4) as stream:
        def step(i: int) -> step_pb2.StepRequest:  # big enough to fill the transport's window
            return step_pb2.StepRequest(table_id="t", command_id=f"c{i}", tail=[
                step_pb2.LoggedCommit(seq=1, data=b"x" * 60_000)])

        calls = [asyncio.create_task(stream.call("CloseRound", step(i), timeout=1.0))
                 for i in range(40)]
        await deaf.opened.wait()
        results = await asyncio.gather(*calls, return_exceptions=True)
        assert all(isinstance(r, grpc.aio.AioRpcError)
                   and r.code() is grpc.StatusCode.DEADLINE_EXCEEDED for r in results), results
        assert "did not answer CloseRound within 1 s" in results[0].details()
        assert stream.pending() == 0  # nothing kept for the calls that gave up
        assert stream._outbox.qsize() <= 4  # the queue stayed within its bound


class Holding(step_pb2_grpc.StepServiceServicer):
    """A peer that answers every table's calls at once but table ``held``'s, which it keeps
    until released, counting how many of them it holds at once."""

    def __init__(self, held: str) -> None:
        self.held, self.holding, self.most = held, 0, 0
        self.release = asyncio.Event()

    async def Steps(self, requests, context) -> None:
        writing = asyncio.Lock()  # (one write at a time on a stream)

        async def answer(request: step_pb2.StepRequest) -> None:
            if request.table_id == self.held:
                self.holding += 1
                self.most = max(self.most, self.holding)
                await self.release.wait()
                self.holding -= 1
            async with writing:
                await context.write(step_pb2.StepReply(call_id=request.call_id,
                                                       version=request.version))

        tasks = [asyncio.create_task(answer(r)) async for r in requests]
        await asyncio.gather(*tasks)


async def test_one_tables_burst_waits_in_its_own_line():
    """At most PER_TABLE calls of a table are in flight on a stream: the rest of that table's
    wait (within their deadline) while another table's calls go straight through, and a table
    whose calls are done leaves nothing behind."""
    peer = Holding("burst")
    async with stream_to(peer, per_table=4) as stream:
        def step(table_id: str, i: int) -> step_pb2.StepRequest:
            return step_pb2.StepRequest(table_id=table_id, command_id=f"c{i}", version=i)

        burst = [asyncio.create_task(stream.call("Act", step("burst", i), timeout=30))
                 for i in range(40)]
        await until(lambda: _async(peer.holding >= 4), "the burst's first calls held")
        other = await asyncio.wait_for(stream.call("Act", step("quiet", 7), timeout=30), 10)
        assert other.version == 7  # answered while the burst waits in its own line
        assert peer.most == 4 and stream.pending() == 4 and stream.tables() == 1
        peer.release.set()
        assert [r.version for r in await asyncio.gather(*burst)] == list(range(40))
        assert peer.most == 4 and stream.tables() == 0 and stream.pending() == 0


@pytest.mark.parametrize("identity", ["client", "admin"])
async def test_a_caller_without_the_table_certificate_is_refused_on_the_stream(stack,
                                                                                identity):
    async with stack.channel("betting", identity=identity) as chan:
        call = step_pb2_grpc.StepServiceStub(chan).Steps()
        with pytest.raises(grpc.aio.AioRpcError) as err:  # (at the write, or the read)
            await call.write(step_pb2.StepRequest(table_id="t", command_id="x", call_id=1,
                                                  method="CloseRound"))
            await call.read()
    assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert "accepts calls from the table service only" in err.value.details()


async def test_a_caller_that_stops_reading_has_its_stream_ended(stack, monkeypatch):
    """The service runs at most IN_FLIGHT of a stream's calls and reads no more meanwhile;
    replies its caller does not take end the stream after WRITE_TIMEOUT_S."""
    monkeypatch.setattr(stepstream, "WRITE_TIMEOUT_S", 0.5)
    served = metrics.STEP_STREAMS_SERVED._value.get()
    sent = 0
    async with stack.channel("betting", identity="table") as chan:
        call = step_pb2_grpc.StepServiceStub(chan).Steps()

        async def write_all() -> None:  # each refusal echoes its 4 KB method name: megabytes
            nonlocal sent
            for i in range(5_000):
                await call.write(step_pb2.StepRequest(table_id="t", call_id=i + 1,
                                                      method="N" * 4_000))
                sent += 1

        writer = asyncio.create_task(write_all())
        await until(lambda: _async(metrics.STEP_STREAMS_SERVED._value.get() == served + 1),
                    "the stream served")
        await until(lambda: _async(metrics.STEP_STREAMS_SERVED._value.get() == served),
                    "the service ending the stream", timeout=30)
        assert sent < 5_000  # the service stopped reading: the caller was held back
        writer.cancel()
        await asyncio.gather(writer, return_exceptions=True)
        call.cancel()


async def _async(value):
    return value
