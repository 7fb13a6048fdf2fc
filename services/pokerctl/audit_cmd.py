"""`pokerctl audit`: read the event log from the start and audit every table.

    pokerctl audit [--table T | --all | --file F] [--key FILE] [--json] [--nats URL]
                   [--stream NAME] [--workers N] [--progress | --quiet]
    pokerctl audit --table T --export F    (or --all --export F): write the raw commits
    pokerctl audit --evidence FILE         a hand's evidence file, offline (audit_evidence.py)

Checks (shared/audit/auditor.py): the hash chain; no gaps (each stream's first..last sequence
against the messages it holds; read with --all, every sequence is read; a log split over
shard streams is checked stream by stream, POKER_STREAM_SHARDS); every decision
re-decided by the engine, event for event; every card dealt against the deck committed before
the hand and revealed after it (the sealed cards opened with the compliance key, --key: see
keys_cmd.py; a secret card in the clear fails); chips conserved per hand and per table. Prints one line per
table and a summary, or a JSON report with --json; progress goes to stderr only when it is a
terminal (a bar) or with --progress (a line every few seconds), never with --quiet.
Exit codes (failures.py): 0 if every table passes; 1 if any fails (the first bad event of
each table is named: table, stream sequence, event index, type and why), there is nothing to
audit (no hand: the verdict "audit passed" is only ever printed over hands audited) or the
access log did not take the record of the read; 2 for bad arguments; 3 for a --table the log
does not hold ("no table 'T' in the log"; with --export no file is written); 4 when NATS does
not answer (one line, after a few seconds of attempts) or the log cannot be read.

--all reads the stream with --workers processes (default: one per CPU, and one per 50,000
commits at most), tables spread over them (audit_pool.py); --workers 1 reads it in one pass,
in stream order.

--export writes the commits exactly as stored (JSON lines: table, seq, base64 bytes), for an
audit offline with --file. The file appears once complete (written beside it, then renamed).

--checkpoint C (with --all, or --file of a whole-log export): the log must hold the tree of
the hands' Merkle log that checkpoint C signs (shared/audit/checkpoint.py): C signed by the
notary's key (--log-key, default POKER_NOTARY_VKEY or `pokerctl up`'s), cosigned by each
--witness given, its leaves (POKER_HANDS, or the export's leaf lines) hashing to its root,
and each table's hands in it the hands its audited log makes. A dropped tail, a changed last
event, a replaced hand or a changed command digest fails (exit 1). `--all --export` writes the
leaves too.

--all also audits the money (shared/audit/money.py) when the server holds the wallet's
ledger: every table's buy-ins, cash-outs and rake matched once with the ledger's debits and
credits, and deposits - withdrawals = wallet balances + house + chips at the tables + money
in transit. A line says whether it balances (in --json: "money"); exit 1 if not.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from shared.audit.access import AccessNotRecorded
from shared.audit.auditor import TableAudit
from shared.audit.checkpoint import CheckpointAudit, audit_checkpoint
from shared.audit.export import ExportError, dump_lines, load_leaves
from shared.audit.money import MoneyAudit, audit_money
from shared.infra.eventstore import (
    MIRROR_STREAM,
    STREAM,
    LogLayout,
    StoreError,
)
from shared.infra.secrecy import Keyring, SecrecyError
from shared.tlog.note import NoteError, SignedCheckpoint
from shared.tlog.store import read_leaves

from . import audit_evidence
from .audit_pool import audit_in_parallel, stream_tables
from .audit_read import Progress, Run, connect, progress_wanted, read_file, read_stream
from .bots_cmd import record_read
from .datadir import NATS_HELP, default_nats_url
from .failures import FAILED, OK, USAGE, no_table, read_exit, reports_unreachable
from .keys_cmd import add_key_argument, key_files, keyring_from
from .tlog_args import add_log_key_arguments, log_key, witness_keys

# --- output ------------------------------------------------------------------------------------


async def _money(args: argparse.Namespace, audits: list[TableAudit]) -> MoneyAudit | None:
    """The money audit of ``audits`` against the wallet's ledger on the server (None: the
    server holds no ledger, a mirror's say)."""
    from services.wallet.ledger import fold_ledger, read_ledger
    store = await connect(args.nats, args.stream)
    try:
        try:
            events = await read_ledger(store.js)
        except StoreError:
            return None
        from services.tournament.audit import audit_tournaments, read_tournaments
        tournaments = await read_tournaments(store)
        money = audit_money(audits, fold_ledger(events), tournaments)
        money.problems += await audit_tournaments(store, tournaments)
        return money
    finally:
        await store.close()


