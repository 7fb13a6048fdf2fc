"""A soak: bots at N tables for M minutes against a real local cluster (nats-server and every
service as its own process, `services/pokerctl/up.py` LocalCluster; the web pages' process
too unless --no-web), every process sampled every S seconds for its resident memory (VmRSS of
/proc/<pid>/status) and its open file descriptors (/proc/<pid>/fd). What it looks for is
growth that does not stop: after a warm-up (the first WARMUP of the run dropped) each
process's samples get a least-squares line, and its slope is reported in KiB/minute and
fds/minute beside the first and last figures.

The bots play through the table service as `pokerctl bots` does (services/pokerctl/bots_cmd.py
plan_tables / play_tables): each of the N lanes plays one table of --hands hands (bots seated,
every hand played, the bots leave), then opens the next table, until M minutes have gone by;
the tables cycle over the games and structures of `pokerctl bots`. So the soak also churns
tables: a process whose memory grows with every table it has ever seen shows here. The work
done is counted from the bots' results (hands, actions) and from the log's message count
(commits appended to the POKER stream(s)), sampled with the rest.

    .venv/bin/python -m bench.bench_soak                      # 8 tables, 8 minutes, every 5 s
    .venv/bin/python -m bench.bench_soak --tables 2 --minutes 1 --every 2
    POKER_SOAK_TABLES=4 POKER_SOAK_MINUTES=20 .venv/bin/python -m bench bench_soak
    make soak

Settings: the flags, else POKER_SOAK_TABLES / POKER_SOAK_MINUTES / POKER_SOAK_EVERY /
POKER_SOAK_HANDS, else the defaults below. ``python -m bench --seconds`` is one measurement
window of the other benchmarks; a soak is one long window, so its length is --minutes, not
that. Not in `make bench` (it would add ten minutes): `make soak` runs it.

The plot goes to bench/out/ (git-ignored). Nothing is asserted: the verdict is a reading of
the slopes (this machine is noisy, and a short soak cannot tell a cache filling from a leak).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import secrets
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from . import cpu
from .load import SEATS, stop_tasks
from .proctrend import (
    FDS_FLAT,
    RSS_FLAT_SHARE,
    WARMUP,
    Sample,
    Trend,
    sample_procs,
    series,
    trend,
    verdict,
)

#: the defaults fit about ten minutes on a 2-CPU machine (cluster start and stop included)
DEFAULT_TABLES = 8
DEFAULT_MINUTES = 8.0
DEFAULT_EVERY = 5.0
#: hands at each table before its bots leave and the lane opens the next table
DEFAULT_HANDS = 50
#: how long past --minutes the tables under way may take to finish before they are cancelled
GRACE_S = 60.0
#: a lane whose tables fail this many times in a row stops (the cluster is not playing)
MAX_FAILURES = 3
#: the second slope of RSS starts this far into the run: a cache filling up slows down
#: there (NATS's heap levels at twice its live heap), a leak keeps its pace
LATE = 0.5
#: the log's streams: POKER unsharded, POKER_S<k> its shards (as bench_services.stream_leaders)
LOG_STREAMS = re.compile(r"POKER(_S\d+)?")


# --- settings ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    tables: int = DEFAULT_TABLES
    minutes: float = DEFAULT_MINUTES
    every: float = DEFAULT_EVERY
    hands: int = DEFAULT_HANDS
    web: bool = True
    #: load the tables as clients do: each bot watches its own seat, and spectators per table
    watch: bool = False
    spectators: int = 0


def settings(env: Mapping[str, str] | None = None, *, tables: int | None = None,
             minutes: float | None = None, every: float | None = None,
             hands: int | None = None, web: bool | None = None, watch: bool = False,
             spectators: int = 0) -> Settings:
    """What is given, else POKER_SOAK_TABLES / _MINUTES / _EVERY / _HANDS, else the defaults;
    ValueError for a count or a length that is not positive."""
    env = os.environ if env is None else env

    def pick(given, var: str, kind, default):
        if given is not None:
            value = kind(given)
        else:
            text = env.get(var, "").strip()
            value = kind(text) if text else default
        if value <= 0:
            raise ValueError(f"{var.removeprefix('POKER_SOAK_').lower()} must be positive, "
                             f"not {value!r}")
        return value

    return Settings(tables=pick(tables, "POKER_SOAK_TABLES", int, DEFAULT_TABLES),
                    minutes=pick(minutes, "POKER_SOAK_MINUTES", float, DEFAULT_MINUTES),
                    every=pick(every, "POKER_SOAK_EVERY", float, DEFAULT_EVERY),
                    hands=pick(hands, "POKER_SOAK_HANDS", int, DEFAULT_HANDS),
                    web=True if web is None else web, watch=watch, spectators=spectators)




# --- the run -------------------------------------------------------------------------------


async def log_commits(nc) -> int | None:
    """Messages (commits) in the log's streams, POKER or its shards POKER_S<k>."""
    try:
        infos = await nc.jsm().streams_info()
    except Exception:  # a timeout, NATS busy: the sample goes without it
        return None
    return sum(i.state.messages for i in infos
               if i.config.name and LOG_STREAMS.fullmatch(i.config.name))


