"""The fold: ``apply(state, event) -> state``. Nothing else holds state.

Applying an event never validates a player's choice (the decisions did that before the event
existed); it checks only that the event can follow the state at all, raising ``InvalidEvent``
for a log that was corrupted or tampered with.
"""

from __future__ import annotations

from dataclasses import replace
from functools import reduce
from collections.abc import Iterable

from . import events as E
from .betting import counts_as_full_raise, fixed_limit_units
from .errors import InvalidEvent
from .events import ActionKind, ForcedKind
from .options import Structure
from .showdown import show_order
from .state import HandState, Phase, Player, TableState
from .stud import bring_in_seat, first_to_act_showing


# --- betting-round helpers (derived, deterministic) --------------------------------------------

def _needs_action(p: Player, current_bet: int, others_can_bet: bool) -> bool:
    if not p.can_bet:
        return False
    return p.round_bet < current_bet or (not p.acted and others_can_bet)


def next_to_act(players: tuple[Player, ...], start: int, current_bet: int) -> int | None:
    """First player from index ``start`` (inclusive), clockwise, who still has to act.

    Everyone live and not all in acts until they have acted and matched the highest bet; a
    player alone against all-in opponents acts only to call or fold; with one player left the
    round (and the hand) is over.
    """
    n = len(players)
    live = 0
    can = 0
    for p in players:
        if not p.folded:
            live += 1
            if not p.all_in:
                can += 1
    if live <= 1:
        return None
    for k in range(n):
        p = players[(start + k) % n]
        if _needs_action(p, current_bet, can >= 2):
            return p.seat
    return None


def _index_after(state: HandState, seat: int) -> int:
    """Index of the first player clockwise after ``seat`` (which need not be dealt in)."""
    for i, p in enumerate(state.players):
        if p.seat > seat:
            return i
    return 0


def _reopen_level(state: HandState) -> int:
    """The bet a player who just acted must face before they may raise again (RULES §4: an
    all-in raise short of a full raise does not reopen the betting to players who acted)."""
    if state.structure is Structure.FIXED_LIMIT:
        return state.full_level + min(fixed_limit_units(state))
    return state.current_bet + max(state.min_raise, state.options.big_blind)


def _start_round(state: HandState) -> HandState:
    """Open the betting round of ``state.street`` (or skip it when nobody can bet)."""
    opts = state.options
    players = tuple(replace(p, acted=False, reopen_at=0) for p in state.players)
    state = replace(state, players=players, current_bet=0, full_level=0, bets_count=0,
                    min_raise=opts.big_blind, big_bet_made=False, last_aggressor=None,
                    round_first=None, bring_in_seat=None,
                    uncapped=opts.heads_up_uncapped and len(state.live_players) == 2)
    if opts.game.is_stud:
        if state.street == 0:
            bring_in = bring_in_seat(state.players, opts.suit_order)
            state = replace(state, bring_in_seat=bring_in)
            start = state.index(bring_in) if bring_in is not None else 0
        else:
            order = state.clockwise_from(state.button)
            best = first_to_act_showing(order, state.board, state.button)
            start = state.index(best) if best is not None else 0
    elif state.street == 0:
        live_blinds = [f for f in state.forced_bets if f.kind.live]
        current = max((f.amount for f in live_blinds), default=0)
        big = next((f for f in state.forced_bets if f.kind is ForcedKind.BIG_BLIND), None)
        state = replace(state, current_bet=current, full_level=current,
                        bets_count=1 if big is not None else 0)
        start = _index_after(state, big.seat if big else state.button)
    else:
        start = _index_after(state, state.button)
    to_act = next_to_act(state.players, start, state.current_bet)
    if to_act is None:
        return _close_round(state, betting=False)
    return replace(state, phase=Phase.BET, to_act=to_act, round_first=to_act,
                   betting_streets=state.betting_streets + 1)


def _close_round(state: HandState, betting: bool) -> HandState:
    players = tuple(replace(p, round_bet=0) for p in state.players)
    last = state.street == state.streets - 1
    live = sum(1 for p in players if not p.folded)
    state = replace(state, players=players, to_act=None, final_round_bet=betting and last)
    if live <= 1 or last:
        return replace(state, phase=Phase.POTS)
    return replace(state, phase=Phase.DEAL, street=state.street + 1, reshuffled=False)


# --- event handlers ----------------------------------------------------------------------------

def _deck_committed(s: HandState, e: E.DeckCommitted) -> HandState:
    if e.reshuffle:
        if s.phase is not Phase.DEAL:
            raise InvalidEvent("a reshuffle outside dealing")
        return replace(s, deck_size=e.deck_size, dealt_from_deck=0, burned=(), reshuffled=True,
                       commitments=s.commitments + (e.commitment,))
    if s.phase is not Phase.COMMIT:
        raise InvalidEvent("a deck commitment after the hand's first commitment")
    phase = Phase.FORCED if s.forced_bets else Phase.DEAL
    return replace(s, phase=phase, deck_size=e.deck_size, commitments=(e.commitment,))


