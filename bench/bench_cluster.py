"""Scaling on this machine: Act throughput and latency with 1 and 2 replicas of every service, on
one NATS node and on a 3-node JetStream cluster (R3 streams), each beside the raw guarded append
rate at as many subjects on the same cluster; aggregate throughput at 1, 2 and 4 shards on the
3-node cluster, raw (streams RAWBENCH_<j>, one per shard, the writers spread over them) and Act
(``LocalCluster(..., shards=N)``); and the failover gap when the stream leader is killed -9
(from the kill to the next acknowledged guarded append).

Everything is on loopback on one 2-core machine, so more processes compete for the same two
cores: the figures show what limits scaling here, not what a cluster of machines would do.

    .venv/bin/python -m bench bench_cluster      # POKER_BENCH_SECONDS=1 to shorten
"""

from __future__ import annotations

import asyncio
import dataclasses
import inspect
import tempfile
import time
from pathlib import Path

import nats

from services.pokerctl.up import LocalCluster
from shared.infra.eventstore import STREAM, AppendConflict, EventStore, StoreError

from .bench_services import REPEATS, act_load, raw_repeats, stream_leaders
from .load import fmt_ms, fmt_ratio, ratio, window_seconds

TABLES = 20
SHARDS = (1, 2, 4)
NODES = 3


def shards_supported() -> bool:
    """Whether LocalCluster takes ``shards`` (being added alongside this benchmark)."""
    if dataclasses.is_dataclass(LocalCluster) and \
            "shards" in {f.name for f in dataclasses.fields(LocalCluster)}:
        return True
    return "shards" in inspect.signature(LocalCluster).parameters


def _raw_seconds(seconds: float) -> float:
    return max(0.5, seconds / 2)


async def _throughput(nodes: int, replicas: int, seconds: float, **cluster_kw) -> dict:
    """Raw appends at TABLES subjects (R = min(nodes, 3)), then bots at TABLES tables."""
    with tempfile.TemporaryDirectory(prefix="poker-bench-cluster-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, nats_nodes=nodes,
                               replica_count=replicas, log_level="WARNING", **cluster_kw)
        await cluster.start()
        try:
            raw = await raw_repeats(cluster.nats_url, TABLES, _raw_seconds(seconds),
                                    cluster.nats_ca, replicas=min(nodes, 3))
            act = await act_load(cluster, TABLES, seconds, seed=nodes, windows=REPEATS)
            act.pop("table_ids")
            leaders = await stream_leaders(cluster.nats_url, cluster.nats_ca) if nodes > 1 \
                else {}
        finally:
            await cluster.stop()
    return {"what": f"{TABLES} tables, {nodes} node(s), {replicas} replica(s)", "raw": raw,
            "act": act, "ratio": ratio(act["per_s"], raw["per_s"]), "leaders": leaders}


async def _shard(shards: int, seconds: float, act: bool) -> dict:
    """On a fresh 3-node cluster: raw appends by TABLES writers over ``shards`` R3 streams;
    ``act``: that cluster runs with ``shards`` shards, bots at TABLES tables play on it."""
    with tempfile.TemporaryDirectory(prefix="poker-bench-shards-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, nats_nodes=NODES,
                               log_level="WARNING", shards=shards if act else 1)
        await cluster.start()
        try:
            raw = await raw_repeats(cluster.nats_url, TABLES, _raw_seconds(seconds),
                                    cluster.nats_ca, streams=shards, replicas=min(NODES, 3))
            row = None
            if act:
                row = await act_load(cluster, TABLES, seconds, seed=100 + shards,
                                     windows=REPEATS)
                row.pop("table_ids")
            leaders = await stream_leaders(cluster.nats_url, cluster.nats_ca)
        finally:
            await cluster.stop()
    return {"shards": shards, "raw": raw, "act": row, "leaders": leaders,
            "ratio": ratio(row["per_s"], raw["per_s"]) if row else float("nan")}


async def _raw_shards_only(seconds: float) -> list[dict]:
    """Without LocalCluster(shards=): the raw rows alone, on one 3-node cluster."""
    with tempfile.TemporaryDirectory(prefix="poker-bench-shards-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, nats_nodes=NODES,
                               log_level="WARNING")
        await cluster.start()
        try:
            rows = []
            for k in SHARDS:
                raw = await raw_repeats(cluster.nats_url, TABLES, _raw_seconds(seconds),
                                        cluster.nats_ca, streams=k, replicas=min(NODES, 3))
                rows.append({"shards": k, "raw": raw, "act": None, "leaders": {},
                             "ratio": float("nan")})
        finally:
            await cluster.stop()
    return rows


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
            leader = info.cluster.leader if info.cluster is not None else None
            if leader is None:
                raise RuntimeError(f"stream {STREAM} reports no leader to kill")
            killed_at = time.perf_counter()
            cluster.kill_node(leader)
            while True:
                try:
                    seq, _ = await store.append("failover", b"x" * 300, seq, f"w{n}")
                    break
                except AppendConflict:
                    last = await store.last("failover")  # our own retry had landed
                    assert last is not None  # (a conflict: the subject has a commit)
                    seq = last.seq
                except (TimeoutError, StoreError, nats.errors.Error):
                    continue  # no leader yet: retry the same message id
            gap = time.perf_counter() - killed_at
        finally:
            await store.close()
            await cluster.stop()
    return {"what": "failover gap: kill -9 of the stream leader to the next append",
            "seconds": gap}


