"""`pokerctl table`: a player's or an operator's client of the TableService, enough to play a
whole hand from two terminals.

    pokerctl table create [--table T] [--game holdem|omaha|omaha_hilo|stud|stud_hilo]
                          [--structure no_limit|pot_limit|fixed_limit] [--seats N]
                          [--small-blind N --big-blind N | --small-bet N --big-bet N]
                          [--ante N --ante-type per_seat|big_blind] [--bring-in N]
                          [--min-buy-in N --max-buy-in N] [--decision-seconds S] ...
    pokerctl table sit   --table T --seat N --buy-in A [--post-big-blind] [--json]
    pokerctl table resume --table T --seat N [--json]
    pokerctl table act   --table T --seat N --action fold|check|call|bet|raise|complete|
                                                     bring_in|all_in [--amount A] [--hand N]
    pokerctl table state --table T [--seat N --seat-token S] [--json]
    pokerctl table watch --table T [--seat N --seat-token S] [--full]

Every command sends the caller's token (``--token`` or POKER_TOKEN) as ``authorization:
Bearer``: an operator's to create (against `pokerctl up`: ``pokerctl token --player ops --role
operator``), the player's to sit and act (``pokerctl token --player alice``), any valid one
to follow a public table. ``sit`` makes the seat's token here (the table keeps its SHA-256
only), prints it alone on stdout and the line that keeps it on stderr (``export
POKER_SEAT_TOKEN=...``); ``act`` and a seat's ``state``/``watch`` need it (``--seat-token``
or POKER_SEAT_TOKEN). A player who lost it (another machine, a lost shell) gets a new one with
``resume``, proving who they are with their token: the old seat token stops working. A buy-in comes from the player's wallet: against `pokerctl up` deposit
first (``pokerctl wallet deposit --player alice --amount 200``).

``create`` fills in what the game and structure need (no limit and pot limit: blinds 1/2;
fixed limit: bets 2/4, stud 10/20) and prints the table id and its buy-in range. ``act``
takes the hand number from the table's state unless ``--hand`` is given; ``all_in`` is a
call, bet or raise of the whole stack; a bet or raise without ``--amount`` is refused unless
one size is legal. ``state`` prints the table with the legal actions of the player on turn and
the ``pokerctl table act`` lines that take them (``--json``: the view alone); ``watch`` prints
a line per new view (``--full``: the state block) until Ctrl-C, resuming a broken stream from
the last version seen.

``--table-addr`` (default POKER_TABLE_ADDR, else `pokerctl up`'s table service): an address or
a comma-separated list of instances. ``--command-id``: the same id makes a retry harmless
(default: a fresh one). Exit (failures.py) 0: done; 1: the service refused (``pokerctl table
act: STATUS: reason`` on stderr); 2: bad arguments (or INVALID_ARGUMENT); 3: no such table;
4: the service (or its log) cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import os
import sys
import uuid
from collections.abc import Callable
from typing import Any, NoReturn

import grpc
from google.protobuf.json_format import MessageToJson
from poker.table.v1 import table_pb2, table_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.protomap import ACTION_KIND, GAME, STRUCTURE
from shared.infra.retry import CLI_RETRY, PLAYER_RETRY, retrying, retrying_sync, watching
from shared.infra.rpc import log_away
from shared.infra.seattokens import new_seat_token
from shared.infra.tls import sync_channel
from shared.poker.errors import InvalidOptions
from shared.poker.events import ActionKind

from .certs_cmd import client_tls_or_exit
from .datadir import default_table_addr
from .failures import (
    FAILED,
    UNREACHABLE,
    USAGE,
    TableUnreachable,
    is_unreachable,
    log_away_line,
    one_line,
    status_exit,
    unreachable_line,
)
from .table_addresses import address_list, parse_addresses, table_channel
from .table_settings import add_settings_arguments, settings_of
from .table_text import Follower, allows_raise_to, options_text, render, seat_of

#: what `act --action` takes: the ActionKind names, and all_in (a call, bet or raise)
ACTIONS = (*(a.value for a in ActionKind), "all_in")
_RAISES = (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE)


class Fail(Exception):
    """A command's end with an error: one line for stderr and the exit code."""

    def __init__(self, line: str, code: int = FAILED) -> None:
        super().__init__(line)
        self.line, self.code = line, code


