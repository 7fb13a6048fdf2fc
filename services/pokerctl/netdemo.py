"""The networked demo behind `make demo` / `pokerctl demo`: the real thing on one machine.

1. `pokerctl up` in a temporary data directory (nats-server from the wheel with JetStream,
   every service as its own process, on free ports), waiting until all are healthy;
2. bots at one table of each game and structure play through the TableService API, every
   table at once, over every instance of the table service (round robin, as a client given
   `up`'s POKER_TABLE_ADDR list does);
3. every table's log is read back from JetStream and audited: the hash chain and the fold,
   chips conserved (seats' stacks + rake = buy-ins), every deck revealed against its
   commitment and the cards dealt from it; then the money: every buy-in, cash-out and rake
   matched with the wallet's ledger, deposits - withdrawals = wallets + house + tables;
4. a summary (hands, events, chips, time), the web pages' addresses of a table and of a hand
   (served while the demo runs; with ``serve``, until Ctrl-C, so that they can be opened
   at leisure), and a clean stop (table service, other services, then NATS); the temporary
   directory is removed.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import tempfile
import time
from pathlib import Path

from poker.table.v1 import table_pb2_grpc

from shared.infra.natsauth import COMPLIANCE, READER

from .bots_cmd import audit_money_of, audit_tables, plan_tables, play_tables, print_report
from .failures import FAILED, OK
from .table_addresses import table_channel
from .up import LocalCluster
from .up_processes import ClusterError


async def run_networked_demo(hands: int, seats: int, seed, out=None, serve: bool = False) -> int:
    """Exit code 0 if every table played and its log audited clean, 1 otherwise. ``serve``:
    keep everything up after the audit, the web pages showing the tables and their hands,
    until Ctrl-C (SIGINT) or SIGTERM."""
    out = sys.stdout if out is None else out
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="poker-demo-") as tmp:
        cluster = LocalCluster(Path(tmp), base_port=None, log_level="WARNING", web=True)
        try:
            try:
                await cluster.start()
            except ClusterError as exc:
                print(f"pokerctl demo: {exc}", file=sys.stderr)
                _tail_logs(cluster)
                return FAILED
            up_s = time.perf_counter() - started
            print(f"nats-server and {len(cluster.instances)} services up in {up_s:.1f} s:",
                  file=out)
            for name, addr in cluster.addresses.items():
                print(f"  {name:<9} {cluster.web_url if name == 'web' else addr}", file=out)
            plans = plan_tables()
            web = cluster.web_url
            print(f"\nwatch them in a browser while they play (served until the demo stops): "
                  f"{web}table/{plans[0].table_id}, a hand step by step: "
                  f"{web}table/{plans[0].table_id}/hands/1, the lobby: {web}", file=out)
            print(f"\nbots play {hands} hands at {len(plans)} tables ({seats} seats each)...\n",
                  file=out, flush=True)
            play_started = time.perf_counter()
            async with table_channel(cluster.client_address("table"), cluster.tls()) as channel:
                stub = table_pb2_grpc.TableServiceStub(channel)
                played = await play_tables(stub, plans, hands, seats, cluster.sponsor(), seed)
            # opening the sealed cards is recorded in the access log: as compliance
            audits = await audit_tables(cluster.nats_url_for(COMPLIANCE),
                                        [p.table_id for p in plans], cluster.keyring(),
                                        ca=cluster.nats_ca)
            ok = print_report(played, audits, time.perf_counter() - play_started, out)
            money = await audit_money_of(cluster.nats_url_for(READER), audits,
                                         ca=cluster.nats_ca)
            print(money.summary(), file=out)
            for problem in money.problems:
                print(f"  {problem}", file=out)
            ok &= money.ok
            print("the log seals every card nobody saw (per-hand AES-256-GCM keys, wrapped to "
                  "the compliance key); the audit opened them with the compliance private key",
                  file=out)
            dead = cluster.dead()
            if dead:
                print(f"processes died during the demo: {dead}", file=out)
                _tail_logs(cluster)
                ok = False
            if serve:
                print(f"\nthe pages stay up until Ctrl-C: the lobby {web}, a table "
                      f"{web}table/{plans[0].table_id}, a hand {web}table/{plans[0].table_id}/"
                      f"hands/1", file=out, flush=True)
                await _until_stopped()
        finally:
            await cluster.stop()
        print(f"stopped cleanly; {time.perf_counter() - started:.1f} s in all", file=out,
              flush=True)
        return OK if ok else FAILED


async def _until_stopped() -> None:
    """Until Ctrl-C (SIGINT) or SIGTERM."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def _tail_logs(cluster: LocalCluster, lines: int = 5) -> None:
    for path in sorted(cluster.log_dir.glob("*.log")):
        tail = path.read_text(errors="replace").splitlines()[-lines:]
        if tail:
            print(f"--- {path.name}", *tail, sep="\n", file=sys.stderr)
