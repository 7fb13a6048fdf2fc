"""`pokerctl demo`: bots play hands at one table of every game and structure, then the log is
read back and audited (the fold of the events, chips conserved, every deck against its
commitment).

By default the whole system runs: an embedded NATS JetStream and every service as its own
process on 127.0.0.1 (see netdemo.py). ``--in-process`` plays the same tables through the
pure engine alone, which shows the rules without the network.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from dataclasses import dataclass

from shared.poker.cards import DECK
from shared.poker.decide import deck_order
from shared.poker.deck import commitment
from shared.poker.driver import Dealer, new_table, random_policy, run_hand
from shared.poker.events import CardsDealt, DeckCommitted, DeckRevealed, RakeTaken
from shared.poker.fold import fold
from shared.poker.options import TableOptions, table_options

from .bots_cmd import TABLES


@dataclass
class TableReport:
    name: str
    hands: int
    events: int
    rake: int
    chips_in: int
    chips_out: int
    audit_errors: list[str]


def play_table(options: TableOptions, name: str, hands: int, seats: int,
               rng: random.Random) -> TableReport:
    """Bots play ``hands`` hands; a bust bot rebuys between hands (table stakes)."""
    table = new_table(options, table_id=name)
    buy_in = 100 * max(options.big_blind, options.small_bet)
    stacks = {s: buy_in for s in range(1, seats + 1)}
    chips_in = buy_in * seats
    button = seats
    log: list[object] = []
    rake = 0
    for hand_no in range(1, hands + 1):
        for s, st in stacks.items():
            if st == 0:
                stacks[s] = buy_in
                chips_in += buy_in
        button = button % seats + 1
        table, events = run_hand(table, hand_no, button, sorted(stacks.items()),
                                 random_policy(rng), Dealer())
        log.extend(events)
        stacks = {p.seat: p.stack for p in table.hand.players}
        rake += sum(e.amount for e in events if isinstance(e, RakeTaken))
    chips_out = sum(stacks.values()) + rake
    return TableReport(name, hands, len(log), rake, chips_in, chips_out,
                       audit(options, name, log, table))


def audit(options: TableOptions, name: str, log: list[object], played) -> list[str]:
    """Replay the log from scratch and check it against what was played."""
    from shared.poker.events import TableCreated
    errors = []
    replayed = fold([TableCreated(name, options), *log])
    if replayed != played:
        errors.append("the fold of the log differs from the state played")
    commitments: list[str] = []
    dealt: list = []
    for e in log:
        if isinstance(e, DeckCommitted):
            commitments.append(e.commitment)
        elif isinstance(e, CardsDealt):
            dealt.extend(deck_order(e))
        elif isinstance(e, DeckRevealed):
            for deck, salt, c in zip(e.decks, e.salts, commitments[-len(e.decks):]):
                if commitment(deck, salt) != c:
                    errors.append("a revealed deck does not match its commitment")
                if sorted(deck) != sorted(set(deck)) or not set(deck) <= set(DECK):
                    errors.append("a revealed deck is not a set of distinct cards")
            if len(e.decks) == 1 and tuple(dealt) != e.decks[0][: len(dealt)]:
                errors.append("the cards dealt are not the committed deck, in order")
            commitments, dealt = [], []
    return sorted(set(errors))


def run(args: argparse.Namespace) -> int:
    if not args.in_process:
        from .netdemo import run_networked_demo
        return asyncio.run(run_networked_demo(args.hands, args.seats, args.seed))
    return run_in_process(args)


def run_in_process(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    started = time.perf_counter()
    reports = []
    print(f"{'table':<26}{'hands':>7}{'events':>9}{'rake':>7}  chips in = out   audit")
    for game, structure, stakes in TABLES:
        options = table_options(game, structure, **stakes)
        name = f"{game}-{structure}"
        seats = min(args.seats, options.max_seats)
        r = play_table(options, name, args.hands, seats, rng)
        reports.append(r)
        conserved = "yes" if r.chips_in == r.chips_out else f"NO ({r.chips_in} vs {r.chips_out})"
        verdict = "pass" if not r.audit_errors else "FAIL: " + "; ".join(r.audit_errors)
        print(f"{name:<26}{r.hands:>7}{r.events:>9}{r.rake:>7}  {conserved:<16}{verdict}")
    elapsed = time.perf_counter() - started
    hands = sum(r.hands for r in reports)
    events = sum(r.events for r in reports)
    ok = all(not r.audit_errors and r.chips_in == r.chips_out for r in reports)
    print(f"\n{hands} hands, {events} events in {elapsed:.2f} s "
          f"({hands / elapsed:.0f} hands/s); audit {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="start everything, bots play every game, audit the log")
    p.add_argument("--hands", type=int, default=20, help="hands per table (default 20)")
    p.add_argument("--seats", type=int, default=6, help="bots per table (default 6)")
    p.add_argument("--seed", type=int, default=None, help="seed for the bots' choices")
    p.add_argument("--in-process", action="store_true",
                   help="play through the pure engine only (no NATS, no services)")
    p.set_defaults(run=run)
