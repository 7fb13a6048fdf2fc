"""The fold: ``apply(state, event) -> state``. Nothing else holds state.

Applying an event never validates a player's choice (the decisions did that before the event
existed); it checks only that the event can follow the state at all, raising ``InvalidEvent``
for a log that was corrupted or tampered with.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import reduce
from typing import Any

from . import events as E
from .betting import after_action, next_to_act, open_round
from .errors import InvalidEvent
from .events import ActionKind, ForcedKind
from .memo import Memo
from .options import AnteType, Structure
from .pots import uncalled_bet
from .seating import owes_big_blind_on_arrival
from .showdown import show_order
from .state import HandState, PendingSeed, Phase, Player, Saga, SagaKind, Seat, TableState

# Enum members read on every action, bound once as module globals, which read faster than
# Enum class attributes on Python 3.11 (measured in bench_hands).
_BET_PHASE = Phase.BET
_FIXED_LIMIT = Structure.FIXED_LIMIT
_FOLD, _CHECK, _BRING_IN = ActionKind.FOLD, ActionKind.CHECK, ActionKind.BRING_IN


def _start_round(state: HandState) -> HandState:
    """Open the betting round of ``state.street`` (or skip it when nobody can bet).

    Players come in with their round fields reset (by the previous round's close, or fresh
    for the first round, where the live blinds already stand as bets).
    """
    round_ = open_round(state)
    if round_.first is None:
        if uncalled_bet(state.players) is not None:
            # Nobody can act, but a blind stands uncalled: the betting service returns it.
            return state.evolve(phase=Phase.BET, to_act=None, round=round_)
        return _close_round(state.evolve(round=round_), betting=False)
    return state.evolve(phase=Phase.BET, to_act=round_.first, round=round_,
                        betting_streets=state.betting_streets + 1)


def _close_round(state: HandState, betting: bool) -> HandState:
    """The round is over: bets become part of the pot and every player's round resets."""
    players = tuple(p if not (p.round_bet or p.acted or p.reopen_at)
                    else p.evolve(round_bet=0, acted=False, reopen_at=0)
                    for p in state.players)
    last = state.street == state.streets - 1
    live = sum(1 for p in players if not p.folded)
    if live <= 1 or last:
        return state.evolve(players=players, to_act=None, final_round_bet=betting and last,
                            phase=Phase.POTS)
    return state.evolve(players=players, to_act=None, final_round_bet=False, phase=Phase.DEAL,
                        street=state.street + 1, reshuffled=False)


# --- event handlers ----------------------------------------------------------------------------

def _deck_committed(s: HandState, e: E.DeckCommitted) -> HandState:
    if e.reshuffle:
        if s.phase is not Phase.DEAL:
            raise InvalidEvent("a reshuffle outside dealing")
        return s.evolve(deck_size=e.deck_size, dealt_from_deck=0, burned=(), reshuffled=True,
                       commitments=s.commitments + (e.commitment,))
    if s.phase is not Phase.COMMIT:
        raise InvalidEvent("a deck commitment after the hand's first commitment")
    phase = Phase.FORCED if s.forced_bets else Phase.DEAL
    return s.evolve(phase=phase, deck_size=e.deck_size, commitments=(e.commitment,),
                    shuffle=e.shuffle, seed_sha256=e.seed_sha256 or s.seed_sha256,
                    next_seed_sha256=e.next_seed_sha256)


