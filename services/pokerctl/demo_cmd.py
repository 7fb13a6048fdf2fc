"""`pokerctl demo`: bots play hands at one table of every game and structure, then the log is
read back and audited (the fold of the events, chips conserved, every deck against its
commitment).

By default the whole system runs: an embedded NATS JetStream and every service as its own
process on 127.0.0.1 (see netdemo.py); ``--serve`` keeps it up after the audit, with the web
pages showing the tables and their hands, until Ctrl-C (`make demo SERVE=1`).
``--in-process`` plays the same tables through the pure engine alone, which shows the rules
without the network.

Exit 0 if every table played and audited clean ("audit passed", only ever over hands played),
1 otherwise, 2 for bad arguments (--hands at least 1, --seats at least 2).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import time

from shared.audit import TableAudit, audit_table
from shared.audit.sample import Seed, chain, play_decisions, sample_keyring
from shared.poker.options import Stakes, table_options

from .bots_cmd import TABLES
from .failures import FAILED, OK, USAGE


def play_and_audit(name: str, game: str, structure: str, stakes: Stakes, hands: int,
                   seats: int, seed: Seed) -> TableAudit:
    """Bots play the table through the engine's own decisions (seating, blinds, clocks as
    the services make them, one decision per commit); the commits are then audited."""
    options = table_options(game, structure, **stakes)
    decisions = play_decisions(name, options, hands, min(seats, options.max_seats), seed,
                               churn=0.0)
    return audit_table(name, chain(name, decisions, options=options), sample_keyring())


def run(args: argparse.Namespace) -> int:
    if args.hands < 1 or args.seats < 2:
        print("pokerctl demo: --hands must be at least 1, --seats at least 2", file=sys.stderr)
        return USAGE
    if not args.in_process:
        from .netdemo import run_networked_demo
        return asyncio.run(run_networked_demo(args.hands, args.seats, args.seed,
                                              serve=args.serve))
    return run_in_process(args)


def run_in_process(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    audits = []
    print(f"{'table':<26}{'hands':>7}{'events':>9}{'rake':>7}  chips      audit")
    for i, (game, structure, stakes) in enumerate(TABLES):
        name = f"{game}-{structure}".replace("_", "")
        a = play_and_audit(name, game, structure, stakes, args.hands, args.seats,
                           f"{args.seed}/{i}" if args.seed is not None else random.random())
        audits.append(a)
        chips = "conserved" if a.conserved else "NOT conserved"
        verdict = "pass" if a.ok else f"FAIL: {a.failure}"
        print(f"{name:<26}{a.hands:>7}{a.events:>9}{a.rake:>7}  {chips:<11}{verdict}")
    elapsed = time.perf_counter() - started
    hands = sum(a.hands for a in audits)
    events = sum(a.events for a in audits)
    ok = all(a.ok and a.conserved for a in audits) and hands > 0
    verdict = "passed" if ok else "FAILED" if hands else "not conclusive: no hand was played"
    print(f"\n{hands} hands, {events} events in {elapsed:.2f} s "
          f"({hands / elapsed:.0f} hands/s); audit {verdict}")
    return OK if ok else FAILED


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("demo", help=help)
    p.add_argument("--hands", type=int, default=20, help="hands per table (default 20)")
    p.add_argument("--seats", type=int, default=6, help="bots per table (default 6)")
    p.add_argument("--seed", type=int, default=None, help="seed for the bots' choices")
    p.add_argument("--in-process", action="store_true",
                   help="play through the pure engine only (no NATS, no services)")
    p.add_argument("--serve", action="store_true",
                   help="keep everything up after the audit, the web pages showing the "
                        "tables and their hands, until Ctrl-C")
    p.set_defaults(run=run)