def _prog(args: argparse.Namespace) -> str:
    return f"pokerctl table {args.table_command}"


def _usage(args: argparse.Namespace, message: str) -> NoReturn:
    raise Fail(f"{_prog(args)}: {message}", USAGE)


def _subject(token: str) -> str | None:
    """The token's subject, read without checking it (for a hint only)."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return str(claims["sub"])
    except (IndexError, ValueError, KeyError, TypeError):
        return None


def _auth(args: argparse.Namespace, who: str) -> tuple:
    if not args.token:
        _usage(args, f"--token (or POKER_TOKEN) is required: {who}")
    try:
        return bearer_metadata(args.token)
    except ValueError:
        _usage(args, "--token is not a token (a JWT: letters, digits and '-._~+/')")


def _refusal(args: argparse.Namespace, exc: grpc.RpcError) -> Fail:
    """The one line a refused or failed call ends the command with."""
    code = exc.code() if callable(getattr(exc, "code", None)) else grpc.StatusCode.UNKNOWN
    details = one_line(exc.details() if callable(getattr(exc, "details", None)) else str(exc),
                       limit=10_000)  # the service's reason whole
    lower = details.lower()
    if log_away(exc):  # the service answered; its log did not
        return Fail(log_away_line(_prog(args), args.table_addr, details), UNREACHABLE)
    if is_unreachable(exc):  # the one rule of what "unreachable" is (failures.py)
        return Fail(unreachable_line(_prog(args), TableUnreachable(
            args.table_addr, f"{code.name}: {details[:160]}")), UNREACHABLE)
    line = f"{_prog(args)}: {code.name}: {details}"
    if code is grpc.StatusCode.FAILED_PRECONDITION and "wallet" in lower and \
            args.table_command == "sit":
        player = _subject(args.token) or "P"
        line += (f" (the buy-in comes from your wallet: against `pokerctl up` deposit first "
                 f"with `pokerctl wallet deposit --player {player} --amount N`)")
    elif code in (grpc.StatusCode.PERMISSION_DENIED, grpc.StatusCode.UNAUTHENTICATED):
        if args.table_command == "create":
            line += (" (creating a table needs an operator's token: `pokerctl token --player "
                     "ops --role operator`)")
        elif args.table_command in ("act", "sit"):
            line += (" (a player's own token, `pokerctl token --player P`, and for act the "
                     "seat token `pokerctl table sit` printed)")
    return Fail(line, status_exit(code))


class Client:
    """The blocking TableService stub of one command, each call retried (CLI_RETRY)."""

    def __init__(self, args: argparse.Namespace, metadata: tuple) -> None:
        self.args, self.metadata = args, metadata
        target = ",".join(parse_addresses(args.table_addr))
        self.channel = sync_channel(target, client_tls_or_exit(), service="table")
        self.stub = table_pb2_grpc.TableServiceStub(self.channel)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.channel.close()

    def call(self, method: str, request) -> Any:
        try:
            return retrying_sync(getattr(self.stub, method), request, self.metadata, CLI_RETRY)
        except grpc.RpcError as exc:
            raise _refusal(self.args, exc) from None

    def state(self, seat: int = 0, seat_token: str = "") -> table_pb2.TableView:
        return self.call("GetState", table_pb2.ViewRequest(
            table_id=self.args.table, seat=seat, seat_token=seat_token))


def _command_id(args: argparse.Namespace) -> str:
    return args.command_id or f"cli-{args.table_command}-{uuid.uuid4().hex}"


def _to_json(message) -> str:
    return MessageToJson(message, indent=None, always_print_fields_with_no_presence=True)


# --- create ----------------------------------------------------------------------------------

def _create(args: argparse.Namespace) -> int:
    metadata = _auth(args, "an operator's token (`pokerctl token --player ops --role operator` "
                           "for `pokerctl up`)")
    try:
        settings, (low, high) = settings_of(args)
    except InvalidOptions as exc:
        _usage(args, str(exc))
    with Client(args, metadata) as client:
        reply = client.call("CreateTable", table_pb2.CreateTableRequest(
            table_id=args.table or "", settings=settings, command_id=_command_id(args)))
        view = client.state()
    if args.json:
        print(json.dumps({"table_id": reply.table_id, "version": reply.version,
                          "min_buy_in": low, "max_buy_in": high, "stakes": view.stakes,
                          "max_seats": view.max_seats}))
        return 0
    game = GAME.from_pb(settings.game).value
    structure = STRUCTURE.from_pb(settings.structure).value
    print(f"table {reply.table_id}: {game} {structure} {view.stakes}, {view.max_seats} seats; "
          f"buy-in {low} to {high} chips")
    print(f"sit down: pokerctl table sit --table {reply.table_id} --seat 1 --buy-in {high // 2 or low}")
    return 0


# --- sit -------------------------------------------------------------------------------------

def _sit(args: argparse.Namespace) -> int:
    metadata = _auth(args, "the player's token (`pokerctl token --player P` for `pokerctl up`)")
    if args.buy_in <= 0:
        _usage(args, "--buy-in must be a positive number of chips")
    # our own seat token: only its digest travels, so a retried SitDown is safe
    token, digest = new_seat_token()
    with Client(args, metadata) as client:
        reply = client.call("SitDown", table_pb2.SitDownRequest(
            table_id=args.table, seat=args.seat, buy_in=args.buy_in,
            post_big_blind=args.post_big_blind, seat_token_sha256=digest,
            command_id=_command_id(args)))
    if args.json:
        print(json.dumps({"table_id": args.table, "seat": args.seat, "buy_in": args.buy_in,
                          "seat_token": token, "version": reply.version}))
    else:
        print(token)
    print(f"seated at table {args.table} seat {args.seat} with {args.buy_in} chips; keep the "
          f"seat token (act, state and watch read it):\n  export POKER_SEAT_TOKEN={token}",
          file=sys.stderr)
    return 0


def _resume(args: argparse.Namespace) -> int:
    metadata = _auth(args, "the player's token (`pokerctl token --player P` for `pokerctl up`)")
    token, digest = new_seat_token()  # a new seat token of our own: only its digest travels
    with Client(args, metadata) as client:
        reply = client.call("ResumeSeat", table_pb2.ResumeSeatRequest(
            table_id=args.table, seat=args.seat, seat_token_sha256=digest,
            command_id=_command_id(args)))
    if args.json:
        print(json.dumps({"table_id": args.table, "seat": args.seat, "seat_token": token,
                          "version": reply.version}))
    else:
        print(token)
    print(f"seat {args.seat} at table {args.table} has a new seat token (the old one no longer "
          f"works):\n  export POKER_SEAT_TOKEN={token}", file=sys.stderr)
    return 0


# --- act -------------------------------------------------------------------------------------

def resolve_action(args: argparse.Namespace, view: table_pb2.TableView | None
                   ) -> tuple[ActionKind, int | None]:
    """The action and amount ``args`` ask for (all_in, and a single legal size, made
    explicit from the view of the table)."""
    amount = args.amount
    if args.action == "all_in":
        if amount is not None:
            _usage(args, "all_in takes no --amount")
        if view is None or view.to_act != args.seat:
            return ActionKind.CALL, None  # not on turn: the service says so
        legal, seat = view.legal, seat_of(view, args.seat)
        everything = (seat.stack + seat.bet) if seat is not None else 0
        if legal.raise_kind and allows_raise_to(legal, everything):
            return ACTION_KIND.from_pb(legal.raise_kind), everything
        if legal.call and seat is not None and legal.call >= seat.stack:
            return ActionKind.CALL, None
        _usage(args, f"all in ({everything}) is not allowed now: {options_text(view)}")
    action = ActionKind(args.action)
    if action in _RAISES:
        if amount is None:
            on_turn = view if view is not None and view.to_act == args.seat else None
            sizes = list(on_turn.legal.raise_sizes) if on_turn is not None else []
            if on_turn is not None and on_turn.legal.raise_kind and not sizes and \
                    on_turn.legal.min_to == on_turn.legal.max_to:
                sizes = [on_turn.legal.min_to]
            if len(sizes) != 1:
                hint = f": {options_text(on_turn)}" if on_turn is not None else ""
                _usage(args, f"{action.value} needs --amount, the total bet this round after "
                             f"it{hint}")
            amount = sizes[0]
        if amount <= 0:
            _usage(args, "--amount must be a positive number of chips")
    elif amount is not None:
        _usage(args, f"{action.value} takes no --amount")
    return action, amount


def _act(args: argparse.Namespace) -> int:
    metadata = _auth(args, "the player's token (`pokerctl token --player P` for `pokerctl up`)")
    if not args.seat_token:
        _usage(args, "--seat-token (or POKER_SEAT_TOKEN) is required: the seat token "
                     "`pokerctl table sit` printed")
    with Client(args, metadata) as client:
        needs_view = args.hand is None or args.action == "all_in" or (
            args.amount is None and args.action in ("bet", "raise", "complete"))
        view = client.state(args.seat, args.seat_token) if needs_view else None
        action, amount = resolve_action(args, view)
        hand = args.hand if args.hand is not None else view.hand_no if view is not None else 0
        request = table_pb2.ActRequest(
            table_id=args.table, seat=args.seat, seat_token=args.seat_token, hand_no=hand,
            action=ACTION_KIND.to_pb(action), command_id=_command_id(args))
        if amount is not None:
            request.amount = amount
        reply = client.call("Act", request)
    if args.json:
        print(_to_json(reply))
    else:
        what = action.value.replace("_", " ") + (f" to {amount}" if amount is not None else "")
        print(f"seat {args.seat}: {what} (hand {hand}, version {reply.version})")
        if reply.view.hand_no != hand:
            print(f"hand {hand} is over; hand {reply.view.hand_no} is on")
        print(render(reply.view, args.seat, args.table))
    return 0


# --- state -----------------------------------------------------------------------------------

def _view_request(args: argparse.Namespace) -> table_pb2.ViewRequest:
    if args.seat and not args.seat_token:
        _usage(args, "--seat needs the seat's token (--seat-token or POKER_SEAT_TOKEN); leave "
                     "--seat out to watch as a spectator")
    return table_pb2.ViewRequest(table_id=args.table, seat=args.seat or 0,
                                 seat_token=args.seat_token if args.seat else "")


def _state(args: argparse.Namespace) -> int:
    metadata = _auth(args, "any valid token (`pokerctl token --player P` for `pokerctl up`)")
    request = _view_request(args)
    with Client(args, metadata) as client:
        view = client.call("GetState", request)
    print(_to_json(view) if args.json else render(view, request.seat, args.table))
    return 0


# --- watch -----------------------------------------------------------------------------------

async def _follow(args: argparse.Namespace, metadata: tuple,
                  request: table_pb2.ViewRequest) -> None:
    def out(text: str) -> None:
        print(text, flush=True)

    follower = Follower(args.table, request.seat, args.full, out)
    async with table_channel(args.table_addr, client_tls_or_exit()) as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        try:
            first = await retrying(stub.GetState, request, metadata, CLI_RETRY)
            follower.show(first)
            request.after_version = first.version
            # a stream that breaks is opened again from the last version seen
            async for view in watching(stub.Watch, request, metadata, PLAYER_RETRY):
                follower.show(view)
        except grpc.aio.AioRpcError as exc:
            raise _refusal(args, exc) from None


def _watch(args: argparse.Namespace) -> int:
    metadata = _auth(args, "any valid token (`pokerctl token --player P` for `pokerctl up`)")
    request = _view_request(args)
    asyncio.run(_follow(args, metadata, request))
    print(f"{_prog(args)}: the service ended the stream", file=sys.stderr)
    return 0


# --- the parser ------------------------------------------------------------------------------

def run(args: argparse.Namespace) -> int:
    try:
        return args.handler(args)
    except Fail as fail:
        print(fail.line, file=sys.stderr)
        return fail.code


def _command(tsub: argparse._SubParsersAction, name: str, handler: Callable[..., int],
             help: str, table_required: bool = True) -> argparse.ArgumentParser:
    """A subcommand with the flags every one takes: the table, the caller's token, the
    table service's address."""
    c = tsub.add_parser(name, help=help)
    c.add_argument("--table", required=table_required, default="" if not table_required
                   else None, metavar="TABLE_ID", help="the table's id")
    c.add_argument("--token", default=os.environ.get("POKER_TOKEN", ""),
                   help="your token from the identity provider, sent as 'authorization: "
                        "Bearer' (default POKER_TOKEN)")
    c.add_argument("--table-addr", default=default_table_addr(), type=address_list,
                   help="table service address, or a comma-separated list of its "
                        "instances (default POKER_TABLE_ADDR or %(default)s)")
    c.set_defaults(run=run, handler=handler)
    return c


