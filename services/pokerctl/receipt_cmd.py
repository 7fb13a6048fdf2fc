"""`pokerctl receipt`: a player's receipt for a hand they played, and its offline check.

    pokerctl receipt --table T --hand N --token JWT [--out FILE]
    pokerctl receipt verify FILE [--log-key VKEY] [--seed HEX]

The first asks the table service (``GetReceipt``, as the player whose ``--token`` it is, or
POKER_TOKEN, as the seat commands) for the receipt of hand N of table T, which that player
must have been dealt in, and prints it (``--out``: writes it to FILE): the proofs of the cards
they saw (their own, the board, face-up cards, the hands shown), the hand's leaf in the hands'
Merkle log and a signed checkpoint covering it (shared/tlog/receipt.py). A hand not yet in a
checkpoint is refused with when to retry (POKER_CHECKPOINT_S). Exit 1 if the service refuses
(its reason: another player's hand, a running hand, an unknown one) or does not answer, 2 for
bad arguments.

``verify`` needs no server: every card's inclusion proof to its deck's positions root, those
roots in the hand's leaf, the leaf's inclusion in the checkpoint's tree and the checkpoint's
signature by the notary's key (``--log-key``, else POKER_NOTARY_VKEY, else `pokerctl up`'s).
A receipt of a hand whose deck was derived from seeds, fetched once its table has closed,
holds the server's seed: ``verify`` then recomputes the deck (shared/tlog/seedcheck.py), checks
it against the hand's commitments and the cards seen, prints it, and with ``--seed`` (the seed
you revealed for the hand) checks that yours was used.
Prints what was proved; exit 0 if all of it holds, 1 if any part fails (named), 2 if the file
or the key cannot be read.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import grpc
from poker.table.v1 import table_pb2, table_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.retry import CLI_RETRY, retrying_sync
from shared.infra.rpc import log_away
from shared.infra.tls import sync_channel
from shared.tlog.note import NoteError
from shared.tlog.receipt import Receipt, ReceiptError, verify
from shared.tlog.seedcheck import check_shuffle

from .certs_cmd import client_tls_or_exit
from .datadir import default_table_addr
from .exitcodes import FAILED, OK, UNREACHABLE
from .failures import (
    TableUnreachable,
    is_unreachable,
    log_away_line,
    refuse,
    reports_unreachable,
    status_exit,
)
from .seat_cmd import BEARER_TOKEN
from .table_addresses import AddressError, address_list, parse_addresses
from .tlog_args import log_key

PROG = "pokerctl receipt"


def verify_file(args: argparse.Namespace) -> int:
    try:
        receipt = Receipt.parse(Path(args.file).read_bytes())
        key = log_key(args)
    except OSError as exc:
        return refuse(f"{PROG} verify: cannot read {args.file}: {exc.strerror}")
    except (ReceiptError, NoteError) as exc:
        return refuse(f"{PROG} verify: {exc}")
    try:
        lines = verify(receipt, key)
        if args.seed or receipt.extra.get("server_seed"):
            lines += check_shuffle(receipt, args.seed)
    except ReceiptError as exc:
        print(f"{PROG} verify: {args.file} does NOT verify: {exc}", file=sys.stderr)
        return FAILED
    print(f"hand {receipt.hand_no} of table {receipt.table_id}, seat {receipt.seat} "
          f"({receipt.player_id}):")
    for line in lines:
        print("  " + line)
    print("the receipt verifies")
    return OK


def _fetch(args: argparse.Namespace, target: str) -> str | int:
    """The receipt's text, or the exit code after saying why not."""
    with sync_channel(target, client_tls_or_exit(), service="table") as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        try:
            reply = retrying_sync(stub.GetReceipt, table_pb2.ReceiptRequest(
                table_id=args.table, hand_no=args.hand), bearer_metadata(args.token), CLI_RETRY)
        except grpc.RpcError as exc:
            if log_away(exc):
                print(log_away_line(PROG, target, exc.details()), file=sys.stderr)
                return UNREACHABLE
            if is_unreachable(exc):
                raise TableUnreachable(target, f"{exc.code().name}: {exc.details()}") from None
            print(f"{PROG}: {exc.code().name}: {exc.details()}", file=sys.stderr)
            return status_exit(exc.code())
    return reply.receipt


@reports_unreachable(PROG)
def run(args: argparse.Namespace) -> int:
    if args.action == "verify":
        if not args.file:
            return refuse(f"{PROG} verify FILE: the receipt file is required")
        return verify_file(args)
    if args.action is not None or args.file:
        return refuse(f"{PROG}: the only action is `verify FILE`")
    if args.seed:
        return refuse(f"{PROG}: --seed goes with `verify FILE`")
    if args.table is None or args.hand is None or args.hand < 1:
        return refuse(f"{PROG}: --table T and --hand N (a hand number from 1) are required")
    if not args.token or not BEARER_TOKEN.fullmatch(args.token):
        return refuse(f"{PROG}: --token (or POKER_TOKEN) must be the player's token from the "
                      f"identity provider (`pokerctl token --player P` for `pokerctl up`)")
    try:
        target = ",".join(parse_addresses(args.table_addr))
    except AddressError as exc:
        return refuse(f"{PROG}: {exc}")
    text = _fetch(args, target)
    if isinstance(text, int):
        return text
    if args.out:
        Path(args.out).write_text(text)
        print(f"wrote the receipt of hand {args.hand} of table {args.table} to {args.out}",
              file=sys.stderr)
    else:
        sys.stdout.write(text)
    return OK


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("receipt", help=help, description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", nargs="?", choices=("verify",), default=None,
                   help="verify FILE: check a receipt offline")
    p.add_argument("file", nargs="?", default=None, help="verify: the receipt file")
    p.add_argument("--table", default=None, metavar="TABLE_ID", help="the table's id")
    p.add_argument("--hand", type=int, default=None, help="the hand's number at the table")
    p.add_argument("--token", default=os.environ.get("POKER_TOKEN", ""),
                   help="the player's token from the identity provider, sent as "
                        "'authorization: Bearer' (default POKER_TOKEN)")
    p.add_argument("--out", default=None, metavar="FILE", help="write the receipt to FILE")
    p.add_argument("--log-key", default=None, metavar="VKEY",
                   help="verify: the notary's verifier key (or a file holding it) the "
                        "checkpoint must be signed with (default POKER_NOTARY_VKEY, else "
                        "`pokerctl up`'s)")
    p.add_argument("--seed", default="", metavar="HEX",
                   help="verify: the seed you revealed for the hand, to check it was used")
    p.add_argument("--table-addr", default=default_table_addr(), type=address_list,
                   help="table service address, or a comma-separated list of its instances "
                        "(default POKER_TABLE_ADDR or %(default)s)")
    p.set_defaults(run=run)
