"""Offered load for the networked benchmarks: bots at N tables acting through a LocalCluster's
table service, measured over repeated windows (throughput, CPU per action by process) with
every latency in an HdrHistogram (microseconds); and the small pure helpers the tables print
with (percentiles, medians, ratios, the POKER_BENCH_* settings).

    POKER_BENCH_SECONDS=1   # the length of one measurement window (default: --seconds)
    POKER_BENCH_TABLES=1,5,20   # the offered loads of bench_services (default 1..100)
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
from collections.abc import Iterable, Sequence
from typing import TypedDict

from . import cpu

SEATS = 6
#: the offered loads (tables; the raw rate is measured at as many subjects)
DEFAULT_LOADS = (1, 2, 5, 10, 20, 50, 100)
#: what an HdrHistogram of latencies covers: 1 µs to 60 s, 3 significant digits
HDR_RANGE_US = (1, 60_000_000, 3)
PERCENTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))


class Window(TypedDict):
    """One measurement window of :func:`act_load`: actions, seconds, actions per second,
    CPU milliseconds per action by process."""

    actions: int
    elapsed: float
    per_s: float
    cpu_ms: dict[str, float]


# --- settings ------------------------------------------------------------------------------


def window_seconds(default: float, env: dict[str, str] | None = None) -> float:
    """POKER_BENCH_SECONDS if set (a positive number), else ``default``."""
    value = (os.environ if env is None else env).get("POKER_BENCH_SECONDS", "").strip()
    if not value:
        return default
    seconds = float(value)
    if seconds <= 0:
        raise ValueError(f"POKER_BENCH_SECONDS must be positive, not {value!r}")
    return seconds


def load_points(env: dict[str, str] | None = None,
                default: Sequence[int] = DEFAULT_LOADS) -> tuple[int, ...]:
    """POKER_BENCH_TABLES ("1,2,5") if set, else ``default``: sorted, without repeats."""
    value = (os.environ if env is None else env).get("POKER_BENCH_TABLES", "").strip()
    if not value:
        return tuple(default)
    return parse_loads(value, "POKER_BENCH_TABLES")


def parse_loads(text: str, what: str = "--tables") -> tuple[int, ...]:
    """Table counts from ``text`` ("200, 400"): sorted, without repeats; ValueError naming
    ``what`` (the flag or variable they came from) unless each is a whole number of at
    least 1."""
    try:
        points = sorted({int(v) for v in text.replace(" ", "").split(",") if v})
    except ValueError:
        points = []
    if not points or points[0] < 1:
        raise ValueError(f"{what} must list table counts of at least 1, comma-separated "
                         f"(200,400), not {text!r}")
    return tuple(points)


# --- figures -------------------------------------------------------------------------------


def histogram(latencies_s: Iterable[float] = ()):
    """An HdrHistogram of ``latencies_s`` (seconds), recorded in microseconds."""
    from hdrh.histogram import HdrHistogram
    h = HdrHistogram(*HDR_RANGE_US)
    for s in latencies_s:
        h.record_value(min(max(1, round(s * 1e6)), HDR_RANGE_US[1]))
    return h


def percentiles_us(h) -> dict[str, float]:
    """p50, p90, p99, p99.9 and max of histogram ``h``, in µs (NaN when it is empty)."""
    if h.get_total_count() == 0:
        return {name: float("nan") for name, _ in (*PERCENTILES, ("max", 0))}
    out = {name: float(h.get_value_at_percentile(q)) for name, q in PERCENTILES}
    out["max"] = float(h.get_max_value())
    return out


def median(values: Iterable[float]) -> float:
    values = [v for v in values if v == v]  # NaN: a window without a figure
    return statistics.median(values) if values else float("nan")


def ratio(value: float, base: float | None) -> float:
    """``value / base``; NaN without a (positive) base."""
    return value / base if base and base > 0 else float("nan")


def fmt_ratio(r: float) -> str:
    return "-" if r != r else f"{r:.2f}"


def fmt_ms(us: float, width: int = 8) -> str:
    """Microseconds shown as milliseconds (2 decimals under 10 ms, 1 under 100, else 0)."""
    if us != us:
        return f"{'-':>{width}}"
    ms = us / 1e3
    return f"{ms:>{width}.{2 if ms < 10 else 1 if ms < 100 else 0}f}"


# --- Act load ------------------------------------------------------------------------------


async def seat_tables(stub, sponsor, prefix: str, tables: int, seats: int = SEATS,
                      concurrency: int = 10) -> tuple[list, list[str]]:
    """``tables`` fixed-limit hold'em tables created and seated (``concurrency`` at a time):
    the bots of those that were, and what went wrong at the others (a gRPC status each)."""
    import grpc

    from services.pokerctl.bots_cmd import TablePlan, create_and_seat
    gate = asyncio.Semaphore(concurrency)

    async def one(i: int):
        async with gate:
            plan = TablePlan(f"{prefix}-{i}", "holdem", "fixed_limit", {"small_bet": 10})
            try:
                return await create_and_seat(stub, plan, seats, sponsor)
            except grpc.aio.AioRpcError as exc:
                return f"{plan.table_id}: {exc.code().name}: {exc.details()}"

    done = await asyncio.gather(*(one(i) for i in range(tables)))
    return [b for b in done if not isinstance(b, str)], [b for b in done if isinstance(b, str)]


async def stop_tasks(tasks: list[asyncio.Task], timeout: float = 10.0) -> list[asyncio.Task]:
    """Cancel ``tasks`` until each is done (or ``timeout`` has passed): a cancel that lands as
    a gRPC call completes can be lost (grpc.aio answers it with the reply), and the bot plays
    on. Returns the tasks still running."""
    deadline = time.perf_counter() + timeout
    pending = [t for t in tasks if not t.done()]
    while pending and time.perf_counter() < deadline:
        for t in pending:
            t.cancel()
        await asyncio.wait(pending, timeout=0.5)
        pending = [t for t in pending if not t.done()]
    return pending


async def _warm_up(latencies: list[float], tables: int, warmup: float) -> None:
    """Until every table has dealt and acted (two acts a table), or a few seconds have gone
    by: ``warmup`` seconds at least."""
    deadline = time.perf_counter() + max(warmup, 5.0)
    await asyncio.sleep(warmup)
    while len(latencies) < 2 * tables and time.perf_counter() < deadline:
        await asyncio.sleep(0.1)


async def act_load(cluster, tables: int, seconds: float, seed: int, windows: int = 1,
                   warmup: float = 1.0, prefix: str | None = None,
                   watch: bool = False) -> dict:
    """Bots at ``tables`` fixed-limit hold'em tables act as fast as replies come back, through
    ``cluster``'s table service (over TLS, as a client), for ``windows`` windows of
    ``seconds`` after a warm-up. Each window gives a throughput and the CPU per action of
    every process of the cluster and of this client; the row holds their medians, each
    window's figures (``windows``) and the latencies of all of them (``hist``, µs).
    ``watch``: every bot watches its own seat and acts on the views it receives
    (botclient.play_watching), as players' apps do; else one loop per table reads it with
    GetState (botclient.play)."""
    from poker.table.v1 import table_pb2_grpc

    from services.pokerctl.botclient import play_table
    channel = cluster.channel("table")
    stub = table_pb2_grpc.TableServiceStub(channel)
    rng = random.Random(seed)
    latencies: list[float] = []
    t_seat = time.perf_counter()
    bots, unseated = await seat_tables(stub, cluster.sponsor(),
                                       prefix or f"bench-{tables}-{seed}", tables)
    seat_s = time.perf_counter() - t_seat
    pids = cpu.cluster_pids(cluster)
    tasks = [asyncio.create_task(play_table(stub, b, 10**6, random.Random(rng.random()),
                                            latencies, watch=watch))
             for b in bots]
    try:
        await _warm_up(latencies, tables, warmup)
        first = len(latencies)
        rows: list[Window] = []
        for _ in range(windows):
            n0, c0, t0 = len(latencies), cpu.sample(pids), time.perf_counter()
            await asyncio.sleep(seconds)  # the bots act meanwhile
            n1, c1, t1 = len(latencies), cpu.sample(pids), time.perf_counter()
            rows.append({"actions": n1 - n0, "elapsed": t1 - t0, "per_s": (n1 - n0) / (t1 - t0),
                         "cpu_ms": cpu.per_action_ms(c0, c1, n1 - n0)})
        last = len(latencies)
        failed = [t for t in tasks if t.done() and not t.cancelled() and t.exception()]
    finally:
        await stop_tasks(tasks)
        await channel.close()  # ends the RPCs of any bot that is still running
        await asyncio.gather(*tasks, return_exceptions=True)
    hist = histogram(latencies[first:last])
    pct = percentiles_us(hist)
    names = sorted({n for r in rows for n in r["cpu_ms"]})
    cpu_ms = {n: median(r["cpu_ms"].get(n, float("nan")) for r in rows) for n in names}
    return {"what": f"Act{', watched' if watch else ''}, {tables} table(s)", "tables": tables,
            "watched": watch,
            "per_s": median(r["per_s"] for r in rows), "windows": rows,
            "actions": sum(r["actions"] for r in rows), "hist": hist, "lat_us": pct,
            "p50_ms": pct["p50"] / 1e3, "p99_ms": pct["p99"] / 1e3,
            "cpu_ms": cpu_ms,
            "cpu_total_ms": median(cpu.server_total(r["cpu_ms"]) for r in rows),
            "seat_s": seat_s, "tables_failed": len(failed) + len(unseated),
            "errors": sorted({repr(t.exception())[:160] for t in failed} |
                             {u[:160] for u in unseated}),
            "table_ids": [b.table_id for b in bots]}
