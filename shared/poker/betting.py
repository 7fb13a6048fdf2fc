"""Betting rules (RULES.md §4): limits, minimum raises, the cap, short all-ins, legal actions.

Amounts here are "to" amounts: a player's total bet in the current round after the action,
as in ``cbr X`` of PHH and "raise to $800" of the rule book.
"""

from __future__ import annotations

from . import events as E
from .events import ActionKind, ForcedKind
from .evolve import Value, value
from .memo import Memo
from .options import Structure
from .state import BettingRound, HandState, Phase, Player
from .stud import bring_in_seat, first_to_act_showing, open_pair_showing

# Enum members read on every action, bound once as module globals, which read faster than
# Enum class attributes (the hot path of bench_hands).
_BET_PHASE = Phase.BET
_FIXED_LIMIT, _POT_LIMIT = Structure.FIXED_LIMIT, Structure.POT_LIMIT
_BET, _RAISE, _COMPLETE = ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE
_FOLD, _CHECK, _BRING_IN = ActionKind.FOLD, ActionKind.CHECK, ActionKind.BRING_IN


def fixed_limit_unit(state: HandState) -> int:
    """Fixed limit: the small bet on the first two rounds, the big bet on the rest.

    Hold'em and Omaha: pre-flop and flop small, turn and river big; stud: 3rd and 4th street
    small, 5th to 7th big.
    """
    opts = state.options
    return opts.small_bet if state.street < 2 else opts.big_bet


def fixed_limit_units(state: HandState, round_: BettingRound | None = None) -> tuple[int, ...]:
    """The bet sizes a fixed-limit bet or raise may add this round.

    Stud high, 4th street, with an open pair showing on any board: the small or the big bet,
    until a bet or raise of the big-bet size is made; then raises are big bets. In stud hi/lo
    an open pair changes nothing. ``round_``: in place of the state's own round (the one an
    action is about to make).
    """
    opts = state.options
    if (state.street == 1 and opts.game.value == "stud"
            and open_pair_showing(state.live_players)):
        made = (state.round if round_ is None else round_).big_bet_made
        return (opts.big_bet,) if made else (opts.small_bet, opts.big_bet)
    return (fixed_limit_unit(state),)


def pot_raise_to(current_bet: int, pot_total: int, call: int, part: tuple[int, int] = (1, 1)
                 ) -> int:
    """A bet or raise of ``part`` (numerator, denominator) of the pot: the highest bet + that
    part of (the pot + this player's call), rounded down. The whole pot is pot limit's
    largest raise (:func:`pot_limit_max_raise_to`); half of it is the "½ pot" a client offers.

    The pot is all the money in the middle: every pot, antes and dead blinds included, plus
    all bets on the table. Pot $200, a $150 bet, a $150 call: a pot raise makes it $800.
    """
    numerator, denominator = part
    return current_bet + (pot_total + call) * numerator // denominator


def pot_limit_max_raise_to(state: HandState, player: Player) -> int:
    """Pot limit: the largest raise-to = the highest bet + (the pot + this player's call)
    (:func:`pot_raise_to` of the whole pot)."""
    current_bet = state.round.current_bet
    return pot_raise_to(current_bet, state.pot_total, max(0, current_bet - player.round_bet))


def min_raise_to(state: HandState) -> int:
    """No limit and pot limit: a bet is at least the big blind; a raise increases the bet by
    at least the largest previous bet or raise this round ($100 bet: raise to at least $200).
    """
    r = state.round
    return r.current_bet + max(r.min_raise, state.options.big_blind)


def fixed_limit_raise_to(state: HandState, unit: int) -> int:
    """Fixed limit: a bet or raise adds one unit on top of the last bet that counts.

    After an all-in of at least half a bet (which counts as a full bet) the next raise is a full
    unit on top of it: a $15 all-in on a $20 round makes the next raise $35.
    """
    return state.round.full_level + unit


def counts_as_full_raise(state: HandState, to: int, unit: int | None = None) -> bool:
    """Whether a bet or raise to ``to`` is a full one: it reopens the betting and, in fixed
    limit, counts toward the cap.

    No and pot limit: it raises the bet by at least the minimum raise. Fixed limit (half-bet
    rule): it adds at least half a unit over the last counted bet.
    """
    r = state.round
    if state.structure is Structure.FIXED_LIMIT:
        unit = unit or min(fixed_limit_units(state))
        return 2 * (to - r.full_level) >= unit
    return to - r.current_bet >= max(r.min_raise, state.options.big_blind)


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


# --- the round: who acts, and what an action changes -------------------------------------------


