"""The networked stack under offered load: bots at 1 to 100 tables acting through every service,
each load beside the raw JetStream rate at as many subjects (publishes guarded by the expected
last subject sequence, one writer per subject) measured on the same cluster; latency
percentiles from an HdrHistogram; the CPU each process spends per action; the fold rate.

Each load is played twice, each time on a fresh cluster: with nobody watching (one loop per
table reads it with GetState), and with every bot watching its own seat (6 Watch streams per
table, the bots acting on the views they receive, as players' apps do). What the watching
costs is the ratio of their CPU per action (services + NATS), printed beside each other.

Everything runs on this machine: nats-server (JetStream, sync_interval always) and every service
as its own process (the `pokerctl up` supervisor, a fresh one for each load, so that no table of
an earlier load plays on in the background), bots in this process. Latency is Act request to
reply (the action's events acknowledged by JetStream, the driver's follow-up steps done). CPU is
utime + stime from /proc/<pid>/stat before and after each window (bench/cpu.py).

    .venv/bin/python -m bench bench_services
    POKER_BENCH_SECONDS=1 POKER_BENCH_TABLES=1,20 .venv/bin/python -m bench bench_services

Plots go to bench/out/ (git-ignored). Nothing is asserted: the figures are medians of
repeated windows (this machine's noise is large) and ratios against the raw rate.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path

from services.pokerctl.up import LocalCluster
from shared.infra import natsconn
from shared.infra.eventstore import EventStore
from shared.infra.repository import LoadedTable, fold_commit

from . import cpu
from .load import (
    SEATS,
    act_load,
    fmt_ms,
    fmt_ratio,
    histogram,
    load_points,
    median,
    percentiles_us,
    ratio,
    window_seconds,
)

__all__ = ["SEATS", "act_load", "raw_append_rate", "raw_repeats", "stream_leaders", "fold_rate",
           "run", "main"]

#: repeats of the raw rate and windows of Act at each load (medians are reported)
REPEATS = 3
#: the load the issue's goals are stated at (bots at 20 tables vs raw at 20 subjects)
GOAL_TABLES = 20
GOAL_RATIO = 0.20
GOAL_CPU_MS = 1.5
#: the load whose watched / unwatched CPU per action issue 23 quotes
WATCH_TABLES = 10
#: the fold rate is measured on the tables of the largest load up to this many
FOLD_TABLES = 50


async def raw_append_rate(nats_url: str, subjects: int, seconds: float,
                          ca: str | None = None, *, streams: int = 1, replicas: int = 1,
                          tag: str = "", pids: dict[str, int] | None = None) -> dict:
    """The limit of this design: JetStream publishes guarded by the expected last subject
    sequence, one writer per subject, on a stream like the poker one (file, synced).
    ``streams`` > 1: as many streams RAWBENCH_<j> (one per shard), writer i on stream
    i mod ``streams``; ``tag`` keeps repeats on subjects of their own; ``pids``: the CPU
    NATS (every process named there) spends per append is in ``cpu_ms``."""
    from nats.js import api
    nc = await natsconn.connect(nats_url, name="bench", ca=ca)
    js = nc.jetstream()
    leaders = []
    for j in range(streams):
        name, prefix = ("RAWBENCH", "rawbench") if streams == 1 else \
            (f"RAWBENCH_{j}", f"rawbench{j}")
        info = await js.add_stream(api.StreamConfig(
            name=name, subjects=[f"{prefix}.>"], storage=api.StorageType.FILE,
            num_replicas=replicas, duplicate_window=120.0))
        leaders.append(info.cluster.leader if info.cluster else None)
    latencies: list[float] = []
    payload = b"x" * 300  # about one commit of a few events
    stop = time.perf_counter() + seconds

    async def writer(i: int) -> None:
        prefix = "rawbench" if streams == 1 else f"rawbench{i % streams}"
        seq = n = 0
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            ack = await js.publish(f"{prefix}.{subjects}{tag}.{i}", payload, headers={
                "Nats-Expected-Last-Subject-Sequence": str(seq),
                "Nats-Msg-Id": f"{subjects}{tag}-{i}-{n}"})
            latencies.append(time.perf_counter() - t0)
            seq, n = ack.seq, n + 1

    before = cpu.sample(pids or {})
    started = time.perf_counter()
    await asyncio.gather(*(writer(i) for i in range(subjects)))
    elapsed = time.perf_counter() - started
    ms = cpu.per_action_ms(before, cpu.sample(pids or {}), len(latencies))
    await nc.drain()
    hist = histogram(latencies)
    pct = percentiles_us(hist)
    return {"what": f"raw JetStream appends, {subjects} subject(s)", "subjects": subjects,
            "streams": streams, "per_s": len(latencies) / elapsed, "appends": len(latencies),
            "hist": hist, "lat_us": pct, "p50_ms": pct["p50"] / 1e3, "p99_ms": pct["p99"] / 1e3,
            "cpu_ms": ms, "leaders": leaders}


async def stream_leaders(nats_url: str, ca: str | None = None,
                         pattern: str = r"POKER(_S\d+)?") -> dict[str, str | None]:
    """The leader node of every stream whose name matches ``pattern`` (default: the log's,
    unsharded or its shards POKER_S<k>; None: no cluster)."""
    import re
    nc = await natsconn.connect(nats_url, name="bench", ca=ca)
    try:
        infos = await nc.jsm().streams_info()
    finally:
        await nc.close()
    return {i.config.name: (i.cluster.leader if i.cluster else None) for i in infos
            if i.config.name and re.fullmatch(pattern, i.config.name)}


async def raw_repeats(nats_url: str, subjects: int, seconds: float, ca: str | None = None,
                      repeats: int = REPEATS, **kw) -> dict:
    """:func:`raw_append_rate` ``repeats`` times: the median rate, the latencies of all."""
    runs = [await raw_append_rate(nats_url, subjects, seconds, ca, tag=f"r{k}", **kw)
            for k in range(repeats)]
    hist = histogram()
    for r in runs:
        hist.add(r["hist"])
    pct = percentiles_us(hist)
    names = sorted({n for r in runs for n in r["cpu_ms"]})
    return {**runs[0], "per_s": median(r["per_s"] for r in runs),
            "runs": [r["per_s"] for r in runs], "hist": hist, "lat_us": pct,
            "p50_ms": pct["p50"] / 1e3, "p99_ms": pct["p99"] / 1e3,
            "cpu_ms": {n: median(r["cpu_ms"].get(n, float("nan")) for r in runs)
                       for n in names}}


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
    return {"what": "load tables from the log", "events": events, "tables": len(table_ids),
            "fold_per_s": events / fold_t if fold_t else float("nan"),
            "read_and_fold_per_s": events / (read_t + fold_t) if read_t + fold_t else 0.0}


async def load_point(tables: int, seconds: float, fold: bool = False) -> dict:
    """One offered load: on a fresh cluster the raw rate at ``tables`` subjects (NATS's CPU
    per append beside it), then bots at ``tables`` tables with nobody watching (``act``;
    ``fold``: the fold rate of those tables); on another fresh cluster the same bots, each
    watching its own seat (``watched``)."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="poker-bench-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING")
        await cluster.start()
        try:
            nats_pids = {n: p for n, p in cpu.cluster_pids(cluster).items() if cpu.is_nats(n)}
            raw = await raw_repeats(cluster.nats_url, tables, max(0.5, seconds / 2),
                                    cluster.nats_ca, pids=nats_pids)
            act = await act_load(cluster, tables, seconds, seed=tables, windows=REPEATS)
            ids = act.pop("table_ids")
            folded = await fold_rate(cluster.nats_url, ids, cluster.nats_ca) if fold else None
        finally:
            await cluster.stop()
    with tempfile.TemporaryDirectory(prefix="poker-bench-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING")
        await cluster.start()
        try:
            watched = await act_load(cluster, tables, seconds, seed=tables, windows=REPEATS,
                                     watch=True)
            watched.pop("table_ids")
        finally:
            await cluster.stop()
    return {"tables": tables, "raw": raw, "act": act, "fold": folded, "watched": watched,
            "ratio": ratio(act["per_s"], raw["per_s"]),
            "watch_ratio": ratio(watched["cpu_total_ms"], act["cpu_total_ms"]),
            "wall_s": time.perf_counter() - started}


