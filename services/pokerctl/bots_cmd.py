"""`pokerctl bots`: bots play hands at tables of the running services, then the log is audited.

    pokerctl bots [--tables N] [--hands M] [--game G] [--structure S] [--seats K] [--seed X]
                  [--watch] [--spectators N] [--think-ms MIN-MAX] [--table-addr ADDR] [--nats URL]

Creates N tables (default: one of each game and structure: holdem FL/PL/NL, omaha FL/PL/NL,
omaha_hilo FL/PL, stud FL, stud_hilo FL; --game/--structure narrow the choice, N cycles over
it), seats K bots at each and plays M hands at every table at once through the TableService
API (services/pokerctl/botclient.py). Prints each table's hands and actions, then reads every
table's log back from JetStream and audits it as `pokerctl audit` does (shared/audit): the
hash chain, every decision made again by the engine, chips conserved, every deck revealed
matching its commitment and dealt in order. Exit 1 if any table fails to play or its audit
fails (or is not run: the log cannot be read), 2 for bad arguments. NATS is reached before
any table is created: one that does not answer (within a few seconds) ends the command with
one line, exit 4, as does a table service that does not answer (failures.py).

Each bot is a player with its own token, from the dev identity provider `pokerctl up` keeps
in its data directory, and its own wallet, into which the bots deposit what they buy in for
(through the wallet's cashier, as the admin). When the last hand is over every bot leaves and
its chips go back to its wallet.

How the bots play: by default one loop per table acts for whichever bot is on turn, reading
the table with GetState, as fast as replies come. ``--watch`` plays as players' apps do: each
bot watches its own seat (a Watch stream) and acts on the views it receives; ``--spectators
N`` adds N spectators per table, each a player account of its own watching the table;
``--think-ms MIN-MAX`` has each bot wait a random time in that range before each action (a
person's pace; default 0-0). The report then counts the views the bots and spectators got.

The table service, the wallet and NATS default to what `pokerctl up` runs (POKER_TABLE_ADDR,
POKER_WALLET_ADDR, POKER_NATS_URL override them). ``--table-addr`` (and POKER_TABLE_ADDR) may
list several instances of the table service, comma-separated (``127.0.0.1:50051,127.0.0.1:50071``,
as `pokerctl up --replicas 2` prints it): the bots' calls are balanced over them round robin,
and a call that reaches an instance that died is retried on another with the same command id.

``--table`` was the table service's address before it meant a table id in every command: it
is refused here, with a hint (services/pokerctl/failures.py).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import secrets
import sys
import time
from dataclasses import dataclass

import grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker.wallet.v1 import wallet_pb2_grpc

from shared.audit import TableAudit, audit_table
from shared.audit.access import AccessNotRecorded, record_opened
from shared.audit.money import MoneyAudit, audit_money
from shared.infra import natsconn
from shared.infra.commits import parse_commit
from shared.infra.devissuer import DevIssuer
from shared.infra.eventstore import EventStore, StoreError, find_log
from shared.infra.protomap import GAME, STRUCTURE
from shared.infra.secrecy import Keyring, SecrecyError
from shared.infra.tls import TlsConfig, channel
from shared.poker.options import Game, Stakes, Structure, TableOptions, buy_in_limits, table_options

from .botclient import BotTable, Sponsor, joining, play_table, seat_bots
from .certs_cmd import client_tls_or_exit
from .datadir import NATS_HELP, client_ca, default_nats_url, default_table_addr
from .failures import (
    FAILED,
    OK,
    USAGE,
    TableUnreachable,
    add_retired_flag,
    old_table_flag,
    refuse,
    reports_unreachable,
)
from .keys_cmd import add_key_argument, keyring_from
from .table_addresses import address_list, table_channel
from .thinktime import NO_THINKING, ThinkTime, ThinkTimeError
from .token_cmd import identity_dir
from .wallet_cmd import default_wallet_addr

GAMES = ("holdem", "omaha", "omaha_hilo", "stud", "stud_hilo")
STRUCTURES = ("fixed_limit", "pot_limit", "no_limit")
_ABBREV = {"fixed_limit": "FL", "pot_limit": "PL", "no_limit": "NL"}

#: one table of each game and structure, with its stakes
TABLES: tuple[tuple[str, str, Stakes], ...] = (
    ("holdem", "fixed_limit", {"small_bet": 10}),
    ("holdem", "pot_limit", {"small_blind": 1, "big_blind": 2}),
    ("holdem", "no_limit", {"small_blind": 1, "big_blind": 2}),
    ("omaha", "fixed_limit", {"small_bet": 10}),
    ("omaha", "pot_limit", {"small_blind": 1, "big_blind": 2}),
    ("omaha", "no_limit", {"small_blind": 1, "big_blind": 2}),
    ("omaha_hilo", "fixed_limit", {"small_bet": 10}),
    ("omaha_hilo", "pot_limit", {"small_blind": 1, "big_blind": 2}),
    ("stud", "fixed_limit", {"small_bet": 10}),
    ("stud_hilo", "fixed_limit", {"small_bet": 10}),
)


@dataclass(frozen=True)
class TablePlan:
    table_id: str
    game: str
    structure: str
    stakes: Stakes

    @property
    def label(self) -> str:
        return f"{self.game} {_ABBREV[self.structure]}"

    @property
    def options(self) -> TableOptions:
        return table_options(self.game, self.structure, **self.stakes)

    def settings(self) -> table_pb2.TableSettings:
        s = table_pb2.TableSettings(
            game=GAME.to_pb(Game(self.game)), structure=STRUCTURE.to_pb(Structure(self.structure)))
        for name, value in self.stakes.items():
            setattr(s, name, value)
        return s

    def buy_in(self) -> int:
        """The table's maximum buy-in (bots that go broke early end a table early)."""
        return buy_in_limits(self.options)[1]


