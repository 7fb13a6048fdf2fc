"""Table-level decisions: creating a table, seats, and starting the next hand (RULES.md §7)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import events as E
from .decide import Act, next_step, start_hand
from .errors import IllegalAction
from .options import TableOptions
from .state import TableState

TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
PLAYER_ID_MAX = 64


def create_table(table: TableState | None, table_id: str,
                 options: TableOptions) -> list[E.TableCreated]:
    if table is not None:
        raise IllegalAction(f"table {table_id} already exists")
    if not TABLE_ID.fullmatch(table_id):
        raise IllegalAction("a table id is 1 to 64 letters, digits, '-' or '_'")
    return [E.TableCreated(table_id, options)]


def buy_in_limits(options: TableOptions) -> tuple[int, int]:
    """The table's buy-in range: its options, or 20 to 200 big blinds (stud: small bets)."""
    unit = options.big_blind or options.small_bet
    low = options.min_buy_in or 20 * unit
    high = options.max_buy_in or 200 * unit
    return low, high


def sit_down(table: TableState, seat: int, player_id: str, buy_in: int,
             token_digest: str) -> list[E.PlayerSeated]:
    """Take a free seat with a buy-in inside the table's limits; one seat per player."""
    max_seats = table.options.max_seats
    if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= max_seats:
        raise IllegalAction(f"seats at this table are numbered 1 to {max_seats}")
    if not player_id or len(player_id) > PLAYER_ID_MAX:
        raise IllegalAction(f"a player id is 1 to {PLAYER_ID_MAX} characters")
    if table.seat(seat) is not None:
        raise IllegalAction(f"seat {seat} is taken")
    if table.hand_running and any(p.seat == seat for p in table.hand.players):
        raise IllegalAction(f"seat {seat} frees when the hand in progress ends")
    if any(s.player_id == player_id for s in table.seats):
        raise IllegalAction(f"player {player_id} already has a seat at this table")
    low, high = buy_in_limits(table.options)
    if isinstance(buy_in, bool) or not isinstance(buy_in, int) or not low <= buy_in <= high:
        raise IllegalAction(f"the buy-in at this table is {low} to {high} chips")
    if buy_in % table.options.chip_unit:
        raise IllegalAction(f"the buy-in must be a multiple of the chip unit "
                            f"{table.options.chip_unit}")
    return [E.PlayerSeated(seat, player_id, buy_in, token_digest)]


def _seated(table: TableState, seat: int):
    s = table.seat(seat)
    if s is None:
        raise IllegalAction(f"seat {seat} is empty")
    return s


def leave(table: TableState, seat: int) -> list[E.PlayerLeft]:
    _seated(table, seat)
    if table.hand_running and any(p.seat == seat and not p.folded for p in table.hand.players):
        raise IllegalAction("you are in a hand: fold or wait for the hand to end, then leave")
    return [E.PlayerLeft(seat)]


def sit_out(table: TableState, seat: int, sitting_out: bool) -> list[E.PlayerSatOut]:
    s = _seated(table, seat)
    if s.sitting_out == sitting_out:
        raise IllegalAction("you are already sitting out" if sitting_out
                            else "you are not sitting out")
    return [E.PlayerSatOut(seat, sitting_out)]


def players_ready(table: TableState) -> list[tuple[int, int]]:
    """(seat, stack) of every seated player who will be dealt in: chips, not sitting out."""
    return [(s.seat, s.stack) for s in table.seats if s.stack > 0 and not s.sitting_out]


def next_button(table: TableState, seats: list[int]) -> int:
    """The button moves clockwise to the next player dealt into the new hand; the first
    player seated takes it first."""
    if table.button is None:
        return min((s for s in table.seats if s.seat in seats), key=lambda s: s.arrival).seat
    later = [s for s in seats if s > table.button]
    return later[0] if later else seats[0]


def start_next_hand(table: TableState) -> list[E.HandStarted]:
    if table.hand_running:
        raise IllegalAction("a hand is already running")
    ready = players_ready(table)
    if len(ready) < 2:
        raise IllegalAction("waiting for at least two players with chips")
    button = next_button(table, [s for s, _ in ready])
    return start_hand(table, table.last_hand_no + 1, button, ready)


@dataclass(frozen=True, slots=True)
class StartHand:
    owner: str = "table"


def table_step(table: TableState) -> object | None:
    """What the table needs next without a player: a hand step owned by a service, the next
    hand, or None (waiting for a player's decision, or for players)."""
    if table.hand_running:
        step = next_step(table.hand)
        return None if isinstance(step, Act) else step
    return StartHand() if len(players_ready(table)) >= 2 else None