async def run_async(seconds: float, loads: tuple[int, ...] | None = None) -> list[dict]:
    loads = loads or load_points()
    fold_at = max([t for t in loads if t <= FOLD_TABLES] or [loads[0]])
    return [await load_point(t, seconds, fold=t == fold_at) for t in loads]


def run(seconds: float = 2.0, loads: tuple[int, ...] | None = None) -> list[dict]:
    return asyncio.run(run_async(seconds, loads))


# --- the report ----------------------------------------------------------------------------

CPU_COLUMNS = (*cpu.SERVICE_ORDER, "nats")


def load_table(points: list[dict]) -> list[str]:
    """The throughput and latency table: one line per offered load."""
    head = (f"{'tables':>6} {'raw/s':>8} {'raw p99':>8} {'act/s':>8} {'act/raw':>8}"
            f"{'p50':>8}{'p90':>8}{'p99':>8}{'p99.9':>8}{'max':>8}")
    lines = [f"{'':>6} {'raw guarded appends':>17}  {'Act through every service':>24}"
             f"{'(Act latency, ms)':>40}", head]
    for p in points:
        raw, act, lat = p["raw"], p["act"], p["act"]["lat_us"]
        lines.append(
            f"{p['tables']:>6} {raw['per_s']:>8,.0f} {fmt_ms(raw['lat_us']['p99'])} "
            f"{act['per_s']:>8,.0f} {fmt_ratio(p['ratio']):>8}"
            + "".join(fmt_ms(lat[k]) for k in ("p50", "p90", "p99", "p99.9", "max")))
    return lines