def plan_tables(tables: int | None = None, game: str | None = None,
                structure: str | None = None, run_id: str | None = None) -> list[TablePlan]:
    """N tables cycling over the games and structures chosen (default: one of each)."""
    run_id = run_id or secrets.token_hex(3)
    if structure is not None and game is None:
        # a structure alone: every game played in it
        choice = [t for t in TABLES if t[1] == structure]
    elif game is not None:
        choice = [t for t in TABLES if t[0] == game and structure in (None, t[1])]
        if not choice and structure is not None:  # e.g. omaha_hilo NL: allowed, not default
            stakes: Stakes = {"small_bet": 10} if structure == "fixed_limit" else \
                {"small_blind": 1, "big_blind": 2}
            choice = [(game, structure, stakes)]
    else:
        choice = list(TABLES)
    if not choice:
        raise ValueError(f"no table plays {game or 'any game'} {structure or ''}".strip())
    count = len(choice) if tables is None else tables
    plans = []
    for i in range(count):
        g, s, stakes = choice[i % len(choice)]
        plans.append(TablePlan(f"{g}-{_ABBREV[s]}-{run_id}-{i + 1}".replace("_", ""), g, s,
                               stakes.copy()))
    return plans


@dataclass
class Played:
    plan: TablePlan
    bots: BotTable
    seconds: float
    error: str = ""


async def create_and_seat(stub: table_pb2_grpc.TableServiceStub, plan: TablePlan,
                          seats: int, sponsor: Sponsor,
                          retry_s: float | None = None) -> BotTable:
    """Create the table (retried like every bot call, and paced by the table service's rate
    of new tables: botclient.joining) and seat the bots."""
    options = plan.options  # validated here: a bad plan fails before anything is appended
    created = table_pb2.CreateTableRequest(
        table_id=plan.table_id, settings=plan.settings(), command_id=f"create-{plan.table_id}")
    await joining(stub.CreateTable, created, sponsor.operator(), retry_s)
    return await seat_bots(stub, plan.table_id, min(seats, options.max_seats), plan.buy_in(),
                           sponsor, retry_s)


async def play_tables(stub: table_pb2_grpc.TableServiceStub, plans: list[TablePlan],
                      hands: int, seats: int, sponsor: Sponsor, seed: object = None,
                      leave: bool = True, retry_s: float | None = None, *,
                      watch: bool = False, spectators: int = 0,
                      think: ThinkTime = NO_THINKING) -> list[Played]:
    """Every table at once: each is created, seated and played in its own task; an error
    (a gRPC status) ends that table only and is reported in its result. ``retry_s``: how
    long each bot call is retried through a table service that is away (default
    shared/infra/retry.py's PLAYER_RETRY; 0: not at all). ``watch``, ``spectators``,
    ``think``: how the bots play (botclient.play_table)."""
    async def one(i: int, plan: TablePlan) -> Played:
        started = time.perf_counter()
        rng = random.Random(f"{seed}/{i}") if seed is not None else random.Random()
        bots = BotTable(plan.table_id, buy_in=plan.buy_in())
        try:
            bots = await create_and_seat(stub, plan, seats, sponsor, retry_s)
            bots = await play_table(stub, bots, hands, rng, leave=leave, think=think,
                                    watch=watch, spectators=spectators)
        except grpc.aio.AioRpcError as exc:
            return Played(plan, bots, time.perf_counter() - started,
                          f"{exc.code().name}: {exc.details()}")
        return Played(plan, bots, time.perf_counter() - started)

    return list(await asyncio.gather(*(one(i, p) for i, p in enumerate(plans))))