async def sample_loop(cluster, nc, every: float, started: float, stop: asyncio.Event,
                      out: list[Sample]) -> None:
    """A sample every ``every`` seconds (on a fixed schedule from ``started``) until ``stop``
    is set, then one more."""
    k = 0
    while True:
        s = sample_procs(cpu.cluster_pids(cluster), time.monotonic() - started)
        s.commits = await log_commits(nc)
        out.append(s)
        if stop.is_set():
            return
        k += 1
        wait = started + k * every - time.monotonic()
        if wait > 0:
            try:
                await asyncio.wait_for(stop.wait(), wait)
            except TimeoutError:
                pass
        # a stop (or a sampler that fell behind) takes its sample now


@dataclass
class Lane:
    """One of the N tables being played at any time: the tables it played one after another."""
    index: int
    tables: int = 0
    hands: int = 0
    actions: int = 0
    errors: list[str] = field(default_factory=list)


async def play_lane(stub, sponsor, lane: Lane, s: Settings, run_id: str,
                    deadline: float) -> None:
    """Tables one after another (each of ``s.hands`` hands, the bots leaving after it, watched
    as ``s`` says) until ``deadline``; the table is the ``lane.index``-th of `pokerctl bots`'
    plan of ``s.tables``."""
    from services.pokerctl.bots_cmd import plan_tables, play_tables
    failures = 0
    k = 0
    while time.monotonic() < deadline and failures < MAX_FAILURES:
        plan = plan_tables(s.tables, run_id=f"{run_id}r{k}")[lane.index]
        try:
            played = (await play_tables(stub, [plan], s.hands, SEATS, sponsor,
                                        seed=f"soak/{lane.index}/{k}", watch=s.watch,
                                        spectators=s.spectators))[0]
            error = played.error
        except Exception as exc:  # not a gRPC status: report it, go on
            played, error = None, f"{plan.table_id}: {exc!r}"[:200]
        k += 1
        if played is not None:
            lane.tables += 1
            lane.hands += played.bots.hands_seen
            lane.actions += played.bots.actions
        if error:
            lane.errors.append(f"{plan.table_id}: {error}"[:200] if played else error)
            failures += 1
            await asyncio.sleep(1.0)  # no hot loop against a cluster that refuses
        else:
            failures = 0


