"""Capacity: how many human-paced tables this machine holds while the 99th percentile of the
time from sending an action to its acknowledgement stays under 250 ms.

Each table is 6-max fixed-limit hold'em with a bot in every seat, as people play: each bot
watches its own seat (a Watch stream) and acts on the views it receives after thinking 1 to 3
seconds (uniformly at random), and 2 spectators, each a player account of its own, watch the
table too (services/pokerctl/botclient.py ``play_table``). Latency is the bot's: Act sent to
its reply (the action's events acknowledged by JetStream, the driver's follow-up steps done).

Each load runs on a fresh `pokerctl up` cluster (services/pokerctl/up.py LocalCluster: NATS
and every service as its own process; ``--table-services N``: N table-service processes,
the clients' calls spread over all of them). The bots run in ``--clients`` processes of their
own (``python -m bench.bench_capacity --client CONFIG``), each driving a share of the tables
and reporting back over its stdout as JSON lines, its latencies as an HdrHistogram encoding:
so the bots' CPU is not the table service's, and one Python client is not the bottleneck.
A client creates and seats its tables (bounded concurrency, each table's bots start playing
once it is seated), says it is ready once every one of its tables has had an action
acknowledged, and measures between the parent's ``start`` and ``stop``.

The search steps the table count up (100, 200, 400, then 200 more each time) until a load
fails, then bisects between the largest load that passed and the smallest that failed until
they are within 5% of each other. A load fails when its p99 is 250 ms or more, when a table
could not be seated or stopped playing, or when the tables had not all dealt within the
warm-up's deadline. For the largest load that passed it prints the tables, actions/s, the
p50/p99/p99.9 acknowledgement latency, the CPU per action of every process (services + NATS,
and the clients apart) and their resident memory (VmRSS of /proc/<pid>/status); the plot
(p99 and CPU against tables) goes to bench/out/capacity.png.

    .venv/bin/python -m bench.bench_capacity                       # the whole search
    .venv/bin/python -m bench.bench_capacity --tables 20,40 --window-s 5
    .venv/bin/python -m bench.bench_capacity --table-services 2    # one against two
    POKER_BENCH_TABLES=200,400 POKER_BENCH_WINDOW_S=20 .venv/bin/python -m bench bench_capacity

Settings: the flags, else POKER_BENCH_TABLES (the table counts to step through),
POKER_BENCH_WINDOW_S, POKER_BENCH_TABLE_SERVICES, POKER_BENCH_CLIENTS, else the defaults below
(``python -m bench --seconds S``: a window of S seconds if that is longer than the default's).
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import cpu
from .capacity_clients import Client, client, spawn_clients
from .load import SEATS, fmt_ms, histogram, parse_loads, percentiles_us

#: the table counts the search steps through, then STEP_AFTER more each time up to MAX_TABLES
STEPS = (100, 200, 400, 600, 800, 1000, 1200)
STEP_AFTER = 200
MAX_TABLES = 20_000
#: the bisection ends when the loads that passed and failed are this close (of the failed)
RESOLUTION = 0.05
#: what a load must hold: the 99th percentile of Act sent to its reply
P99_LIMIT_MS = 250.0
#: a person's pace, and who else watches each table
THINK_MS = "1000-3000"
SPECTATORS = 2
#: the measurement window (s) and the client processes, unless told otherwise
WINDOW_S = 30.0
CLIENTS = 2
TABLE_SERVICES = 1
#: how long the tables of a load may take to be seated and deal: this plus so much per table
READY_BASE_S = 60.0
READY_PER_TABLE_S = 0.3


# --- settings -------------------------------------------------------------------------------


class SettingsError(ValueError):
    """A setting that does not parse; the message names it and says what to give."""


@dataclass(frozen=True)
class Settings:
    #: the table counts to step through (None: STEPS, then STEP_AFTER more each time)
    tables: tuple[int, ...] | None = None
    window_s: float = WINDOW_S
    table_services: int = TABLE_SERVICES
    clients: int = CLIENTS
    think_ms: str = THINK_MS
    spectators: int = SPECTATORS
    p99_limit_ms: float = P99_LIMIT_MS


def settings(args: argparse.Namespace, env: Mapping[str, str], seconds: float) -> Settings:
    """The flags of ``args`` (None: not given), else POKER_BENCH_TABLES,
    POKER_BENCH_WINDOW_S, POKER_BENCH_TABLE_SERVICES, POKER_BENCH_CLIENTS of ``env``, else
    the defaults (the window: ``seconds`` if longer than WINDOW_S). :class:`SettingsError`
    naming the flag or variable of a value that does not parse."""
    from services.pokerctl.thinktime import ThinkTime, ThinkTimeError

    def pick(flag: str | None, name: str, variable: str) -> tuple[str | None, str]:
        value = (env.get(variable) or "").strip()
        if flag is not None:
            return flag, name
        return (value or None), variable

    text, what = pick(args.tables, "--tables", "POKER_BENCH_TABLES")
    try:
        tables = parse_loads(text, what) if text is not None else None
    except ValueError as exc:
        raise SettingsError(str(exc)) from None
    text, what = pick(args.window_s, "--window-s", "POKER_BENCH_WINDOW_S")
    window = max(WINDOW_S, seconds) if text is None else _number(text, what, float, 1.0)
    text, what = pick(args.table_services, "--table-services", "POKER_BENCH_TABLE_SERVICES")
    services = TABLE_SERVICES if text is None else _number(text, what, int, 1)
    text, what = pick(args.clients, "--clients", "POKER_BENCH_CLIENTS")
    clients = CLIENTS if text is None else _number(text, what, int, 1)
    spectators = SPECTATORS if args.spectators is None else \
        _number(args.spectators, "--spectators", int, 0)
    think = THINK_MS if args.think_ms is None else args.think_ms
    try:
        ThinkTime.parse(think)
    except ThinkTimeError as exc:
        raise SettingsError(f"--think-ms: {exc}") from None
    limit = P99_LIMIT_MS if args.p99_ms is None else _number(args.p99_ms, "--p99-ms", float,
                                                             1.0)
    return Settings(tables, window, services, clients, think, spectators, limit)


def _number(text: str, what: str, kind: type, least: float):
    try:
        value = kind(text)
    except ValueError:
        value = None
    if value is None or not math.isfinite(value) or value < least:
        noun = "a whole number" if kind is int else "a number"
        raise SettingsError(f"{what} must be {noun} of at least {least:g}, not {text!r}")
    return value


# --- the search -----------------------------------------------------------------------------


def ladder(given: Sequence[int] | None = None) -> Iterator[int]:
    """The loads the search steps up through: ``given`` (sorted), else :data:`STEPS` and
    then :data:`STEP_AFTER` more each time up to :data:`MAX_TABLES`."""
    if given is not None:
        yield from sorted(given)
        return
    yield from STEPS
    tables = STEPS[-1] + STEP_AFTER
    while tables <= MAX_TABLES:
        yield tables
        tables += STEP_AFTER


def bounds(results: Mapping[int, bool]) -> tuple[int, int | None]:
    """(the largest load that passed below the smallest that failed, 0 if none did; that
    failed load, None if none failed). A load that passed above one that failed (this
    machine's noise) does not count: the capacity is what held below the first failure."""
    failed = min((t for t, ok in results.items() if not ok), default=None)
    passed = max((t for t, ok in results.items() if ok and (failed is None or t < failed)),
                 default=0)
    return passed, failed


def next_load(results: Mapping[int, bool], given: Sequence[int] | None = None,
              resolution: float = RESOLUTION) -> int | None:
    """The next table count to try after ``results`` (tables -> passed): up the
    :func:`ladder` until a load fails, then halfway between :func:`bounds` until they are
    within ``resolution`` of the failed load (at least one table apart); None: done."""
    passed, failed = bounds(results)
    if failed is None:
        return next((t for t in ladder(given) if t not in results and t > passed), None)
    if failed - passed <= max(1, math.ceil(failed * resolution)):
        return None
    return (passed + failed) // 2


def verdict(p99_ms: float, limit_ms: float, problems: Sequence[str]) -> tuple[bool, str]:
    """Whether a load held: no problem (a table not seated, stopped, not dealt in time; no
    action measured) and a p99 under ``limit_ms``; and why not, in words."""
    if problems:
        return False, "; ".join(problems)
    if p99_ms != p99_ms:
        return False, "no action was acknowledged in the window"
    if p99_ms >= limit_ms:
        return False, f"p99 {p99_ms:,.0f} ms >= {limit_ms:g} ms"
    return True, f"p99 {p99_ms:,.1f} ms < {limit_ms:g} ms"


def shares(tables: int, clients: int) -> list[int]:
    """How many of ``tables`` each of ``clients`` drives (as even as can be; none empty)."""
    clients = max(1, min(clients, tables))
    return [tables // clients + (k < tables % clients) for k in range(clients)]


# --- one load -------------------------------------------------------------------------------


def _rss_mib(pids: Mapping[str, int]) -> dict[str, float]:
    from .proctrend import rss_kib
    return {name: kib / 1024 for name, pid in pids.items() if (kib := rss_kib(pid)) is not None}


async def _wait_ready(clients: list[Client], tables: int, problems: list[str]) -> None:
    """Until every client says ``ready`` (within the load's deadline); the tables not
    seated, or stopped, are problems."""
    deadline = time.monotonic() + READY_BASE_S + READY_PER_TABLE_S * tables
    for c in clients:
        ready = await c.receive("ready", max(1.0, deadline - time.monotonic()))
        if ready["errors"]:
            problems.append(f"{c.name}: {c.tables - ready['tables']} table(s) not "
                            f"seated or stopped: {'; '.join(ready['errors'][:3])}")


async def _add_reports(clients: list[Client], row: dict, problems: list[str]) -> None:
    """Every client's report of the window, added into ``row``."""
    for c in clients:
        report = await c.receive("report", 60.0)
        row["actions"] += report["actions"]
        row["bot_views"] += report["bot_views"]
        row["spectator_views"] += report["spectator_views"]
        row["hist"].decode_and_add(report["hist"])
        if report["errors"]:
            problems.append(f"{c.name}: tables stopped: "
                            f"{'; '.join(report['errors'][:3])}")


async def measure(tables: int, s: Settings) -> dict:
    """One load on a fresh cluster: its figures and verdict (see the module's docstring)."""
    from services.pokerctl.up import LocalCluster
    started = time.perf_counter()
    problems: list[str] = []
    row: dict = {"tables": tables, "actions": 0, "per_s": 0.0, "hist": histogram(),
                 "cpu_ms": {}, "cores": {}, "rss_mib": {}, "servers": [], "clients": [],
                 "bot_views": 0, "spectator_views": 0, "ready_s": float("nan"),
                 "elapsed_s": 0.0}
    with tempfile.TemporaryDirectory(prefix="poker-capacity-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING")
        await cluster.start()
        clients: list[Client] = []
        try:
            for i in range(2, s.table_services + 1):
                await cluster.add_replica("table", f"table-{i}")
            clients = await spawn_clients(cluster, shares(tables, s.clients), s.think_ms,
                                          s.spectators, cluster.log_dir)
            await _wait_ready(clients, tables, problems)
            row["ready_s"] = time.perf_counter() - started
            servers = cpu.cluster_pids(cluster)
            bots = {c.name: c.proc.pid for c in clients}
            pids = {**servers, **bots}
            for c in clients:
                await c.send("start")
            c0, t0 = cpu.sample(pids), time.perf_counter()
            await asyncio.sleep(s.window_s)  # the bots play meanwhile
            c1, t1 = cpu.sample(pids), time.perf_counter()
            row["rss_mib"] = _rss_mib(pids)
            for c in clients:
                await c.send("stop")
            await _add_reports(clients, row, problems)
            elapsed = row["elapsed_s"] = t1 - t0
            row["per_s"] = row["actions"] / elapsed
            row["cpu_ms"] = {n: v for n, v in cpu.per_action_ms(c0, c1, row["actions"]).items()
                             if n in pids}
            row["cores"] = {n: (c1[n] - c0[n]) / elapsed for n in pids if n in c0 and n in c1}
            row["servers"], row["clients"] = sorted(servers), sorted(bots)
        except (RuntimeError, OSError) as exc:  # a client that died, or was not ready in time
            problems.append(str(exc))
        finally:
            for c in clients:
                if c.proc.returncode is None and c.proc.stdin is not None:
                    c.proc.stdin.close()  # a client still waiting for a word ends
            await asyncio.gather(*(c.close() for c in clients))
            await cluster.stop()
    row["lat_us"] = percentiles_us(row["hist"])
    row["p99_ms"] = row["lat_us"]["p99"] / 1e3
    row["ok"], row["why"] = verdict(row["p99_ms"], s.p99_limit_ms, problems)
    row["wall_s"] = time.perf_counter() - started
    return row


def server_ms(row: dict) -> float:
    """CPU ms per action of the services and NATS together."""
    return sum(row["cpu_ms"].get(n, 0.0) for n in row["servers"])


def client_ms(row: dict) -> float:
    """CPU ms per action of the bots' processes together."""
    return sum(row["cpu_ms"].get(n, 0.0) for n in row["clients"])


def cores(row: dict, names: Sequence[str]) -> float:
    """How many cores ``names`` kept busy over the window."""
    return sum(row["cores"].get(n, 0.0) for n in names)


# --- the report -----------------------------------------------------------------------------

HEAD = (f"{'tables':>7} {'verdict':<5}{'act/s':>8}{'p50':>8}{'p99':>8}{'p99.9':>8}"
        f"{'svc+NATS':>10}{'clients':>9}{'cores s+N':>10}{'cores cl':>9}{'views/s':>9}"
        f"{'ready s':>8}  why")


def row_line(row: dict) -> str:
    """One load's line under :data:`HEAD`: latency in ms, CPU in ms per action and in cores
    kept busy, the views received a second, and how long the tables took to be seated and
    deal."""
    lat = row["lat_us"]
    elapsed = row["elapsed_s"]
    views = (row["bot_views"] + row["spectator_views"]) / elapsed if elapsed else 0.0
    ready = row["ready_s"]
    return (f"{row['tables']:>7} {'pass' if row['ok'] else 'FAIL':<5}{row['per_s']:>8,.0f}"
            + "".join(fmt_ms(lat[k]) for k in ("p50", "p99", "p99.9"))
            + f"{server_ms(row):>10.3f}{client_ms(row):>9.3f}"
            f"{cores(row, row['servers']):>10.2f}{cores(row, row['clients']):>9.2f}"
            f"{views:>9,.0f}{'-' if ready != ready else f'{ready:.0f}':>8}  {row['why']}")


def summary_lines(best: dict, s: Settings) -> list[str]:
    """The largest load that held, process by process."""
    lat = best["lat_us"]
    names = [*best["servers"], *best["clients"]]
    by_process = ", ".join(f"{n} {best['cpu_ms'][n]:.3f}" for n in names if n in best["cpu_ms"])
    rss = ", ".join(f"{n} {best['rss_mib'][n]:.0f}" for n in names if n in best["rss_mib"])
    return [
        f"largest load that held p99 < {s.p99_limit_ms:g} ms: {best['tables']} tables "
        f"({best['tables'] * SEATS} bots each watching its seat, "
        f"{best['tables'] * s.spectators} spectators; {s.table_services} table service(s))",
        f"  actions/s {best['per_s']:,.0f}; ack latency p50 {fmt_ms(lat['p50'], 0)} / p99 "
        f"{fmt_ms(lat['p99'], 0)} / p99.9 {fmt_ms(lat['p99.9'], 0)} ms "
        f"({best['actions']:,} actions in the window)",
        f"  CPU ms per action: services + NATS {server_ms(best):.3f} "
        f"({cores(best, best['servers']):.2f} cores busy), clients {client_ms(best):.3f} "
        f"({cores(best, best['clients']):.2f} cores)",
        f"  by process: {by_process}",
        f"  RSS (MiB, VmRSS at the window's end): {rss}",
    ]


def search(s: Settings, out=None) -> list[dict]:
    """Every load the search tried, in the order tried (each line printed as it is done)."""
    out = sys.stdout if out is None else out
    results: dict[int, bool] = {}
    rows = []
    print(HEAD, file=out, flush=True)
    while (tables := next_load(results, s.tables)) is not None:
        row = asyncio.run(measure(tables, s))
        results[tables] = row["ok"]
        rows.append(row)
        print(row_line(row), file=out, flush=True)
    return rows


def report(rows: list[dict], s: Settings, out=None) -> None:
    out = sys.stdout if out is None else out
    passed, _ = bounds({r["tables"]: r["ok"] for r in rows})
    best = next((r for r in rows if r["tables"] == passed and r["ok"]), None)
    print(file=out)
    if best is None:
        print(f"no load held p99 < {s.p99_limit_ms:g} ms", file=out)
    else:
        print("\n".join(summary_lines(best, s)), file=out)
    try:
        from .plots import plot_capacity
        print(f"plot: {plot_capacity(rows, s.p99_limit_ms)}", file=out)
    except ImportError as exc:  # matplotlib is in the bench extra
        print(f"plot not written: {exc}", file=out)


def run(s: Settings, out=None) -> list[dict]:
    out = sys.stdout if out is None else out
    started = time.perf_counter()
    print(f"capacity: 6-max fixed-limit hold'em, every bot watching its own seat and thinking "
          f"{s.think_ms} ms before each action,\n{s.spectators} spectator(s) per table; "
          f"{s.table_services} table service(s), the bots in {s.clients} process(es); each "
          f"load on a fresh cluster,\nmeasured over {s.window_s:g} s once every table has "
          f"dealt; a load holds while the p99 of Act sent to its\nreply is under "
          f"{s.p99_limit_ms:g} ms. CPU: ms per action (svc+NATS, clients) and cores busy.",
          file=out, flush=True)
    rows = search(s, out)
    report(rows, s, out)
    print(f"({time.perf_counter() - started:.0f} s)", file=out)
    return rows


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.bench_capacity",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--tables", help="table counts to step through, comma-separated "
                                    "(default POKER_BENCH_TABLES, else 100,200,400,...)")
    p.add_argument("--window-s", help=f"measurement window, seconds (default "
                                      f"POKER_BENCH_WINDOW_S, else {WINDOW_S:g})")
    p.add_argument("--table-services", help="table-service processes (default "
                                            "POKER_BENCH_TABLE_SERVICES, else 1)")
    p.add_argument("--clients", help=f"load-generating processes (default POKER_BENCH_CLIENTS, "
                                     f"else {CLIENTS})")
    p.add_argument("--think-ms", help=f"each bot's think time, MIN-MAX ms (default {THINK_MS})")
    p.add_argument("--spectators", help=f"spectators per table (default {SPECTATORS})")
    p.add_argument("--p99-ms", help=f"the p99 a load must stay under (default {P99_LIMIT_MS:g})")
    p.add_argument("--client", metavar="CONFIG", help=argparse.SUPPRESS)
    return p


def _settings_or_exit(args: argparse.Namespace, seconds: float) -> Settings:
    try:
        return settings(args, os.environ, seconds)
    except SettingsError as exc:
        print(f"bench_capacity: {exc}", file=sys.stderr)
        raise SystemExit(2) from None


def main(seconds: float = 2.0) -> None:
    """``python -m bench bench_capacity``: the search, with the POKER_BENCH_* settings."""
    run(_settings_or_exit(parser().parse_args([]), seconds))


if __name__ == "__main__":
    arguments = parser().parse_args()
    if arguments.client is not None:
        client(arguments.client)
    else:
        run(_settings_or_exit(arguments, 0.0))
