"""Seating and balancing between hands (TDA rules 2024 §§ 8–11; PokerStars' tournament rules).

- The first seating is random (a committed seed, draw.py): the players in a random order go
  round the tables, one each, so that no two tables differ by more than one player, each to a
  random seat.
- A table is broken when the other tables can seat all the players: which one is chosen at
  random among those that can be broken; its players, in a random order, go one at a time to
  the table with the fewest players, in the worst position there.
- Otherwise, when the largest and smallest tables differ by more than one player, the player
  who would be big blind next at the largest table moves to the worst position at the
  smallest: the free seat the big blind reaches first (the moved player may be big blind at
  once; TDA: "the worst position, which may be the big blind"). One move at a time, largest
  table to smallest, until no two differ by more than one.
- A late registrant sits at a table with the fewest players (a random one of them), at a
  random free seat.

Ties between tables of the same size go to the first in the order the caller gives (the
director keeps its tables in the order it opened them).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import IllegalAction
from ..evolve import Value, value
from .draw import Stream


@value
class TableSeats(Value):
    """A tournament table between hands: who sits where, and the last hand's big blind."""

    table_id: str
    max_seats: int
    players: tuple[tuple[int, str], ...]  # (seat, player), by seat
    last_big_blind: int = 0  # 0: no hand dealt yet

    @property
    def count(self) -> int:
        return len(self.players)

    def free_seats(self) -> list[int]:
        taken = {s for s, _ in self.players}
        return [s for s in range(1, self.max_seats + 1) if s not in taken]

    def with_player(self, seat: int, player: str) -> TableSeats:
        return self.evolve(players=tuple(sorted((*self.players, (seat, player)))))

    def without_seat(self, seat: int) -> TableSeats:
        return self.evolve(players=tuple(p for p in self.players if p[0] != seat))


@value
class Seating(Value):
    player_id: str
    table_id: str
    seat: int


@value
class Move(Value):
    player_id: str
    from_table: str
    from_seat: int
    to_table: str
    to_seat: int


def tables_needed(players: int, seats_per_table: int) -> int:
    return max(1, -(-players // seats_per_table))


def _clockwise_after(seats: Sequence[int], after: int) -> list[int]:
    """``seats`` (ascending) clockwise, from the first after seat ``after``."""
    return [s for s in seats if s > after] + [s for s in seats if s <= after]


def next_big_blind(table: TableSeats) -> int:
    """The seat of the player who would be big blind next: the first player clockwise after
    the last hand's big blind (before any hand: the lowest seat)."""
    if not table.players:
        raise IllegalAction(f"table {table.table_id} has nobody to move")
    return _clockwise_after([s for s, _ in table.players], table.last_big_blind)[0]


def worst_free_seat(table: TableSeats) -> int:
    """The free seat the big blind reaches first: clockwise after the last big blind."""
    free = table.free_seats()
    if not free:
        raise IllegalAction(f"table {table.table_id} is full")
    return _clockwise_after(free, table.last_big_blind)[0]


def first_seating(players: Sequence[str], tables: Sequence[tuple[str, int]],
                  seed: bytes) -> tuple[Seating, ...]:
    """The random first seating of ``players`` at ``tables`` ((id, seats), enough of them)."""
    stream = Stream(seed, "first-seating")
    order = stream.shuffled(sorted(players))
    if len(order) > sum(n for _, n in tables):
        raise IllegalAction(f"{len(order)} players do not fit at {len(tables)} tables")
    seats = {t: stream.shuffled(range(1, n + 1)) for t, n in tables}
    out, i = [], 0
    for player in order:
        while True:  # round the tables; a full one (fewer seats) is passed
            table_id = tables[i % len(tables)][0]
            i += 1
            if seats[table_id]:
                out.append(Seating(player, table_id, seats[table_id].pop()))
                break
    return tuple(out)


def _smallest(tables: Sequence[TableSeats], besides: str = "") -> int:
    """The index of the table with the fewest players that has a free seat."""
    open_ = [i for i, t in enumerate(tables) if t.table_id != besides and t.free_seats()]
    if not open_:
        raise IllegalAction("no table has a free seat")
    return min(open_, key=lambda i: tables[i].count)


def breakable(tables: Sequence[TableSeats]) -> list[str]:
    """The tables whose players the others can seat (none when one table is left)."""
    if len(tables) < 2:
        return []
    total = sum(t.count for t in tables)
    capacity = sum(t.max_seats for t in tables)
    return [t.table_id for t in tables if capacity - t.max_seats >= total]


def break_table(tables: Sequence[TableSeats], seed: bytes) -> tuple[str, tuple[Move, ...]]:
    """Break a table chosen at random among :func:`breakable`'s: its players, in a random
    order, each to the table with the fewest players, worst position."""
    stream = Stream(seed, "break-table")
    candidates = breakable(tables)
    if not candidates:
        raise IllegalAction("no table can be broken: the others cannot seat its players")
    broken = stream.choice(candidates)
    rest = [t for t in tables if t.table_id != broken]
    leaving = next(t for t in tables if t.table_id == broken).players
    moves = []
    for seat, player in stream.shuffled(leaving):
        i = _smallest(rest)
        to_seat = worst_free_seat(rest[i])
        moves.append(Move(player, broken, seat, rest[i].table_id, to_seat))
        rest[i] = rest[i].with_player(to_seat, player)
    return broken, tuple(moves)


def balance(tables: Sequence[TableSeats]) -> tuple[Move, ...]:
    """The moves that leave no two tables more than one player apart (no table to break)."""
    work = list(tables)
    moves: list[Move] = []
    while len(work) > 1:
        counts = [t.count for t in work]
        if max(counts) - min(counts) <= 1:
            break
        src = counts.index(max(counts))
        dst = _smallest(work, besides=work[src].table_id)
        from_seat = next_big_blind(work[src])
        player = dict(work[src].players)[from_seat]
        to_seat = worst_free_seat(work[dst])
        moves.append(Move(player, work[src].table_id, from_seat, work[dst].table_id, to_seat))
        work[src] = work[src].without_seat(from_seat)
        work[dst] = work[dst].with_player(to_seat, player)
    return tuple(moves)


def late_seat(tables: Sequence[TableSeats], player: str, seed: bytes) -> Seating:
    """A late registrant's seat: a random table among those with the fewest players (and a
    free seat), a random free seat there."""
    stream = Stream(seed, "late-seat")
    open_ = [t for t in tables if t.free_seats()]
    if not open_:
        raise IllegalAction("every table is full")
    fewest = min(t.count for t in open_)
    table = stream.choice([t for t in open_ if t.count == fewest])
    return Seating(player, table.table_id, stream.choice(table.free_seats()))


def apply_moves(tables: Sequence[TableSeats], moves: Sequence[Move]) -> list[TableSeats]:
    """The tables after ``moves`` (a broken table stays, empty)."""
    by_id = {t.table_id: t for t in tables}
    for m in moves:
        by_id[m.from_table] = by_id[m.from_table].without_seat(m.from_seat)
        by_id[m.to_table] = by_id[m.to_table].with_player(m.to_seat, m.player_id)
    return [by_id[t.table_id] for t in tables]
