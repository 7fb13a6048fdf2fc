"""The web's live table stream fanned out (services/web/fanout.py): 1,000 spectators of one
table, each an SSE stream of ``/api/tables/ID/events`` from an address of its own, while bots
play at the table. Reports the time from each action (the moment the bot's Act returned) to
its view's arrival at each spectator (median, p99, max), the Watch streams the table service
held meanwhile (one: the web's, for all of them), and the web process's CPU per view.

Everything runs on this machine: a `pokerctl up` cluster with the web (LocalCluster, each
service its own process), the bots in this process, the spectators in two client processes
of their own (so that neither their reading nor the bots take the web's CPU; they all share
this machine's cores, which the latency includes). The bots think ``THINK_S`` before each
action (a table makes a few views a second, as people play; unpaced bots would make hundreds,
a load of another kind). Times are compared across processes with the wall clock.

    .venv/bin/python -m bench bench_web
    POKER_BENCH_SECONDS=1 .venv/bin/python -m bench bench_web   # a shorter window

Nothing is asserted.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import re
import tempfile
import time
import urllib.request
from pathlib import Path

from . import cpu
from .load import fmt_ms, histogram, percentiles_us, stop_tasks, window_seconds

#: spectators, the client processes they are spread over, and how long the window is for
#: each second of ``seconds`` (20 s at the default 2)
SPECTATORS = 1000
CLIENTS = 2
WINDOW_PER_SECOND = 10.0
#: bots at the table, and each one's thinking time before an action
SEATS = 6
THINK_S = 0.25
#: after the window, how long the views still on their way are waited for
DRAIN_S = 3.0
TABLE = "web-bench"
VERSION = re.compile(rb'"version":"?(\d+)')
MADE = re.compile(rb'"server_unix_ms":"?(\d+)')


def _source(i: int) -> str:
    """Spectator ``i``'s own loopback address (the web counts an anonymous visitor by it)."""
    return f"127.0.{1 + i // 250}.{1 + i % 250}"


async def _spectate(host: str, port: int, source: str, path: str,
                    seen: dict[int, tuple[float, float]], opened: asyncio.Event) -> None:
    """One SSE stream: for each version, the wall-clock time it first arrived and the time
    the table service made its view (``server_unix_ms``), into ``seen``."""
    reader, writer = await asyncio.open_connection(host, port, local_addr=(source, 0))
    writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream"
                 f"\r\nConnection: close\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        raise RuntimeError(head.split(b"\r\n", 1)[0].decode())
    opened.set()
    try:
        while size := int((await reader.readline()).strip() or b"0", 16):
            chunk = await reader.readexactly(size + 2)
            now = time.time()
            version, made = VERSION.search(chunk), MADE.search(chunk)  # an event a chunk
            if version is not None and made is not None:
                seen.setdefault(int(version.group(1)), (now, int(made.group(1)) / 1e3))
    finally:
        writer.close()


def _client(host: str, port: int, first: int, count: int, conn) -> None:
    """A client process: ``count`` spectators (numbers ``first``...); says "open" once every
    stream has answered, then, told "stop", sends back each stream's arrivals."""
    async def run() -> None:
        loop = asyncio.get_running_loop()
        arrivals: list[dict[int, tuple[float, float]]] = [{} for _ in range(count)]
        events = [asyncio.Event() for _ in range(count)]
        tasks = [asyncio.create_task(_spectate(host, port, _source(first + i),
                                               f"/api/tables/{TABLE}/events", arrivals[i],
                                               events[i])) for i in range(count)]
        failed = []
        for i, event in enumerate(events):
            done, _ = await asyncio.wait({tasks[i], asyncio.ensure_future(event.wait())},
                                         return_when=asyncio.FIRST_COMPLETED)
            if tasks[i] in done and tasks[i].exception() is not None:
                failed.append(repr(tasks[i].exception())[:200])
        conn.send(("open", failed))
        await loop.run_in_executor(None, conn.recv)  # "stop"
        ended = sum(1 for t in tasks if t.done())  # dropped by the web (or failed)
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        conn.send((arrivals, ended))
    asyncio.run(run())


