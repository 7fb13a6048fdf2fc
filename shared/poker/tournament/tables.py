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
from collections.abc import Mapping, Set

from .. import events as E
from ..errors import IllegalAction
from ..options import AnteType, Game, TableOptions, table_options
from ..options import Structure as Betting
from ..state import TableState
from .decide import hand_for_hand
from .state import Status, TournamentState
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


def add_chips(table: TableState, seat: int, player_id: str,
              chips: int) -> list[E.PlayerToppedUp]:
    """A rebuy's chips added to a tournament player's stack, between hands (a top-up in the
    table's log: chips come to a tournament table only by its director)."""
    _between_hands(table, "adding chips")
    s = table.seat(seat)
    if s is None or s.player_id != player_id:
        raise IllegalAction(f"{player_id} is not at seat {seat} of {table.table_id}")
    if isinstance(chips, bool) or not isinstance(chips, int) or chips <= 0:
        raise IllegalAction("a rebuy adds a positive whole number of chips")
    return [E.PlayerToppedUp(seat, chips)]


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


def busted_after_hand(s: TournamentState, table_id: str,
                      table: TableState) -> list[tuple[str, int]]:
    """The players the tournament seats at ``table_id`` whom its last hand left without
    chips, each with the stack that hand started with (TDA: what ranks players out in the
    same hand): (player, starting stack), for ``decide.eliminate``."""
    mine = {p for _, p in s.table(table_id).players}
    starts = {p.seat: p.start_stack for p in table.hand.players} if table.hand else {}
    return [(seat.player_id, starts.get(seat.seat, 0)) for seat in table.seats
            if seat.stack == 0 and seat.player_id in mine]


def tables_to_release(s: TournamentState, between: Set[str], held: Set[str],
                      seated: Mapping[str, int]) -> list[str]:
    """The tables whose next hand may start now: none while the tournament is not running or
    on a break, none hand-for-hand until every table is between hands; else each table
    between hands, not held for a move (``held``), with two players or more, once its table
    seats (``seated``: how many each table's log seats) all the players the tournament's log
    puts there."""
    if s.status is not Status.RUNNING or s.structure.levels[s.level].is_break:
        return []
    live = s.live_tables()
    if hand_for_hand(s) and not {t.table_id for t in live} <= between:
        return []  # every table waits for the others
    return [t.table_id for t in live
            if t.table_id in between and t.table_id not in held and t.count >= 2
            and seated.get(t.table_id) == t.count]
