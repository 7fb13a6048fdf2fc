"""`pokerctl table create`'s settings: its flags and the TableSettings they ask for, the
defaults filled in and checked as the table service checks them."""

from __future__ import annotations

import argparse
from typing import Any

from poker.table.v1 import table_pb2

from shared.infra.protomap import ANTE_TYPE, GAME, STRUCTURE, TIMEOUT_POLICY
from shared.poker.errors import InvalidOptions
from shared.poker.options import (
    NO_RAKE_CAP,
    AnteType,
    Game,
    Structure,
    TimeoutPolicy,
    buy_in_limits,
    table_options,
)

#: the structure a game is played in unless told
DEFAULT_STRUCTURE = {Game.HOLDEM: Structure.NO_LIMIT, Game.OMAHA: Structure.POT_LIMIT,
                     Game.OMAHA_HILO: Structure.POT_LIMIT, Game.STUD: Structure.FIXED_LIMIT,
                     Game.STUD_HILO: Structure.FIXED_LIMIT}
#: TableSettings' plain options: (flag's dest, help)
INT_SETTINGS = (
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


def settings_of(args: argparse.Namespace) -> tuple[table_pb2.TableSettings, tuple[int, int]]:
    """The TableSettings ``args`` ask for (the defaults filled in) and the table's buy-in
    range; checked here as the service checks them (InvalidOptions: bad arguments)."""
    game = Game(args.game)
    structure = Structure(args.structure) if args.structure else DEFAULT_STRUCTURE[game]
    ints = {name: getattr(args, name) for name, _ in INT_SETTINGS
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


def add_settings_arguments(c: argparse.ArgumentParser) -> None:
    """``create``'s flags for the table's settings (what :func:`settings_of` reads)."""
    c.add_argument("--game", choices=[g.value for g in Game], default=Game.HOLDEM.value)
    c.add_argument("--structure", choices=[s.value for s in Structure], default=None,
                   help="default: no_limit for hold'em, pot_limit for omaha, fixed_limit "
                        "for stud")
    c.add_argument("--seats", type=int, default=None, help="seats at the table (default: "
                                                           "the game's most, 10; stud 8)")
    for name, text in INT_SETTINGS:
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
