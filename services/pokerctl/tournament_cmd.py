"""`pokerctl tournament`: create, register for, start and follow tournaments through the
director (services/tournament).

    pokerctl tournament create [--id ID] [--name N] [--players 9] [--scheduled]
                               [--buy-in 100] [--fee 10] [--stack 1500] [--minutes 5]
                               [--late-levels 0] [--max-entries 1] [--guarantee 0]
                               [--seats-per-table 9] [--decision-seconds 15]
                               [--rebuy-levels 0 --rebuy-chips C --rebuy-price P
                                --max-rebuys N] [--add-on-chips C --add-on-price P]
    pokerctl tournament register ID [--player P]     (prints the seat token to play with)
    pokerctl tournament unregister ID [--player P]
    pokerctl tournament rebuy ID [--player P]        (during the rebuy period)
    pokerctl tournament addon ID [--player P]        (its last level, or the break after)
    pokerctl tournament start ID
    pokerctl tournament status ID [--json]
    pokerctl tournament watch ID                     (a line per change until it ends)

``create`` with no options makes a 9-player no-limit hold'em sit-and-go (it starts when
full) and prints its id. Calls carry ``--token`` (or POKER_TOKEN); without one, against
`pokerctl up`, a token of its identity provider: an operator's (create, start), or
``--player``'s (register, unregister, rebuy, addon). The director defaults to `up`'s
(``--addr`` or POKER_TOURNAMENT_ADDR overrides). Exit 1 when the director refuses (with its
reason) or does not answer, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid

import grpc
from google.protobuf.json_format import MessageToJson
from poker.tournament.v1 import tournament_pb2 as pb
from poker.tournament.v1 import tournament_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.config import service_address
from shared.infra.devissuer import DevIssuer
from shared.infra.identity import OPERATOR, PLAYER
from shared.infra.seattokens import new_seat_token
from shared.infra.tls import sync_channel

from .certs_cmd import client_tls_or_exit
from .datadir import default_data_dir, up_env
from .token_cmd import identity_dir

ACTIONS = ("create", "register", "unregister", "rebuy", "addon", "start", "status", "watch")
#: the actions a player takes (as ``--player`` or ``--token``)
PLAYER_ACTIONS = ("register", "unregister", "rebuy", "addon")
#: how often `watch` reads the tournament
WATCH_EVERY_S = 0.5


def default_tournament_addr() -> str:
    """POKER_TOURNAMENT_ADDR, else `up`'s director (its env file), else POKER_BASE_PORT + 9."""
    if os.environ.get("POKER_TOURNAMENT_ADDR"):
        return service_address("tournament", os.environ)
    return up_env(default_data_dir()).get("POKER_TOURNAMENT_ADDR") or service_address(
        "tournament", os.environ)


def _token(args: argparse.Namespace, subject: str, role: str) -> tuple:
    token = args.token or DevIssuer.create(identity_dir(None)).token(subject, (role,))
    return bearer_metadata(token)


def structure(args: argparse.Namespace) -> pb.Structure:
    blinds = ((10, 20), (15, 30), (25, 50), (50, 100), (75, 150), (100, 200), (150, 300),
              (200, 400), (300, 600), (400, 800), (600, 1200), (800, 1600), (1000, 2000))
    return pb.Structure(
        scheduled=args.scheduled, starting_stack=args.stack, buy_in=args.buy_in, fee=args.fee,
        max_players=args.players, min_players=2 if args.scheduled else args.players,
        seats_per_table=args.seats_per_table or min(args.players, 9),
        late_levels=args.late_levels, max_entries=args.max_entries, guarantee=args.guarantee,
        decision_seconds=args.decision_seconds, rebuy_levels=args.rebuy_levels,
        rebuy_chips=args.rebuy_chips, rebuy_price=args.rebuy_price,
        max_rebuys=args.max_rebuys, add_on_chips=args.add_on_chips,
        add_on_price=args.add_on_price,
        levels=[pb.Level(small_blind=sb, big_blind=bb, ante=bb // 10 if i >= 3 else 0,
                         minutes=args.minutes) for i, (sb, bb) in enumerate(blinds)])


def describe(v: pb.TournamentView) -> str:
    inn = sum(e.status == "paid" for e in v.entries)
    line = (f"tournament {v.tournament_id} ({v.name}): {v.status}, {inn} in of "
            f"{sum(e.status in ('paid', 'busted') for e in v.entries)} entries")
    if v.level:
        lv = v.structure.levels[v.level - 1]
        line += (f", level {v.level} ({lv.small_blind}/{lv.big_blind}"
                 f"{f' ante {lv.ante}' if lv.ante else ''})")
    if v.tables:
        line += ", tables " + " ".join(f"{t.table_id}:{len(t.players)}" for t in v.tables
                                       if t.players)
    if v.prize_pool:
        line += f", pool {v.prize_pool} ({'/'.join(str(p) for p in v.prizes)})"
    if v.hand_for_hand:
        line += ", hand-for-hand"
    if v.winner:
        line += f", won by {v.winner}"
    return line