def cpu_table(points: list[dict]) -> list[str]:
    """CPU milliseconds per action by process, one line per offered load."""
    head = (f"{'tables':>6}" + "".join(f"{c:>9}" for c in CPU_COLUMNS)
            + f"{'svc+NATS':>10}{'client':>8}{'raw NATS':>10}")
    lines = [head]
    for p in points:
        ms = cpu.group(p["act"]["cpu_ms"], (*CPU_COLUMNS, cpu.CLIENT))
        raw_nats = sum(v for n, v in p["raw"]["cpu_ms"].items() if cpu.is_nats(n))
        lines.append(f"{p['tables']:>6}" + "".join(f"{ms[c]:>9.3f}" for c in CPU_COLUMNS)
                     + f"{p['act']['cpu_total_ms']:>10.3f}{ms[cpu.CLIENT]:>8.3f}"
                     f"{raw_nats:>10.3f}")
    return lines


def watch_table(points: list[dict]) -> list[str]:
    """Nobody watching against every bot watching its own seat, one line per offered load:
    actions/s, p99, the table service's and all servers' (services + NATS) CPU per action,
    and the ratio of the latter, watched / unwatched. Loads played unwatched only are left
    out."""
    head = (f"{'tables':>6}" + f"{'act/s':>8}{'p99':>8}{'table':>8}{'svc+NATS':>10}" * 2
            + f"{'watched/unwatched':>19}")
    lines = [f"{'':>6}{'nobody watching':>34}{'every bot watching its seat':>34}", head]
    for p in points:
        if "watched" not in p:
            continue
        row = f"{p['tables']:>6}"
        for a in (p["act"], p["watched"]):
            ms = cpu.group(a["cpu_ms"], ("table",))
            row += (f"{a['per_s']:>8,.0f}{fmt_ms(a['lat_us']['p99'])}{ms['table']:>8.3f}"
                    f"{a['cpu_total_ms']:>10.3f}")
        lines.append(row + f"{fmt_ratio(p['watch_ratio']):>19}")
    at = {p["tables"]: p for p in points if "watched" in p}
    quoted = at.get(WATCH_TABLES)
    if quoted is not None:
        lines.append(f"CPU per action at {WATCH_TABLES} tables, services + NATS: "
                     f"{quoted['act']['cpu_total_ms']:.2f} ms with nobody watching, "
                     f"{quoted['watched']['cpu_total_ms']:.2f} ms with every bot watching its "
                     f"seat ({fmt_ratio(quoted['watch_ratio'])}x)")
    return lines


