"""The networked stack under load: Act throughput and latency at 1 and 50 tables, beside the raw
JetStream publish-with-expected-sequence rate and the fold rate, all in one run.

Everything runs on this machine: nats-server (JetStream, sync_interval always) and every service
as its own process (the `pokerctl up` supervisor), bots in this process. Latency is Act request
to reply (the action's events acknowledged by JetStream, the driver's follow-up steps done).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from pathlib import Path

from poker.table.v1 import table_pb2_grpc

from services.pokerctl.botclient import play
from services.pokerctl.bots_cmd import TablePlan, create_and_seat
from services.pokerctl.up import LocalCluster
from shared.infra import natsconn
from shared.infra.eventstore import EventStore
from shared.infra.repository import LoadedTable, fold_commit

SEATS = 6


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


async def raw_append_rate(nats_url: str, subjects: int, seconds: float,
                          ca: str | None = None) -> dict:
    """The limit of this design: JetStream publishes guarded by the expected last subject
    sequence, one writer per subject, on a stream like the poker one (file, synced)."""
    from nats.js import api
    nc = await natsconn.connect(nats_url, name="bench", ca=ca)
    js = nc.jetstream()
    await js.add_stream(api.StreamConfig(name="RAWBENCH", subjects=["rawbench.>"],
                                         storage=api.StorageType.FILE, duplicate_window=120.0))
    latencies: list[float] = []
    payload = b"x" * 300  # about one commit of a few events
    stop = time.perf_counter() + seconds

    async def writer(i: int) -> None:
        seq = n = 0
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            ack = await js.publish(f"rawbench.{subjects}.{i}", payload, headers={
                "Nats-Expected-Last-Subject-Sequence": str(seq),
                "Nats-Msg-Id": f"{subjects}-{i}-{n}"})
            latencies.append(time.perf_counter() - t0)
            seq, n = ack.seq, n + 1

    started = time.perf_counter()
    await asyncio.gather(*(writer(i) for i in range(subjects)))
    elapsed = time.perf_counter() - started
    await nc.drain()
    return {"what": f"raw JetStream appends, {subjects} subject(s)",
            "per_s": len(latencies) / elapsed, "p50_ms": _pct(latencies, 0.5) * 1e3,
            "p99_ms": _pct(latencies, 0.99) * 1e3}


async def act_load(cluster: LocalCluster, tables: int, seconds: float, seed: int) -> dict:
    """Bots at ``tables`` fixed-limit hold'em tables act as fast as replies come back, through
    ``cluster``'s table service (over TLS, as a client)."""
    channel = cluster.channel("table")
    stub = table_pb2_grpc.TableServiceStub(channel)
    rng = random.Random(seed)
    latencies: list[float] = []
    bots = []
    for i in range(tables):
        plan = TablePlan(f"bench-{tables}-{i}", "holdem", "fixed_limit", {"small_bet": 10})
        bots.append(await create_and_seat(stub, plan, SEATS, cluster.sponsor()))
    started = time.perf_counter()
    tasks = [asyncio.create_task(play(stub, b, 10**6, random.Random(rng.random()), latencies))
             for b in bots]
    await asyncio.sleep(seconds)  # the measurement window: the bots act meanwhile
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    elapsed = time.perf_counter() - started
    await channel.close()
    return {"what": f"Act, {tables} table(s)", "per_s": len(latencies) / elapsed,
            "p50_ms": _pct(latencies, 0.5) * 1e3, "p99_ms": _pct(latencies, 0.99) * 1e3,
            "table_ids": [b.table_id for b in bots]}


async def fold_rate(nats_url: str, table_ids: list[str], ca: str | None = None) -> dict:
    """Load tables from the log: read every commit, check the chain, decode, fold."""
    store = await EventStore.connect(nats_url, create=False, ca=ca)
    read_t = fold_t = 0.0
    events = 0
    for table_id in table_ids:
        t0 = time.perf_counter()
        stored = await store.read(table_id)
        t1 = time.perf_counter()
        lt = LoadedTable()
        for s in stored:
            lt = fold_commit(lt, s)
        t2 = time.perf_counter()
        read_t += t1 - t0
        fold_t += t2 - t1
        events += lt.events
    await store.close()
    return {"what": "load tables from the log", "events": events,
            "fold_per_s": events / fold_t if fold_t else float("nan"),
            "read_and_fold_per_s": events / (read_t + fold_t) if read_t + fold_t else 0.0}


async def run_async(seconds: float) -> list[dict]:
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="poker-bench-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None)
        await cluster.start()
        try:
            nats_url = cluster.nats_url
            for subjects in (1, 50):
                rows.append(await raw_append_rate(nats_url, subjects, seconds,
                                                  cluster.nats_ca))
            ids: list[str] = []
            for tables in (1, 50):
                row = await act_load(cluster, tables, seconds * 2, seed=tables)
                ids += row.pop("table_ids")
                rows.append(row)
            rows.append(await fold_rate(nats_url, ids, cluster.nats_ca))
        finally:
            await cluster.stop()
    return rows


def run(seconds: float = 2.0) -> list[dict]:
    return asyncio.run(run_async(seconds))


def main(seconds: float = 2.0) -> None:
    rows = run(seconds)
    raw = {r["what"]: r for r in rows if r["what"].startswith("raw")}
    print(f"{'measurement':<36}{'per s':>10}{'p50 ms':>9}{'p99 ms':>9}  vs raw")
    for r in rows:
        if "per_s" not in r:
            continue
        base = None
        if r["what"].startswith("Act"):
            n = r["what"].split(",")[1].strip().split()[0]
            base = raw.get(f"raw JetStream appends, {n} subject(s)")
        ratio = f"{r['per_s'] / base['per_s']:.2f}" if base else ""
        print(f"{r['what']:<36}{r['per_s']:>10,.0f}{r['p50_ms']:>9.1f}{r['p99_ms']:>9.1f}  "
              f"{ratio}")
    for r in rows:
        if "fold_per_s" in r:
            print(f"fold from the log: {r['events']:,} events, {r['fold_per_s']:,.0f} events/s "
                  f"folded ({r['read_and_fold_per_s']:,.0f}/s including the JetStream reads)")


if __name__ == "__main__":
    main()
