"""Decisions: ``decide(state, command) -> events`` or ``IllegalAction(reason)``. The steps a
hand goes through (``next_step``) live in steps.py and are re-exported here.

Decisions never read a clock or a random source: the dealer service passes the shuffled
cards in, and the events record what happened, so a replay never reshuffles.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import events as E
from . import seating
from .betting import bring_in_due, legal_actions
from .cards import DECK, UNKNOWN_CARD, Card
from .deck import commitment as deck_commitment
from .errors import IllegalAction
from .events import ActionKind
from .fold import apply_hand
from .memo import Memo
from .options import TimeoutPolicy
from .pots import form_pots as _form_pots
from .pots import rake_due, take_from_pots, uncalled_bet, uncalled_stake
from .showdown import award, hand_names, would_win_or_tie
from .shuffle import (
    ALGORITHM,
    NO_ENTROPY,
    Entropy,
    deck_salt,
    derive_deck,
    is_seed_hex,
    seed_digest,
)
from .state import HandState, Phase, TableState

# The steps are re-exported (the `X as X` imports from .steps, the explicit form): callers
# write decide.Act, decide.next_step.
from .steps import Act as Act
from .steps import AwardPots as AwardPots
from .steps import CloseRound as CloseRound
from .steps import CommitDeck as CommitDeck
from .steps import Deal as Deal
from .steps import DealPlan as DealPlan
from .steps import FormPots as FormPots
from .steps import HandComplete as HandComplete
from .steps import PostForcedBets as PostForcedBets
from .steps import Reshuffle as Reshuffle
from .steps import RevealDeck as RevealDeck
from .steps import Show as Show
from .steps import Step as Step
from .steps import TakeRake as TakeRake
from .steps import deal_plan as deal_plan
from .steps import next_step as next_step
from .steps import require_phase

# Enum members read on every action, bound once as module globals, which read faster than
# Enum class attributes on Python 3.11 (measured in bench_hands).
_FOLD, _CHECK, _CALL, _BRING_IN = (ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL,
                                   ActionKind.BRING_IN)

# --- table: starting a hand ---------------------------------------------------------------------


def start_hand(table: TableState, hand_no: int, button: int,
               stacks: Sequence[tuple[int, int]],
               forced_bets: Sequence[E.ForcedBet] | None = None) -> list[E.HandStarted]:
    """Deal in the given (seat, stack) players. ``forced_bets``: by default those of a table
    where nobody owes a blind (shared/poker/seating.py plans them, for this and for the
    table's next hand)."""
    if table.hand is not None and table.hand.phase is not Phase.DONE:
        raise IllegalAction("a hand is already running at this table")
    players = tuple(E.SeatStack(s, st) for s, st in sorted(stacks))
    if len(players) < 2:
        raise IllegalAction("a hand needs at least two players with chips")
    if len(players) > table.options.max_seats:
        raise IllegalAction(f"this table seats at most {table.options.max_seats} players")
    if len({p.seat for p in players}) != len(players):
        raise IllegalAction("a seat is listed twice")
    for p in players:
        _check_seat(p.seat)
        if isinstance(p.stack, bool) or not isinstance(p.stack, int):
            raise IllegalAction(f"seat {p.seat}'s stack must be whole chips, not {p.stack!r}")
        if p.stack <= 0:
            raise IllegalAction(f"seat {p.seat} has no chips and cannot be dealt in")
    seats = [p.seat for p in players]
    if forced_bets is None:
        forced_bets = seating.forced_bets(table.options, seats, button)
    return [E.HandStarted(hand_no, button, players, tuple(forced_bets))]


# --- dealer -------------------------------------------------------------------------------------


def commit_deck(state: HandState, commitment: str, deck_size: int = 52,
                positions_root: str = "", entropy: Entropy = NO_ENTROPY,
                ) -> list[E.DeckCommitted]:
    """The hand's first deck. ``entropy``: the seeds it was derived from (shared/poker/
    shuffle.py), which must be the ones the log holds: the server's seed the hand before
    committed to, and every seed revealed for this hand (a deck shuffled by the CSPRNG alone
    is refused once the server has committed to a seed)."""
    require_phase(state, Phase.COMMIT, "commit to a deck")
    _check_entropy(state, entropy, first=True)
    return [E.DeckCommitted(commitment, deck_size, positions_root=positions_root,
                            shuffle=entropy.shuffle, seed_sha256=entropy.seed_sha256,
                            player_seeds=entropy.player_seeds,
                            next_seed_sha256=entropy.next_seed_sha256)]


def reshuffle(state: HandState, commitment: str, deck_size: int,
              positions_root: str = "", entropy: Entropy = NO_ENTROPY,
              ) -> list[E.DeckCommitted]:
    step = next_step(state)
    if not isinstance(step, Reshuffle):
        raise IllegalAction("no reshuffle is due")
    if deck_size != step.deck_size:
        raise IllegalAction(f"the reshuffled deck must hold {step.deck_size} cards")
    _check_entropy(state, entropy, first=False)
    return [E.DeckCommitted(commitment, deck_size, reshuffle=True,
                            positions_root=positions_root, shuffle=entropy.shuffle,
                            seed_sha256=entropy.seed_sha256,
                            player_seeds=entropy.player_seeds)]


def _check_entropy(state: HandState, entropy: Entropy, first: bool) -> None:
    if not first:  # a reshuffle is derived as the hand's first deck was
        if (entropy.shuffle, entropy.seed_sha256, entropy.player_seeds) != (
                state.shuffle, state.seed_sha256, state.player_seeds) or entropy.next_seed_sha256:
            raise IllegalAction("a reshuffle is derived from the hand's own seeds")
        return
    if not entropy.shuffle:
        if entropy != NO_ENTROPY:
            raise IllegalAction("seeds without a shuffle algorithm")
        if state.seed_sha256 or state.player_seeds:
            raise IllegalAction("the server committed to a seed for this hand (or players "
                                "revealed theirs): its deck must be derived from them")
        return
    if entropy.shuffle != ALGORITHM:
        raise IllegalAction(f"unknown shuffle algorithm {entropy.shuffle!r}")
    if not is_seed_hex(entropy.seed_sha256) or not (
            entropy.next_seed_sha256 == "" or is_seed_hex(entropy.next_seed_sha256)):
        raise IllegalAction("a seed's commitment is 64 lowercase hex digits")
    if state.seed_sha256 and entropy.seed_sha256 != state.seed_sha256:
        raise IllegalAction("the deck must come from the server seed committed to in the "
                            "hand before")
    if tuple(entropy.player_seeds) != state.player_seeds:
        raise IllegalAction("the deck must use every seed revealed for this hand, and no other")


def deal(state: HandState, cards: Sequence[Card],
         memo: Memo | None = None) -> list[E.CardsDealt]:
    """Deal the street from ``cards``, the next cards of the deck in order (``memo``: the
    caller's, shared/poker/memo.py)."""
    require_phase(state, Phase.DEAL, "deal")
    plan = deal_plan(state, memo)
    if plan.reshuffle:
        raise IllegalAction("the deck must be reshuffled before this street")
    if not isinstance(cards, (tuple, list)):
        raise IllegalAction("the cards to deal must be a list of cards")
    if len(cards) != plan.count:
        raise IllegalAction(f"street {state.street} takes {plan.count} cards, not {len(cards)}")
    for c in cards:
        if not isinstance(c, Card) or not 0 <= c <= 52:
            raise IllegalAction(f"{int(c) if isinstance(c, int) else c!r} is not a card")
    seen = {c for p in state.players for c in p.hole} | set(state.board) | set(state.burned)
    seen.discard(UNKNOWN_CARD)
    known = [c for c in cards if c != UNKNOWN_CARD]
    if len(set(known)) != len(known) or seen.intersection(known):
        raise IllegalAction("a card cannot be dealt twice in one hand")
    burned = tuple(cards[: plan.burn])
    # Hole cards go one at a time, round by round: the i-th seat's are every n-th card.
    n = len(plan.order)
    pos = plan.burn + n * len(plan.face_up)
    dealt = cards[plan.burn: pos]
    hole = tuple(E.HoleDeal(s, tuple(dealt[i::n]), plan.face_up)
                 for i, s in enumerate(plan.order))
    board = tuple(cards[pos: pos + plan.board])
    return [E.CardsDealt(state.street, burned, hole, board)]


def deal_from(state: HandState, deck: Sequence[Card],
              memo: Memo | None = None) -> list[E.CardsDealt]:
    """Deal the street from ``deck``, the hand's current deck: the cards after those already
    dealt from it, as many as the street takes."""
    pos = state.dealt_from_deck
    return deal(state, deck[pos: pos + deal_plan(state, memo).count], memo)


def cards_to_reshuffle(state: HandState, deck: Sequence[Card]) -> tuple[Card, ...]:
    """Stud, when the deck runs short (RULES §1): the undealt cards of ``deck``, the hand's
    current deck, with the cards burned so far, to be shuffled anew."""
    return tuple(deck[state.dealt_from_deck:]) + state.burned


def deck_order(e: E.CardsDealt) -> tuple[Card, ...]:
    """The cards of a street in the order they left the deck (the inverse of :func:`deal`)."""
    hole: list[Card] = []
    rounds = max((len(h.cards) for h in e.hole), default=0)
    for r in range(rounds):
        hole.extend(h.cards[r] for h in e.hole)
    return e.burned + tuple(hole) + e.board


def reveal_deck(state: HandState, decks: Sequence[Sequence[Card]],
                salts: Sequence[str], server_seed: str = "") -> list[E.DeckRevealed]:
    """Reveal each deck and salt; each must hash to the commitment made before dealing it, and
    a derived deck must be the one its seeds give (with the server's seed, which must be the
    one committed to)."""
    require_phase(state, Phase.REVEAL, "reveal the deck")
    if len(decks) != len(salts):
        raise IllegalAction("one salt per deck")
    committed = [c for c in state.commitments if c]
    if len(decks) != len(committed):
        raise IllegalAction(f"{len(committed)} deck(s) were committed, {len(decks)} revealed")
    for deck, salt, c in zip(decks, salts, committed):
        if deck_commitment(deck, salt) != c:
            raise IllegalAction("a revealed deck does not match its commitment")
    if state.shuffle:
        _check_derived(state, decks, salts, server_seed)
    elif server_seed:
        raise IllegalAction("a server seed revealed for a deck not derived from seeds")
    return [E.DeckRevealed(tuple(tuple(d) for d in decks), tuple(salts), server_seed)]


def _check_derived(state: HandState, decks: Sequence[Sequence[Card]], salts: Sequence[str],
                   server_seed: str) -> None:
    if not is_seed_hex(server_seed) or seed_digest(server_seed) != state.seed_sha256:
        raise IllegalAction("the server's seed revealed is not the one it committed to")
    for k, (deck, salt) in enumerate(zip(decks, salts)):
        # deck 0: the 52 cards in order; a reshuffle: its cards sorted (shuffle.py)
        cards = DECK if k == 0 else tuple(sorted(deck))
        if tuple(deck) != derive_deck(server_seed, state.player_seeds, cards, k):
            raise IllegalAction(f"deck {k + 1} is not the one its seeds give "
                                f"({state.shuffle})")
        if salt != deck_salt(server_seed, k):
            raise IllegalAction(f"deck {k + 1}'s salt is not the one its seed gives")


# --- betting ------------------------------------------------------------------------------------


def post_forced_bets(state: HandState) -> list[E.ForcedBetPosted]:
    """Post every ante and blind due; a player who cannot cover one posts what they have and
    is all in (the others still owe the full amount)."""
    require_phase(state, Phase.FORCED, "post forced bets")
    left = {p.seat: p.stack for p in state.players}
    out = []
    for f in state.forced_bets:
        amount = min(f.amount, left[f.seat])
        left[f.seat] -= amount
        out.append(E.ForcedBetPosted(f.seat, f.kind, amount, all_in=left[f.seat] == 0))
    return out


def _check_seat(seat: object) -> None:
    if isinstance(seat, bool) or not isinstance(seat, int):
        raise IllegalAction(f"a seat is a whole seat number, not {seat!r}")


def _whose_turn(state: HandState, seat: int) -> str:
    if state.phase is not Phase.BET:
        return f"no betting round is open: the hand is at the {state.phase.value} step"
    try:
        p = state.player(seat)
    except KeyError:
        return f"seat {seat} is not in this hand"
    if p.folded:
        return f"seat {seat} has folded"
    if p.all_in:
        return f"seat {seat} is all in and has no more decisions"
    return f"it is seat {state.to_act}'s turn, not seat {seat}'s"


def _why_no_raise(state: HandState, seat: int) -> str:
    p = state.player(seat)
    if bring_in_due(state):
        return (f"you have no chips beyond the bring-in: bring in for "
                f"{min(state.options.bring_in, p.stack)}")
    r = state.round
    if p.round_bet + p.stack <= r.current_bet:
        return "you do not have chips beyond a call"
    if not any(q.can_bet and q.round_bet + q.stack > r.current_bet
               for q in state.players if q.seat != seat):
        return "every other player is all in or cannot cover more than the bet: you may only call or fold"
    if r.current_bet < p.reopen_at:
        if p.round_bet == r.current_bet or r.last_aggressor == seat:
            return "you cannot raise your own bet"
        return "a short all-in did not reopen the betting: you may only call or fold"
    return f"the betting is capped at {state.options.max_bets} bets: you may only call or fold"


#: the actions that take no amount (a bet, raise or completion is made *to* an amount)
NO_AMOUNT = (ActionKind.FOLD, ActionKind.CHECK, ActionKind.CALL, ActionKind.BRING_IN)


def _amount(to: object) -> int:
    if to is None:
        raise IllegalAction("a bet or raise needs an amount (the total to bet this round)")
    if isinstance(to, bool) or not isinstance(to, int):
        raise IllegalAction(f"amounts are whole numbers of chips, not {to!r}")
    return to


def act(state: HandState, seat: int, action: ActionKind | str,  # noqa: C901 (one branch per action kind, as the rule book lists them)
        to: object = None, memo: Memo | None = None) -> list[object]:
    """A player's action. ``to`` is the total bet this round after a bet, raise or completion.
    ``memo``: the caller's (shared/poker/memo.py).

    Returns the action, and when it closes the round the returned uncalled bet and the close.
    """
    _check_seat(seat)
    legal = legal_actions(state, seat, memo)
    if legal is None:
        raise IllegalAction(_whose_turn(state, seat))
    if type(action) is not ActionKind:
        try:
            action = ActionKind(action)
        except ValueError:
            raise IllegalAction(f"unknown action {action!r}") from None
    p = state.player(seat)
    if to is not None and action in NO_AMOUNT:
        raise IllegalAction(f"{action.value.replace('_', ' ')} takes no amount")
    if legal.bring_in and action in (ActionKind.CHECK, ActionKind.CALL):
        raise IllegalAction(f"the bring-in is forced: bring in for {legal.bring_in} "
                            f"or complete to {legal.min_to}")
    if action is _FOLD:
        if not legal.can_fold:
            raise IllegalAction(f"the bring-in is forced: bring in for {legal.bring_in} "
                                f"or complete to {legal.min_to}")
        ev = E.ActionTaken(seat, action, p.round_bet, 0, False)
    elif action is _CHECK:
        if not legal.can_check:
            raise IllegalAction(f"you face a bet of {legal.call}: call, raise or fold")
        ev = E.ActionTaken(seat, action, p.round_bet, 0, False)
    elif action is _CALL:
        if legal.call == 0:
            raise IllegalAction("there is nothing to call: check instead")
        ev = E.ActionTaken(seat, action, p.round_bet + legal.call, legal.call,
                           legal.call == p.stack)
    elif action is _BRING_IN:
        if not legal.bring_in:
            raise IllegalAction("no bring-in is due")
        ev = E.ActionTaken(seat, action, p.round_bet + legal.bring_in, legal.bring_in,
                           legal.bring_in == p.stack)
    else:
        amount = _amount(to)
        if legal.raise_kind is None:
            raise IllegalAction(_why_no_raise(state, seat))
        if action is not legal.raise_kind:
            raise IllegalAction(f"you may {legal.describe_raise()}, not {action.value}")
        if amount > p.round_bet + p.stack:
            raise IllegalAction(f"{amount} is more than you have: all in is "
                                f"{p.round_bet + p.stack}")
        if not legal.allows_raise_to(amount):
            raise IllegalAction(f"you may {legal.describe_raise()}; {amount} is not allowed")
        added = amount - p.round_bet
        ev = E.ActionTaken(seat, action, amount, added, added == p.stack)
    events: list[object] = [ev]
    after = apply_hand(state, ev, memo)
    if after.to_act is None:
        events += _closing(after)
    return events


def _closing(state: HandState) -> list[object]:
    returned = uncalled_bet(state.players)
    closing: list[object] = [E.BetReturned(*returned)] if returned is not None else []
    return closing + [E.BettingRoundClosed(state.street)]


def close_round(state: HandState) -> list[object]:
    """Close a round in which nobody has an action left, returning the uncalled bet (a big
    blind whose only opponent is all in from a smaller blind gets the difference back)."""
    if not isinstance(next_step(state), CloseRound):
        raise IllegalAction("no betting round is waiting to be closed")
    return _closing(state)


# --- showdown -----------------------------------------------------------------------------------


def form_pots(state: HandState) -> list[object]:
    """The main pot and side pots; a stake nobody matched (after the rounds' own uncalled
    bets, only an ante can be) goes back to its owner first."""
    require_phase(state, Phase.POTS, "form the pots")
    events: list[object] = []
    excess = uncalled_stake(state.players)
    if excess is not None:
        returned = E.BetReturned(*excess)
        events.append(returned)
        state = apply_hand(state, returned)
    return events + [E.PotsFormed(_form_pots(state.players))]


def _showdown_turn(state: HandState, seat: int) -> None:
    _check_seat(seat)
    require_phase(state, Phase.SHOWDOWN, "show or muck")
    if state.show_order[0] != seat:
        raise IllegalAction(f"seat {state.show_order[0]} shows or mucks first")


def show(state: HandState, seat: int, cards: Sequence[Card] | None = None) -> list[E.HandShown]:
    """Show the whole hand. ``cards`` may be given; they must be the cards the seat holds."""
    _showdown_turn(state, seat)
    held = state.player(seat).hole
    if cards is None:
        cards = held
    cards = tuple(cards)
    if len(cards) != len(held) or any(h.known and h != c for h, c in zip(held, cards)):
        raise IllegalAction(f"seat {seat} does not hold those cards: the whole hand is shown")
    if not all(c.known for c in cards):
        raise IllegalAction("every card of a shown hand must be named")
    # ``cards`` are all known here, so the others' unknown cards can never match: no filter.
    others = {c for p in state.players if p.seat != seat for c in p.hole}
    if others.intersection(cards) or set(state.board).intersection(cards):
        raise IllegalAction("a shown card is already held or on the board")
    high, low = hand_names(state, cards)
    return [E.HandShown(seat, cards, high, low)]


def muck(state: HandState, seat: int) -> list[E.HandMucked]:
    _showdown_turn(state, seat)
    if not state.final_round_bet:
        raise IllegalAction("in an all-in showdown every hand is shown")
    return [E.HandMucked(seat)]


def showdown_default(state: HandState, seat: int) -> list[E.HandShown] | list[E.HandMucked]:
    """A player who does not act at showdown has a winning or tying hand shown and any other
    hand mucked (every hand in an all-in showdown)."""
    _showdown_turn(state, seat)
    if not state.final_round_bet or would_win_or_tie(state, seat):
        return show(state, seat)
    return muck(state, seat)


# --- rake and award -----------------------------------------------------------------------------


def take_rake(state: HandState) -> list[E.RakeTaken]:
    require_phase(state, Phase.RAKE, "take the rake")
    amount, reason = rake_due(state)
    return [E.RakeTaken(amount, take_from_pots(state.pots, amount), reason)]


def award_pots(state: HandState) -> list[object]:
    """Award every pot (last side pot first), then end the hand with the final stacks."""
    require_phase(state, Phase.AWARD, "award the pots")
    awards = award(state)
    after = state
    for a in awards:
        after = apply_hand(after, a)
    stacks = tuple(E.SeatStack(p.seat, p.stack) for p in after.players)
    return [*awards, E.HandEnded(stacks)]


def time_out(state: HandState, seat: int, memo: Memo | None = None) -> list[object]:
    """The player on turn ran out of time (RULES §7). With nothing to call they check (a
    bring-in due is posted). Facing a bet, under the ``sources`` policy a player who already
    put chips into this hand (forced bets included) is treated as all in for what they put in;
    anyone else folds. Under ``check_fold``: check if free, else fold. ``memo``: the
    caller's (shared/poker/memo.py)."""
    legal = legal_actions(state, seat, memo)
    if legal is None:
        raise IllegalAction(_whose_turn(state, seat))
    if legal.bring_in:
        action = ActionKind.BRING_IN
    elif legal.can_check:
        action = ActionKind.CHECK
    else:
        player = state.player(seat)
        if (state.options.timeout_policy is TimeoutPolicy.SOURCES and player.contributed > 0
                and player.stack > 0):
            timed_out = E.PlayerTimedOut(seat, all_in=True)
            after = apply_hand(state, timed_out, memo)
            return [timed_out, *(_closing(after) if after.to_act is None else [])]
        action = ActionKind.FOLD
    return [E.PlayerTimedOut(seat), *act(state, seat, action, memo=memo)]