def next_to_act(players: tuple[Player, ...], start: int, current_bet: int) -> int | None:
    """First player from index ``start`` (inclusive), clockwise, who still has to act.

    Everyone live and not all in acts until they have acted and matched the highest bet; a
    player alone against all-in opponents acts only to call or fold, and only if their chips
    in do not already cover the largest of those all-ins (RULES §4: more would come straight
    back as uncalled); with one player left the round (and the hand) is over.
    """
    n = len(players)
    live = can = 0
    for p in players:
        if not p.folded:
            live += 1
            if not p.all_in:
                can += 1
    if live <= 1:
        return None
    others_can_bet = can >= 2
    for k in range(n):
        p = players[(start + k) % n]
        if not p.folded and not p.all_in:
            if others_can_bet:
                if p.round_bet < current_bet or not p.acted:
                    return p.seat
            elif p.round_bet < call_cap(players, p, current_bet):
                return p.seat
    return None


def _index_after(state: HandState, seat: int) -> int:
    """Index of the first player clockwise after ``seat`` (which need not be dealt in)."""
    for i, p in enumerate(state.players):
        if p.seat > seat:
            return i
    return 0


def open_round(state: HandState) -> BettingRound:
    """The betting round of ``state.street``: the bet to match, and who acts first
    (``first``: None when nobody can act).

    Pre-flop the live blinds stand as bets and the big blind counts as the first bet; play
    starts left of the big blind (of the button when there is none). Stud's 3rd street
    starts with the bring-in, the lowest upcard; later streets with the best hand showing.
    Other rounds start left of the button.
    """
    opts = state.options
    players = state.players
    # the live players are counted only where heads-up uncapped raising could apply
    uncapped = opts.heads_up_uncapped and sum(1 for p in players if not p.folded) == 2
    current = full = bets = 0
    bring_in = None
    if opts.game.is_stud:
        if state.street == 0:
            bring_in = bring_in_seat(players, opts.suit_order)
            start = state.index(bring_in) if bring_in is not None else 0
        else:
            order = state.clockwise_from(state.button)
            best = first_to_act_showing(order, state.board, state.button)
            start = state.index(best) if best is not None else 0
    elif state.street == 0:
        current = full = max((f.amount for f in state.forced_bets if f.kind.live), default=0)
        big = next((f for f in state.forced_bets if f.kind is ForcedKind.BIG_BLIND), None)
        bets = 1 if big is not None else 0
        start = _index_after(state, big.seat if big else state.button)
    else:
        start = _index_after(state, state.button)
    return BettingRound(current, full, opts.big_blind, bets, False, uncapped, None,
                        next_to_act(players, start, current), bring_in)


def reopen_level(state: HandState, round_: BettingRound) -> int:
    """The bet a player who just acted must face before they may raise again (RULES §4: an
    all-in raise short of a full raise does not reopen the betting to players who acted)."""
    if state.options.structure is _FIXED_LIMIT:
        unit = min(fixed_limit_units(state, round_)) if state.game.is_stud \
            else fixed_limit_unit(state)
        return round_.full_level + unit
    return round_.current_bet + max(round_.min_raise, state.options.big_blind)


def after_action(state: HandState, e: E.ActionTaken
                 ) -> tuple[BettingRound, tuple[Player, ...], int | None]:
    """The round, the players and who acts next after the action ``e`` of the player on turn.

    A bet that goes up is a bring-in, a full bet or raise (everyone else who can still bet
    must act again, and may raise), or a short all-in (they act again but may only call or
    fold if they had acted). A fold that leaves two players heads-up lifts the cap where the
    table plays heads-up uncapped.
    """
    i = state.index(e.seat)
    p = state.players[i]
    r = state.round
    players = list(state.players)
    action = e.action
    reopened: bool | None = None  # None: the bet did not go up
    if action is _FOLD:
        if (state.options.heads_up_uncapped and not r.uncapped
                and sum(1 for q in players if not q.folded) - 1 == 2
                and r.bets_count < state.options.max_bets):
            r = r.evolve(uncapped=True)
    elif action is not _CHECK and e.to > r.current_bet:
        r, reopened = _raised(state, r, p, e)
    reopen_at = reopen_level(state, r)
    if reopened is not None:
        for k, q in enumerate(players):
            if q.seat != p.seat and q.can_bet:
                players[k] = q.evolve(acted=False, reopen_at=0) if reopened \
                    else q.evolve(acted=False)
    if action is _FOLD:
        p = p.evolve(folded=True, acted=True, reopen_at=reopen_at)
    elif action is _CHECK:
        p = p.evolve(acted=True, reopen_at=reopen_at)
    else:
        p = p.evolve(stack=p.stack - e.added, round_bet=e.to, acted=True, reopen_at=reopen_at,
                     contributed=p.contributed + e.added,
                     all_in=e.all_in or p.stack == e.added)
    players[i] = p
    after = tuple(players)
    return r, after, next_to_act(after, (i + 1) % len(after), r.current_bet)


