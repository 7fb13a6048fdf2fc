"""Drive one hand from start to finish in process: the same steps the table service takes,
calling the same decisions, with the deck and the players' choices passed in.

Used by tests, benchmarks, the in-process demo and bots. The dealer's part (shuffles, salts)
comes from the caller, so a run with a fixed deck is fully reproducible.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from . import decide as D
from . import events as E
from .betting import LegalActions
from .cards import Card
from .deck import commitment, shuffled
from .events import ActionKind, TableCreated
from .fold import HAND_HANDLERS, after_hand, apply, apply_hand
from .options import TableOptions
from .state import HandState, Phase, TableState
from .steprules import STEPS, automatic

#: chooses (action, to) for the player on turn, from the hand (None: a client that has only its
#: view, pokerctl's bots) and what is legal
Policy = Callable[[HandState | None, LegalActions], tuple[ActionKind, int | None]]


@dataclass
class Dealer:
    """The dealer's secrets for one hand: the deck(s) and salts (kept out of the events)."""

    # by default Python's CSPRNG (``secrets``); the services' dealer draws from the guarded
    # system source instead (shared/infra/randomness.py)
    shuffle: Callable[[Sequence[Card]], tuple[Card, ...]] = \
        lambda cards: shuffled(cards, secrets.randbelow)
    salt: Callable[[], str] = lambda: secrets.token_hex(16)
    decks: list[tuple[Card, ...]] = field(default_factory=list)
    salts: list[str] = field(default_factory=list)

    def new_deck(self, cards: Sequence[Card] | None = None) -> str:
        deck = self.shuffle(cards) if cards is not None else self.shuffle_full()
        salt = self.salt()
        self.decks.append(deck)
        self.salts.append(salt)
        return commitment(deck, salt)

    def shuffle_full(self) -> tuple[Card, ...]:
        from .cards import DECK
        return self.shuffle(DECK)

    def undealt_and_burned(self, state: HandState) -> tuple[Card, ...]:
        return D.cards_to_reshuffle(state, self.decks[-1])


def check_call_policy(state: HandState | None,
                      legal: LegalActions) -> tuple[ActionKind, int | None]:
    """Everybody calls (or checks, or brings in): every hand goes to showdown."""
    if legal.bring_in:
        return ActionKind.BRING_IN, None
    if legal.can_check:
        return ActionKind.CHECK, None
    return ActionKind.CALL, None


def random_policy(rng: random.Random) -> Policy:
    """Legal, varied play: folds, calls, raises of several sizes, all-ins."""

    def choose(state: HandState | None, legal: LegalActions) -> tuple[ActionKind, int | None]:
        options: list[tuple[ActionKind, int | None]] = []
        if legal.bring_in:
            options.append((ActionKind.BRING_IN, None))
        if legal.can_check:
            options += [(ActionKind.CHECK, None)] * 3
        elif legal.call:
            options += [(ActionKind.CALL, None)] * 3
        if legal.can_fold and not legal.can_check:
            options += [(ActionKind.FOLD, None)] * 2
        if legal.raise_kind is not None:
            if legal.raise_sizes:
                sizes = list(legal.raise_sizes)
            else:
                lo, hi = legal.min_to, legal.max_to
                sizes = [lo, hi, rng.randint(lo, hi), min(hi, lo + (hi - lo) // 3)]
            for to in sizes:
                options.append((legal.raise_kind, to))
        return rng.choice(options)

    return choose


def new_table(options: TableOptions, table_id: str = "t1") -> TableState:
    return apply(None, TableCreated(table_id, options))


def run_hand(table: TableState, hand_no: int, button: int,
             stacks: Sequence[tuple[int, int]], policy: Policy = check_call_policy,
             dealer: Dealer | None = None,
             show_policy: Callable[[HandState, int], list[object]] | None = None,
             ) -> tuple[TableState, list[object]]:
    """Play one hand to the end; returns the table after it and every event, in order."""
    dealer = dealer or Dealer()
    events: list[object] = list(D.start_hand(table, hand_no, button, stacks))
    for e in events:
        table = apply(table, e)
    # Fast path: a hand event changes only the table's hand (until the hand is done), so the
    # hand is folded on its own and the table catches up once, at the end, instead of being
    # copied for every event. Any other event goes through the table's fold.
    hand = table.hand
    assert hand is not None  # started above
    while True:
        step = D.next_step(hand)
        if isinstance(step, D.HandComplete):
            return table, events
        new = _decide_step(hand, step, policy, dealer, show_policy)
        for e in new:
            if type(e) in _HAND_ONLY:
                hand = apply_hand(hand, e)
                if hand.phase is _DONE:
                    table = after_hand(table, hand)
            else:
                table = apply(table.evolve(hand=hand), e)
                assert table.hand is not None  # the hand ends with a hand event
                hand = table.hand
        events.extend(new)


#: hand events that leave the rest of the table alone (a timeout also sits the player out)
_HAND_ONLY = frozenset(HAND_HANDLERS) - {E.PlayerTimedOut}
_DONE = Phase.DONE  # bound once, as in fold.py


def automatic_decision(hand: HandState, step: D.Step, dealer: Dealer) -> list[object] | None:
    """Every step that needs no player: the house's, and the dealer's with the deck(s) of
    ``dealer`` (steprules.py); None for a player's step."""
    return automatic(hand, step, dealer)


def _decide_step(hand: HandState, step: D.Step, policy: Policy, dealer: Dealer,
                 show_policy: Callable[[HandState, int], list[object]] | None) -> list[object]:
    if isinstance(step, D.Act):
        action, to = policy(hand, step.legal)
        return D.act(hand, step.seat, action, to)
    if isinstance(step, D.Show) and show_policy is not None and not step.must_show:
        return show_policy(hand, step.seat)
    events = automatic(hand, step, dealer)
    if events is None:  # a player's step nobody chooses for: the rule for them
        default = STEPS[type(step)].default
        if default is None:
            raise AssertionError(f"no decision answers {step!r}")
        events = default(hand, step)
    return events