def _forced_bet_posted(s: HandState, e: E.ForcedBetPosted) -> HandState:
    if s.phase is not Phase.FORCED:
        raise InvalidEvent("a forced bet outside the forced-bet step")
    p = s.player(e.seat)
    p = replace(p, stack=p.stack - e.amount, contributed=p.contributed + e.amount,
                round_bet=p.round_bet + (e.amount if e.kind.live else 0),
                all_in=p.stack == e.amount)
    posted = s.forced_posted + 1
    return replace(s, players=s.with_player(p), forced_posted=posted,
                   phase=Phase.DEAL if posted == len(s.forced_bets) else Phase.FORCED)


def _cards_dealt(s: HandState, e: E.CardsDealt) -> HandState:
    if s.phase is not Phase.DEAL or e.street != s.street:
        raise InvalidEvent(f"cards for street {e.street} while the hand is at {s.phase.value}")
    players = list(s.players)
    index = {p.seat: i for i, p in enumerate(players)}
    count = len(e.burned) + len(e.board)
    for deal in e.hole:
        i = index[deal.seat]
        p = players[i]
        players[i] = replace(p, hole=p.hole + deal.cards, face_up=p.face_up + deal.face_up)
        count += len(deal.cards)
    s = replace(s, players=tuple(players), board=s.board + e.board,
                burned=s.burned + e.burned, dealt_from_deck=s.dealt_from_deck + count)
    return _start_round(s)


def _action_taken(s: HandState, e: E.ActionTaken) -> HandState:
    if s.phase is not Phase.BET or s.to_act != e.seat:
        raise InvalidEvent(f"an action by seat {e.seat} out of turn")
    p = s.player(e.seat)
    if e.action is ActionKind.FOLD:
        p = replace(p, folded=True, acted=True)
        s = replace(s, players=s.with_player(p))
        if (s.options.heads_up_uncapped and len(s.live_players) == 2
                and s.bets_count < s.options.max_bets):
            s = replace(s, uncapped=True)
    elif e.action is ActionKind.CHECK:
        p = replace(p, acted=True)
        s = replace(s, players=s.with_player(p))
    else:
        p = replace(p, stack=p.stack - e.added, round_bet=e.to,
                    contributed=p.contributed + e.added, all_in=e.all_in or p.stack == e.added)
        if e.to > s.current_bet:
            s = _raised(s, p, e)
        p = replace(p, acted=True)
        s = replace(s, players=s.with_player(p))
    p = replace(p, reopen_at=_reopen_level(s))
    s = replace(s, players=s.with_player(p))
    to_act = next_to_act(s.players, _index_after(s, e.seat), s.current_bet)
    return replace(s, to_act=to_act)


def _raised(s: HandState, p: Player, e: E.ActionTaken) -> HandState:
    """The bet went up: a bring-in, a full bet or raise (reopens), or a short all-in."""
    if e.action is ActionKind.BRING_IN:
        # A short bring-in is all in; the others still owe the full bring-in.
        return replace(s, current_bet=max(e.to, s.options.bring_in), last_aggressor=p.seat)
    changes: dict = {"current_bet": e.to, "last_aggressor": p.seat}
    if s.structure is Structure.FIXED_LIMIT:
        units = fixed_limit_units(s)
        added_unit = e.to - s.full_level
        full = counts_as_full_raise(s, e.to, min(units))
        if full:
            changes.update(full_level=e.to, bets_count=s.bets_count + 1)
            if len(units) > 1 and added_unit >= max(units):
                changes["big_bet_made"] = True
    else:
        full = counts_as_full_raise(s, e.to)
        if full:
            changes["min_raise"] = e.to - s.current_bet
    reset = dict(acted=False, reopen_at=0) if full else dict(acted=False)
    players = tuple(q if q.seat == p.seat or not q.can_bet else replace(q, **reset)
                    for q in s.players)
    return replace(s, players=players, **changes)


def _bet_returned(s: HandState, e: E.BetReturned) -> HandState:
    p = s.player(e.seat)
    if e.amount <= 0 or e.amount > p.round_bet:
        raise InvalidEvent(f"seat {e.seat} cannot get back {e.amount}")
    p = replace(p, stack=p.stack + e.amount, round_bet=p.round_bet - e.amount,
                contributed=p.contributed - e.amount)
    return replace(s, players=s.with_player(p))


def _round_closed(s: HandState, e: E.BettingRoundClosed) -> HandState:
    if s.phase is not Phase.BET or s.to_act is not None or e.street != s.street:
        raise InvalidEvent(f"betting round {e.street} closed while it is still open")
    return _close_round(s, betting=True)


def _pots_formed(s: HandState, e: E.PotsFormed) -> HandState:
    if s.phase is not Phase.POTS:
        raise InvalidEvent("pots formed before the betting ended")
    s = replace(s, pots=e.pots)
    if len(s.live_players) >= 2:
        return replace(s, phase=Phase.SHOWDOWN, show_order=show_order(s))
    return replace(s, phase=Phase.RAKE)