# --- audit -----------------------------------------------------------------------------------


def decode_commit(data: bytes, keyring: Keyring | None = None) -> list[object]:
    """A commit's events; ``keyring``: the compliance keyring that opens sealed cards."""
    return parse_commit(data).events(keyring)


async def connect_store(nats_url: str, timeout: float = 3.0, stream: str | None = None,
                        ca: str | None = None, name: str = "pokerctl") -> EventStore:
    """A client of the log that fails fast (EventStore.connect retries for 15 s, which suits a
    service waiting for NATS, not a command line): a few seconds of attempts, then
    :class:`~shared.infra.natsconn.NatsUnreachable` (one line: the command's ``run`` reports
    it, services/pokerctl/failures.py). ``stream`` None: the log the server holds (the
    primary, else a mirror's copy: find_log); ``ca`` None: :func:`client_ca`."""
    nc = await natsconn.connect_once(nats_url, name=name, ca=ca or client_ca(),
                                     timeout=timeout)
    try:
        return EventStore(nc, nc.jetstream(timeout=10), stream or await find_log(nc))
    except BaseException:
        await nc.close()
        raise


async def record_read(store: EventStore, purpose: str, tables: list[str] | None,
                      keyring: Keyring | None, hands: tuple[int, ...] = ()) -> None:
    """Before sealed cards are opened with the compliance ``keyring``: the access log's
    record of it (shared/audit/access.py; AccessNotRecorded: open nothing)."""
    if keyring is not None:
        await record_opened(store.js, purpose, tables, getattr(keyring, "key_ids", []), hands)


async def audit_tables(nats_url: str, table_ids: list[str],
                       keyring: Keyring | None, ca: str | None = None) -> list[TableAudit]:
    """Each table's log read back from JetStream and audited (shared/audit) with the
    compliance ``keyring`` (the read recorded in the access log first)."""
    store = await connect_store(nats_url, ca=ca)
    try:
        await record_read(store, "bots-audit", table_ids, keyring)
        return [audit_table(t, await store.read(t), keyring) for t in table_ids]
    finally:
        await store.close()


async def audit_money_of(nats_url: str, audits: list[TableAudit],
                         ca: str | None = None) -> MoneyAudit:
    """The money audit (shared/audit/money.py) of ``audits``, which must be every table of
    the platform, against the wallet's ledger on the same server."""
    from services.wallet.ledger import fold_ledger, read_ledger
    store = await connect_store(nats_url, ca=ca)
    try:
        from services.tournament.audit import read_tournaments
        return audit_money(audits, fold_ledger(await read_ledger(store.js)),
                           await read_tournaments(store))
    finally:
        await store.close()


# --- output ----------------------------------------------------------------------------------


