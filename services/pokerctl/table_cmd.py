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
import shlex
import sys
import uuid
from collections.abc import Callable
from typing import Any, NoReturn

import grpc
from google.protobuf.json_format import MessageToJson
from poker.table.v1 import table_pb2, table_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.protomap import ACTION_KIND, ANTE_TYPE, GAME, STRUCTURE, TIMEOUT_POLICY
from shared.infra.retry import CLI_RETRY, PLAYER_RETRY, retrying, retrying_sync, watching
from shared.infra.rpc import log_away
from shared.infra.seattokens import new_seat_token
from shared.infra.tls import sync_channel
from shared.poker.errors import InvalidOptions
from shared.poker.events import ActionKind
from shared.poker.options import (
    NO_RAKE_CAP,
    AnteType,
    Game,
    Structure,
    TimeoutPolicy,
    buy_in_limits,
    table_options,
)
from shared.poker.players import printable

from .botclient import address_list, legal_from, parse_addresses, table_channel
from .certs_cmd import client_tls_or_exit
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
from .up import default_table_addr

#: the structure a game is played in unless told
DEFAULT_STRUCTURE = {Game.HOLDEM: Structure.NO_LIMIT, Game.OMAHA: Structure.POT_LIMIT,
                     Game.OMAHA_HILO: Structure.POT_LIMIT, Game.STUD: Structure.FIXED_LIMIT,
                     Game.STUD_HILO: Structure.FIXED_LIMIT}
#: what `act --action` takes: the ActionKind names, and all_in (a call, bet or raise)
ACTIONS = (*(a.value for a in ActionKind), "all_in")
_RAISES = (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE)
#: TableSettings' plain options: (flag's dest, help)
_INT_SETTINGS = (
    ("chip_unit", "the smallest chip"), ("small_blind", "no/pot limit: small blind"),
    ("big_blind", "no/pot limit: big blind"), ("small_bet", "fixed limit: the small bet"),
    ("big_bet", "fixed limit: the big bet (default 2x the small bet)"),
    ("ante", "the ante"), ("bring_in", "stud: the bring-in"),
    ("max_bets", "fixed limit: bets and raises per round"),
    ("rake_basis_points", "rake in 1/100 %% (500: 5%%)"), ("rake_cap", "rake cap per hand"),
    ("min_buy_in", "default 20 big blinds (stud: small bets)"),
    ("max_buy_in", "default 200 big blinds (stud: small bets)"),
    ("decision_seconds", "seconds per decision"),
    ("countdown_seconds", "then a visible countdown of this many seconds"),
    ("reconnect_bonus_seconds", "added once per decision on a reconnect"),
)


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

def settings_of(args: argparse.Namespace) -> tuple[table_pb2.TableSettings, tuple[int, int]]:
    """The TableSettings ``args`` ask for (the defaults filled in) and the table's buy-in
    range; checked here as the service checks them (InvalidOptions: bad arguments)."""
    game = Game(args.game)
    structure = Structure(args.structure) if args.structure else DEFAULT_STRUCTURE[game]
    ints = {name: getattr(args, name) for name, _ in _INT_SETTINGS
            if getattr(args, name) is not None}
    if args.seats is not None:
        ints["max_seats"] = args.seats
    if structure is Structure.FIXED_LIMIT:
        if "small_bet" not in ints:
            ints["small_bet"] = 10 if game.is_stud else 2
    elif "big_blind" not in ints:
        ints["big_blind"] = 2 * ints["small_blind"] if "small_blind" in ints else 2
        ints.setdefault("small_blind", 1)
    kwargs: dict[str, Any] = dict(ints)
    enums: dict[str, int] = {}
    if args.ante_type:
        kwargs["ante_type"] = AnteType(args.ante_type)
        enums["ante_type"] = ANTE_TYPE.to_pb(kwargs["ante_type"])
    elif ints.get("ante") and not game.is_stud:
        kwargs["ante_type"] = AnteType.PER_SEAT
        enums["ante_type"] = ANTE_TYPE.to_pb(AnteType.PER_SEAT)
    if args.timeout_policy:
        kwargs["timeout_policy"] = TimeoutPolicy(args.timeout_policy)
        enums["timeout_policy"] = TIMEOUT_POLICY.to_pb(kwargs["timeout_policy"])
    if args.private:
        kwargs["private"] = True
    if args.no_rake_cap:
        if "rake_cap" in ints:
            raise InvalidOptions("--rake-cap and --no-rake-cap: choose one")
        kwargs["rake_cap"] = NO_RAKE_CAP
    options = table_options(game, structure, wallet=True, **kwargs)  # InvalidOptions
    settings = table_pb2.TableSettings(game=GAME.to_pb(game),
                                       structure=STRUCTURE.to_pb(structure))
    for name, value in (*ints.items(), *enums.items()):
        setattr(settings, name, value)
    if args.private:
        settings.private = True
    if args.no_rake_cap:
        settings.no_rake_cap = True
    return settings, buy_in_limits(options)


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