def _after_show(s: HandState, seat: int) -> HandState:
    order = tuple(x for x in s.show_order if x != seat)
    claimants = [p for p in s.players if not p.folded and not p.mucked]
    if len(claimants) == 1:
        order = tuple(x for x in order if x != claimants[0].seat)
    return replace(s, show_order=order, phase=Phase.SHOWDOWN if order else Phase.RAKE)


def _hand_shown(s: HandState, e: E.HandShown) -> HandState:
    if s.phase is not Phase.SHOWDOWN or not s.show_order or s.show_order[0] != e.seat:
        raise InvalidEvent(f"seat {e.seat} showed out of turn")
    p = replace(s.player(e.seat), hole=e.cards, shown=True)
    return _after_show(replace(s, players=s.with_player(p)), e.seat)


def _hand_mucked(s: HandState, e: E.HandMucked) -> HandState:
    if s.phase is not Phase.SHOWDOWN or not s.show_order or s.show_order[0] != e.seat:
        raise InvalidEvent(f"seat {e.seat} mucked out of turn")
    p = replace(s.player(e.seat), mucked=True)
    return _after_show(replace(s, players=s.with_player(p)), e.seat)


def _rake_taken(s: HandState, e: E.RakeTaken) -> HandState:
    if s.phase is not Phase.RAKE:
        raise InvalidEvent("rake taken outside the rake step")
    return replace(s, rake=e.amount, rake_from=e.from_pots, phase=Phase.AWARD)


def _pot_awarded(s: HandState, e: E.PotAwarded) -> HandState:
    if s.phase is not Phase.AWARD:
        raise InvalidEvent("a pot awarded outside the award step")
    players = s.players
    paid = 0
    for share in e.shares:
        p = s.player(share.seat)
        players = s.with_player(replace(p, stack=p.stack + share.amount))
        s = replace(s, players=players)
        paid += share.amount
    return replace(s, paid_out=s.paid_out + paid)


def _hand_ended(s: HandState, e: E.HandEnded) -> HandState:
    if s.phase is not Phase.AWARD or s.pot_total != 0:
        raise InvalidEvent("the hand ended with chips still in the pot")
    stacks = tuple(E.SeatStack(p.seat, p.stack) for p in s.players)
    if stacks != e.stacks:
        raise InvalidEvent("the final stacks recorded differ from the fold of the hand")
    return replace(s, phase=Phase.REVEAL)


def _deck_revealed(s: HandState, e: E.DeckRevealed) -> HandState:
    if s.phase is not Phase.REVEAL:
        raise InvalidEvent("the deck was revealed before the hand ended")
    return replace(s, phase=Phase.DONE)


_HAND_HANDLERS = {
    E.DeckCommitted: _deck_committed,
    E.ForcedBetPosted: _forced_bet_posted,
    E.CardsDealt: _cards_dealt,
    E.ActionTaken: _action_taken,
    E.BetReturned: _bet_returned,
    E.BettingRoundClosed: _round_closed,
    E.PotsFormed: _pots_formed,
    E.HandShown: _hand_shown,
    E.HandMucked: _hand_mucked,
    E.RakeTaken: _rake_taken,
    E.PotAwarded: _pot_awarded,
    E.HandEnded: _hand_ended,
    E.DeckRevealed: _deck_revealed,
}


def start_hand_state(table: TableState, e: E.HandStarted) -> HandState:
    players = tuple(Player(seat=x.seat, stack=x.stack, start_stack=x.stack) for x in e.players)
    return HandState(options=table.options, hand_no=e.hand_no, button=e.button,
                     players=players, forced_bets=e.forced_bets)


def apply_hand(state: HandState, event: object) -> HandState:
    try:
        handler = _HAND_HANDLERS[type(event)]
    except KeyError:
        raise InvalidEvent(f"{type(event).__name__} is not a hand event") from None
    return handler(state, event)


def apply(table: TableState | None, event: object) -> TableState:
    """Fold one event into the table's state."""
    if isinstance(event, E.TableCreated):
        if table is not None:
            raise InvalidEvent("the table was already created")
        return TableState(table_id=event.table_id, options=event.options)
    if table is None:
        raise InvalidEvent(f"{type(event).__name__} before TableCreated")
    if isinstance(event, E.HandStarted):
        if table.hand is not None and table.hand.phase is not Phase.DONE:
            raise InvalidEvent("a hand started while another is running")
        return replace(table, hand=start_hand_state(table, event))
    if table.hand is None:
        raise InvalidEvent(f"{type(event).__name__} outside a hand")
    hand = apply_hand(table.hand, event)
    if hand.phase is Phase.DONE:
        return replace(table, hand=hand, hands_played=table.hands_played + 1)
    return replace(table, hand=hand)


def fold(events: Iterable[object], table: TableState | None = None) -> TableState | None:
    """The state after ``events``: a reduce of :func:`apply`."""
    return reduce(apply, events, table)
