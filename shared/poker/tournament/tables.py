"""A tournament's tables: the decisions its director takes at a table, each a command in the
table's log (shared/poker/table.py refuses the cash-game ones there: sitting down, top-ups,
leaving, sitting out).

A tournament table (``TableOptions.tournament``) is created paused and pauses itself after
every hand (shared/poker/fold.py): between hands the director takes busted players off, sets
the level, seats and moves players, then releases the next hand. So every change takes
effect at a hand's start, and hand-for-hand is the director releasing every table together.
"""

from __future__ import annotations

import dataclasses

from .. import events as E
from ..errors import IllegalAction
from ..options import AnteType, Game, TableOptions, table_options
from ..options import Structure as Betting
from ..state import TableState
from .structure import Level

#: the action clock at tournament tables unless the director says otherwise (seconds)
DECISION_SECONDS = 15


def tournament_table_options(tournament_id: str, level: Level, max_seats: int,
                             decision_seconds: int = DECISION_SECONDS) -> TableOptions:
    """No-limit hold'em at the level's blinds and ante (one per player), no rake, no wallet
    (the tournament's money is the director's: the chips never leave its tables)."""
    return table_options(
        Game.HOLDEM, Betting.NO_LIMIT, small_blind=level.small_blind,
        big_blind=level.big_blind, ante=level.ante,
        ante_type=AnteType.PER_SEAT if level.ante else AnteType.NONE, max_seats=max_seats,
        rake_basis_points=0, decision_seconds=decision_seconds, countdown_seconds=0,
        tournament=tournament_id)


def _between_hands(table: TableState, what: str) -> None:
    if not table.options.tournament:
        raise IllegalAction(f"table {table.table_id} is not a tournament table")
    if table.hand_running:
        raise IllegalAction(f"{what} waits for the running hand to end")


def seat_entrant(table: TableState, seat: int, player_id: str, stack: int,
                 token_digest: str) -> list[E.PlayerSeated]:
    """Seat a tournament player with ``stack`` chips (their starting stack, or the stack they
    bring from another table); dealt in from the next hand."""
    _between_hands(table, "a seating")
    if not 1 <= seat <= table.options.max_seats or table.seat(seat) is not None:
        raise IllegalAction(f"seat {seat} at {table.table_id} is not free")
    if any(s.player_id == player_id for s in table.seats):
        raise IllegalAction(f"{player_id} is already seated at {table.table_id}")
    if stack <= 0:
        raise IllegalAction("a player is seated with chips")
    return [E.PlayerSeated(seat, player_id, stack, token_digest)]


def unseat(table: TableState, seat: int, player_id: str) -> list[E.PlayerLeft]:
    """Take a player off (busted, or moving to another table with their stack)."""
    _between_hands(table, "taking a player off")
    s = table.seat(seat)
    if s is None or s.player_id != player_id:
        raise IllegalAction(f"{player_id} is not at seat {seat} of {table.table_id}")
    return [E.PlayerLeft(seat)]


def set_level(table: TableState, level: Level) -> list[E.TableConfigured]:
    """The level's blinds and ante from the next hand ([] when they are the table's)."""
    _between_hands(table, "a new level")
    old = table.options
    new = dataclasses.replace(
        old, small_blind=level.small_blind, big_blind=level.big_blind, ante=level.ante,
        ante_type=AnteType.PER_SEAT if level.ante else AnteType.NONE)
    return [] if new == old else [E.TableConfigured(new)]


def release(table: TableState) -> list[E.TablePaused]:
    """Let the next hand start."""
    _between_hands(table, "the next hand")
    return [E.TablePaused(False)] if table.paused else []