def _seat_of(view: table_pb2.TableView, seat: int) -> table_pb2.SeatView | None:
    return next((s for s in view.seats if s.seat == seat), None)


def _allows(legal: table_pb2.Legal, to: int) -> bool:
    """Whether the view's legal actions let a bet or raise go to ``to``: the core's rule
    (:meth:`~shared.poker.betting.LegalActions.allows_raise_to`) on the view's numbers."""
    return legal_from(0, legal).allows_raise_to(to)


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
        legal, seat = view.legal, _seat_of(view, args.seat)
        everything = (seat.stack + seat.bet) if seat is not None else 0
        if legal.raise_kind and _allows(legal, everything):
            return ACTION_KIND.from_pb(legal.raise_kind), everything
        if legal.call and seat is not None and legal.call >= seat.stack:
            return ActionKind.CALL, None
        _usage(args, f"all in ({everything}) is not allowed now: {_options_text(view)}")
    action = ActionKind(args.action)
    if action in _RAISES:
        if amount is None:
            on_turn = view if view is not None and view.to_act == args.seat else None
            sizes = list(on_turn.legal.raise_sizes) if on_turn is not None else []
            if on_turn is not None and on_turn.legal.raise_kind and not sizes and \
                    on_turn.legal.min_to == on_turn.legal.max_to:
                sizes = [on_turn.legal.min_to]
            if len(sizes) != 1:
                hint = f": {_options_text(on_turn)}" if on_turn is not None else ""
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

def _names(view: table_pb2.TableView) -> tuple[str, str, str]:
    game = GAME.from_pb(view.game).value if view.game else "?"
    structure = STRUCTURE.from_pb(view.structure).value if view.structure else "?"
    return game, structure, view.stakes


def _options_text(view: table_pb2.TableView) -> str:
    return ", ".join(text for text, _ in legal_actions(view, ""))


def legal_actions(view: table_pb2.TableView, table: str) -> list[tuple[str, str]]:
    """The options of the player on turn: (what it is, the `pokerctl table act` line)."""
    if not view.to_act:
        return []
    legal, seat = view.legal, _seat_of(view, view.to_act)
    stack = seat.stack if seat is not None else 0
    base = f"pokerctl table act --table {shlex.quote(table)} --seat {view.to_act} --action"
    out: list[tuple[str, str]] = []
    if legal.bring_in:
        out.append((f"bring in {legal.bring_in}", f"{base} bring_in"))
    if legal.can_fold:
        out.append(("fold", f"{base} fold"))
    if legal.can_check:
        out.append(("check", f"{base} check"))
    if legal.call:
        all_in = " (all in)" if legal.call >= stack else ""
        out.append((f"call {legal.call}{all_in}", f"{base} call"))
    if legal.raise_kind:
        kind = ACTION_KIND.from_pb(legal.raise_kind).value
        if legal.raise_sizes:
            for size in legal.raise_sizes:
                out.append((f"{kind} to {size}", f"{base} {kind} --amount {size}"))
        elif legal.min_to == legal.max_to:
            out.append((f"{kind} to {legal.min_to}", f"{base} {kind} --amount {legal.min_to}"))
        else:
            out.append((f"{kind} to {legal.min_to}..{legal.max_to}",
                        f"{base} {kind} --amount {legal.min_to}"))
        everything = stack + (seat.bet if seat is not None else 0)
        if _allows(legal, everything):
            out.append((f"all in ({kind} to {everything})", f"{base} all_in"))
    return out