async def soak(s: Settings) -> dict:
    """A fresh LocalCluster (free ports, a temporary data directory), the bots at
    ``s.tables`` tables for ``s.minutes``, every process sampled every ``s.every`` seconds."""
    from poker.table.v1 import table_pb2_grpc

    from services.pokerctl.up import LocalCluster
    from shared.infra import natsconn
    with tempfile.TemporaryDirectory(prefix="poker-bench-soak-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING", web=s.web)
        t_start = time.perf_counter()
        await cluster.start()
        start_s = time.perf_counter() - t_start
        nc = await natsconn.connect(cluster.nats_url, name="bench-soak", ca=cluster.nats_ca)
        channel = cluster.channel("table")
        samples: list[Sample] = []
        lanes = [Lane(i) for i in range(s.tables)]
        stop = asyncio.Event()
        sampler: asyncio.Task | None = None
        tasks: list[asyncio.Task] = []
        try:
            stub = table_pb2_grpc.TableServiceStub(channel)
            sponsor = cluster.sponsor()
            started = time.monotonic()
            deadline = started + s.minutes * 60
            sampler = asyncio.create_task(sample_loop(cluster, nc, s.every, started, stop,
                                                      samples))
            run_id = secrets.token_hex(3)
            tasks = [asyncio.create_task(play_lane(stub, sponsor, lane, s, run_id,
                                                   deadline)) for lane in lanes]
            _, late = await asyncio.wait(tasks, timeout=s.minutes * 60 + GRACE_S)
            stuck = await stop_tasks(list(late))
            played_s = time.monotonic() - started
            stop.set()
            await sampler
            dead = cluster.dead()
        finally:
            stop.set()
            await stop_tasks([t for t in (*tasks, sampler) if t is not None])  # on an error
            await channel.close()
            await nc.close()
            await cluster.stop()
    return {"settings": s, "samples": samples, "lanes": lanes, "played_s": played_s,
            "start_s": start_s, "cancelled": len(late), "stuck": len(stuck), "dead": dead,
            "wall_s": time.perf_counter() - t_start}


def run(s: Settings | None = None) -> dict:
    return asyncio.run(soak(s or settings()))


# --- the report ----------------------------------------------------------------------------


def process_order(names: Iterable[str]) -> list[str]:
    """The services in the order the other benchmarks print them, then the rest, NATS last."""
    names = set(names)

    def key(n: str):
        base = n.split("-")[0]
        return (cpu.is_nats(n), cpu.SERVICE_ORDER.index(base) if base in cpu.SERVICE_ORDER
                else len(cpu.SERVICE_ORDER), n)

    return sorted(names, key=key)


def _slope(t: Trend, fmt: str, width: int) -> str:
    return f"{'-':>{width}}" if t.per_min is None else f"{t.per_min:>+{width}{fmt}}"


def process_rows(samples: Sequence[Sample], warmup: float = WARMUP) -> list[dict]:
    """Per process: its first and last RSS and fds, their trends and the verdict."""
    rows = []
    for name in process_order({n for s in samples for n in s.rss_kib}):
        rss, fds = series(samples, name, "rss_kib"), series(samples, name, "fds")
        rt, ft = trend(rss, warmup), trend(fds, warmup)
        pids = sorted({s.pids[name] for s in samples if name in s.pids})
        rows.append({"name": name, "pids": pids, "rss": rss, "fds": fds, "rss_trend": rt,
                     "rss_late": trend(rss, max(warmup, LATE)), "fds_trend": ft,
                     "verdict": verdict(rt, ft)})
    return rows


def process_table(rows: Sequence[dict]) -> list[str]:
    lines = [f"{'process':<10}{'pid':>8}{'RSS MiB':>9}{'':>8}{'KiB/min':>9}{'KiB/min':>9}"
             f"{'fds':>6}{'':>6}{'fds/min':>9}  verdict",
             f"{'':<10}{'':>8}{'first':>9}{'last':>8}{'':>9}{'2nd half':>9}{'first':>6}"
             f"{'last':>6}"]
    for r in rows:
        pid = str(r["pids"][-1]) + ("*" if len(r["pids"]) > 1 else "") if r["pids"] else "-"
        lines.append(
            f"{r['name']:<10}{pid:>8}{r['rss'][0][1] / 1024:>9.1f}{r['rss'][-1][1] / 1024:>8.1f}"
            f"{_slope(r['rss_trend'], ',.0f', 9)}{_slope(r['rss_late'], ',.0f', 9)}"
            f"{r['fds'][0][1]:>6.0f}{r['fds'][-1][1]:>6.0f}"
            f"{_slope(r['fds_trend'], '.2f', 9)}  {r['verdict']}")
    return lines