def _time_acts(stub) -> dict[int, float]:
    """Make the table service's ``stub`` act as the bots use it: each Act after ``THINK_S``
    of thought. Returns where the wall-clock time each reply came back is kept, by the
    view's version."""
    acted: dict[int, float] = {}
    act = stub.Act

    async def timed(request, **kwargs):
        await asyncio.sleep(THINK_S)
        reply = await act(request, **kwargs)
        acted[reply.view.version] = time.time()
        return reply

    stub.Act = timed
    return acted


def _watchers(metrics_port: int) -> float:
    """The table service's open Watch streams (its ``poker_watchers`` gauge)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=2) as r:
        for line in r.read().decode().splitlines():
            if line.startswith("poker_watchers "):
                return float(line.split()[1])
    return float("nan")


async def measure(window_s: float) -> dict:
    import random

    from poker.table.v1 import table_pb2_grpc

    from services.pokerctl.botclient import play
    from services.pokerctl.bots_cmd import TablePlan, create_and_seat
    from services.pokerctl.up import LocalCluster

    _enough_files()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="poker-bench-web-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING", web=True)
        await cluster.start()
        channel = cluster.channel("table")
        procs: list = []
        pipes: list = []
        bots_task = None
        try:
            stub = table_pb2_grpc.TableServiceStub(channel)
            acted_at = _time_acts(stub)
            bots = await create_and_seat(stub, TablePlan(TABLE, "holdem", "fixed_limit",
                                                         {"small_bet": 10}),
                                         SEATS, cluster.sponsor())
            opened_s = time.perf_counter()
            procs, pipes = _start_spectators(cluster.ports["web"])
            failed = [f for _, lost in await _replies(pipes) for f in lost]
            opened_s = time.perf_counter() - opened_s
            pids = _pids(cluster, procs)
            bots_task = asyncio.create_task(play(stub, bots, 10**6, random.Random(7)))
            await asyncio.sleep(1.0)  # the first hand under way
            acted_at.clear()
            watchers: list[float] = []
            cpu0, t0 = cpu.sample(pids), time.time()
            while time.time() - t0 < window_s:
                watchers.append(await asyncio.to_thread(_watchers,
                                                        cluster.metrics_ports["table"]))
                await asyncio.sleep(0.5)
            cpu1, t1 = cpu.sample(pids), time.time()
            acted = dict(acted_at)
            await stop_tasks([bots_task])
            await asyncio.sleep(DRAIN_S)
            stopped = await _replies(pipes, "stop")
            arrivals: list[dict[int, tuple[float, float]]] = [
                a for theirs, _ in stopped for a in theirs]
            ended = sum(gone for _, gone in stopped)
        finally:
            if bots_task is not None:
                await stop_tasks([bots_task])
            for proc in procs:
                proc.join(10)
                if proc.is_alive():
                    proc.kill()
            await channel.close()
            await cluster.stop()
    used = {name: cpu1[name] - cpu0[name] for name in cpu0 if name in cpu1}
    return {"spectators": SPECTATORS, "failed": failed, "open_s": opened_s,
            **_delays(arrivals, acted, t0, t1),
            "watchers": watchers, "cpu_s": used, "ended": ended,
            "wall_s": time.perf_counter() - started}


async def _replies(pipes: list, word: str | None = None) -> list:
    """Each client's next message (after ``word`` is sent to it, if given), in order."""
    out = []
    for pipe in pipes:
        if word is not None:
            pipe.send(word)
        out.append(await asyncio.to_thread(pipe.recv))
    return out


def _pids(cluster, procs: list) -> dict[str, int]:
    """The processes measured: the web's, the table service's and the clients'."""
    pids = {"web": cpu.running_pid(cluster, "web"), "table": cpu.running_pid(cluster, "table")}
    for k, proc in enumerate(procs):
        assert proc.pid is not None  # (started)
        pids[f"client-{k}"] = proc.pid
    return pids