def _cards(cards) -> str:
    return " ".join(cards) if cards else "-"


def render(view: table_pb2.TableView, viewer: int, table: str) -> str:
    """The table as text: the hand, the board, the pots, each seat, and the options of the
    player on turn with the commands that take them."""
    game, structure, stakes = _names(view)
    flags = [f for f, on in (("paused", view.paused), ("closing", view.closing)) if on]
    lines = [f"table {view.table_id}: {game} {structure} {stakes}, {view.max_seats} seats"
             f"{' (' + ', '.join(flags) + ')' if flags else ''}; version {view.version}",
             f"hand {view.hand_no}: {view.phase}" + (f", street {view.street}, button seat "
                                                    f"{view.button}" if view.hand_no else "")]
    if view.hand_no:
        pots = ", ".join(f"{p.amount} (seats {','.join(map(str, p.eligible))})"
                         for p in view.pots)
        lines.append(f"board: {_cards(view.board)}   pot {view.pot}"
                     + (f" [{pots}]" if len(view.pots) > 1 else "")
                     + f"   current bet {view.current_bet}"
                     + (f"   rake {view.rake}" if view.rake else ""))
    for s in view.seats:
        notes = []
        if s.in_hand:
            notes.append("folded" if s.folded else "all in" if s.all_in else "in the hand")
        if s.sitting_out:
            notes.append("sitting out")
        if not s.connected:
            notes.append("disconnected")
        if s.pending:
            notes.append(f"{s.pending} chips on their way")
        if s.shown:
            notes.append("shown")
        if s.seat == viewer:
            notes.append("you")
        turn = "-> " if s.seat == view.to_act else "   "
        cards = f"  cards {_cards(s.cards)}" if s.cards else ""
        shown = printable(s.name or s.player_id)
        lines.append(f"{turn}seat {s.seat}  {shown:<12} stack {s.stack:<7} bet "
                     f"{s.bet:<6}{cards}  ({', '.join(notes) or 'waiting'})")
    if view.to_act:
        seat = _seat_of(view, view.to_act)
        who = f"seat {view.to_act}" + (
            f" ({printable(seat.name or seat.player_id)})" if seat is not None else "")
        clock = ""
        if view.deadline_unix_ms and view.server_unix_ms:
            left = max(0, view.deadline_unix_ms - view.server_unix_ms) / 1000
            clock = f", {left:.1f} s on the clock"
        legal = view.legal
        lines.append(f"{who} to act{clock}: call {legal.call}, can check "
                     f"{'yes' if legal.can_check else 'no'}, "
                     + (f"{ACTION_KIND.from_pb(legal.raise_kind).value} "
                        + (f"sizes {list(legal.raise_sizes)}" if legal.raise_sizes
                           else f"min_to {legal.min_to} max_to {legal.max_to}")
                        if legal.raise_kind else "no bet or raise")
                     + (f", bring-in {legal.bring_in}" if legal.bring_in else ""))
        options = legal_actions(view, table)
        width = max(len(text) for text, _ in options) if options else 0
        for text, command in options:
            lines.append(f"  {text:<{width}}   {command}")
    elif view.hand_no and view.phase != "done":
        lines.append("nobody to act: the dealer carries on")
    return "\n".join(lines)


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

