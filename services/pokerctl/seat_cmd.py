"""`pokerctl seat`: a seated player's table commands, through the TableService API.

    pokerctl seat sit-out    --table T --seat N --seat-token S --token JWT
    pokerctl seat return     --table T --seat N --seat-token S --token JWT [--post-big-blind]
    pokerctl seat top-up     --table T --seat N --seat-token S --token JWT --amount A
    pokerctl seat leave      --table T --seat N --seat-token S --token JWT
    pokerctl seat disconnect --table T --seat N --seat-token S --token JWT
    pokerctl seat reconnect  --table T --seat N --seat-token S --token JWT
    pokerctl seat commit-seed --table T --seat N --seat-token S --token JWT --hand H [--seed HEX]
    pokerctl seat reveal-seed --table T --seat N --seat-token S --token JWT --hand H --seed HEX

Each command needs both: ``--token``, the player's token from the identity provider (sent as
``authorization: Bearer``; against `pokerctl up`: ``pokerctl token --player P``), whose
subject must be the seat's player; and ``--seat-token``, the seat token SitDown returned. Or
POKER_TOKEN and POKER_SEAT_TOKEN, which keep them out of the process list.

Sitting out and returning take effect from the next hand; a player who timed out was sat out
and comes back with ``return``; leaving mid-hand folds the hand and frees the seat when it
ends; topping up (from the player's wallet) happens between hands; a reconnect while on the
clock adds the table's reconnect bonus once per decision. ``commit-seed`` commits to a seed
of yours for hand H (the hand after the next one: README "Players add entropy"), sending only
its SHA-256: without ``--seed`` it makes one (32 random bytes) and prints it on stderr; keep
it, and ``reveal-seed`` it once hand H - 1 has started, before hand H starts. ``--command-id``: the same id
makes a retry harmless. Prints the seat afterwards (``--json``: the whole view as JSON). Exit
(failures.py) 1 if the service refuses (with its reason), 2 for bad arguments, 3 for no such
table, 4 if it or its log does not answer (one line naming the address).

``--table`` is the table's id, as in every command. The table service defaults to what
`pokerctl up` runs (``--table-addr``, or POKER_TABLE_ADDR, overrides it) and may list several
instances, comma-separated: the command goes to one that answers, and is sent again with the
same command id for a few seconds while the one it reached is away (UNAVAILABLE).

The flags of before, refused for one release with a hint (exit 2): ``--table-id`` (now
``--table``) and ``--table ADDRESS`` (the address is now ``--table-addr``).
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import sys
import uuid

import grpc
from google.protobuf.json_format import MessageToJson
from poker.table.v1 import table_pb2, table_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.retry import CLI_RETRY, retrying_sync
from shared.infra.rpc import log_away
from shared.infra.tls import sync_channel
from shared.poker.players import printable
from shared.poker.shuffle import is_seed_hex, seed_digest

from .certs_cmd import client_tls_or_exit
from .datadir import default_table_addr
from .failures import (
    UNREACHABLE,
    USAGE,
    TableUnreachable,
    add_retired_flag,
    is_unreachable,
    log_away_line,
    looks_like_address,
    old_table_flag,
    refuse,
    reports_unreachable,
    status_exit,
)
from .table_addresses import AddressError, address_list, parse_addresses

ACTIONS = ("sit-out", "return", "top-up", "leave", "disconnect", "reconnect", "commit-seed",
           "reveal-seed")
#: what a bearer token may be made of (RFC 6750; a JWT is of these)
BEARER_TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")


def call_retrying(stub: table_pb2_grpc.TableServiceStub,
                  args: argparse.Namespace) -> table_pb2.TableReply:
    """The seat command ``args`` ask for, sent again with the same command id (applied once,
    whatever the attempts) while the instance it reached is away (shared/infra/retry.py's
    CLI_RETRY policy)."""
    method, request = command(stub, args)
    return retrying_sync(method, request, bearer_metadata(args.token), CLI_RETRY)


def command(stub: table_pb2_grpc.TableServiceStub, args: argparse.Namespace):
    """(the stub's method, its request) for the seat command ``args`` ask for."""
    seat = table_pb2.SeatRequest(table_id=args.table, seat=args.seat,
                                 seat_token=args.seat_token, command_id=args.command_id)
    if args.action in ("sit-out", "return"):
        return stub.SitOut, table_pb2.SitOutRequest(
            seat=seat, sit_out=args.action == "sit-out", post_big_blind=args.post_big_blind)
    if args.action == "top-up":
        return stub.TopUp, table_pb2.TopUpRequest(seat=seat, amount=args.amount)
    if args.action == "commit-seed":
        return stub.CommitSeed, table_pb2.SeedRequest(seat=seat, hand_no=args.hand,
                                                      seed_sha256=seed_digest(args.seed))
    if args.action == "reveal-seed":
        return stub.RevealSeed, table_pb2.SeedRequest(seat=seat, hand_no=args.hand,
                                                      seed=args.seed)
    return {"leave": stub.Leave, "disconnect": stub.Disconnect,
            "reconnect": stub.Reconnect}[args.action], seat


def describe(reply: table_pb2.TableReply, seat: int) -> str:
    view = reply.view
    s = next((s for s in view.seats if s.seat == seat), None)
    if s is None:
        state = "empty (left)"
    else:
        flags = [f"stack {s.stack}", "sitting out" if s.sitting_out else "playing",
                 "connected" if s.connected else "disconnected"]
        if s.in_hand and view.phase != "done":
            flags.append("folded" if s.folded else "in the hand")
        state = f"{printable(s.name or s.player_id)}: " + ", ".join(flags)
    line = (f"table {view.table_id} seat {seat} {state}; hand {view.hand_no}, "
            f"version {reply.version}")
    if view.to_act == seat and view.deadline_unix_ms:
        left = max(0, view.deadline_unix_ms - view.server_unix_ms) / 1000
        line += f"; on the clock, {left:.1f} s left"
    return line


def _seed_arguments(args: argparse.Namespace) -> str:
    """What is wrong with the seed arguments ("": nothing); a commit without ``--seed`` gets
    a fresh seed, printed on stderr for the reveal."""
    seeding = args.action in ("commit-seed", "reveal-seed")
    if not seeding:
        return "--hand and --seed go with commit-seed and reveal-seed" \
            if args.hand is not None or args.seed else ""
    if args.hand is None or args.hand < 1:
        return "--hand H (a hand number from 1) is required"
    if args.action == "commit-seed" and not args.seed:
        args.seed = secrets.token_hex(32)
        print(f"your seed for hand {args.hand} (keep it for reveal-seed): {args.seed}",
              file=sys.stderr)
    if not is_seed_hex(args.seed):
        return "--seed is 32 bytes as 64 lowercase hex digits"
    return ""


@reports_unreachable("pokerctl seat")
def run(args: argparse.Namespace) -> int:
    if args.retired_table_id is not None:
        return refuse("pokerctl seat: --table-id is now --table")
    if args.table is None:
        return refuse("pokerctl seat: --table T (the table's id) is required")
    if looks_like_address(args.table):
        return refuse(old_table_flag("pokerctl seat"))
    if not args.seat_token:
        print("pokerctl seat: --seat-token (or POKER_SEAT_TOKEN) is required: the seat token "
              "SitDown returned", file=sys.stderr)
        return USAGE
    if not args.token:
        print("pokerctl seat: --token (or POKER_TOKEN) is required: the player's token from "
              "the identity provider (`pokerctl token --player P` for `pokerctl up`)",
              file=sys.stderr)
        return USAGE
    if not BEARER_TOKEN.fullmatch(args.token):
        print("pokerctl seat: --token is not a token (a JWT: letters, digits and '-._~+/')",
              file=sys.stderr)
        return USAGE
    if args.action == "top-up" and (args.amount is None or args.amount <= 0):
        print("pokerctl seat top-up: --amount must be a positive number of chips",
              file=sys.stderr)
        return USAGE
    if args.action != "top-up" and args.amount is not None:
        print("pokerctl seat: --amount goes with top-up only", file=sys.stderr)
        return USAGE
    bad_seed = _seed_arguments(args)
    if bad_seed:
        print(f"pokerctl seat {args.action}: {bad_seed}", file=sys.stderr)
        return USAGE
    if args.post_big_blind and args.action != "return":
        print("pokerctl seat: --post-big-blind goes with return only", file=sys.stderr)
        return USAGE
    args.command_id = args.command_id or f"cli-{args.action}-{uuid.uuid4().hex[:16]}"
    try:
        target = ",".join(parse_addresses(args.table_addr))  # argparse checked it: a caller's
    except AddressError as exc:
        print(f"pokerctl seat: {exc}", file=sys.stderr)
        return USAGE
    with sync_channel(target, client_tls_or_exit(), service="table") as channel:
        try:
            reply = call_retrying(table_pb2_grpc.TableServiceStub(channel), args)
        except grpc.RpcError as exc:
            if log_away(exc):  # the service answered; its log did not
                print(log_away_line(f"pokerctl seat {args.action}", target, exc.details()),
                      file=sys.stderr)
                return UNREACHABLE
            if is_unreachable(exc):
                raise TableUnreachable(target, f"{exc.code().name}: {exc.details()}") from None
            print(f"pokerctl seat {args.action}: {exc.code().name}: {exc.details()}",
                  file=sys.stderr)
            return status_exit(exc.code())
    print(MessageToJson(reply, indent=None) if args.json else describe(reply, args.seat))
    return 0


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("seat", help=help)
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("--table", default=None, metavar="TABLE_ID", help="the table's id")
    add_retired_flag(p, "--table-id")  # now --table
    p.add_argument("--seat", type=int, required=True)
    p.add_argument("--seat-token", default=os.environ.get("POKER_SEAT_TOKEN", ""),
                   help="the seat token SitDown returned (default POKER_SEAT_TOKEN)")
    p.add_argument("--token", default=os.environ.get("POKER_TOKEN", ""),
                   help="the player's token from the identity provider, sent as "
                        "'authorization: Bearer' (default POKER_TOKEN)")
    p.add_argument("--amount", type=int, default=None, help="top-up: chips to add")
    p.add_argument("--hand", type=int, default=None,
                   help="commit-seed, reveal-seed: the hand the seed is for")
    p.add_argument("--seed", default="", metavar="HEX",
                   help="commit-seed (default: a fresh one), reveal-seed: your 32-byte seed "
                        "as 64 hex digits")
    p.add_argument("--post-big-blind", action="store_true",
                   help="return: post the missed blinds now (else wait for the big blind)")
    p.add_argument("--command-id", default=None,
                   help="idempotency key (default: a fresh one); reuse it to retry")
    p.add_argument("--json", action="store_true", help="print the whole view as JSON")
    p.add_argument("--table-addr", default=default_table_addr(), type=address_list,
                   help="table service address, or a comma-separated list of its instances "
                        "(default POKER_TABLE_ADDR or %(default)s)")
    p.set_defaults(run=run)
