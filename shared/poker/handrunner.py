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
from typing import Any

from . import decide as D
from . import events as E
from .betting import LegalActions
from .cards import Card
from .deck import commitment, shuffled
from .events import ActionKind, TableCreated
from .fold import HAND_HANDLERS, after_hand, apply, apply_hand
from .memo import Memo
from .options import TableOptions
from .shuffle import NO_ENTROPY, Entropy
from .state import HandState, Phase, TableState
from .steprules import STEPS, automatic, by_default, next_step

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
    #: the seeds the decks come from: none in process (a deck of ``shuffle``)
    entropy: Entropy = NO_ENTROPY
    server_seed: str = ""

    def new_deck(self, cards: Sequence[Card] | None = None) -> str:
        deck = self.shuffle(cards) if cards is not None else self.shuffle_full()
        salt = self.salt()
        self.decks.append(deck)
        self.salts.append(salt)
        return commitment(deck, salt)

    def root(self) -> str:
        """No positions root: in process, nobody asks for a receipt."""
        return ""

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
    memo = Memo()  # what the steps and their decisions ask twice (shared/poker/memo.py)
    choices = players_choices(policy, show_policy, memo)
    while True:
        step = next_step(hand, memo)
        if type(step) is D.HandComplete:
            return table, events
        new = decide_step(hand, step, choices, dealer, memo)
        for e in new:
            if type(e) in _HAND_ONLY:
                hand = apply_hand(hand, e, memo)
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


#: a player's step type -> the choice made for it (None: the rule for a player who does not
#: choose, the step's ``default`` in shared/poker/steprules.py)
Choices = dict[type, Callable[[HandState, Any], list[object] | None]]


def players_choices(policy: Policy,
                    show_policy: Callable[[HandState, int], list[object]] | None = None,
                    memo: Memo | None = None) -> Choices:
    """The players' choices of :func:`run_hand`: ``policy`` acts; ``show_policy`` shows or
    mucks where a hand may be mucked (else the rule for a player who does not act).
    ``memo``: the driver's (shared/poker/memo.py)."""
    def act(hand: HandState, step: D.Act) -> list[object]:
        action, to = policy(hand, step.legal)
        return D.act(hand, step.seat, action, to, memo)

    def show(hand: HandState, step: D.Show) -> list[object] | None:
        if show_policy is None or step.must_show:
            return None
        return show_policy(hand, step.seat)

    return {D.Act: act, D.Show: show}


def decide_step(hand: HandState, step: D.Step, choices: Choices,
                dealer: Dealer, memo: Memo | None = None) -> list[object]:
    """The decision of ``step`` (shared/poker/steprules.py): the player's choice, else the
    house's or the dealer's (with ``dealer``'s deck), else the rule for a player who does
    not choose."""
    choose = choices.get(type(step))
    if choose is not None:
        chosen = choose(hand, step)
        if chosen is not None:
            return chosen
    events = automatic(hand, step, dealer, memo)
    return events if events is not None else by_default(hand, step)


def take_table_step(table: TableState, step: object, choices: Choices, dealer: Dealer,
                    key: Callable[[], str] = str) -> list[object]:
    """The decision of a table's next step (:func:`~shared.poker.steprules.table_step`): a
    table step's own (``key()``: the saga key of one that may open a saga), else the hand's
    step as :func:`decide_step` decides it."""
    rule = STEPS[type(step)]
    if rule.table is not None:
        return rule.table(table, step, key() if rule.keyed else "")
    assert table.hand is not None  # a hand step is taken while a hand runs
    return decide_step(table.hand, step, choices, dealer)  # type: ignore[arg-type]