def _raised(state: HandState, r: BettingRound, p: Player, e: E.ActionTaken
            ) -> tuple[BettingRound, bool | None]:
    """The round after a bet that went up, and whether it was a full bet or raise (None for
    the bring-in, the round's first action: nobody has acted to act again)."""
    if e.action is _BRING_IN:
        # A short bring-in is all in; the others still owe the full bring-in.
        return r.evolve(current_bet=max(e.to, state.options.bring_in),
                        last_aggressor=p.seat), None
    if state.options.structure is _FIXED_LIMIT:
        units = fixed_limit_units(state)
        full = counts_as_full_raise(state, e.to, min(units))
        if not full:
            return r.evolve(current_bet=e.to, last_aggressor=p.seat), False
        big = r.big_bet_made or (len(units) > 1 and e.to - r.full_level >= max(units))
        return r.evolve(current_bet=e.to, last_aggressor=p.seat, full_level=e.to,
                        bets_count=r.bets_count + 1, big_bet_made=big), True
    if counts_as_full_raise(state, e.to):
        return r.evolve(current_bet=e.to, last_aggressor=p.seat,
                        min_raise=e.to - r.current_bet), True
    return r.evolve(current_bet=e.to, last_aggressor=p.seat), False


def bring_in_due(state: HandState) -> bool:
    """Stud 3rd street before anyone brought in or completed."""
    return state.options.game.is_stud and state.street == 0 and state.round.current_bet == 0


@value
class LegalActions(Value):
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


#: the parts of the pot a client offers as a bet or raise beside the amount box, by name
POT_PRESETS: dict[str, tuple[int, int]] = {"half": (1, 2), "pot": (1, 1)}


def raise_presets(legal: LegalActions, structure: Structure, current_bet: int,
                  pot_total: int) -> dict[str, int]:
    """The amounts a client offers beside its amount box, each within the legal range: the
    least ("min"), half the pot and the pot (:func:`pot_raise_to` with the call), and in no
    limit all in ("allin": the most). None when the amount is no choice: no bet or raise,
    fixed limit (its sizes are the choice), or a single amount left."""
    if legal.raise_kind is None or legal.raise_sizes or legal.min_to >= legal.max_to:
        return {}
    lo, hi = legal.min_to, legal.max_to
    out = {"min": lo}
    for name, part in POT_PRESETS.items():
        out[name] = min(hi, max(lo, pot_raise_to(current_bet, pot_total, legal.call, part)))
    if structure is Structure.NO_LIMIT:
        out["allin"] = hi
    return out


def _raise_allowed(state: HandState, p: Player) -> bool:
    r = state.round
    current = r.current_bet
    if p.round_bet + p.stack <= current:
        return False  # no chips beyond a call
    if current < p.reopen_at:
        return False  # own bet, or a short all-in that did not reopen the betting
    if (state.options.structure is _FIXED_LIMIT and not r.uncapped
            and r.bets_count >= state.options.max_bets):
        return False  # capped
    # nobody left who could answer a raise (asked last: it reads every player; a plain loop,
    # asked once per decision: a generator for any() costs more than the usual first hit)
    seat = p.seat
    for q in state.players:
        if q.seat != seat and not q.folded and not q.all_in and q.round_bet + q.stack > current:
            return True
    return False


def legal_actions(state: HandState, seat: int, memo: Memo | None = None,
                  ) -> LegalActions | None:
    """The options of the player on turn; None for anyone else or outside a betting round.
    ``memo``: the caller's (shared/poker/memo.py), which keeps the last options by the
    state's identity (a step derives them, then its decision again)."""
    if state.phase is not _BET_PHASE or state.to_act != seat:
        return None
    if memo is None:
        return _legal_actions(state, seat)
    kept = memo.legal
    if kept[0] is state:  # states are immutable: the same object has the same options
        return kept[1]  # type: ignore[no-any-return]
    result = _legal_actions(state, seat)
    memo.legal = (state, result)
    return result


def _legal_actions(state: HandState, seat: int) -> LegalActions:
    p = state.player(seat)
    all_in_to = p.round_bet + p.stack
    r = state.round
    owed = r.current_bet - p.round_bet
    if owed > 0:
        owed = max(0, call_cap(state.players, p, r.current_bet) - p.round_bet)
    opts = state.options
    if bring_in_due(state):
        # The bring-in is forced: post it or complete. Only a player standing in for a bring-in
        # who is all in from the ante may fold.
        complete_to = min(opts.small_bet, all_in_to)
        return LegalActions(
            seat=seat, can_fold=seat != r.bring_in_seat, can_check=False, call=0,
            bring_in=min(opts.bring_in, p.stack),
            raise_kind=ActionKind.COMPLETE if all_in_to > opts.bring_in else None,
            raise_sizes=(complete_to,) if all_in_to > opts.bring_in else (),
            min_to=complete_to, max_to=complete_to)
    kind = None
    sizes: tuple[int, ...] = ()
    lo = hi = 0
    if _raise_allowed(state, p):
        structure = opts.structure
        if r.current_bet == 0:
            kind = _BET
        elif structure is _FIXED_LIMIT and r.bets_count == 0:
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
