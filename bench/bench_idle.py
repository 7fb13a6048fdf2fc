"""What tables cost while nobody plays: N tables, each with one player seated (no hand can
start), on a fresh `pokerctl up` cluster; the CPU every process spends over a window, as a
share of one core. A table whose clock is not running should cost nothing between its events
(the clock keeper wakes for deadlines, services/table/keeper.py).

    .venv/bin/python -m bench bench_idle
    .venv/bin/python -m bench.bench_idle --tables 200 --window-s 20

Nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

from . import cpu

TABLES = 200
WINDOW_S = 20.0


async def measure(tables: int, window_s: float) -> dict[str, float]:
    """CPU (share of one core) of every process of a cluster holding ``tables`` idle tables,
    over ``window_s`` after they were made."""
    from poker.table.v1 import table_pb2, table_pb2_grpc

    from services.pokerctl.botclient import seat_bots
    from services.pokerctl.bots_cmd import TablePlan
    from services.pokerctl.up import LocalCluster

    with tempfile.TemporaryDirectory(prefix="poker-idle-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING")
        await cluster.start()
        try:
            chan = cluster.channel("table")
            stub = table_pb2_grpc.TableServiceStub(chan)
            sponsor = cluster.sponsor()
            gate = asyncio.Semaphore(16)

            async def one(i: int) -> None:
                async with gate:
                    plan = TablePlan(f"idle-{i}", "holdem", "fixed_limit", {"small_bet": 10})
                    await stub.CreateTable(table_pb2.CreateTableRequest(
                        table_id=plan.table_id, settings=plan.settings(),
                        command_id=f"create-{i}"), metadata=sponsor.operator())
                    await seat_bots(stub, plan.table_id, 1, plan.buy_in(), sponsor)

            await asyncio.gather(*(one(i) for i in range(tables)))
            await asyncio.sleep(5.0)  # the keeper has taken and looked at every table
            pids = cpu.cluster_pids(cluster)
            before, started = cpu.sample(pids), time.perf_counter()
            await asyncio.sleep(window_s)
            after, elapsed = cpu.sample(pids), time.perf_counter() - started
            await chan.close()
        finally:
            await cluster.stop()
    return {name: (after[name] - before[name]) / elapsed for name in pids if name in after}


def main(seconds: float = 2.0, argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_idle")
    parser.add_argument("--tables", type=int, default=TABLES)
    parser.add_argument("--window-s", type=float, default=max(WINDOW_S, seconds))
    args = parser.parse_args(argv if argv is not None else [])
    shares = asyncio.run(measure(args.tables, args.window_s))
    total = sum(shares.values())
    print(f"{args.tables} idle tables (one player each), {args.window_s:g} s: "
          + ", ".join(f"{name} {100 * share:.1f}%" for name, share in sorted(shares.items()))
          + f"; all {100 * total:.1f}% of one core ({50 * total:.1f}% of this 2-core machine)")


if __name__ == "__main__":
    main(argv=sys.argv[1:])
