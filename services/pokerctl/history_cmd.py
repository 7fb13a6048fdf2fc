"""`pokerctl history`: hand histories from a table's event log.

    pokerctl history --table T [--hand N] [--format pokerstars|json|phh] [--seat S] [--key F]
                     [--nats URL | --file EXPORT]

Reads the table's commits from JetStream (or from an export file of `pokerctl audit --export`),
checks the hash chain and the fold (a corrupt log is an error, exit 1), splits the events into hands (:func:`shared.history.hands`) and prints each
finished hand (or hand N):

- ``pokerstars`` (default): PokerStars hand history text, hands separated by two blank lines;
  the auditor's history shows every seat's cards, ``--seat S`` limits it to that player's view;
  ``Hand #`` is the log position of the hand's first commit (its stream sequence; in a shard
  stream k, (k + 1) * 10^12 + it: :attr:`~shared.infra.eventstore.Stored.log_position`),
  unique across tables and shards (``--hand`` takes the table's own hand number);
- ``json``: one JSON object per line per hand (``--seat`` hides the other seats' down cards);
- ``phh``: PHH (``.phhs`` style ``[1]``, ``[2]`` ... sections when there are several hands);
  ``--seat S`` gives the hand as that seat saw it: the other seats' down cards are PHH's
  unknown card (``d dh p2 ????``) unless shown at the showdown.

The cards nobody saw at the table (folded and mucked hands, burns) are sealed in the log: with
the compliance key (``--key``, see keys_cmd.py) every card is in the history; without it they
read ``??`` (a seat's own cards included).

Exit codes (failures.py): 0 with the histories; 1 when the log does not fold or the access
log did not take the record of the read; 2 on bad arguments; 3 when the log holds no such
table, hand, finished hand or seat; 4 when the log cannot be read (NATS not answering: one
line after a few seconds of attempts).
A hand still running is left out (reported on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from shared.audit.access import AccessNotRecorded
from shared.audit.export import ExportError, load_lines
from shared.history import phh, pokerstars, to_json
from shared.history.log import table_hands
from shared.infra.eventstore import StoreError
from shared.infra.repository import CorruptLog
from shared.infra.secrecy import SecrecyError

from .bots_cmd import connect_store, record_read
from .datadir import NATS_HELP, default_nats_url
from .failures import FAILED, NOT_FOUND, OK, USAGE, no_table, read_exit, reports_unreachable
from .keys_cmd import add_key_argument, keyring_from

FORMATS = ("pokerstars", "json", "phh")


def read_export(path: str, table_id: str) -> list:
    """The table's commits from a `pokerctl audit --export` file."""
    with open(path, encoding="utf-8") as f:
        return [s for t, s in load_lines(f) if t == table_id]


async def read_log(nats_url: str, table_id: str, keyring=None,
                   hands: tuple[int, ...] = ()) -> list:
    """The table's commits; with a compliance ``keyring`` the read is recorded in the access
    log first (shared/audit/access.py: no record, no read)."""
    store = await connect_store(nats_url)
    try:
        await record_read(store, "history", [table_id], keyring, hands)
        return await store.read(table_id)
    finally:
        await store.close()


def render(records: list, fmt: str, seat: int | None) -> str:
    if fmt == "json":
        return "".join(json.dumps(to_json(r, seat)) + "\n" for r in records)
    if fmt == "phh":
        texts = [phh(r, seat) for r in records]
        if len(texts) == 1:
            return texts[0]
        return "\n".join(f"[{i}]\n{t}" for i, t in enumerate(texts, start=1))
    return "\n\n\n".join(pokerstars(r, seat) for r in records) + "\n"


@reports_unreachable("pokerctl history")
def run(args: argparse.Namespace) -> int:
    try:
        keyring = keyring_from(args)
    except SecrecyError as exc:
        print(f"pokerctl history: {exc}", file=sys.stderr)
        return USAGE
    if keyring is None:
        print("pokerctl history: no compliance key (--key FILE): cards nobody saw at the "
              "table read ??", file=sys.stderr)
    try:
        if args.file:
            stored = read_export(args.file, args.table)
        else:
            stored = asyncio.run(read_log(args.nats, args.table, keyring,
                                          () if args.hand is None else (args.hand,)))
    except (TimeoutError, StoreError, ExportError, AccessNotRecorded, OSError) as exc:
        print(f"pokerctl history: {exc}", file=sys.stderr)
        return read_exit(exc)
    if not stored:
        return no_table("pokerctl history", args.table)
    try:
        records = table_hands(stored, keyring)
    except (CorruptLog, ValueError) as exc:
        print(f"pokerctl history: table {args.table}: {exc}", file=sys.stderr)
        return FAILED
    running = [r for r in records if not r.complete]
    records = [r for r in records if r.complete]
    if args.hand is not None:
        records = [r for r in records if r.hand_no == args.hand]
        if not records:
            state = "still running" if any(r.hand_no == args.hand for r in running) else \
                "not in the log"
            print(f"pokerctl history: hand {args.hand} of table {args.table} is {state}",
                  file=sys.stderr)
            return NOT_FOUND
    elif running:
        print(f"pokerctl history: hand {running[-1].hand_no} is still running: left out",
              file=sys.stderr)
    if args.seat is not None and records and \
            not any(args.seat in r.names for r in records):
        print(f"pokerctl history: seat {args.seat} was not dealt in", file=sys.stderr)
        return NOT_FOUND
    if not records:
        print(f"pokerctl history: table {args.table} has no finished hand", file=sys.stderr)
        return NOT_FOUND
    sys.stdout.write(render(records, args.format, args.seat))
    return OK


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("history", help=help)
    p.add_argument("--table", required=True, help="table id")
    p.add_argument("--hand", type=int, default=None, help="one hand (default: every hand)")
    p.add_argument("--format", choices=FORMATS, default="pokerstars")
    p.add_argument("--seat", type=int, default=None,
                   help="one player's view: their own cards, the others' shown cards only")
    p.add_argument("--file", default=None,
                   help="read an export (`pokerctl audit --export F`) instead of NATS")
    p.add_argument("--nats", default=default_nats_url(), help=NATS_HELP)
    add_key_argument(p)
    p.set_defaults(run=run)