def report_text(audits: list[TableAudit], source: dict, seconds: float, out) -> None:
    print(f"{'table':<36}{'commits':>8}{'events':>9}{'hands':>7}{'rake':>8}  chips  audit",
          file=out)
    for a in audits:
        verdict = ("pass" if a.failure is None else f"ENGINE BUG: {a.failure}"
                   if a.failure.engine_bug else f"FAIL: {a.failure}")
        if a.ok and a.hand_open:
            verdict += " (a hand is still running: its deck is not revealed yet)"
        print(f"{a.table_id:<36}{a.commits:>8}{a.events:>9}{a.hands:>7}{a.rake:>8}  "
              f"{'ok' if a.conserved else 'NO':<7}{verdict}", file=out)
    for p in source.get("problems", []):
        print(f"FAIL: {source.get('stream', source.get('file'))}: {p}", file=out)
    events = sum(a.events for a in audits)
    failed = sum(not a.ok for a in audits)
    ok = not failed and not source.get("problems")
    hands = sum(a.hands for a in audits)
    verdict = "FAILED" if not ok else "passed" if hands else \
        "not conclusive: no hand to audit"
    print(f"\n{len(audits)} tables, {sum(a.commits for a in audits)} commits, {events} events, "
          f"{sum(a.hands for a in audits)} hands, {sum(a.cards for a in audits)} cards checked "
          f"against {sum(a.decks for a in audits)} revealed decks; {events / max(seconds, 1e-9):,.0f}"
          f" events/s in {seconds:.2f} s; audit {verdict}"
          + (f" ({failed} table(s) failed)" if failed else ""), file=out, flush=True)


def report_json(audits: list[TableAudit], source: dict, seconds: float, out) -> None:
    events = sum(a.events for a in audits)
    ok = all(a.ok for a in audits) and not source.get("problems")
    print(json.dumps({"ok": ok, "source": source, "tables": [a.as_dict() for a in audits],
                      "events": events, "seconds": round(seconds, 3),
                      "events_per_s": round(events / max(seconds, 1e-9))}, indent=1),
          file=out, flush=True)


# --- command -----------------------------------------------------------------------------------


async def _from_nats(args: argparse.Namespace, run: Run | None, rows: list | None) -> dict:
    store = await connect(args.nats, args.stream)
    try:
        if run is not None:  # the cards are opened: the access log records it first
            await record_read(store, "audit", [args.table_id] if args.table_id else None,
                              run.keyring)
        return await read_stream(store, args.table_id, run, rows)
    finally:
        await store.close()


