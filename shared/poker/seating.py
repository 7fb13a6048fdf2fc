"""Who is dealt into the next hand, the button and the blinds (RULES.md §3, §7).

- Only seated players with chips who are not sitting out are dealt in.
- The button moves clockwise to the next player dealt into the new hand; the first player
  seated takes it first.
- The player left of the button posts the small blind, the next the big blind; heads-up the
  button posts the small blind. When a table goes from three players to two, the player who
  posted the big blind in the last hand does not post it again.
- A player who joins a running table, or returns after missing their blinds while sitting
  out, either posts a big blind (live) to be dealt in at once (a returning player also posts
  the missed small blind, dead) or waits until the big blind reaches the seat. A newcomer is
  not dealt in on the button or the small-blind seat. Two big blinds can be live in one hand.
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import ForcedBet, ForcedKind
from .options import AnteType, TableOptions
from .state import Seat, TableState


@dataclass(frozen=True, slots=True)
class HandPlan:
    button: int
    dealt: tuple[tuple[int, int], ...]  # (seat, stack), by seat
    forced_bets: tuple[ForcedBet, ...]
    small_blind: int | None
    big_blind: int | None
    missed_big_blind: tuple[int, ...]
    missed_small_blind: tuple[int, ...]


def _after(seats: list[int], seat: int) -> list[int]:
    """``seats`` clockwise, starting with the first after ``seat``."""
    later = [s for s in seats if s > seat]
    return later + [s for s in seats if s <= seat]


def _between(seat: int, start: int | None, end: int) -> bool:
    """``seat`` lies clockwise after ``start`` and up to ``end`` (inclusive)."""
    if start is None:
        return False
    if start < end:
        return start < seat <= end
    return seat > start or seat <= end


def plan_hand(table: TableState) -> HandPlan | None:
    """The next hand's button, players and forced bets; None while fewer than two can play."""
    active = [s for s in table.seats if s.stack > 0 and not s.sitting_out]
    if table.options.game.is_stud:
        return _plan_stud(table, active)
    ready = [s.seat for s in active if not s.owes_big_blind]
    owing = {s.seat: s for s in active if s.owes_big_blind}
    if len(active) < 2:
        return None
    if not ready:  # everyone is new (the others left): the table starts afresh
        ready, owing = [s.seat for s in active], {}
    button = _next_button(table, ready)
    order = _after([s.seat for s in active], button)[:-1]  # from the button's left
    small = next((s for s in order if s in ready), None)
    if small is None:
        # The button is the only player who owes nothing: heads-up against the first player
        # the big blind reaches.
        small, big = button, order[0]
    else:
        later = order[order.index(small) + 1:]
        big = later[0] if later else None
        if big is None:  # nobody between the small blind and the button: heads-up
            button, small, big = _heads_up(table, button, small)
    dealt = set(ready) | {big}
    # Players who owe blinds and chose to post them are dealt in at once, except on the
    # button or the small-blind seat (those between the button and the small blind).
    after_small = order[order.index(small) + 1:] if small in order else order
    posting = [s for s in after_small if s in owing and s != big and owing[s].post_big_blind]
    dealt |= set(posting)
    opts = table.options
    forced = _antes(opts, sorted(dealt), button, big)
    forced += [ForcedBet(small, ForcedKind.SMALL_BLIND, opts.small_blind),
               ForcedBet(big, ForcedKind.BIG_BLIND, opts.big_blind)]
    for s in posting:
        forced.append(ForcedBet(s, ForcedKind.BIG_BLIND, opts.big_blind))
        if owing[s].owes_small_blind:
            forced.append(ForcedBet(s, ForcedKind.DEAD_SMALL_BLIND, opts.small_blind))
    away = [s.seat for s in table.seats if s.sitting_out]
    return HandPlan(
        button=button,
        dealt=tuple((s.seat, s.stack) for s in table.seats if s.seat in dealt),
        forced_bets=tuple(forced), small_blind=small, big_blind=big,
        missed_big_blind=tuple(s for s in away if _between(s, table.last_big_blind, big)),
        missed_small_blind=tuple(s for s in away if _between(s, table.last_small_blind, small)))


def _next_button(table: TableState, ready: list[int]) -> int:
    """Clockwise to the next player dealt in; the first player seated takes it first."""
    if table.button is None:
        return min((s for s in table.seats if s.seat in ready), key=lambda s: s.arrival).seat
    return _after(ready, table.button)[0]


def _heads_up(table: TableState, button: int, other: int) -> tuple[int, int, int]:
    """Heads-up the button posts the small blind. Going from three players to two, the last
    hand's big blind does not post it again: they take the button and the small blind."""
    if table.last_big_blind == other:
        button, other = other, button
    return button, button, other


def _antes(opts: TableOptions, dealt: list[int], button: int, big: int) -> list[ForcedBet]:
    ordered = _after(dealt, button)
    if opts.ante_type is AnteType.PER_SEAT:
        return [ForcedBet(s, ForcedKind.ANTE, opts.ante) for s in ordered]
    if opts.ante_type is AnteType.BIG_BLIND:
        return [ForcedBet(big, ForcedKind.ANTE, opts.ante)]
    return []


def _plan_stud(table: TableState, active: list[Seat]) -> HandPlan | None:
    """Stud has no blinds: everyone with chips who is not sitting out is dealt in, antes
    first; the button still rotates (deal order and odd chips)."""
    seats = [s.seat for s in active]
    if len(seats) < 2:
        return None
    button = _next_button(table, seats)
    opts = table.options
    forced = tuple(ForcedBet(s, ForcedKind.ANTE, opts.ante) for s in _after(seats, button)
                   ) if opts.ante else ()
    return HandPlan(button, tuple((s.seat, s.stack) for s in active), forced, None, None,
                    (), ())