def _forced_bet_posted(s: HandState, e: E.ForcedBetPosted) -> HandState:
    if s.phase is not Phase.FORCED:
        raise InvalidEvent("a forced bet outside the forced-bet step")
    p = s.player(e.seat)
    dead = e.kind is ForcedKind.DEAD_SMALL_BLIND or (
        e.kind is ForcedKind.ANTE and s.options.ante_type is AnteType.BIG_BLIND)
    p = p.evolve(stack=p.stack - e.amount, contributed=p.contributed + e.amount,
                 round_bet=p.round_bet + (e.amount if e.kind.live else 0),
                 dead=p.dead + (e.amount if dead else 0), all_in=p.stack == e.amount)
    posted = s.forced_posted + 1
    return s.evolve(players=s.with_player(p), forced_posted=posted,
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
        players[i] = p.evolve(hole=p.hole + deal.cards, face_up=p.face_up + deal.face_up)
        count += len(deal.cards)
    s = s.evolve(players=tuple(players), board=s.board + e.board,
                burned=s.burned + e.burned, dealt_from_deck=s.dealt_from_deck + count)
    return _start_round(s)


def _action_taken(s: HandState, e: E.ActionTaken) -> HandState:
    if s.phase is not _BET_PHASE or s.to_act != e.seat:
        raise InvalidEvent(f"an action by seat {e.seat} out of turn")
    if e.action is not _FOLD and e.action is not _CHECK:
        p = s.players[s.index(e.seat)]
        if e.added > p.stack or e.to != p.round_bet + e.added:
            raise InvalidEvent(f"seat {e.seat} cannot put in {e.added} to make {e.to}")
    round_, players, to_act = after_action(s, e)
    return s.evolve(players=players, to_act=to_act, round=round_)


def _timed_out(s: HandState, e: E.PlayerTimedOut) -> HandState:
    if s.phase is not Phase.BET or s.to_act != e.seat:
        raise InvalidEvent(f"seat {e.seat} timed out while not on the clock")
    if not e.all_in:
        return s  # the action that follows (check, fold, bring-in) moves the hand on
    i = s.index(e.seat)
    players = list(s.players)
    players[i] = players[i].evolve(all_in=True, acted=True)
    players_t = tuple(players)
    to_act = next_to_act(players_t, (i + 1) % len(players_t), s.round.current_bet)
    return s.evolve(players=players_t, to_act=to_act)


def _bet_returned(s: HandState, e: E.BetReturned) -> HandState:
    """An uncalled bet comes back at the end of its round; after the betting (forming the
    pots) an uncalled stake does (an ante nobody could match)."""
    p = s.player(e.seat)
    from_round = s.phase is not Phase.POTS
    limit = p.round_bet if from_round else p.contributed - p.dead
    if e.amount <= 0 or e.amount > limit:
        raise InvalidEvent(f"seat {e.seat} cannot get back {e.amount}")
    p = p.evolve(stack=p.stack + e.amount, contributed=p.contributed - e.amount,
                 round_bet=p.round_bet - e.amount if from_round else p.round_bet)
    return s.evolve(players=s.with_player(p))


def _round_closed(s: HandState, e: E.BettingRoundClosed) -> HandState:
    if s.phase is not Phase.BET or s.to_act is not None or e.street != s.street:
        raise InvalidEvent(f"betting round {e.street} closed while it is still open")
    return _close_round(s, betting=s.round.first is not None)


def _pots_formed(s: HandState, e: E.PotsFormed) -> HandState:
    if s.phase is not Phase.POTS:
        raise InvalidEvent("pots formed before the betting ended")
    if len(s.live_players) >= 2:  # the show order follows the betting, not the pots
        return s.evolve(pots=e.pots, phase=Phase.SHOWDOWN, show_order=show_order(s))
    return s.evolve(pots=e.pots, phase=Phase.RAKE)


def _after_show(s: HandState, seat: int, p: Player) -> HandState:
    """``seat`` showed or mucked; ``p``: its player now."""
    players = s.with_player(p)
    order = s.show_order[1:]  # ``seat`` was first (the handlers checked), and seats are unique
    claimants = [q for q in players if not q.folded and not q.mucked]
    if len(claimants) == 1:
        order = tuple(x for x in order if x != claimants[0].seat)
    return s.evolve(players=players, show_order=order,
                    phase=Phase.SHOWDOWN if order else Phase.RAKE)


def _hand_shown(s: HandState, e: E.HandShown) -> HandState:
    if s.phase is not Phase.SHOWDOWN or not s.show_order or s.show_order[0] != e.seat:
        raise InvalidEvent(f"seat {e.seat} showed out of turn")
    return _after_show(s, e.seat, s.player(e.seat).evolve(hole=e.cards, shown=True))


def _hand_mucked(s: HandState, e: E.HandMucked) -> HandState:
    if s.phase is not Phase.SHOWDOWN or not s.show_order or s.show_order[0] != e.seat:
        raise InvalidEvent(f"seat {e.seat} mucked out of turn")
    return _after_show(s, e.seat, s.player(e.seat).evolve(mucked=True))


def _rake_taken(s: HandState, e: E.RakeTaken) -> HandState:
    if s.phase is not Phase.RAKE:
        raise InvalidEvent("rake taken outside the rake step")
    return s.evolve(rake=e.amount, rake_from=e.from_pots, phase=Phase.AWARD)


def _pot_awarded(s: HandState, e: E.PotAwarded) -> HandState:
    if s.phase is not Phase.AWARD:
        raise InvalidEvent("a pot awarded outside the award step")
    players = list(s.players)
    paid = 0
    for share in e.shares:
        i = s.index(share.seat)
        players[i] = players[i].evolve(stack=players[i].stack + share.amount)
        paid += share.amount
    return s.evolve(players=tuple(players), paid_out=s.paid_out + paid)


def _hand_ended(s: HandState, e: E.HandEnded) -> HandState:
    if s.phase is not Phase.AWARD or s.pot_total != 0:
        raise InvalidEvent("the hand ended with chips still in the pot")
    stacks = tuple(E.SeatStack(p.seat, p.stack) for p in s.players)
    if stacks != e.stacks:
        raise InvalidEvent("the final stacks recorded differ from the fold of the hand")
    return s.evolve(phase=Phase.REVEAL)


def _deck_revealed(s: HandState, e: E.DeckRevealed) -> HandState:
    if s.phase is not Phase.REVEAL:
        raise InvalidEvent("the deck was revealed before the hand ended")
    return s.evolve(phase=Phase.DONE)


#: event class -> its fold (each takes its own event type)
HAND_HANDLERS: dict[type, Callable[[HandState, Any], HandState]] = {
    E.DeckCommitted: _deck_committed,
    E.ForcedBetPosted: _forced_bet_posted,
    E.CardsDealt: _cards_dealt,
    E.ActionTaken: _action_taken,
    E.PlayerTimedOut: _timed_out,
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
    positions = [-1] * (max(p.seat for p in players) + 1)
    for i, p in enumerate(players):
        positions[p.seat] = i
    before = table.hand
    seed = (before.next_seed_sha256
            if before is not None and before.hand_no == e.hand_no - 1 else "")
    revealed = tuple(sorted(p.seed for p in table.seeds if p.hand_no == e.hand_no and p.seed))
    return HandState(options=table.options, hand_no=e.hand_no, button=e.button,
                     players=players, forced_bets=e.forced_bets, positions=tuple(positions),
                     seed_sha256=seed, player_seeds=revealed)


def apply_hand(state: HandState, event: object, memo: Memo | None = None) -> HandState:
    """Fold one hand event. A decision that folds its own event to see what follows (an action
    closing the round) and the caller who then folds the same event share one result through
    the caller's ``memo`` (shared/poker/memo.py): both are immutable, so the last result is
    kept by identity."""
    if memo is not None:
        kept = memo.folded
        if kept[0] is state and kept[1] is event:
            return kept[2]  # type: ignore[no-any-return]
    try:
        handler = HAND_HANDLERS[type(event)]
    except KeyError:
        raise InvalidEvent(f"{type(event).__name__} is not a hand event") from None
    result = handler(state, event)
    if memo is not None:
        memo.folded = (state, event, result)
    return result


def _with_seat(table: TableState, number: int, **changes: object) -> TableState:
    return table.evolve(seats=tuple(s.evolve(**changes) if s.seat == number else s
                                    for s in table.seats))


def _seat_player(table: TableState, number: int, player_id: str, stack: int,
                 token_digest: str, post_big_blind: bool, name: str) -> TableState:
    if table.seat(number) is not None:
        raise InvalidEvent(f"seat {number} was already taken")
    seat = Seat(number, player_id, stack, token_digest, arrival=table.arrivals + 1,
                owes_big_blind=(owes_big_blind_on_arrival(table)
                                and not table.options.tournament),
                post_big_blind=post_big_blind,
                name=name)
    seats = tuple(sorted(table.seats + (seat,), key=lambda s: s.seat))
    return table.evolve(seats=seats, arrivals=table.arrivals + 1)


def _in_hand(table: TableState, seat: int) -> bool:
    hand = table.hand
    return hand is not None and table.hand_running and any(p.seat == seat for p in hand.players)


def _open_saga(table: TableState, key: str, *kinds: SagaKind) -> Saga:
    saga = table.saga(key)
    if saga is None or saga.kind not in kinds:
        raise InvalidEvent(f"no open {' or '.join(k.value for k in kinds)} saga {key!r}")
    return saga


def _without_saga(table: TableState, key: str) -> tuple[Saga, ...]:
    return tuple(g for g in table.sagas if g.key != key)


def _money_event(table: TableState, event: object) -> TableState:
    """The wallet saga (events.BuyInRequested ...): chips reach a seat once the wallet took
    them and leave it to be given back; what is owed either way is ``table.sagas``."""
    if not table.options.wallet:
        raise InvalidEvent(f"{type(event).__name__} at a table without a wallet")
    if isinstance(event, E.BuyInRequested):
        if table.saga(event.key) is not None:
            raise InvalidEvent(f"saga {event.key!r} is already open")
        kind = SagaKind.TOP_UP if event.top_up else SagaKind.BUY_IN
        saga = Saga(event.key, kind, event.amount, event.seat, event.player_id)
        if event.top_up:
            seat = table.seat(event.seat)
            if seat is None or table.seat_saga(event.seat) is not None:
                raise InvalidEvent(f"seat {event.seat} cannot top up now")
        else:  # the seat is held, without chips, until the wallet answers
            table = _seat_player(table, event.seat, event.player_id, 0, event.token_digest,
                                 event.post_big_blind, event.name)
        return table.evolve(sagas=table.sagas + (saga,))
    if isinstance(event, E.BuyInConfirmed):
        saga = _open_saga(table, event.key, SagaKind.BUY_IN, SagaKind.TOP_UP)
        seat = table.seat(saga.seat)
        if seat is None or _in_hand(table, saga.seat):
            raise InvalidEvent(f"seat {saga.seat} cannot take chips now")
        table = _with_seat(table, saga.seat, stack=seat.stack + saga.amount)
        return table.evolve(sagas=_without_saga(table, event.key))
    if isinstance(event, E.BuyInRefused):
        saga = _open_saga(table, event.key, SagaKind.BUY_IN, SagaKind.TOP_UP)
        if saga.kind is SagaKind.BUY_IN:  # the held seat is free again
            table = table.evolve(seats=tuple(s for s in table.seats if s.seat != saga.seat))
        return table.evolve(sagas=_without_saga(table, event.key))
    if isinstance(event, E.CashOutRequested):
        seat = table.seat(event.seat)
        if (seat is None or _in_hand(table, event.seat) or seat.stack != event.amount
                or table.saga(event.key) is not None):
            raise InvalidEvent(f"seat {event.seat} cannot cash out {event.amount} now")
        table = _with_seat(table, event.seat, stack=0)
        saga = Saga(event.key, SagaKind.CASH_OUT, event.amount, event.seat, event.player_id)
        return table.evolve(sagas=table.sagas + (saga,))
    if isinstance(event, E.CashOutConfirmed):
        _open_saga(table, event.key, SagaKind.CASH_OUT)
        return table.evolve(sagas=_without_saga(table, event.key))
    if isinstance(event, E.RakeCredited):
        _open_saga(table, event.key, SagaKind.RAKE)
        return table.evolve(sagas=_without_saga(table, event.key))
    raise InvalidEvent(f"{type(event).__name__} is not a money event")


def rake_key(hand_no: int) -> str:
    """The saga key of hand ``hand_no``'s rake, owed to the house."""
    return f"rake/{hand_no}"


def _table_event(table: TableState, event: object) -> TableState:  # noqa: C901 (one branch per table event: a dispatch)
    if isinstance(event, E.PlayerSeated):
        return _seat_player(table, event.seat, event.player_id, event.stack,
                            event.token_digest, event.post_big_blind, event.name)
    if isinstance(event, E.SeatTokenReplaced):
        seat = table.seat(event.seat)
        if seat is None or seat.player_id != event.player_id:
            raise InvalidEvent(f"seat {event.seat} is not {event.player_id!r}'s")
        return _with_seat(table, event.seat, token_digest=event.token_digest)
    if isinstance(event, E.MONEY_EVENTS):
        return _money_event(table, event)
    if isinstance(event, E.TablePaused):
        return table.evolve(paused=event.paused)
    if isinstance(event, E.TableClosing):
        return table.evolve(closing=True)
    if isinstance(event, E.TableConfigured):
        if table.hand_running:
            raise InvalidEvent("the table's options changed during a hand")
        return table.evolve(options=event.options)
    if isinstance(event, E.PlayerLeft):
        return table.evolve(seats=tuple(s for s in table.seats if s.seat != event.seat))
    if isinstance(event, E.PlayerSatOut):
        return _with_seat(table, event.seat, sitting_out=event.sitting_out,
                          post_big_blind=event.post_big_blind)
    if isinstance(event, E.PlayerLeaving):
        if table.seat(event.seat) is None:
            raise InvalidEvent(f"seat {event.seat} is empty")
        return _with_seat(table, event.seat, leaving=True, sitting_out=True)
    if isinstance(event, E.PlayerDisconnected | E.PlayerReconnected):
        if table.seat(event.seat) is None:
            raise InvalidEvent(f"seat {event.seat} is empty")
        return _with_seat(table, event.seat,
                          connected=isinstance(event, E.PlayerReconnected))
    if isinstance(event, E.PlayerToppedUp):
        seat = table.seat(event.seat)
        if seat is None or _in_hand(table, event.seat):
            raise InvalidEvent(f"seat {event.seat} cannot top up now")
        return _with_seat(table, event.seat, stack=seat.stack + event.amount)
    if isinstance(event, E.SeedCommitted | E.SeedRevealed):
        return _seed_event(table, event)
    if isinstance(event, E.ClockRestarted):
        hand = table.hand
        if hand is None or not table.hand_running or hand.to_act != event.seat:
            raise InvalidEvent(f"seat {event.seat} is not on the clock")
        return table  # the clock alone changes (shared/poker/clock.py)
    raise InvalidEvent(f"{type(event).__name__} is not a table event")


def _seed_event(table: TableState, event: E.SeedCommitted | E.SeedRevealed) -> TableState:
    """A seat's seed for a later hand (the rules: shared/poker/table.py commit_seed)."""
    pending = table.pending_seed(event.hand_no, event.seat)
    if event.hand_no <= table.last_hand_no:
        raise InvalidEvent(f"a seed for hand {event.hand_no}, which has started")
    if isinstance(event, E.SeedCommitted):
        if pending is not None:
            raise InvalidEvent(f"seat {event.seat} committed twice for hand {event.hand_no}")
        return table.evolve(seeds=table.seeds + (
            PendingSeed(event.hand_no, event.seat, event.seed_sha256),))
    if pending is None or pending.seed:
        raise InvalidEvent(f"seat {event.seat} revealed a seed it did not commit to")
    return table.evolve(seeds=tuple(p.evolve(seed=event.seed) if p is pending else p
                                    for p in table.seeds))


def _hand_started(table: TableState, e: E.HandStarted) -> TableState:
    """Players dealt in owe no blinds any more; players away whom the blinds passed owe them."""
    dealt = {p.seat for p in e.players}
    seats = []
    for s in table.seats:
        if s.seat in dealt:
            s = s.evolve(owes_big_blind=False, owes_small_blind=False, post_big_blind=False)
        elif s.seat in e.missed_big_blind or s.seat in e.missed_small_blind:
            s = s.evolve(owes_big_blind=s.owes_big_blind or s.seat in e.missed_big_blind,
                         owes_small_blind=s.owes_small_blind or s.seat in e.missed_small_blind)
        seats.append(s)
    small = next((f.seat for f in e.forced_bets if f.kind is ForcedKind.SMALL_BLIND), None)
    big = next((f.seat for f in e.forced_bets if f.kind is ForcedKind.BIG_BLIND), None)
    return table.evolve(seats=tuple(seats), hand=start_hand_state(table, e),
                        last_hand_no=e.hand_no, button=e.button, last_small_blind=small,
                        last_big_blind=big,
                        seeds=tuple(p for p in table.seeds if p.hand_no > e.hand_no))


def after_hand(table: TableState, hand: HandState) -> TableState:
    """The hand is over: its final stacks become the seats' stacks."""
    final = {p.seat: p.stack for p in hand.players}
    seats = tuple(s.evolve(stack=final[s.seat]) if s.seat in final else s
                  for s in table.seats)
    sagas = table.sagas
    if hand.rake and table.options.wallet:  # the house is owed the rake
        sagas += (Saga(rake_key(hand.hand_no), SagaKind.RAKE, hand.rake),)
    # a tournament table waits between hands for its director (balancing, levels, busts)
    return table.evolve(seats=seats, hand=hand, hands_played=table.hands_played + 1,
                        sagas=sagas, paused=table.paused or bool(table.options.tournament))


def apply(table: TableState | None, event: object, memo: Memo | None = None) -> TableState:
    """Fold one event into the table's state (``memo``: see :func:`apply_hand`)."""
    if isinstance(event, E.TableCreated):
        if table is not None:
            raise InvalidEvent("the table was already created")
        # a tournament table waits for its director to seat its players and release a hand
        return TableState(table_id=event.table_id, options=event.options,
                          paused=bool(event.options.tournament))
    if table is None:
        raise InvalidEvent(f"{type(event).__name__} before TableCreated")
    if type(event) in HAND_HANDLERS:
        if table.hand is None:
            raise InvalidEvent(f"{type(event).__name__} outside a hand")
        hand = apply_hand(table.hand, event, memo)
        if isinstance(event, E.PlayerTimedOut) and not table.options.tournament:
            # A player who timed out is sat out from the next hand until they come back (in a
            # tournament an away player is dealt in and blinded away).
            table = _with_seat(table, event.seat, sitting_out=True)
        if hand.phase is Phase.DONE:
            return after_hand(table, hand)
        return table.evolve(hand=hand)
    if isinstance(event, E.HandStarted):
        if table.hand_running:
            raise InvalidEvent("a hand started while another is running")
        return _hand_started(table, event)
    return _table_event(table, event)


def fold(events: Iterable[object], table: TableState | None = None) -> TableState | None:
    """The state after ``events``: a reduce of :func:`apply`."""
    return reduce(apply, events, table)
