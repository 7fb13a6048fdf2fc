"""Showdown (RULES.md §6): hand values per game, order of showing, winners, odd chips."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from . import evaluator as ev
from .cards import UNKNOWN_CARD, Card, card_strength
from .events import Portion, PotAwarded, Share
from .options import Game
from .pots import halves, split_evenly
from .state import HandState, Player


def high_low_values(state: HandState, hole: Sequence[Card]) -> tuple[int, int | None]:
    """A hand's high value and 8-or-better low value (None: no qualifying low or no low game).

    Hold'em: best 5 of hole + board. Omaha: exactly 2 hole + 3 board, chosen separately for
    high and low. Stud: best 5 of the player's own cards (plus a common card if one was dealt).
    """
    return _values(state.options.game, tuple(hole), state.board)


@lru_cache(maxsize=1024)
def _values(game: Game, hole: tuple[Card, ...], board: tuple[Card, ...]) -> tuple[int, int | None]:
    # A showdown asks for the same hands several times (show order, muck rule, award).
    if game.is_omaha:
        high = ev.omaha_high_value(hole, board)
        low = ev.omaha_low8_value(hole, board) if game is Game.OMAHA_HILO else None
        return high, low
    cards = tuple(hole) + tuple(board)
    high = ev.high_value(cards)
    low = ev.low8_value(cards) if game is Game.STUD_HILO else None
    return high, low


def hand_names(state: HandState, hole: Sequence[Card]) -> tuple[str, str]:
    high, low = high_low_values(state, hole)
    return ev.describe_high(high), (ev.describe_low(low) if low is not None else "")


def show_order(state: HandState) -> tuple[int, ...]:
    """Who shows first: the last player to bet or raise on the final round; if nobody bet, the
    first player to act on that round; then clockwise. Without betting on the final round
    (an all-in showdown), clockwise from the button's left.
    """
    if state.final_round_bet:
        last = state.round
        start = last.last_aggressor if last.last_aggressor is not None else last.first
    else:
        start = None
    if start is None:
        order = state.clockwise_from(state.button)
    else:
        i = state.index(start)
        order = state.players[i:] + state.players[:i]
    return tuple(p.seat for p in order if not p.folded)


def _claimants(state: HandState, eligible: Sequence[int]) -> list[Player]:
    players = [state.player(s) for s in eligible]
    claim = [p for p in players if not p.mucked]
    return claim or players


def would_win_or_tie(state: HandState, seat: int) -> bool:
    """Whether ``seat`` beats or ties every hand shown so far in some pot it can win.

    The default at showdown for a player who does not act: a winning or tying hand is shown,
    any other is mucked.
    """
    me = state.player(seat)
    if UNKNOWN_CARD in me.hole:
        return True
    my_high, my_low = high_low_values(state, me.hole)
    for pot in state.pots or ():
        if seat not in pot.eligible:
            continue
        shown = [p for p in map(state.player, pot.eligible) if p.seat != seat and p.shown]
        if not shown:
            return True
        values = [high_low_values(state, p.hole) for p in shown]
        if my_high >= max(v[0] for v in values):
            return True
        lows = [v[1] for v in values if v[1] is not None]
        if my_low is not None and (not lows or my_low >= max(lows)):
            return True
    return False


def _odd_chip_order(state: HandState, seats: Sequence[int], portion: Portion) -> list[int]:
    """Order in which tied winners receive remainder units.

    Hold'em, Omaha and stud high: from the first winner clockwise from the button (stud keeps
    a rotating button for this). Stud hi/lo: tied high hands in order of their highest card by
    suit, tied low hands in order of their lowest card by suit (ace as 1), all seven cards.
    """
    if state.game is Game.STUD_HILO:
        order = state.options.suit_order
        if portion is Portion.LOW:
            return sorted(seats, key=lambda s: min(
                card_strength(c, order, ace_low=True) for c in state.player(s).hole))
        return sorted(seats, key=lambda s: max(
            card_strength(c, order) for c in state.player(s).hole), reverse=True)
    position = {p.seat: i for i, p in enumerate(state.clockwise_from(state.button))}
    return sorted(seats, key=position.__getitem__)


def _best(values: dict[int, int]) -> list[int]:
    top = max(values.values())
    return [s for s, v in values.items() if v == top]


def award(state: HandState) -> tuple[PotAwarded, ...]:
    """Each pot, from the last side pot to the main pot, to its best eligible hand; ties split.

    Hi/lo: each pot is halved, the high half to the best high, the low half to the best
    qualifying low; no qualifying low and the high takes it all. Stud hi/lo: players who tie for
    both high and low split the whole pot, the odd unit to the highest card by suit.
    """
    unit = state.options.chip_unit
    hilo = state.game.is_hilo
    out: list[PotAwarded] = []
    for index in range(len(state.pots) - 1, -1, -1):
        pot = state.pots[index]
        amount = pot.amount - (state.rake_from[index] if state.rake_from else 0)
        claim = _claimants(state, pot.eligible)
        if len(claim) == 1:
            out.append(PotAwarded(index, Portion.WHOLE, (Share(claim[0].seat, amount),)))
            continue
        values = {p.seat: high_low_values(state, p.hole) for p in claim}
        high_winners = _best({s: v[0] for s, v in values.items()})
        lows = {s: v[1] for s, v in values.items() if v[1] is not None}
        high_name = ev.describe_high(values[high_winners[0]][0])
        if not hilo or not lows:
            order = _odd_chip_order(state, high_winners, Portion.HIGH)
            out.append(PotAwarded(index, Portion.WHOLE, _shares(amount, order, unit), high_name))
            continue
        low_winners = _best(lows)
        low_name = ev.describe_low(lows[low_winners[0]])
        if (state.game is Game.STUD_HILO and len(high_winners) > 1
                and set(high_winners) == set(low_winners)):
            order = _odd_chip_order(state, high_winners, Portion.HIGH)
            out.append(PotAwarded(index, Portion.WHOLE, _shares(amount, order, unit),
                                  f"{high_name}; {low_name}"))
            continue
        high_amount, low_amount = halves(amount, unit)
        out.append(PotAwarded(index, Portion.HIGH, _shares(
            high_amount, _odd_chip_order(state, high_winners, Portion.HIGH), unit), high_name))
        out.append(PotAwarded(index, Portion.LOW, _shares(
            low_amount, _odd_chip_order(state, low_winners, Portion.LOW), unit), low_name))
    return tuple(out)


def _shares(amount: int, order: Sequence[int], unit: int) -> tuple[Share, ...]:
    return tuple(Share(s, a) for s, a in split_evenly(amount, order, unit))