async def run_async(seconds: float) -> dict:
    sharded = shards_supported()
    rows = []
    for nodes in (1, NODES):
        for replicas in (1, 2):
            # 3 nodes, 1 replica is also the 1-shard row (one stream, 20 writers on it)
            one_shard = sharded and nodes == NODES and replicas == 1
            rows.append(await _throughput(nodes, replicas, seconds,
                                          **({"shards": 1} if one_shard else {})))
    if sharded:
        first = next(r for r in rows if r["what"].endswith(f"{NODES} node(s), 1 replica(s)"))
        shard_rows = [{"shards": 1, **{k: first[k] for k in ("raw", "act", "ratio", "leaders")}}]
        shard_rows += [await _shard(k, seconds, act=True) for k in SHARDS if k != 1]
    else:
        shard_rows = await _raw_shards_only(seconds)
    return {"rows": rows, "shards": shard_rows, "sharded": sharded,
            "failover": await _failover_gap()}


def run(seconds: float = 2.0) -> dict:
    return asyncio.run(run_async(seconds))


def replica_table(rows: list[dict]) -> list[str]:
    lines = [f"{'measurement':<34}{'raw/s':>8}{'act/s':>8}{'act/raw':>8}{'vs first':>9}"
             f"{'p50':>8}{'p99':>8}{'p99.9':>8}{'CPU ms':>8}"]
    base = rows[0]["act"]["per_s"] if rows else None
    for r in rows:
        a, lat = r["act"], r["act"]["lat_us"]
        lines.append(f"{r['what']:<34}{r['raw']['per_s']:>8,.0f}{a['per_s']:>8,.0f}"
                     f"{fmt_ratio(r['ratio']):>8}{fmt_ratio(ratio(a['per_s'], base)):>9}"
                     f"{fmt_ms(lat['p50'])}{fmt_ms(lat['p99'])}{fmt_ms(lat['p99.9'])}"
                     f"{a['cpu_total_ms']:>8.2f}")
    return lines


def shard_table(rows: list[dict]) -> list[str]:
    lines = [f"{'shards':>6}{'raw/s':>9}{'raw x1':>8}{'act/s':>8}{'act x1':>8}{'act/raw':>8}"
             f"{'p50':>8}{'p99':>8}{'CPU ms':>8}  stream leaders"]
    raw1 = rows[0]["raw"]["per_s"] if rows else None
    act1 = rows[0]["act"]["per_s"] if rows and rows[0]["act"] else None
    for r in rows:
        a = r["act"]
        where = (f"log {_nodes(r['leaders'].values()) if r['leaders'] else '-'}; "
                 f"raw {_nodes(r['raw']['leaders'])}")
        if a:
            act = (f"{a['per_s']:>8,.0f}{fmt_ratio(ratio(a['per_s'], act1)):>8}"
                   f"{fmt_ratio(r['ratio']):>8}{fmt_ms(a['lat_us']['p50'])}"
                   f"{fmt_ms(a['lat_us']['p99'])}{a['cpu_total_ms']:>8.2f}")
        else:
            act = f"{'not run':>8}{'':>40}"
        lines.append(f"{r['shards']:>6}{r['raw']['per_s']:>9,.0f}"
                     f"{fmt_ratio(ratio(r['raw']['per_s'], raw1)):>8}{act}  {where}")
    return lines


def _nodes(leaders) -> str:
    """Stream leaders as "nats-1 x2, nats-3" (how many streams each node leads)."""
    names = [n for n in leaders if n]
    return ", ".join(f"{n} x{names.count(n)}" if names.count(n) > 1 else n
                     for n in sorted(set(names))) or "-"


def main(seconds: float = 2.0) -> None:
    seconds = window_seconds(seconds)
    started = time.perf_counter()
    out = run(seconds)
    print(f"bots at {TABLES} tables; raw: guarded appends at {TABLES} subjects on the same "
          f"cluster (R3 on 3 nodes); medians of\n{REPEATS} windows of {seconds:g} s (raw "
          f"{REPEATS} x {_raw_seconds(seconds):g} s); latency ms (HdrHistogram, µs); CPU ms: "
          f"services + NATS per action")
    print("\n".join(replica_table(out["rows"])))
    print(f"\naggregate throughput by shard on {NODES} nodes (R3): raw = {TABLES} writers over "
          f"RAWBENCH_<j>, one stream a shard;\nAct = LocalCluster(nats_nodes={NODES}, "
          f"shards=N), bots at {TABLES} tables; xN = against 1 shard")
    print("\n".join(shard_table(out["shards"])))
    if not out["sharded"]:
        print("(Act by shard not run: this LocalCluster has no `shards` keyword yet)")
    for r in [*out["rows"], *out["shards"]]:
        a = r.get("act")
        if a and a["tables_failed"]:
            print(f"warning: {a['tables_failed']} of {TABLES} tables were not seated or stopped "
                  f"acting ({r.get('what') or str(r['shards']) + ' shard(s)'}): "
                  f"{'; '.join(a['errors'])}")
    f = out["failover"]
    print(f"\n{f['what']}: {f['seconds']:.2f} s")
    try:
        from .plots import plot_shards
        print("plots: " + ", ".join(str(p) for p in plot_shards(out["shards"])))
    except ImportError as exc:
        print(f"plots not written: {exc}")
    print(f"({time.perf_counter() - started:.0f} s; `.venv/bin/python -m bench bench_cluster`)")


if __name__ == "__main__":
    main()
