"""The log audit's speed (shared/audit): events re-decided and checked per second.

A log of mixed games (hold'em NL/FL, Omaha PL, Omaha hi-lo FL, stud, stud hi-lo; time-outs,
leavers, top-ups, newcomers) is played in process and chained into commits once; then it is
audited repeatedly for about ``seconds`` and the median rate reported, with the extrapolation
to 100,000 hands. Goal: at least 50,000 events/s.

    .venv/bin/python -m bench bench_audit --seconds 5
    POKER_BENCH_AUDIT_HANDS=20000 .venv/bin/python -m bench bench_audit
"""

from __future__ import annotations

import os
import statistics
import time

from shared.audit import audit_table
from shared.audit.sample import MIXED, chain, play_decisions
from shared.poker.options import table_options

GOAL = 50_000


def build(hands: int) -> list[tuple[str, list]]:
    """One table per game, ``hands`` hands in all."""
    per = max(1, hands // len(MIXED))
    logs = []
    for i, (game, structure, stakes) in enumerate(MIXED):
        options = table_options(game, structure, **stakes)
        tid = f"bench-{i}"
        logs.append((tid, list(chain(tid, play_decisions(tid, options, per, seed=i),
                                     options=options))))
    return logs


def main(seconds: float = 2.0) -> None:
    hands = int(os.environ.get("POKER_BENCH_AUDIT_HANDS", "3000"))
    t0 = time.perf_counter()
    logs = build(hands)
    built = time.perf_counter() - t0
    commits = sum(len(c) for _, c in logs)
    rates, events, total_hands = [], 0, 0
    deadline = time.perf_counter() + seconds
    while True:
        start = time.perf_counter()
        events = total_hands = 0
        for tid, stored in logs:
            a = audit_table(tid, stored)
            assert a.ok, a.failure
            events += a.events
            total_hands += a.hands
        rates.append(events / (time.perf_counter() - start))
        if time.perf_counter() >= deadline:
            break
    rate = statistics.median(rates)
    per_hand = events / total_hands
    print(f"log: {total_hands} hands, {commits} commits, {events} events "
          f"({per_hand:.1f} events/hand), built in {built:.1f} s")
    print(f"audit: {rate:,.0f} events/s ({rate / per_hand:,.0f} hands/s), median of "
          f"{len(rates)} run(s); goal {GOAL:,} events/s: {'met' if rate >= GOAL else 'NOT met'}")
    print(f"100,000 hands ~ {100_000 * per_hand:,.0f} events: about "
          f"{100_000 * per_hand / rate:.0f} s at this rate (single process)")


if __name__ == "__main__":
    main()