def print_report(played: list[Played], audits: list[TableAudit] | None, seconds: float,
                 out=None) -> bool:
    """One line per table and a summary; True if every table played and audited clean."""
    out = sys.stdout if out is None else out
    by_id = {a.table_id: a for a in audits or []}
    head = f"{'table':<34}{'game':<15}{'hands':>6}{'actions':>8}"
    if audits is not None:
        head += f"{'events':>8}{'rake':>6}  chips    audit"
    print(head, file=out)
    ok = True
    for p in played:
        line = f"{p.plan.table_id:<34}{p.plan.label:<15}{p.bots.hands_seen:>6}" \
               f"{p.bots.actions:>8}"
        a = by_id.get(p.plan.table_id)
        if a is not None:
            chips = "ok" if a.conserved else \
                f"{a.stacks + a.rake + a.left_with}!={a.buy_ins + a.top_ups}"
            verdict = "pass" if a.ok else f"FAIL: {a.failure}"
            line += f"{a.events:>8}{a.rake:>6}  {chips:<9}{verdict}"
            ok &= a.ok
        if p.error:
            line += f"  ERROR {p.error}"
            ok = False
        print(line, file=out)
    hands = sum(p.bots.hands_seen for p in played)
    actions = sum(p.bots.actions for p in played)
    summary = f"\n{len(played)} tables, {hands} hands, {actions} actions"
    errors = sum(bool(p.error) for p in played)
    if audits is not None:
        events = sum(a.events for a in audits)
        conserved = sum(a.conserved for a in audits)
        # "passed" only for a clean audit of hands that were played, all tables to the end
        if not all(a.ok for a in audits):
            verdict = "FAILED"
        elif errors:
            verdict = f"not conclusive: {errors} table(s) stopped with an error"
        elif not hands:
            verdict = "not conclusive: no hand was played"
        else:
            verdict = "passed"
        summary += (f", {events} events read back from JetStream; chips conserved at "
                    f"{conserved}/{len(audits)} tables; audit {verdict}")
    ok &= bool(hands)
    summary += f"; {seconds:.1f} s ({hands / seconds if seconds else 0:.1f} hands/s)"
    watched = sum(sum(p.bots.views.values()) for p in played)
    spectated = sum(sum(p.bots.spectator_views) for p in played)
    spectators = sum(len(p.bots.spectator_views) for p in played)
    if watched or spectators:
        summary += (f"\nviews received: {watched} by the bots over their own seats' Watch, "
                    f"{spectated} by {spectators} spectator(s)")
    print(summary, file=out, flush=True)
    return ok


async def run_bots(table_addr: str, nats_url: str | None, plans: list[TablePlan], hands: int,
                   seats: int, seed: object = None, out=None,
                   keyring: Keyring | None = None, *, tls: TlsConfig | None,
                   wallet_addr: str | None = None, wallet_tls: TlsConfig | None = None,
                   issuer: DevIssuer | None = None, watch: bool = False, spectators: int = 0,
                   think: ThinkTime = NO_THINKING) -> int:
    """Play and audit; ``table_addr``: the table service's address, or a comma-separated
    list of its instances (table_addresses.parse_addresses); ``tls``: the CA and certificate the
    table service is reached with (None: plaintext, POKER_INSECURE); ``wallet_tls``: the
    admin's, for the wallet's cashier; ``issuer``: who signs the bots' tokens (default:
    `up`'s); ``watch``, ``spectators``, ``think``: how the bots play (play_tables)."""
    out = sys.stdout if out is None else out
    started = time.perf_counter()
    if nats_url:  # the log must be readable afterwards: NatsUnreachable before any table
        await (await connect_store(nats_url)).close()
    issuer = issuer or DevIssuer.create(identity_dir(None))
    async with table_channel(table_addr, tls) as chan, \
            channel(wallet_addr or default_wallet_addr(), wallet_tls, service="wallet") as wch:
        sponsor = Sponsor(issuer, wallet_pb2_grpc.WalletServiceStub(wch))
        played = await play_tables(table_pb2_grpc.TableServiceStub(chan), plans, hands,
                                   seats, sponsor, seed, watch=watch, spectators=spectators,
                                   think=think)
    if played and all(p.error.startswith(("UNAVAILABLE", "DEADLINE_EXCEEDED"))
                      for p in played):
        raise TableUnreachable(table_addr, played[0].error)
    audits = None
    if nats_url:
        try:
            audits = await audit_tables(nats_url, [p.table_id for p in plans], keyring)
        except (TimeoutError, StoreError, AccessNotRecorded, OSError) as exc:
            print(f"pokerctl bots: the log was not audited: {exc}", file=sys.stderr)
            print_report(played, None, time.perf_counter() - started, out)
            return FAILED
    ok = print_report(played, audits, time.perf_counter() - started, out)
    return OK if ok else FAILED


