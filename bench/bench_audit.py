"""The log audit's speed (shared/audit, `pokerctl audit`): events re-decided and checked per
second. Goal: at least 50,000 events/s on a log of 100,000 hands.

1. The auditor alone, in this process: a log of mixed games (hold'em NL/FL, Omaha PL, Omaha
   hi-lo FL, stud, stud hi-lo; time-outs, leavers, top-ups, newcomers), sealed as the dealer
   seals it, is audited repeatedly for about ``seconds``; the median rate is the baseline.
2. The operator's command on a real stream: a log of POKER_BENCH_AUDIT_HANDS hands (default
   100,000) over 60 tables is built (in a process pool), loaded into an embedded JetStream,
   and `pokerctl audit --all` reads and audits it from the stream with 1 worker and with one
   per CPU: events/s as the command reports it, and the ratio to the baseline.

    .venv/bin/python -m bench bench_audit
    POKER_BENCH_AUDIT_HANDS=20000 .venv/bin/python -m bench bench_audit
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from shared.audit import audit_table
from shared.audit.sample import MIXED, SAMPLE_KEY, chain, play_decisions, sample_keyring
from shared.poker.options import table_options

GOAL = 50_000
TABLES = 60
ROOT = Path(__file__).resolve().parents[1]


def build(hands: int, tables: int = len(MIXED)) -> list[tuple[str, list]]:
    """``tables`` tables cycling over the games, ``hands`` hands in all."""
    per = max(1, hands // tables)
    return [_table(i, per) for i in range(tables)]


def _table(i: int, hands: int) -> tuple[str, list]:
    game, structure, stakes = MIXED[i % len(MIXED)]
    options = table_options(game, structure, **stakes)
    tid = f"bench-{i}"
    return tid, list(chain(tid, play_decisions(tid, options, hands, seed=i), options=options))


def in_process(seconds: float) -> tuple[float, float]:
    """(median events/s, events per hand) of the auditor alone on a 3,000-hand log."""
    logs = build(3000)
    rates, events, hands = [], 0, 0
    deadline = time.perf_counter() + seconds
    while True:
        start = time.perf_counter()
        events = hands = 0
        for tid, stored in logs:
            a = audit_table(tid, stored, sample_keyring())
            assert a.ok, a.failure
            events += a.events
            hands += a.hands
        rates.append(events / (time.perf_counter() - start))
        if time.perf_counter() >= deadline:
            break
    return statistics.median(rates), events / hands


async def _load(url: str, logs: list[tuple[str, list]]) -> int:
    """Publish the commits, interleaved across tables as a live stream holds them: one
    commit of every table at a time, acknowledged together (one per subject, so each
    table's order holds; unacknowledged publishes can be dropped under load)."""
    from shared.infra.eventstore import SUBJECT_PREFIX, EventStore
    store = await EventStore.connect(url)
    longest = max(len(c) for _, c in logs)
    sent = 0
    for k in range(longest):
        layer = [(tid, commits[k].data) for tid, commits in logs if k < len(commits)]
        await asyncio.gather(*(store.js.publish(SUBJECT_PREFIX + tid, data)
                               for tid, data in layer))
        sent += len(layer)
    await store.close()
    return sent


def _audit_cli(url: str, key: str, workers: int) -> dict:
    run = subprocess.run(
        [sys.executable, "-m", "services.pokerctl", "audit", "--all", "--json", "--quiet",
         "--nats", url, "--key", key, "--workers", str(workers)],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    if run.returncode != 0:
        raise RuntimeError(f"pokerctl audit failed ({run.returncode}): {run.stderr[-2000:]}")
    return json.loads(run.stdout)


def main(seconds: float = 2.0) -> None:
    base, per_hand = in_process(seconds)
    print(f"auditor alone (this process, 3,000 hands, {per_hand:.1f} events/hand): "
          f"{base:,.0f} events/s")

    from shared.infra.natsserver import NatsServer
    hands = int(os.environ.get("POKER_BENCH_AUDIT_HANDS", "100000"))
    cpus = max(1, min(os.cpu_count() or 1, 8))
    t0 = time.perf_counter()
    per = max(1, hands // TABLES)
    with ProcessPoolExecutor(cpus) as pool:
        logs = list(pool.map(_table, range(TABLES), [per] * TABLES))
    commits = sum(len(c) for _, c in logs)
    built = time.perf_counter() - t0
    with tempfile.TemporaryDirectory(prefix="bench-audit-") as tmp:
        key_file = str(SAMPLE_KEY.write(Path(tmp) / "keys")[0])
        server = NatsServer(Path(tmp) / "js", sync_interval="2m").start()
        try:
            t0 = time.perf_counter()
            asyncio.run(_load(server.url, logs))
            loaded = time.perf_counter() - t0
            del logs
            print(f"stream: {TABLES * per:,} hands, {commits:,} commits over {TABLES} tables; "
                  f"built in {built:.0f} s, loaded in {loaded:.0f} s")
            results = {}
            for workers in sorted({1, cpus}):
                report = _audit_cli(server.url, key_file, workers)
                assert report["ok"], "the bench log must audit clean"
                results[workers] = report
                rate = report["events_per_s"]
                print(f"pokerctl audit --all --workers {workers}: {report['events']:,} events "
                      f"in {report['seconds']:.1f} s = {rate:,.0f} events/s "
                      f"({rate / base:.2f}x the auditor alone); goal {GOAL:,}: "
                      f"{'met' if rate >= GOAL else 'NOT met'}")
        finally:
            server.stop()


if __name__ == "__main__":
    main()
