"""Betting rules (RULES.md §4): limits, minimum raises, the cap, short all-ins, legal actions.

Amounts here are "to" amounts: a player's total bet in the current round after the action,
as in ``cbr X`` of PHH and "raise to $800" of the rule book.
"""

from __future__ import annotations

from dataclasses import dataclass

from .events import ActionKind
from .evolve import fast_init
from .options import Structure
from .state import HandState, Phase, Player
from .stud import open_pair_showing

# Enum members read on every action, bound once: on Python 3.11 reading ``Phase.BET`` (an Enum
# class attribute) costs about 80 ns, a module global about 10 ns.
_BET_PHASE = Phase.BET
_FIXED_LIMIT, _POT_LIMIT = Structure.FIXED_LIMIT, Structure.POT_LIMIT
_BET, _RAISE, _COMPLETE = ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE


def fixed_limit_unit(state: HandState) -> int:
    """Fixed limit: the small bet on the first two rounds, the big bet on the rest.

    Hold'em and Omaha: pre-flop and flop small, turn and river big; stud: 3rd and 4th street
    small, 5th to 7th big.
    """
    opts = state.options
    return opts.small_bet if state.street < 2 else opts.big_bet


def fixed_limit_units(state: HandState, big_bet_made: bool | None = None) -> tuple[int, ...]:
    """The bet sizes a fixed-limit bet or raise may add this round.

    Stud high, 4th street, with an open pair showing on any board: the small or the big bet,
    until a bet or raise of the big-bet size is made; then raises are big bets. In stud hi/lo
    an open pair changes nothing. ``big_bet_made``: in place of the state's own flag (the
    fold asks with the flag an action is about to set).
    """
    opts = state.options
    if (state.street == 1 and opts.game.value == "stud"
            and open_pair_showing(state.live_players)):
        made = state.big_bet_made if big_bet_made is None else big_bet_made
        return (opts.big_bet,) if made else (opts.small_bet, opts.big_bet)
    return (fixed_limit_unit(state),)


def pot_limit_max_raise_to(state: HandState, player: Player) -> int:
    """Pot limit: the largest raise-to = the highest bet + (the pot + this player's call).

    The pot is all the money in the middle: every pot, antes and dead blinds included, plus
    all bets on the table. Pot $200, a $150 bet, a $150 call: the next player may make it $800.
    """
    call = max(0, state.current_bet - player.round_bet)
    return state.current_bet + state.pot_total + call


def min_raise_to(state: HandState) -> int:
    """No limit and pot limit: a bet is at least the big blind; a raise increases the bet by
    at least the largest previous bet or raise this round ($100 bet: raise to at least $200).
    """
    return state.current_bet + max(state.min_raise, state.options.big_blind)


def fixed_limit_raise_to(state: HandState, unit: int) -> int:
    """Fixed limit: a bet or raise adds one unit on top of the last bet that counts.

    After an all-in of at least half a bet (which counts as a full bet) the next raise is a full
    unit on top of it: a $15 all-in on a $20 round makes the next raise $35.
    """
    return state.full_level + unit


def counts_as_full_raise(state: HandState, to: int, unit: int | None = None) -> bool:
    """Whether a bet or raise to ``to`` is a full one: it reopens the betting and, in fixed
    limit, counts toward the cap.

    No and pot limit: it raises the bet by at least the minimum raise. Fixed limit (half-bet
    rule): it adds at least half a unit over the last counted bet.
    """
    if state.structure is Structure.FIXED_LIMIT:
        unit = unit or min(fixed_limit_units(state))
        return 2 * (to - state.full_level) >= unit
    return to - state.current_bet >= max(state.min_raise, state.options.big_blind)


def call_cap(players: tuple[Player, ...], p: Player, current_bet: int) -> int:
    """What ``p`` must have in to stay in this round: the highest bet, or, when every other
    player still in the hand is all in, the largest of their bets this round (RULES §4)."""
    seat, cap = p.seat, 0
    for q in players:
        if q.seat != seat and not q.folded:
            if not q.all_in:
                return current_bet  # someone can still bet: the whole bet is owed
            if q.round_bet > cap:
                cap = q.round_bet
    return min(current_bet, cap)


def bring_in_due(state: HandState) -> bool:
    """Stud 3rd street before anyone brought in or completed."""
    return state.options.game.is_stud and state.street == 0 and state.current_bet == 0