def _in_parallel(args: argparse.Namespace, progress: Progress) -> tuple[list[TableAudit], dict]:
    """--all over --workers processes (audit_pool.py): tables spread over them."""
    async def survey() -> tuple[dict, dict[str, int], LogLayout]:
        store = await connect(args.nats, args.stream)
        try:
            await record_read(store, "audit", None, keyring_from(args))
            return (*await stream_tables(store), await store.layout())
        finally:
            await store.close()

    source, counts, layout = asyncio.run(survey())
    progress.total = source["messages"]
    if not counts:
        return [], source
    workers = args.workers
    if workers is None:  # a worker costs a second to start: one per WORKER_COMMITS at most
        workers = min(default_workers(), max(1, source["messages"] // WORKER_COMMITS))
    return audit_in_parallel(args.nats, source, counts, key_files(args),
                             min(workers, len(counts)), progress.update, layout)




async def _leaves_from_nats(args: argparse.Namespace) -> list[bytes]:
    """The hands' Merkle log (POKER_HANDS) on the server, in tree order."""
    store = await connect(args.nats, args.stream)
    try:
        return await read_leaves(store)
    except ValueError as exc:
        raise StoreError(str(exc)) from None
    finally:
        await store.close()


def _against_checkpoint(args: argparse.Namespace, audits: list[TableAudit]
                        ) -> CheckpointAudit:
    """The audited log against --checkpoint (its leaves from --file or the server)."""
    with open(args.checkpoint, encoding="utf-8") as f:
        signed = SignedCheckpoint.parse(f.read())
    if args.file:
        with open(args.file, encoding="utf-8") as f:
            leaves = load_leaves(f)
    else:
        leaves = asyncio.run(_leaves_from_nats(args))
    return audit_checkpoint(signed, leaves, {a.table_id: a.hand_leaves for a in audits},
                            log_key(args), witness_keys(args))


def _write_export(path: str, rows: list, leaves: list[bytes] | None = None) -> None:
    """``rows`` (and the hands' log ``leaves``) to ``path``, which appears only once
    complete."""
    part = f"{path}.part"
    try:
        with open(part, "w", encoding="utf-8") as f:
            f.writelines(dump_lines(rows, leaves or ()))
        os.replace(part, path)
    except BaseException:
        if os.path.exists(part):
            os.unlink(part)
        raise


def _export(args: argparse.Namespace) -> int:
    """--export: the tables' raw commits (and, with --all, the hands' log) to a file."""
    if args.file:
        print("pokerctl audit: --export reads from NATS, not --file", file=sys.stderr)
        return USAGE
    rows: list = []
    try:
        asyncio.run(_from_nats(args, None, rows))
    except (TimeoutError, StoreError, OSError) as exc:
        print(f"pokerctl audit: {exc}", file=sys.stderr)
        return read_exit(exc)
    if args.table_id and not rows:
        return no_table("pokerctl audit", args.table_id, "in the log (nothing exported)")
    leaves: list[bytes] = []
    if args.all:  # a whole-log export holds the hands' log too
        try:
            leaves = asyncio.run(_leaves_from_nats(args))
        except (TimeoutError, StoreError, OSError) as exc:
            print(f"pokerctl audit: {exc}", file=sys.stderr)
            return read_exit(exc)
    try:
        _write_export(args.export, rows, leaves)
    except OSError as exc:
        print(f"pokerctl audit: cannot write {args.export}: {exc}", file=sys.stderr)
        return USAGE
    print(f"{len(rows)} commits of {len({t for t, _ in rows})} table(s)"
          + (f" and {len(leaves)} leaves of the hands' log" if leaves else "")
          + f" written to {args.export}", file=sys.stderr)
    return 0


def _keyring_for_audit(args: argparse.Namespace) -> Keyring | None:
    """The compliance keyring an audit opens the sealed cards with; None: the arguments do
    not make an audit (the line saying why is printed)."""
    if args.checkpoint and not (args.all or (args.file and not args.table_id)):
        print("pokerctl audit: --checkpoint checks the whole log: with --all, or --file of a "
              "whole-log export (`audit --all --export`)", file=sys.stderr)
        return None
    try:
        keyring = keyring_from(args)
    except SecrecyError as exc:
        print(f"pokerctl audit: {exc}", file=sys.stderr)
        return None
    if keyring is None:
        print("pokerctl audit: the log seals the cards nobody has seen; the audit opens them "
              "with the compliance private key: --key FILE (or POKER_COMPLIANCE_KEY)",
              file=sys.stderr)
        return None
    if args.workers is not None and args.workers < 1:
        print("pokerctl audit: --workers is at least 1", file=sys.stderr)
        return None
    return keyring


def _audit_tables(args: argparse.Namespace, progress: Progress,
                  keyring: Keyring) -> tuple[list[TableAudit], dict]:
    """Every table asked for, audited from --file, from NATS in one pass, or (--all) over
    --workers processes; and the log's state (its source)."""
    audit_run = Run({args.table_id} if args.table_id else None, progress, keyring)
    if args.file:
        source = read_file(args.file, args.table_id, audit_run)
        return audit_run.results(), source
    if args.table_id is None and args.workers != 1:
        return _in_parallel(args, progress)
    source = asyncio.run(_from_nats(args, audit_run, None))
    return audit_run.results(), source


def _money_into(args: argparse.Namespace, audits: list[TableAudit],
                source: dict) -> MoneyAudit | None:
    """--all: the money audit, its verdict and problems recorded in ``source``."""
    money = None
    try:
        money = asyncio.run(_money(args, audits))
    except Exception as exc:  # LedgerCorrupt, StoreError: the money does not check
        source.setdefault("problems", []).append(f"the wallet's ledger: {exc}")
    if money is not None:
        source["money"] = money.as_dict()
        if not money.ok:
            source.setdefault("problems", []).extend(
                ["money: " + p for p in money.problems] or ["money: " + money.summary()])
    return money


def _audit(args: argparse.Namespace) -> int:
    """The audit itself: read, check the checkpoint and the money, report, exit code."""
    keyring = _keyring_for_audit(args)
    if keyring is None:
        return USAGE
    progress = Progress(enabled=progress_wanted(args))
    try:
        audits, source = _audit_tables(args, progress, keyring)
    except (TimeoutError, StoreError, ExportError, AccessNotRecorded, OSError) as exc:
        print(f"pokerctl audit: {exc}", file=sys.stderr)
        return read_exit(exc)
    seconds = progress.finish()
    if args.table_id and not audits:
        return no_table("pokerctl audit", args.table_id)
    checked = None
    if args.checkpoint:
        try:
            checked = _against_checkpoint(args, audits)
        except (TimeoutError, NoteError, ExportError, StoreError, OSError) as exc:
            print(f"pokerctl audit: --checkpoint: {exc}", file=sys.stderr)
            return read_exit(exc) if isinstance(exc, (StoreError, TimeoutError)) else USAGE
        source["checkpoint"] = checked.as_dict()
        source.setdefault("problems", []).extend(
            "checkpoint: " + p for p in checked.problems)
    money = _money_into(args, audits, source) if args.all else None
    (report_json if args.json else report_text)(audits, source, seconds, sys.stdout)
    if money is not None and not args.json:
        print(money.summary(), file=sys.stdout, flush=True)
    if checked is not None and not args.json:
        print(checked.summary(), file=sys.stdout, flush=True)
    if not sum(a.hands for a in audits):
        return FAILED  # nothing audited: not a pass (the report says so)
    return OK if all(a.ok for a in audits) and not source.get("problems") else FAILED


@reports_unreachable("pokerctl audit")
def run(args: argparse.Namespace) -> int:
    if args.evidence:
        if args.table_id or args.export or args.checkpoint:
            print("pokerctl audit: --evidence checks one hand's file alone", file=sys.stderr)
            return USAGE
        return audit_evidence.run(args)
    if not (args.table_id or args.all or args.file):
        print("pokerctl audit: say which tables: --table T, --all, --file F or --evidence F",
              file=sys.stderr)
        return USAGE
    return _export(args) if args.export else _audit(args)


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("audit", help=help)
    which = p.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="every table of the stream")
    p.add_argument("--table", dest="table_id", default=None, help="one table")
    which.add_argument("--file", default=None, help="audit an export file instead of NATS")
    which.add_argument("--evidence", default=None, metavar="FILE",
                       help="verify a hand's evidence file offline (the compliance "
                            "replay's download): exit 0 if it verifies, 1 if not")
    p.add_argument("--export", default=None, metavar="F",
                   help="write the tables' raw commits to F (JSON lines) instead of auditing")
    p.add_argument("--json", action="store_true", help="a JSON report on stdout")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--quiet", action="store_true", help="no progress at all")
    shown.add_argument("--progress", action="store_true",
                       help="progress on stderr even when it is not a terminal (by default "
                            "only a terminal shows it)")
    p.add_argument("--nats", default=default_nats_url(), help=NATS_HELP)
    p.add_argument("--stream", default=None,
                   help=f"JetStream stream (default {STREAM}, or {MIRROR_STREAM} on a "
                        "mirror's server; with their shard streams, if the log has them)")
    p.add_argument("--workers", type=int, default=None,
                   help="processes auditing --all, tables spread over them (default: one "
                        f"per CPU, {default_workers()} here, and one per "
                        f"{WORKER_COMMITS:,} commits at most)")
    p.add_argument("--checkpoint", default=None, metavar="FILE",
                   help="a signed checkpoint of the hands' log (`pokerctl checkpoint --out "
                        "FILE`): the log must hold its tree (with --all, or --file of a "
                        "whole-log export)")
    add_log_key_arguments(p)
    add_key_argument(p)
    p.set_defaults(run=run)


#: commits that make a worker process worth starting
WORKER_COMMITS = 50_000


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 8))