def _call(args: argparse.Namespace, stub) -> pb.TournamentView:
    cid = args.command_id or f"cli-{uuid.uuid4().hex[:16]}"
    if args.action == "create":
        return stub.CreateTournament(pb.CreateTournamentRequest(
            tournament_id=args.id or "", name=args.name or "", structure=structure(args),
            command_id=cid), metadata=_token(args, "ops", OPERATOR))
    if args.action == "register":
        token, digest = new_seat_token()
        reply = stub.Register(pb.RegisterRequest(
            tournament_id=args.tournament, seat_token_sha256=digest, command_id=cid),
            metadata=_token(args, args.player, PLAYER))
        print(token)  # the seat token: every seat the director gives this player
        print(f"export POKER_SEAT_TOKEN={token}", file=sys.stderr)
        return reply
    if args.action in ("unregister", "rebuy", "addon"):
        call = {"unregister": stub.Unregister, "rebuy": stub.Rebuy,
                "addon": stub.AddOn}[args.action]
        return call(pb.TournamentCommand(tournament_id=args.tournament, command_id=cid),
                    metadata=_token(args, args.player, PLAYER))
    if args.action == "start":
        return stub.Start(pb.TournamentCommand(tournament_id=args.tournament, command_id=cid),
                          metadata=_token(args, "ops", OPERATOR))
    return stub.GetTournament(pb.GetTournamentRequest(tournament_id=args.tournament),
                              metadata=_token(args, "ops", OPERATOR))


def run(args: argparse.Namespace) -> int:
    if args.action != "create" and not args.tournament:
        print(f"pokerctl tournament {args.action}: give the tournament's id", file=sys.stderr)
        return 2
    if args.action in PLAYER_ACTIONS and not (args.player or args.token):
        print(f"pokerctl tournament {args.action}: --player P (or --token)", file=sys.stderr)
        return 2
    with sync_channel(args.addr, client_tls_or_exit(), service="tournament") as channel:
        stub = tournament_pb2_grpc.TournamentServiceStub(channel)
        try:
            view = _call(args, stub)
            if args.action == "watch":
                return _watch(args, stub, view)
        except grpc.RpcError as exc:
            print(f"pokerctl tournament {args.action}: {exc.code().name}: {exc.details()}",
                  file=sys.stderr)
            return 1
    if args.action == "create":
        print(view.tournament_id)
    elif args.json:
        print(MessageToJson(view, indent=None))
    else:
        print(describe(view))
    return 0


def _watch(args: argparse.Namespace, stub, view: pb.TournamentView) -> int:
    seen = -1
    while True:
        if view.version != seen:
            print(MessageToJson(view, indent=None) if args.json else describe(view),
                  flush=True)
            seen = view.version
        if view.status in ("finished", "cancelled"):
            return 0
        time.sleep(WATCH_EVERY_S)
        view = _call(args, stub)


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("tournament", help=help)
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("tournament", nargs="?", default="", metavar="ID")
    p.add_argument("--id", default="", help="create: the new tournament's id (default: made)")
    p.add_argument("--name", default="")
    p.add_argument("--players", type=int, default=9,
                   help="create: the field (a sit-and-go starts when full; default 9)")
    p.add_argument("--scheduled", action="store_true",
                   help="create: a multi-table tournament an operator starts")
    p.add_argument("--buy-in", type=int, default=100)
    p.add_argument("--fee", type=int, default=10)
    p.add_argument("--stack", type=int, default=1500, help="create: the starting stack")
    p.add_argument("--minutes", type=float, default=5.0, help="create: minutes a level")
    p.add_argument("--late-levels", type=int, default=0,
                   help="create: registration stays open this many levels (scheduled)")
    p.add_argument("--max-entries", type=int, default=1,
                   help="create: entries a player may buy (above 1: re-entries)")
    p.add_argument("--guarantee", type=int, default=0)
    p.add_argument("--seats-per-table", type=int, default=0)
    p.add_argument("--rebuy-levels", type=int, default=0,
                   help="create: rebuys open while fewer than this many levels are over "
                        "(0: none); a rebuy needs a stack of at most the starting stack")
    p.add_argument("--rebuy-chips", type=int, default=0, help="create: chips a rebuy adds")
    p.add_argument("--rebuy-price", type=int, default=0,
                   help="create: a rebuy's price (all to the prize pool, no fee)")
    p.add_argument("--max-rebuys", type=int, default=0, help="create: rebuys per player")
    p.add_argument("--add-on-chips", type=int, default=0,
                   help="create: the add-on's chips (0: none), once a player, any stack, "
                        "during the last rebuy level and a break right after it")
    p.add_argument("--add-on-price", type=int, default=0,
                   help="create: the add-on's price (all to the prize pool, no fee)")
    p.add_argument("--decision-seconds", type=int, default=15)
    p.add_argument("--player", default="", help="register/unregister/rebuy/addon: as this player "
                                                "(a token of `up`'s identity provider)")
    p.add_argument("--token", default=os.environ.get("POKER_TOKEN", ""),
                   help="the caller's token (default POKER_TOKEN, else one of `up`'s)")
    p.add_argument("--command-id", default=None)
    p.add_argument("--json", action="store_true", help="status/watch: the view as JSON")
    p.add_argument("--addr", default=default_tournament_addr(),
                   help="the director's address (default POKER_TOURNAMENT_ADDR or "
                        "%(default)s)")
    p.set_defaults(run=run)