@dataclass(frozen=True, slots=True)
class LegalActions:
    """What the player on turn may do, with the amounts (chips, "to" amounts for raises)."""

    seat: int
    can_fold: bool
    can_check: bool
    call: int  # chips a call puts in (0: nothing to call); less than owed when all in
    bring_in: int  # stud: chips the bring-in puts in (0: no bring-in due)
    raise_kind: ActionKind | None  # BET, RAISE or COMPLETE; None: no raise allowed
    raise_sizes: tuple[int, ...] = ()  # fixed limit: the legal "to" amounts
    min_to: int = 0
    max_to: int = 0

    def allows_raise_to(self, to: int) -> bool:
        if self.raise_kind is None:
            return False
        if self.raise_sizes:
            return to in self.raise_sizes
        return self.min_to <= to <= self.max_to

    def describe_raise(self) -> str:
        if self.raise_kind is None:
            return "no bet or raise is allowed"
        word = self.raise_kind.value.replace("_", " ")
        if self.raise_sizes:
            sizes = " or ".join(str(s) for s in self.raise_sizes)
            return f"{word} to {sizes}"
        if self.min_to == self.max_to:
            return f"{word} to {self.min_to}"
        return f"{word} to between {self.min_to} and {self.max_to}"


fast_init(LegalActions)


def _raise_allowed(state: HandState, p: Player) -> bool:
    current = state.current_bet
    if p.round_bet + p.stack <= current:
        return False  # no chips beyond a call
    if current < p.reopen_at:
        return False  # own bet, or a short all-in that did not reopen the betting
    if (state.options.structure is _FIXED_LIMIT and not state.uncapped
            and state.bets_count >= state.options.max_bets):
        return False  # capped
    # nobody left who could answer a raise (asked last: it reads every player; a plain loop,
    # asked once per decision: a generator for any() costs more than the usual first hit)
    seat = p.seat
    for q in state.players:
        if q.seat != seat and not q.folded and not q.all_in and q.round_bet + q.stack > current:
            return True
    return False


_memo: tuple = (None, None, None)


def legal_actions(state: HandState, seat: int) -> LegalActions | None:
    """The options of the player on turn; None for anyone else or outside a betting round."""
    global _memo
    if state.phase is not _BET_PHASE or state.to_act != seat:
        return None
    memo = _memo  # one read: another thread may replace it
    if memo[0] is state:  # states are immutable: the same object has the same options
        return memo[2]
    result = _legal_actions(state, seat)
    _memo = (state, seat, result)
    return result


def _legal_actions(state: HandState, seat: int) -> LegalActions:
    p = state.player(seat)
    all_in_to = p.round_bet + p.stack
    owed = state.current_bet - p.round_bet
    if owed > 0:
        owed = max(0, call_cap(state.players, p, state.current_bet) - p.round_bet)
    opts = state.options
    if bring_in_due(state):
        # The bring-in is forced: post it or complete. Only a player standing in for a bring-in
        # who is all in from the ante may fold.
        complete_to = min(opts.small_bet, all_in_to)
        return LegalActions(
            seat=seat, can_fold=seat != state.bring_in_seat, can_check=False, call=0,
            bring_in=min(opts.bring_in, p.stack),
            raise_kind=ActionKind.COMPLETE if all_in_to > opts.bring_in else None,
            raise_sizes=(complete_to,) if all_in_to > opts.bring_in else (),
            min_to=complete_to, max_to=complete_to)
    kind = None
    sizes: tuple[int, ...] = ()
    lo = hi = 0
    if _raise_allowed(state, p):
        structure = opts.structure
        if state.current_bet == 0:
            kind = _BET
        elif structure is _FIXED_LIMIT and state.bets_count == 0:
            kind = _COMPLETE  # to the full bet, over a bring-in or a short all-in
        else:
            kind = _RAISE
        if structure is _FIXED_LIMIT:
            sizes = tuple(sorted({min(fixed_limit_raise_to(state, u), all_in_to)
                                  for u in fixed_limit_units(state)}))
            lo, hi = sizes[0], sizes[-1]
        else:
            hi = all_in_to
            if structure is _POT_LIMIT:
                hi = min(hi, pot_limit_max_raise_to(state, p))
            lo = min(min_raise_to(state), hi)
    # Positional (seat, can_fold, can_check, call, bring_in, raise_kind, raise_sizes, min_to,
    # max_to): built for every decision, and keywords cost a third more.
    return LegalActions(seat, True, owed == 0, min(owed, p.stack), 0, kind, sizes, lo, hi)
