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

from collections.abc import Mapping, Sequence
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
    if len(active) < 2:
        return None
    if table.options.game.is_stud:
        seats = [s.seat for s in active]
        button = _next_button(table, seats)
        return HandPlan(button, tuple((s.seat, s.stack) for s in active),
                        tuple(_antes(table.options, seats, button, None)), None, None, (), ())
    ready = [s.seat for s in active if not s.owes_big_blind]
    owing = {s.seat: s for s in active if s.owes_big_blind}
    if not ready:  # everyone is new (the others left): the table starts afresh
        ready, owing = [s.seat for s in active], {}
    button = _next_button(table, ready)
    blinds = plan_blinds(table.options, [s.seat for s in active], button, owing,
                         table.last_big_blind)
    away = [s.seat for s in table.seats if s.sitting_out]
    return HandPlan(
        button=blinds.button,
        dealt=tuple((s.seat, s.stack) for s in table.seats if s.seat in blinds.dealt),
        forced_bets=blinds.forced_bets, small_blind=blinds.small, big_blind=blinds.big,
        missed_big_blind=tuple(s for s in away if _between(s, table.last_big_blind, blinds.big)),
        missed_small_blind=tuple(s for s in away
                                 if _between(s, table.last_small_blind, blinds.small)))


@dataclass(frozen=True, slots=True)
class Blinds:
    button: int
    small: int
    big: int
    dealt: frozenset[int]
    forced_bets: tuple[ForcedBet, ...]


def plan_blinds(opts: TableOptions, active: list[int], button: int,
                owing: Mapping[int, Seat] | None = None,
                last_big_blind: int | None = None) -> Blinds:
    """Who posts what in a blind game, and who is dealt in: the one planner of forced bets.

    ``active``: the seats that can play, by seat; ``button``: the button's seat; ``owing``:
    the players among them who owe a big blind (newcomers and returning players), who are
    dealt in only if they chose to post; ``last_big_blind``: the last hand's big blind, who
    does not post it again when the table goes from three players to two.
    """
    owing = owing or {}
    order = [s for s in _after(active, button) if s != button]  # from the button's left
    small = next((s for s in order if s not in owing), None)
    if small is None:
        # The button is the only player who owes nothing: heads-up against the first player
        # the big blind reaches.
        small, big = button, order[0]
    else:
        later = order[order.index(small) + 1:]
        if later:
            big = later[0]
        else:  # nobody between the small blind and the button: heads-up
            button, small, big = _heads_up(last_big_blind, button, small)
    dealt = {s for s in active if s not in owing} | {big}
    # Players who owe blinds and chose to post them are dealt in at once, except on the
    # button or the small-blind seat (those between the button and the small blind).
    after_small = order[order.index(small) + 1:] if small in order else order
    posting = [s for s in after_small if s in owing and s != big and owing[s].post_big_blind]
    dealt |= set(posting)
    forced = _antes(opts, sorted(dealt), button, big)
    forced += [ForcedBet(small, ForcedKind.SMALL_BLIND, opts.small_blind),
               ForcedBet(big, ForcedKind.BIG_BLIND, opts.big_blind)]
    for s in posting:
        forced.append(ForcedBet(s, ForcedKind.BIG_BLIND, opts.big_blind))
        if owing[s].owes_small_blind:
            forced.append(ForcedBet(s, ForcedKind.DEAD_SMALL_BLIND, opts.small_blind))
    return Blinds(button, small, big, frozenset(dealt), tuple(forced))


def forced_bets(opts: TableOptions, seats: Sequence[int], button: int) -> tuple[ForcedBet, ...]:
    """The forced bets of a hand dealt to ``seats`` with the button at ``button``, when nobody
    owes a blind: antes in stud; antes and blinds otherwise (:func:`plan_blinds`)."""
    seats = sorted(seats)
    if opts.game.is_stud:
        return tuple(_antes(opts, seats, button, None))
    return plan_blinds(opts, seats, button).forced_bets


def owes_big_blind_on_arrival(table: TableState) -> bool:
    """A player who sits down at a table that has dealt a hand owes a big blind: posted at
    once (live) to be dealt in, or when the big blind reaches the seat. Stud has no blinds."""
    return table.last_hand_no > 0 and not table.options.game.is_stud


def _next_button(table: TableState, ready: list[int]) -> int:
    """Clockwise to the next player dealt in; the first player seated takes it first."""
    if table.button is None:
        return min((s for s in table.seats if s.seat in ready), key=lambda s: s.arrival).seat
    return _after(ready, table.button)[0]


def _heads_up(last_big_blind: int | None, button: int, other: int) -> tuple[int, int, int]:
    """Heads-up the button posts the small blind. Going from three players to two, the last
    hand's big blind does not post it again: they take the button and the small blind."""
    if last_big_blind == other:
        button, other = other, button
    return button, button, other


def _antes(opts: TableOptions, dealt: list[int], button: int,
           big: int | None) -> list[ForcedBet]:
    """Antes, clockwise from the button's left: one per player, or the big blind's alone
    (stud has no big blind: its ante is always per player)."""
    if opts.game.is_stud:
        return [ForcedBet(s, ForcedKind.ANTE, opts.ante) for s in _after(dealt, button)
                ] if opts.ante else []
    if opts.ante_type is AnteType.PER_SEAT:
        return [ForcedBet(s, ForcedKind.ANTE, opts.ante) for s in _after(dealt, button)]
    if opts.ante_type is AnteType.BIG_BLIND and big is not None:
        return [ForcedBet(big, ForcedKind.ANTE, opts.ante)]
    return []