def _start_spectators(port: int) -> tuple[list, list]:
    """The spectators' client processes (SPECTATORS over CLIENTS of them), each opening its
    share of event streams; their processes and the pipes they answer on."""
    spawn = multiprocessing.get_context("spawn")
    share = SPECTATORS // CLIENTS
    procs, pipes = [], []
    for k in range(CLIENTS):
        mine, theirs = spawn.Pipe()
        count = share if k < CLIENTS - 1 else SPECTATORS - share * (CLIENTS - 1)
        proc = spawn.Process(target=_client, args=("127.0.0.1", port, k * share,
                                                   count, theirs), daemon=True)
        proc.start()
        procs.append(proc)
        pipes.append(mine)
    return procs, pipes


def _delays(arrivals: list[dict[int, tuple[float, float]]], acted: dict[int, float],
            t0: float, t1: float) -> dict:
    """Every view made in the window: from when the table service made it, and from when the
    bot's Act returned (for the views of actions), to its arrival at each spectator."""
    made = [at - m for a in arrivals for at, m in a.values() if t0 <= m <= t1]
    views = {v for a in arrivals for v, (_, m) in a.items() if t0 <= m <= t1}
    in_window = {v: done for v, done in acted.items() if t0 <= done <= t1}
    after_act = [a[v][0] - done for v, done in in_window.items() for a in arrivals if v in a]
    return {"window_s": t1 - t0, "actions": len(in_window), "views": len(views),
            "made": percentiles_us(histogram(made)),
            "after_act": percentiles_us(histogram(after_act)),
            "before_reply": sum(1 for d in after_act if d < 0), "delivered": len(after_act),
            "missed": sum(1 for v in in_window for a in arrivals if v not in a)}


def _enough_files() -> None:
    """A soft limit of open files that holds the streams (the web and the client processes
    inherit it): each is a socket at both ends."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * SPECTATORS + 1024
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted if hard == resource.RLIM_INFINITY
                                                    else min(wanted, hard), hard))


def main(seconds: float = 2.0) -> None:
    window = WINDOW_PER_SECOND * window_seconds(seconds)
    r = asyncio.run(measure(window))
    made, act = r["made"], r["after_act"]
    web_s = r["cpu_s"].get("web", float("nan"))
    per_view_ms = 1e3 * web_s / r["views"] if r["views"] else float("nan")
    per_event_us = 1e6 * web_s / (r["views"] * r["spectators"]) if r["views"] else float("nan")
    seen = sorted(set(r["watchers"]))
    print(f"{r['spectators']} SSE spectators of one table ({SEATS} bots, fixed-limit hold'em, "
          f"{THINK_S:g} s of thought per action),\nfrom {CLIENTS} client processes, through "
          f"one web process; a window of {r['window_s']:.0f} s "
          f"(streams opened in {r['open_s']:.1f} s).")
    print(f"  actions {r['actions']}, views at the spectators {r['views']} "
          f"({r['views'] / r['window_s']:.1f}/s, {r['views'] * r['spectators'] / r['window_s']:,.0f}"
          f" events/s written)")
    for what, d in (("view made (server_unix_ms)", made), ("the bot's Act returned", act)):
        print(f"  {what} -> view at a spectator, ms: p50 {fmt_ms(d['p50'], 0)}, "
              f"p90 {fmt_ms(d['p90'], 0)}, p99 {fmt_ms(d['p99'], 0)}, "
              f"max {fmt_ms(d['max'], 0)}")
    print(f"  ({r['delivered']:,} arrivals of actions' views, {r['before_reply']:,} of them "
          f"before the bot had its reply (counted as 1 µs); {r['missed']:,} did not arrive "
          f"within {DRAIN_S:g} s of the window's end)")
    print(f"  Watch streams the table service held (sampled every 0.5 s): {seen}")
    print(f"  web process CPU: {web_s:.2f} s in the window, {per_view_ms:.2f} ms per "
          f"view (all spectators), {per_event_us:.1f} µs per view per spectator")
    print("  CPU s in the window by process: " + ", ".join(
        f"{name} {seconds:.2f}" for name, seconds in r["cpu_s"].items() if name != "client"))
    if r["ended"]:
        print(f"  {r['ended']} spectators' streams ended in the window (dropped as too slow)")
    if r["failed"]:
        print(f"warning: {len(r['failed'])} spectators were not served: {r['failed'][:3]}")
    print(f"({r['wall_s']:.0f} s; `.venv/bin/python -m bench bench_web`, POKER_BENCH_SECONDS "
          f"to shorten)")