class Follower:
    """The line of each new view, and a line when a hand is over (said once per hand, even
    when the stream skipped its last view)."""

    def __init__(self, table: str, viewer: int, full: bool,
                 out: Callable[[str], None]) -> None:
        self.table, self.viewer, self.full, self.out = table, viewer, full, out
        self.hand = 0
        self.ended: set[int] = set()

    def show(self, view: table_pb2.TableView) -> None:
        if self.hand and view.hand_no != self.hand and self.hand not in self.ended:
            self.ended.add(self.hand)
            self.out(f"hand {self.hand} is over")
        self.hand = view.hand_no
        if self.full:
            self.out(render(view, self.viewer, self.table) + "\n")
        else:
            self.out(self.line(view))
        if view.phase == "done" and view.hand_no not in self.ended:
            self.ended.add(view.hand_no)
            stacks = ", ".join(f"seat {s.seat} {printable(s.name or s.player_id)} {s.stack}"
                               for s in view.seats)
            self.out(f"hand {view.hand_no} is over: {stacks}")

    def line(self, view: table_pb2.TableView) -> str:
        text = f"v{view.version} hand {view.hand_no} {view.phase}"
        if view.hand_no:
            text += f"  board {_cards(view.board)}  pot {view.pot}"
        for s in view.seats:
            if s.shown and s.cards:
                text += f"  seat {s.seat} shows {_cards(s.cards)}"
        mine = _seat_of(view, self.viewer) if self.viewer else None
        if mine is not None and mine.cards:
            text += f"  your cards {_cards(mine.cards)}"
        if view.to_act:
            seat = _seat_of(view, view.to_act)
            who = printable(seat.name or seat.player_id) if seat is not None else "?"
            text += f"  to act: seat {view.to_act} ({who}): {_options_text(view)}"
        return text


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


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("table", help=help, description=__doc__,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    tsub = p.add_subparsers(dest="table_command", required=True)

    def command(name: str, handler, help: str, table_required: bool = True):
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

    def seat_token(c, required_help: str) -> None:
        c.add_argument("--seat-token", default=os.environ.get("POKER_SEAT_TOKEN", ""),
                       help=f"the seat token `pokerctl table sit` printed (default "
                            f"POKER_SEAT_TOKEN){required_help}")

    c = command("create", _create, "create a table (an operator's token)",
                table_required=False)
    c.add_argument("--game", choices=[g.value for g in Game], default=Game.HOLDEM.value)
    c.add_argument("--structure", choices=[s.value for s in Structure], default=None,
                   help="default: no_limit for hold'em, pot_limit for omaha, fixed_limit "
                        "for stud")
    c.add_argument("--seats", type=int, default=None, help="seats at the table (default: "
                                                           "the game's most, 10; stud 8)")
    for name, text in _INT_SETTINGS:
        c.add_argument("--" + name.replace("_", "-"), dest=name, type=int, default=None,
                       metavar="N", help=text)
    c.add_argument("--ante-type", choices=[a.value for a in AnteType if a is not AnteType.NONE],
                   default=None, help="with --ante (default per_seat)")
    c.add_argument("--timeout-policy", choices=[t.value for t in TimeoutPolicy], default=None)
    c.add_argument("--private", action="store_true",
                   help="spectators need an operator's role or a seat")
    c.add_argument("--no-rake-cap", action="store_true",
                   help="take the rake without a cap (default: the rule book's cap, three big "
                        "blinds, or one big bet in fixed limit)")
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true", help="print the table id and buy-in range "
                                                       "as JSON")

    c = command("sit", _sit, "sit down and buy in from your wallet (a player's token)")
    c.add_argument("--seat", type=int, required=True)
    c.add_argument("--buy-in", type=int, required=True, metavar="CHIPS")
    c.add_argument("--post-big-blind", action="store_true",
                   help="at a running table: post a big blind to be dealt in at once")
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true",
                   help="print the seat and its token as JSON")

    c = command("resume", _resume, "a new seat token for your seat, the old one revoked (a "
                                   "player's token)")
    c.add_argument("--seat", type=int, required=True)
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true",
                   help="print the seat and its new token as JSON")

    c = command("act", _act, "act in the hand as the player on turn")
    c.add_argument("--seat", type=int, required=True)
    seat_token(c, "")
    c.add_argument("--action", required=True, choices=ACTIONS)
    c.add_argument("--amount", type=int, default=None,
                   help="bet/raise/complete: the total bet this round after it")
    c.add_argument("--hand", type=int, default=None,
                   help="the hand acted in (default: the table's current hand)")
    c.add_argument("--command-id", default=None)
    c.add_argument("--json", action="store_true", help="print the reply as JSON")

    for name, handler, text in (
            ("state", _state, "the table, and what the player on turn may do"),
            ("watch", _watch, "follow the table live until Ctrl-C")):
        c = command(name, handler, text)
        c.add_argument("--seat", type=int, default=0,
                       help="your seat: its own cards (needs its seat token); default: as a "
                            "spectator")
        seat_token(c, "; only with --seat")
        if name == "state":
            c.add_argument("--json", action="store_true", help="print the view as JSON only")
        else:
            c.add_argument("--full", action="store_true",
                           help="print the whole state block of every view")