def work_lines(out: dict) -> list[str]:
    """How much the soak played: from the bots' results and from the log's message count."""
    s, lanes, played_s = out["settings"], out["lanes"], out["played_s"]
    tables = sum(lane.tables for lane in lanes)
    hands = sum(lane.hands for lane in lanes)
    actions = sum(lane.actions for lane in lanes)
    minutes = played_s / 60 if played_s else float("nan")
    lines = [f"played {played_s / 60:.1f} min at {s.tables} tables at a time: {tables} tables of "
             f"{s.hands} hands finished, {hands:,} hands, {actions:,} actions "
             f"({actions / played_s if played_s else 0:,.1f} actions/s, "
             f"{hands / minutes if minutes else 0:,.0f} hands/min)"]
    counts = [x.commits for x in out["samples"] if x.commits is not None]
    if len(counts) >= 2:
        lines.append(f"the log: {counts[-1] - counts[0]:,} commits appended during the soak "
                     f"({counts[-1]:,} in all)"
                     + ("; the tables cancelled at the end count here, not above"
                        if out["cancelled"] else ""))
    errors = [e for lane in lanes for e in lane.errors]
    if errors:
        lines.append(f"warning: {len(errors)} table(s) ended with an error: "
                     + "; ".join(sorted(set(errors))[:5]))
    if out["cancelled"]:
        lines.append(f"{out['cancelled']} lane(s) still playing {GRACE_S:.0f} s after the end "
                     f"were cancelled ({out['stuck']} did not stop)")
    if out["dead"]:
        lines.append("warning: processes that exited during the soak: " +
                     ", ".join(f"{n} (code {c})" for n, c in sorted(out["dead"].items())))
    return lines


def summary_line(rows: Sequence[dict]) -> str:
    """The verdict over every process (a reading, nothing is asserted)."""
    moved = [f"{r['name']} ({r['verdict']})" for r in rows
             if r["verdict"] != "flat" and not r["verdict"].startswith("no slope")]
    none = [r["name"] for r in rows if r["verdict"].startswith("no slope")]
    text = (f"verdict: flat at {len(rows) - len(moved) - len(none)} of {len(rows)} processes "
            f"(RSS within {RSS_FLAT_SHARE:.0%} of its mean and fds within {FDS_FLAT:.0f} over "
            f"the span after the warm-up)")
    if moved:
        text += "; moved: " + ", ".join(moved)
    if none:
        text += "; no slope: " + ", ".join(none)
    return text + " - a reading, not a test: a short or noisy soak cannot tell a leak " \
        "from a cache filling"


def plot_soak(rows: Sequence[dict], samples: Sequence[Sample], warmup: float = WARMUP,
              out_dir: Path | None = None) -> Path:
    """RSS and open fds of every process over the soak (the warm-up shaded), and the log's
    commits, to bench/out/soak.png."""
    from .plots import OUT_DIR, pyplot, save_figure
    plt = pyplot()
    out_dir = OUT_DIR if out_dir is None else out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, (ax_rss, ax_fds, ax_log) = plt.subplots(3, 1, figsize=(12, 9), sharex=True,
                                                 gridspec_kw={"height_ratios": [3, 2, 1.3]})
    t_end = max((x.t for x in samples), default=0.0)
    cut_min = warmup * t_end / 60 if samples else 0.0
    for r in rows:
        rt, ft = r["rss_trend"], r["fds_trend"]
        label = r["name"] if rt.per_min is None or ft.per_min is None else \
            f"{r['name']}: {rt.per_min:+,.0f} KiB/min, {ft.per_min:+.2f} fds/min"
        ax_rss.plot([x / 60 for x, _ in r["rss"]], [v / 1024 for _, v in r["rss"]], ".-",
                    markersize=3, label=label)
        ax_fds.plot([x / 60 for x, _ in r["fds"]], [v for _, v in r["fds"]], ".-",
                    markersize=3, label=r["name"])
    commits = [(x.t / 60, x.commits) for x in samples if x.commits is not None]
    ax_log.plot([t for t, _ in commits], [c for _, c in commits], "k.-", markersize=3)
    for ax in (ax_rss, ax_fds, ax_log):
        ax.axvspan(0, cut_min, color="0.9", zorder=0)
        ax.grid(True, alpha=0.3)
    ax_rss.set(ylabel="RSS (MiB)", title=f"Soak: every process of the cluster (warm-up "
               f"{warmup:.0%} shaded, left out of the slopes)")
    ax_rss.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1),
                  title="slopes after the warm-up", title_fontsize="small")
    ax_fds.set(ylabel="open fds", title="open file descriptors (colours as above)")
    ax_log.set(xlabel="minutes", ylabel="log commits")
    return save_figure(fig, out_dir / "soak.png")