def goal_lines(points: list[dict]) -> list[str]:
    at = {p["tables"]: p for p in points}
    goal = at.get(GOAL_TABLES)
    if goal is None:
        return [f"(no {GOAL_TABLES}-table load in this run: the issue's goals are stated there)"]
    ms = goal["act"]["cpu_total_ms"]
    return [f"bots at {GOAL_TABLES} tables through every service / raw at {GOAL_TABLES} "
            f"subjects: {fmt_ratio(goal['ratio'])} (issue 13 goal >= {GOAL_RATIO:.2f})",
            f"CPU per action at {GOAL_TABLES} tables, services + NATS: {ms:.2f} ms "
            f"(issue 13 goal <= {GOAL_CPU_MS} ms)"]


def main(seconds: float = 2.0) -> None:
    seconds = window_seconds(seconds)
    started = time.perf_counter()
    points = run(seconds)
    print(f"offered load: bots at N tables ({SEATS} seats, fixed-limit hold'em) through every "
          f"service; raw: guarded JetStream\nappends at N subjects, one writer each, on the same "
          f"(fresh) cluster. Medians of {REPEATS} windows of {seconds:g} s (raw: "
          f"{REPEATS} x {max(0.5, seconds / 2):g} s);\nlatency percentiles from an HdrHistogram "
          f"recorded in microseconds, over all windows.")
    print("\n".join(load_table(points)))
    print("\nCPU ms per action by process (utime+stime of /proc/<pid>/stat over each window, "
          "median of the windows;\n'raw NATS': nats-server's CPU per raw append)")
    print("\n".join(cpu_table(points)))
    print(f"\nWatched: each load again on a fresh cluster with every bot watching its own seat "
          f"({SEATS} Watch streams per table,\nthe bots acting on the views they receive); CPU "
          "ms per action, medians of the windows, services + NATS")
    print("\n".join(watch_table(points)))
    print()
    print("\n".join(goal_lines(points)))
    for p in points:
        f = p["fold"]
        if f:
            print(f"fold from the log ({f['tables']} tables): {f['events']:,} events, "
                  f"{f['fold_per_s']:,.0f} events/s folded ({f['read_and_fold_per_s']:,.0f}/s "
                  f"including the JetStream reads)")
    for p in points:
        for a in (p["act"], p["watched"]):
            if a["tables_failed"]:
                print(f"warning: {a['what']}: {a['tables_failed']} of {p['tables']} tables "
                      f"were not seated or stopped acting: {'; '.join(a['errors'])}")
    try:
        from .plots import plot_services
        paths = plot_services(points)
        print("plots: " + ", ".join(str(p) for p in paths))
    except ImportError as exc:  # matplotlib is in the bench extra
        print(f"plots not written: {exc}")
    print(f"({time.perf_counter() - started:.0f} s; `.venv/bin/python -m bench bench_services`, "
          f"POKER_BENCH_SECONDS / POKER_BENCH_TABLES to shorten)")


if __name__ == "__main__":
    main()