def _seat_token_flag(c: argparse.ArgumentParser, required_help: str) -> None:
    c.add_argument("--seat-token", default=os.environ.get("POKER_SEAT_TOKEN", ""),
                   help=f"the seat token `pokerctl table sit` printed (default "
                        f"POKER_SEAT_TOKEN){required_help}")


def _register_seating(tsub: argparse._SubParsersAction) -> None:
    """``sit`` and ``resume``."""
    c = _command(tsub, "sit", _sit, "sit down and buy in from your wallet (a player's token)")
    c.add_argument("--seat", type=int, required=True)
    c.add_argument("--buy-in", type=int, required=True, metavar="CHIPS")
    c.add_argument("--post-big-blind", action="store_true",
                   help="at a running table: post a big blind to be dealt in at once")
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true",
                   help="print the seat and its token as JSON")

    c = _command(tsub, "resume", _resume, "a new seat token for your seat, the old one "
                                          "revoked (a player's token)")
    c.add_argument("--seat", type=int, required=True)
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true",
                   help="print the seat and its new token as JSON")


def _register_reading(tsub: argparse._SubParsersAction) -> None:
    """``state`` and ``watch``."""
    for name, handler, text in (
            ("state", _state, "the table, and what the player on turn may do"),
            ("watch", _watch, "follow the table live until Ctrl-C")):
        c = _command(tsub, name, handler, text)
        c.add_argument("--seat", type=int, default=0,
                       help="your seat: its own cards (needs its seat token); default: as a "
                            "spectator")
        _seat_token_flag(c, "; only with --seat")
        if name == "state":
            c.add_argument("--json", action="store_true", help="print the view as JSON only")
        else:
            c.add_argument("--full", action="store_true",
                           help="print the whole state block of every view")


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("table", help=help, description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    tsub = p.add_subparsers(dest="table_command", required=True)

    c = _command(tsub, "create", _create, "create a table (an operator's token)",
                 table_required=False)
    add_settings_arguments(c)
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true", help="print the table id and buy-in range "
                                                       "as JSON")

    _register_seating(tsub)

    c = _command(tsub, "act", _act, "act in the hand as the player on turn")
    c.add_argument("--seat", type=int, required=True)
    _seat_token_flag(c, "")
    c.add_argument("--action", required=True, choices=ACTIONS)
    c.add_argument("--amount", type=int, default=None,
                   help="bet/raise/complete: the total bet this round after it")
    c.add_argument("--hand", type=int, default=None,
                   help="the hand acted in (default: the table's current hand)")
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true", help="print the reply as JSON")

    _register_reading(tsub)
