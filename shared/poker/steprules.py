"""Which decision answers which step: the one map from a step type (steps.py) to the service
that owns it, the call that takes it, and its decision.

Everything that takes or checks a step reads this map: the table service's driver (which
service and method to call), the services that own the house steps (their decision:
:func:`house`), the in-process driver (shared/poker/driver.py), the auditor and the PHH replay
(which decision a recorded event must be the outcome of). The dealer service takes its steps
with the deck in its vault, through the same decisions of decide.py. A new kind of step is
a class in steps.py, the place in ``next_step`` that returns it, its decision in decide.py and
one entry here; its owner's service gets the method named here.

Three kinds of decision:

- ``house``: needs nothing but the state (forced bets, closing a round, pots, rake, awards).
- ``dealer``: needs the dealer's secrets, the shuffled deck(s) and salts (``DeckHolder``: the
  dealer service's vault, or the in-process :class:`~shared.poker.driver.Dealer`).
- neither: a player's choice (acting, showing), made by a person, a bot's policy or, for a
  player who does not act, the rule for them (``default``).

``again`` makes the decision a second time from the first event a service recorded for the
step: the audit and a replay check that the log holds exactly what the rules decide.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import decide as D
from . import events as E
from .cards import Card
from .shuffle import Entropy
from .state import HandState
from .steps import (
    Act,
    AwardPots,
    CloseRound,
    CommitDeck,
    Deal,
    FormPots,
    HandComplete,
    PostForcedBets,
    Reshuffle,
    RevealDeck,
    Show,
    Step,
    TakeRake,
)

Events = list[Any]


class DeckHolder(Protocol):
    """The dealer's secrets for one hand, as a decision needs them (read only here)."""

    @property
    def decks(self) -> Sequence[Sequence[Card]]: ...

    @property
    def salts(self) -> Sequence[str]: ...

    def new_deck(self, cards: Sequence[Card] | None = None) -> str:
        """Shuffle ``cards`` (all 52 when None), keep the deck and a new salt; the commitment."""
        ...


@dataclass(frozen=True, slots=True)
class StepRule:
    owner: str  # the service whose decision it is
    rpc: str  # the owner's method that the table service calls to take the step
    house: Callable[[HandState], Events] | None = None
    dealer: Callable[[HandState, Any, DeckHolder], Events] | None = None
    #: a player who does not act: the rule for them (the table service asks the owner for it)
    default: Callable[[HandState, Any], Events] | None = None
    #: recorded first event's type -> the decision again, from that event
    again: Mapping[type, Callable[[HandState, Any], Events]] = field(default_factory=dict)
    #: the owner's method that takes ``default`` when the table service asks for it (the
    #: clock keeper's time-out); "": ``rpc`` takes it (a show's default is a choice of it)
    default_rpc: str = ""


def _acted(hand: HandState, e: E.ActionTaken) -> Events:
    return D.act(hand, e.seat, e.action, None if e.action in D.NO_AMOUNT else e.to)


def _shown(hand: HandState, e: E.HandShown) -> Events:
    return D.show(hand, e.seat, e.cards)


def _reshuffled(hand: HandState, step: Reshuffle, deck: DeckHolder) -> Events:
    cards = D.cards_to_reshuffle(hand, deck.decks[-1])
    return D.reshuffle(hand, deck.new_deck(cards), step.deck_size)


#: the step types of a hand and how each is decided
STEPS: dict[type[Step], StepRule] = {
    CommitDeck: StepRule(
        "dealer", "CommitDeck",
        dealer=lambda hand, step, deck: D.commit_deck(hand, deck.new_deck()),
        again={E.DeckCommitted: lambda hand, e: D.commit_deck(
            hand, e.commitment, e.deck_size, e.positions_root, Entropy.of(e))}),
    PostForcedBets: StepRule("betting", "PostForcedBets", house=D.post_forced_bets),
    Reshuffle: StepRule(
        "dealer", "Reshuffle", dealer=_reshuffled,
        again={E.DeckCommitted: lambda hand, e: D.reshuffle(
            hand, e.commitment, e.deck_size, e.positions_root, Entropy.of(e))}),
    Deal: StepRule(
        "dealer", "DealStreet",
        dealer=lambda hand, step, deck: D.deal_from(hand, deck.decks[-1]),
        again={E.CardsDealt: lambda hand, e: D.deal(hand, D.deck_order(e))}),
    Act: StepRule(
        "betting", "Act", default=lambda hand, step: D.time_out(hand, step.seat),
        default_rpc="TimeOut",
        again={E.ActionTaken: _acted,
               E.PlayerTimedOut: lambda hand, e: D.time_out(hand, e.seat)}),
    CloseRound: StepRule("betting", "CloseRound", house=D.close_round),
    FormPots: StepRule("showdown", "FormPots", house=D.form_pots),
    Show: StepRule(
        "dealer", "ShowOrMuck", default=lambda hand, step: D.showdown_default(hand, step.seat),
        again={E.HandShown: _shown, E.HandMucked: lambda hand, e: D.muck(hand, e.seat)}),
    TakeRake: StepRule("rake", "TakeRake", house=D.take_rake),
    AwardPots: StepRule("showdown", "AwardPots", house=D.award_pots),
    RevealDeck: StepRule(
        "dealer", "RevealDeck",
        dealer=lambda hand, step, deck: D.reveal_deck(hand, deck.decks, deck.salts),
        again={E.DeckRevealed: lambda hand, e: D.reveal_deck(hand, e.decks, e.salts,
                                                             e.server_seed)}),
    HandComplete: StepRule("table", ""),
}


def calls_of(owner: str) -> frozenset[str]:
    """The methods of service ``owner`` that take steps: what its step stream answers
    (shared/infra/stepstream.py)."""
    return frozenset(name for rule in STEPS.values() if rule.owner == owner
                     for name in (rule.rpc, rule.default_rpc) if name)


def house(step: type[Step]) -> Callable[[HandState], Events]:
    """The house's decision of a step type (the services that own the house steps take it
    from here); KeyError naming the step for one that is not the house's."""
    decision = STEPS[step].house
    if decision is None:
        raise KeyError(f"{step.__name__} is not a house step")
    return decision


def automatic(hand: HandState, step: Step, deck: DeckHolder) -> Events | None:
    """The decision of a step that needs no player (the house's, or the dealer's with
    ``deck``); None for a player's step."""
    r = STEPS[type(step)]
    if r.house is not None:
        return r.house(hand)
    if r.dealer is not None:
        return r.dealer(hand, step, deck)
    return None


class NotThisStep(Exception):
    """A recorded event that does not answer the hand's next step."""


def decide_again(hand: HandState, step: Step, first: object) -> Events:
    """The decision of ``step`` again, from the first event recorded for it: the events the
    rules give (the caller compares them with the log). A house step is decided from the
    state alone; any other needs ``first`` to be one of the events that answer it
    (NotThisStep otherwise). The decision's own IllegalAction says the recorded choice was
    not allowed."""
    r = STEPS[type(step)]
    if r.house is not None:
        return r.house(hand)
    again = r.again.get(type(first))
    if again is None:
        raise NotThisStep(f"the hand's next step is {type(step).__name__} ({r.owner}), "
                          f"not a {type(first).__name__}")
    return again(hand, first)
