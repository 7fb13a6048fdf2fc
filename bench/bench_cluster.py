"""Scaling on this machine: Act throughput and p99 with 1 and 2 replicas of every service, on
one NATS node and on a 3-node JetStream cluster (R3 streams); and the failover gap when the
stream leader is killed -9 (from the kill to the next acknowledged guarded append).

Everything is on loopback on one 2-core machine, so more processes compete for the same two
cores: the figures show what limits scaling here, not what a cluster of machines would do.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

import nats

from services.pokerctl.up import LocalCluster
from shared.infra.eventstore import STREAM, AppendConflict, EventStore, StoreError

from .bench_services import act_load

TABLES = 20


async def _throughput(nodes: int, replicas: int, seconds: float) -> dict:
    with tempfile.TemporaryDirectory(prefix="poker-bench-cluster-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, nats_nodes=nodes,
                               replica_count=replicas, log_level="WARNING")
        await cluster.start()
        try:
            row = await act_load(cluster, TABLES, seconds, seed=nodes)
        finally:
            await cluster.stop()
    row.pop("table_ids")
    row["what"] = f"Act, {TABLES} tables, {nodes} node(s), {replicas} replica(s)"
    return row


async def _failover_gap() -> dict:
    """Guarded appends in a loop; kill -9 the stream leader; the gap is the time from the kill
    to the next acknowledged append (clients retry the same message id throughout)."""
    with tempfile.TemporaryDirectory(prefix="poker-bench-failover-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, nats_nodes=3, replica_count=1,
                               log_level="WARNING")
        await cluster.start()
        store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
        try:
            seq, n = 0, 0
            for _ in range(50):  # warm up
                seq, _ = await store.append("failover", b"x" * 300, seq, f"w{n}")
                n += 1
            info = await store.nc.jsm().stream_info(STREAM)
            killed_at = time.perf_counter()
            cluster.kill_node(info.cluster.leader)
            while True:
                try:
                    seq, _ = await store.append("failover", b"x" * 300, seq, f"w{n}")
                    break
                except AppendConflict:
                    seq = (await store.last("failover")).seq  # our own retry had landed
                except (StoreError, nats.errors.Error, asyncio.TimeoutError):
                    continue  # no leader yet: retry the same message id
            gap = time.perf_counter() - killed_at
        finally:
            await store.close()
            await cluster.stop()
    return {"what": "failover gap: kill -9 of the stream leader to the next append",
            "seconds": gap}


async def run_async(seconds: float) -> list[dict]:
    rows = []
    for nodes in (1, 3):
        for replicas in (1, 2):
            rows.append(await _throughput(nodes, replicas, seconds))
    rows.append(await _failover_gap())
    return rows


def run(seconds: float = 2.0) -> list[dict]:
    return asyncio.run(run_async(seconds))


def main(seconds: float = 2.0) -> None:
    rows = run(max(seconds, 3.0))
    print(f"{'measurement':<48}{'actions/s':>10}{'p50 ms':>9}{'p99 ms':>9}")
    base = rows[0]["per_s"]
    for r in rows:
        if "per_s" in r:
            print(f"{r['what']:<48}{r['per_s']:>10,.0f}{r['p50_ms']:>9.1f}{r['p99_ms']:>9.1f}"
                  f"  {r['per_s'] / base:.2f}x")
        else:
            print(f"{r['what']}: {r['seconds']:.2f} s")


if __name__ == "__main__":
    main()