@reports_unreachable("pokerctl bots")
def run(args: argparse.Namespace) -> int:
    if args.retired_table is not None:
        return refuse(old_table_flag("pokerctl bots"))
    if args.tournament:
        return _tournament(args)
    if args.hands < 1 or args.seats < 2 or (args.tables is not None and args.tables < 1):
        print("pokerctl bots: --hands and --tables must be at least 1, --seats at least 2",
              file=sys.stderr)
        return USAGE
    if args.spectators < 0:
        print(f"pokerctl bots: --spectators {args.spectators}: give 0 or more spectators per "
              "table", file=sys.stderr)
        return USAGE
    try:
        think = ThinkTime.parse(args.think_ms)
    except ThinkTimeError as exc:
        print(f"pokerctl bots: --think-ms: {exc}", file=sys.stderr)
        return USAGE
    try:
        plans = plan_tables(args.tables, args.game, args.structure)
        for p in plans:
            p.options  # noqa: B018 - validates the game and structure
    except Exception as exc:  # InvalidOptions, ValueError: readable
        print(f"pokerctl bots: {exc}", file=sys.stderr)
        return USAGE
    smallest = min(plans, key=lambda p: p.options.max_seats)
    if args.seats > smallest.options.max_seats:  # refused, not capped silently
        print(f"pokerctl bots: --seats {args.seats}: a {smallest.label} table seats at most "
              f"{smallest.options.max_seats} (choose --seats {smallest.options.max_seats} or "
              "fewer, or a --game with more seats)", file=sys.stderr)
        return USAGE
    try:
        keyring = keyring_from(args)
    except SecrecyError as exc:
        print(f"pokerctl bots: {exc}", file=sys.stderr)
        return USAGE
    return asyncio.run(run_bots(args.table_addr, None if args.no_audit else args.nats, plans,
                                args.hands, args.seats, args.seed, keyring=keyring,
                                tls=client_tls_or_exit(), wallet_addr=args.wallet,
                                wallet_tls=client_tls_or_exit("admin"), watch=args.watch,
                                spectators=args.spectators, think=think))


def _tournament(args: argparse.Namespace) -> int:
    """`--tournament ID`: bots fill the tournament (or --players of them) and play it out."""
    from .tournament_bots import run_cli
    from .tournament_cmd import default_tournament_addr
    if args.players is not None and args.players < 1:
        print("pokerctl bots: --players must be at least 1", file=sys.stderr)
        return 2
    return asyncio.run(run_cli(
        default_tournament_addr(), args.table_addr, args.wallet or default_wallet_addr(),
        args.tournament, args.players, args.seed, tls=client_tls_or_exit(),
        wallet_tls=client_tls_or_exit("admin"), issuer=DevIssuer.create(identity_dir(None))))


def add_client_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--table-addr", default=default_table_addr(), type=address_list,
                   help="table service address, or a comma-separated list of its instances "
                        "(balanced round robin; default POKER_TABLE_ADDR or %(default)s)")
    add_retired_flag(p, "--table")  # the address's flag before --table was a table id
    p.add_argument("--nats", default=default_nats_url(), help=NATS_HELP)
    p.add_argument("--wallet", default=None,
                   help="the wallet's address, for the bots' deposits (default "
                        "POKER_WALLET_ADDR, else `pokerctl up`'s)")


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("bots", help=help)
    p.add_argument("--tables", type=int, default=None,
                   help="tables to create (default: one of each game and structure)")
    p.add_argument("--hands", type=int, default=20, help="hands per table (default 20)")
    p.add_argument("--game", choices=GAMES, default=None)
    p.add_argument("--structure", choices=STRUCTURES, default=None)
    p.add_argument("--seats", type=int, default=6, help="bots per table (default 6)")
    p.add_argument("--seed", default=None, help="seed for the bots' choices")
    p.add_argument("--watch", action="store_true",
                   help="each bot watches its own seat (a Watch stream) and acts on the views "
                        "it receives, instead of one loop reading the table with GetState")
    p.add_argument("--spectators", type=int, default=0, metavar="N",
                   help="spectators per table, each a player account watching the table "
                        "(default 0)")
    p.add_argument("--think-ms", default="0-0", metavar="MIN-MAX",
                   help="each bot waits a random time in [MIN, MAX] milliseconds before each "
                        "action, a person's pace (default 0-0: at once)")
    p.add_argument("--no-audit", action="store_true", help="skip reading the log back")
    p.add_argument("--tournament", default="", metavar="ID",
                   help="register bots in tournament ID (filling its field, or --players of "
                        "them), start it if it is scheduled, and play it to the end")
    p.add_argument("--players", type=int, default=None, metavar="N",
                   help="with --tournament: how many bots register (default: the seats left)")
    add_key_argument(p)
    add_client_args(p)
    p.set_defaults(run=run)
