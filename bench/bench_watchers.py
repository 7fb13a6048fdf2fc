"""What a watcher costs the table service: the memory each open Watch stream holds, and the CPU
each view handed to a watcher takes, measured on a fresh `pokerctl up` cluster
(services/pokerctl/up.LocalCluster: every service its own process).

One fixed-limit hold'em table with six bots acting at a steady pace; spectators open Watch
streams on it in steps (each account holding at most the per-caller cap, 64: spectators come
from many accounts, as they would), from client processes of their own. At each step: the
table service's resident memory (VmRSS of /proc/<pid>/status) against the step before, per
stream added; and over a window, the table service's CPU per view delivered (the views the
spectators counted). These are what the Watch caps of shared/infra/limits.py are chosen from.

    .venv/bin/python -m bench bench_watchers
    .venv/bin/python -m bench.bench_watchers --steps 0,500,1000,2000,4000 --window-s 10

Nothing is asserted; medians of the steps are printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import cpu, proctrend

REPO = Path(__file__).resolve().parent.parent
STEPS = (0, 500, 1000, 2000, 4000)
WINDOW_S = 10.0
PER_ACCOUNT = 64
CLIENTS = 2


def rss_kib(pid: int) -> int:
    """The resident memory of the live process ``pid`` (KiB)."""
    kib = proctrend.rss_kib(pid)
    if kib is None:
        raise ValueError(f"no VmRSS for {pid}: the process is gone")
    return kib


async def client(config: dict) -> None:
    """A client process: hold ``streams`` spectator streams of ``table`` (64 per account),
    reading every view; print the views counted whenever asked (a line on stdin)."""
    from poker.table.v1 import table_pb2, table_pb2_grpc

    from shared.infra.bearer import bearer_metadata
    from shared.infra.devissuer import DevIssuer
    from shared.infra.tls import TlsConfig, channel

    issuer = DevIssuer.create(Path(config["identity"]))
    tls = TlsConfig.in_dir(Path(config["tls"]), "client")
    chan = channel(config["address"], tls, service="table")
    stub = table_pb2_grpc.TableServiceStub(chan)
    counted = [0]

    async def spectate(auth) -> None:
        call = stub.Watch(table_pb2.ViewRequest(table_id=config["table"]), metadata=auth)
        async for _ in call:
            counted[0] += 1

    tasks = []
    for i in range(config["streams"]):
        if i % PER_ACCOUNT == 0:
            auth = bearer_metadata(issuer.token(f"rail-{config['name']}-{i // PER_ACCOUNT}",
                                                ("player",), ttl_s=3600))
        tasks.append(asyncio.create_task(spectate(auth)))
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    print(json.dumps({"ready": True}), flush=True)
    while line := await reader.readline():
        if line.strip() == b"count":
            print(json.dumps({"views": counted[0],
                              "open": sum(not t.done() for t in tasks)}), flush=True)
    for t in tasks:
        t.cancel()
    await chan.close()


async def measure(steps: tuple[int, ...], window_s: float, clients: int) -> list[dict]:
    from poker.table.v1 import table_pb2_grpc

    from services.pokerctl.botclient import play_table
    from services.pokerctl.bots_cmd import TablePlan, create_and_seat
    from services.pokerctl.thinktime import ThinkTime
    from services.pokerctl.up import LocalCluster

    from .load import stop_tasks

    rows = []
    with tempfile.TemporaryDirectory(prefix="poker-watchers-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING")
        await cluster.start()
        procs: list[subprocess.Popen] = []
        try:
            chan = cluster.channel("table")
            stub = table_pb2_grpc.TableServiceStub(chan)
            bots = await create_and_seat(stub, TablePlan("watched", "holdem", "fixed_limit",
                                                         {"small_bet": 10}), 6,
                                         cluster.sponsor())
            playing = asyncio.create_task(play_table(
                stub, bots, 10**9, random.Random(1), think=ThinkTime.parse("200-400"),
                watch=True))
            table_pid = cpu.running_pid(cluster, "table")
            held = 0
            for step in steps:
                procs += _start_clients(cluster, step - held, clients, step)
                held = step
                await asyncio.sleep(3.0)  # the streams' first views, the allocator settling
                views0 = _count(procs)
                before = cpu.sample({"table": table_pid})
                started = time.perf_counter()
                await asyncio.sleep(window_s)
                after = cpu.sample({"table": table_pid})
                views = _count(procs) - views0
                elapsed = time.perf_counter() - started
                rows.append({"streams": step, "rss_kib": rss_kib(table_pid),
                             "views_per_s": views / elapsed,
                             "table_cpu_s": after["table"] - before["table"],
                             "cpu_us_per_view": (after["table"] - before["table"]) * 1e6 / views
                             if views else float("nan"),
                             "actions": bots.actions})
                print(f"  {step:>6} streams: table service {rows[-1]['rss_kib'] / 1024:,.1f} "
                      f"MiB, {rows[-1]['views_per_s']:,.0f} views/s delivered, "
                      f"{rows[-1]['cpu_us_per_view']:.1f} µs of its CPU per view",
                      flush=True)
            await stop_tasks([playing])
            await chan.close()
        finally:
            for p in procs:
                p.terminate()
            await cluster.stop()
    return rows


def _start_clients(cluster, adding: int, clients: int, step: int) -> list[subprocess.Popen]:
    """``adding`` more spectator streams, spread over ``clients`` processes; each is
    returned once it says it is ready."""
    procs = []
    for k in range(clients):
        share = adding // clients + (1 if k < adding % clients else 0)
        if share <= 0:
            continue
        config = {"identity": str(cluster.data_dir / "identity"),
                  "tls": str(cluster.data_dir / "tls"),
                  "address": cluster.addresses["table"], "table": "watched",
                  "streams": share, "name": f"{step}-{k}"}
        proc = subprocess.Popen(
            [sys.executable, "-m", "bench.bench_watchers", "--client",
             json.dumps(config)], cwd=REPO, stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.stdout is not None
        json.loads(proc.stdout.readline())  # ready
        procs.append(proc)
    return procs


def _count(procs: list[subprocess.Popen]) -> int:
    total = 0
    for p in procs:
        assert p.stdin is not None and p.stdout is not None
        p.stdin.write("count\n")
        p.stdin.flush()
        total += json.loads(p.stdout.readline())["views"]
    return total


def main(seconds: float = 2.0, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_watchers")
    parser.add_argument("--steps", default=",".join(map(str, STEPS)))
    parser.add_argument("--window-s", type=float, default=max(WINDOW_S, seconds))
    parser.add_argument("--clients", type=int, default=CLIENTS)
    parser.add_argument("--client", help=argparse.SUPPRESS)
    args = parser.parse_args(argv if argv is not None else [])
    if args.client:
        asyncio.run(client(json.loads(args.client)))
        return
    steps = tuple(sorted({int(s) for s in args.steps.split(",") if s.strip()}))
    print(f"spectators of one watched table (6 bots thinking 0.2-0.4 s), from {args.clients} "
          f"client processes, {PER_ACCOUNT} streams per account; the table service's memory "
          f"and CPU per view over {args.window_s:g} s windows")
    rows = asyncio.run(measure(steps, args.window_s, args.clients))
    per_stream = [(b["rss_kib"] - a["rss_kib"]) / (b["streams"] - a["streams"])
                  for a, b in zip(rows, rows[1:]) if b["streams"] > a["streams"]]
    if per_stream:
        print(f"memory per open Watch stream: median {statistics.median(per_stream):.1f} KiB "
              f"(steps: {', '.join(f'{k:.1f}' for k in per_stream)})")
    busy = [r["cpu_us_per_view"] for r in rows if r["streams"] >= 500]
    if busy:
        print(f"table service CPU per view delivered: median {statistics.median(busy):.1f} µs")


if __name__ == "__main__":
    main(argv=sys.argv[1:])
