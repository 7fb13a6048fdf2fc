"""CPU per action by process, this tree against another one (an earlier commit's checkout with
its gen/ built), alternated: what a change to the Act path bought, measured the same way on
both sides. Not part of ``make bench`` (it needs the other tree):

    git worktree add /tmp/before <rev>
    (cd /tmp/before && mkdir -p gen && ../main/.venv/bin/python -m grpc_tools.protoc -Iprotos \\
        --python_out=gen --pyi_out=gen --grpc_python_out=gen $(find protos -name '*.proto'))
    .venv/bin/python -m bench.ab_cpu /tmp/before [--tables 10] [--seconds 10] [--rounds 2] [--warm-s 10]

A setting rather than a change of code is compared on one tree: ``--env NAME=VALUE`` (repeatable)
is in this side's environment only, and every process it starts inherits it, nats-server too:

    .venv/bin/python -m bench.ab_cpu . --env GOMEMLIMIT=48MiB

Each side runs in a process of its own with its tree first on its path and in PYTHONPATH
(the services it spawns inherit it): bots at fixed-limit hold'em tables through every service as its own process
(services/pokerctl/up.LocalCluster), CPU from /proc over the window. ``--watch`` (each bot
watches its own seat and acts from its views), ``--spectators N`` and ``--think-ms MIN-MAX``
load the tables as clients do (services/pokerctl/botclient.py ``play_table``); the last
column is the bots' own CPU per action (this process: it shares the machine). The bots are
each side's own, so for a tree from before them copy this tree's botclient.py (with the
table_addresses.py and thinktime.py it imports) into it.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the processes measured: written out, not read from shared/infra/services.py, since this
#: file runs on the other tree too, which may be from before the registry
NAMES = ("table", "betting", "dealer", "showdown", "rake", "wallet", "nats")


def _log_reads(ports: dict[str, int]) -> float | None:
    """The log reads of every service (``poker_log_reads_total`` on each one's /metrics), or
    None if a tree has no such metric (before it was added)."""
    import urllib.request
    total, seen = 0.0, False
    for port in ports.values():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
                text = r.read().decode()
        except OSError:
            continue
        for line in text.splitlines():
            if line.startswith("poker_log_reads_total "):
                total += float(line.split()[1])
                seen = True
    return total if seen else None


def _ticks(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pid(cluster, name: str) -> int:
    """The process id of ``name`` in the started cluster (this file runs on either tree, so
    it uses nothing of bench/ the other tree may lack)."""
    pid = cluster.pid(name)
    if pid is None:
        raise RuntimeError(f"{name} is not running in this cluster")
    return pid


async def one_side(tables: int, seconds: float, watch: bool = False, spectators: int = 0,
                   think: str = "0-0", warm_s: float = 0.0) -> None:
    """In the side's own process: start, play, print one line of figures."""
    from poker.table.v1 import table_pb2_grpc

    from services.pokerctl.botclient import play_table
    from services.pokerctl.bots_cmd import TablePlan, create_and_seat
    from services.pokerctl.thinktime import ThinkTime
    from services.pokerctl.up import LocalCluster

    with tempfile.TemporaryDirectory(prefix="poker-ab-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING")
        await cluster.start()
        try:
            chan = cluster.channel("table")
            stub = table_pb2_grpc.TableServiceStub(chan)
            bots = [await create_and_seat(stub, TablePlan(f"ab{i}", "holdem", "fixed_limit",
                                                          {"small_bet": 10}), 6,
                                          cluster.sponsor()) for i in range(tables)]
            pids = {n: _pid(cluster, n) for n in NAMES}
            latencies: list[float] = []
            tasks = [asyncio.create_task(play_table(
                stub, b, 10**6, random.Random(i), latencies, think=ThinkTime.parse(think),
                watch=watch, spectators=spectators)) for i, b in enumerate(bots)]
            await asyncio.sleep(warm_s)  # the first hands (each service's first fold) left out
            reads_before = _log_reads(cluster.metrics_ports)
            before = {n: _ticks(p) for n, p in pids.items()}
            first = len(latencies)
            clients0 = time.process_time()  # this process: the bots (and their watchers)
            started = time.perf_counter()
            await asyncio.sleep(seconds)  # the measurement window: the bots act meanwhile
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            elapsed = time.perf_counter() - started
            clients = time.process_time() - clients0
            after = {n: _ticks(p) for n, p in pids.items()}
            reads_after = _log_reads(cluster.metrics_ports)
            latencies = sorted(latencies[first:])
            n = len(latencies)
            ms = {k: (after[k] - before[k]) / n * 1e3 for k in NAMES}
            print(f"{n / elapsed:8.0f} {latencies[int(0.99 * n)] * 1e3:8.1f} "
                  f"{sum(ms.values()):8.2f} " + " ".join(f"{ms[k]:8.2f}" for k in NAMES)
                  + (f" {(reads_after - reads_before) / n:8.3f}"
                     if reads_before is not None and reads_after is not None else "        -")
                  + f" {clients / n * 1e3:8.2f}")
            await chan.close()
        finally:
            await cluster.stop()


def setting(text: str) -> tuple[str, str]:
    """``--env NAME=VALUE`` as (name, value)."""
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise SystemExit(f"--env takes NAME=VALUE, not {text!r}")
    return name, value


def side_env(environ: Mapping[str, str], tree: Path, own: dict[str, str],
             compared: dict[str, str]) -> dict[str, str]:
    """A side's environment: the caller's without any setting compared (the side without
    them runs without them, even if the caller had one), the side's tree first on the path,
    and the side's ``own`` settings."""
    env = {k: v for k, v in environ.items() if k not in compared}
    return env | {"PYTHONPATH": f"{tree}{os.pathsep}{tree / 'gen'}"} | own


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("other", nargs="?", help="the other tree (omit: this side alone)")
    p.add_argument("--tables", type=int, default=10)
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--watch", action="store_true", help="each bot watches its own seat")
    p.add_argument("--spectators", type=int, default=0, help="spectators per table")
    p.add_argument("--think-ms", default="0-0", help="each bot's think time, MIN-MAX")
    p.add_argument("--warm-s", type=float, default=0.0,
                   help="seconds of play before the window (0: the window starts with the "
                        "bots, each service's first read of each table in it)")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="in this side's environment only (with the other tree '.': a setting "
                        "against none)")
    p.add_argument("--side", help=argparse.SUPPRESS)  # the tree this process measures
    args = p.parse_args()
    if args.side:
        tree = Path(args.side)
        sys.path[:0] = [str(tree), str(tree / "gen")]  # its code before this tree's
        asyncio.run(one_side(args.tables, args.seconds, args.watch, args.spectators,
                             args.think_ms, args.warm_s))
        return
    trees = {"this": ROOT} | ({"other": Path(args.other).resolve()} if args.other else {})
    this_env = dict(setting(e) for e in args.env)
    print(f"{'side':<6}{'act/s':>8} {'p99 ms':>8} {'svc ms':>8} "
          + " ".join(f"{k:>8}" for k in NAMES) + f" {'reads':>8} {'bots':>8}"
          + "   (CPU ms per action; log reads per action; the bots' CPU, which shares the "
          "machine)")
    for _ in range(args.rounds):
        for label, tree in reversed(trees.items()):  # the other first, then this
            env = side_env(os.environ, tree, this_env if label == "this" else {}, this_env)
            load = ["--tables", str(args.tables), "--seconds", str(args.seconds),
                    "--spectators", str(args.spectators), "--think-ms", args.think_ms,
                    "--warm-s", str(args.warm_s),
                    *(["--watch"] if args.watch else [])]
            out = subprocess.run([sys.executable, __file__, "--side", str(tree), *load],
                                 cwd=tree, env=env, capture_output=True, text=True, check=True)
            print(f"{label:<6}{out.stdout.rstrip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
