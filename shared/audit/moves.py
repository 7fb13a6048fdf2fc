"""Every move of a tournament's log found in its tables' logs, and every balancing move
re-decided from them (issue 30).

The director decides a move between hands, from each table's last big blind and each mover's
stack as the tables had them then; it then takes the mover off the table they leave (a
``PlayerLeft`` with chips: a busted player leaves with none) and seats them at the table they
join (a ``PlayerSeated``), both tables held until it is done. So the n-th time the tournament's
log moves a player away from a table is the n-th time that table's log lets them leave with
chips, and the n-th time it places them at a table (a seating drawn, or a move) is the n-th
time that table's log seats them. Folding each table's log up to those points gives what the
director read: the last big blind of each table the move leaves and joins, the mover's stack.
Then:

- each mover left the seat the move names with the stack it records, and sat down at the seat
  it names with that stack;
- a balancing move (no table broken) is what :func:`shared.poker.tournament.decide.rebalance`
  decides for the tournament as its log had it and those big blinds: the player who would be
  big blind next at the largest table, to the worst seat at the smallest; none when balanced;
- a break's moves are what it decides by the seed revealed: the broken table's players in
  the seed's order, each to the worst seat at the shortest table then.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from shared.poker import events as TE
from shared.poker.errors import IllegalAction
from shared.poker.fold import apply as apply_table
from shared.poker.state import TableState
from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament.balance import Move
from shared.poker.tournament.state import TournamentState

#: (last big blind, seat, stack) at each point a player leaves with chips or sits down
Point = tuple[int, int, int]


def seat_changes(table_events: Sequence[object]
                 ) -> tuple[dict[str, list[Point]], dict[str, list[Point]]]:
    """Each player's leavings with chips and seatings in a table's events, in order, with the
    table's last big blind just before each (0: no hand dealt yet)."""
    table: TableState | None = None
    left: dict[str, list[Point]] = {}
    seated: dict[str, list[Point]] = {}
    for ev in table_events:
        if table is not None:
            bb = table.last_big_blind or 0
            if isinstance(ev, TE.PlayerLeft):
                seat = table.seat(ev.seat)
                if seat is not None and seat.stack:
                    left.setdefault(seat.player_id, []).append((bb, ev.seat, seat.stack))
            elif isinstance(ev, TE.PlayerSeated):
                seated.setdefault(ev.player_id, []).append((bb, ev.seat, ev.stack))
        table = apply_table(table, ev)
    return left, seated


def _show(moves: Sequence[Move]) -> str:
    return ", ".join(f"{m.player_id} {m.from_table} seat {m.from_seat} -> {m.to_table} "
                     f"seat {m.to_seat}" for m in moves) or "no move"


class MoveAudit:
    """Fed the tournament's events in order (:meth:`check`), finds each move in the tables'
    logs and re-decides the balancing ones."""

    def __init__(self, tables: Mapping[str, Sequence[object]]) -> None:
        self.changes = {t: seat_changes(evs) for t, evs in tables.items()}
        self.left: Counter[tuple[str, str]] = Counter()  # (table, player): moves away so far
        self.seated: Counter[tuple[str, str]] = Counter()  # (table, player): placings so far

    def _point(self, kind: int, table_id: str, player: str) -> Point | None:
        counter = (self.left, self.seated)[kind]
        n = counter[table_id, player]
        counter[table_id, player] += 1
        points = self.changes.get(table_id, ({}, {}))[kind].get(player, [])
        return points[n] if n < len(points) else None

    def check(self, s: TournamentState, ev: E.TournamentEvent) -> str:
        """The problem with ``ev`` ("" none); ``s``: the tournament before it."""
        if isinstance(ev, E.PlayersSeated):
            for st in ev.seatings:
                self._point(1, st.table_id, st.player_id)
        if not isinstance(ev, E.PlayersMoved):
            return ""
        found = [(m, self._point(0, m.from_table, m.player_id),
                  self._point(1, m.to_table, m.player_id)) for m in ev.moves]
        big_blinds: dict[str, int] = {}
        stacks: dict[str, int] = {}
        for k, (m, off, on) in enumerate(found):
            problem = _found(m, ev.stacks[k] if k < len(ev.stacks) else 0, off, on)
            if problem:
                return f"the move {_show([m])}: {problem}"
            assert off is not None and on is not None
            big_blinds.setdefault(m.from_table, off[0])
            big_blinds.setdefault(m.to_table, on[0])
            stacks[m.player_id] = off[2]
        return _rebalanced(s, ev, big_blinds, stacks)


def _found(m: Move, stack: int, off: Point | None, on: Point | None) -> str:
    """The mover left and sat down where the move says, with the stack it records."""
    if off is None:
        return f"{m.from_table}'s log never lets {m.player_id} leave with chips for it"
    if on is None:
        return f"{m.to_table}'s log never seats {m.player_id} for it"
    if (off[1], off[2]) != (m.from_seat, stack):
        return (f"{m.from_table}'s log has {m.player_id} leave seat {off[1]} with {off[2]}, "
                f"the move records seat {m.from_seat} with {stack}")
    if (on[1], on[2]) != (m.to_seat, stack):
        return (f"{m.to_table}'s log seats {m.player_id} at seat {on[1]} with {on[2]}, the "
                f"move records seat {m.to_seat} with {stack}")
    return ""


def _rebalanced(s: TournamentState, ev: E.PlayersMoved,
                big_blinds: Mapping[str, int], stacks: Mapping[str, int]) -> str:
    """The moves ``rebalance`` decides for the tables as their logs had them: a break's by
    its revealed seed (each player to the worst seat at the shortest table), else the
    balancing ones."""
    what = f"the {'break' if ev.broken else 'balancing'} moves {_show(ev.moves)}"
    if not ev.broken and D.needs_break(s):
        return f"{what} are made where a table is to be broken"
    try:
        want = D.rebalance(s, big_blinds, bytes.fromhex(ev.seed) if ev.broken else None,
                           stacks)
    except (IllegalAction, ValueError) as exc:
        return f"{what} are not the rules': {getattr(exc, 'reason', exc)}"
    if want == [ev]:
        return ""
    moves = want[0].moves if want and isinstance(want[0], E.PlayersMoved) else ()
    return (f"{what} are not the rules' ({_show(moves)}) for the tables' last big blinds "
            f"{dict(sorted(big_blinds.items()))}")