def main(seconds: float | None = None, *, tables: int | None = None,
         minutes: float | None = None, every: float | None = None, hands: int | None = None,
         web: bool | None = None, watch: bool = False, spectators: int = 0) -> None:
    """``seconds``: what `python -m bench --seconds` passes every benchmark (one measurement
    window); a soak is one window of ``minutes``, so it is not used for its length."""
    s = settings(tables=tables, minutes=minutes, every=every, hands=hands, web=web,
                 watch=watch, spectators=spectators)
    print(f"soak: bots at {s.tables} tables ({SEATS} seats; {s.hands} hands a table, then the "
          f"next table) for {s.minutes:g} min against a LocalCluster (nats-server and every "
          f"service{', the web pages' if s.web else ''} as its own process); "
          f"{'each bot watching its seat, ' if s.watch else ''}"
          f"{f'{s.spectators} spectators a table, ' if s.spectators else ''}every process "
          f"sampled every {s.every:g} s", flush=True)
    out = run(s)
    rows = process_rows(out["samples"])
    print(f"(cluster up in {out['start_s']:.1f} s; {len(out['samples'])} samples)")
    print("\n".join(work_lines(out)))
    print(f"\nRSS (VmRSS of /proc/<pid>/status) and open fds (/proc/<pid>/fd) by process; slopes: "
          f"least squares over the samples after the first {WARMUP:.0%} of the run, and over "
          f"its second half")
    print("\n".join(process_table(rows)))
    print(summary_line(rows))
    try:
        print(f"plot: {plot_soak(rows, out['samples'])}")
    except ImportError as exc:  # matplotlib is in the bench extra
        print(f"plot not written: {exc}")
    print(f"({out['wall_s']:.0f} s; `.venv/bin/python -m bench.bench_soak --tables N --minutes M "
          f"--every S`, or POKER_SOAK_TABLES / _MINUTES / _EVERY / _HANDS)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m bench.bench_soak", description=(
        "Bots at N tables for M minutes against a local cluster; every process's RSS and open "
        "fds sampled every S seconds, with their slopes after a warm-up."))
    p.add_argument("--tables", type=int, default=None,
                   help=f"tables played at a time (default POKER_SOAK_TABLES or "
                        f"{DEFAULT_TABLES})")
    p.add_argument("--minutes", type=float, default=None,
                   help=f"how long the bots play (default POKER_SOAK_MINUTES or "
                        f"{DEFAULT_MINUTES:g})")
    p.add_argument("--every", type=float, default=None,
                   help=f"seconds between samples (default POKER_SOAK_EVERY or "
                        f"{DEFAULT_EVERY:g})")
    p.add_argument("--hands", type=int, default=None,
                   help=f"hands at each table before the next one is opened (default "
                        f"POKER_SOAK_HANDS or {DEFAULT_HANDS})")
    p.add_argument("--web", action=argparse.BooleanOptionalAction, default=None,
                   help="also run (and sample) the web pages' process (default: yes)")
    p.add_argument("--watch", action="store_true",
                   help="each bot watches its own seat, as a client app does")
    p.add_argument("--spectators", type=int, default=0, help="spectators watching each table")
    return p.parse_args(argv)


if __name__ == "__main__":
    args = parse_args()
    main(tables=args.tables, minutes=args.minutes, every=args.every, hands=args.hands,
         web=args.web, watch=args.watch, spectators=args.spectators)
