"""What a hand needs next: ``next_step(state)``, derived from the fold alone, and the plan of
the cards each street takes. Who decides each step, and how: steprules.py."""

from __future__ import annotations

from .betting import LegalActions, legal_actions
from .errors import IllegalAction
from .evolve import Value, value
from .memo import Memo
from .state import HandState, Phase

# Enum members read on every step, bound once as module globals, which read faster than
# Enum class attributes (the hot path of bench_hands).
_BET, _DEAL, _SHOWDOWN = Phase.BET, Phase.DEAL, Phase.SHOWDOWN

@value
class Step(Value):
    """A step of a hand: what the hand waits for (the fields say what the decision needs)."""


@value
class CommitDeck(Step):
    pass


@value
class PostForcedBets(Step):
    pass


@value
class Reshuffle(Step):
    deck_size: int  # undealt plus burned cards


@value
class Deal(Step):
    street: int
    count: int  # cards to take from the deck, burns included


@value
class Act(Step):
    seat: int
    legal: LegalActions


@value
class CloseRound(Step):
    """Nobody has an action left but the round still holds an uncalled bet to return."""


@value
class FormPots(Step):
    pass


@value
class Show(Step):
    seat: int
    must_show: bool  # all-in showdown: every hand is shown


@value
class TakeRake(Step):
    pass


@value
class AwardPots(Step):
    pass


@value
class RevealDeck(Step):
    pass


@value
class HandComplete(Step):
    pass


@value
class DealPlan(Value):
    """The cards of one street, in deck order: burns, hole cards round by round, board."""

    reshuffle: bool
    burn: int
    order: tuple[int, ...]  # seats receiving hole cards, clockwise from the button's left
    face_up: tuple[bool, ...]  # per round of hole cards
    board: int

    @property
    def count(self) -> int:
        return self.burn + len(self.order) * len(self.face_up) + self.board


def deal_plan(state: HandState, memo: Memo | None = None) -> DealPlan:
    """What the dealer deals on ``state.street`` (RULES §1).

    Community games: hole cards (no burn), then burn + 3, burn + 1, burn + 1. Stud: 2 down and
    1 up, then burn + 1 up (4th to 6th), burn + 1 down (7th). One card at a time, clockwise,
    starting left of the button; folded hands get no more cards. Stud that cannot give the
    burn plus one card to every live player first reshuffles the burned cards with the
    undealt ones; if those are still too few, one card is burned and one common card is
    turned up for everyone.

    Asked twice per street (the next step, then the deal itself) of the same immutable
    state: ``memo``, the caller's (shared/poker/memo.py), keeps the last plan by the state's
    identity.
    """
    if memo is None:
        return _deal_plan(state)
    kept = memo.plan
    if kept[0] is state:
        return kept[1]  # type: ignore[no-any-return]
    plan = _deal_plan(state)
    memo.plan = (state, plan)
    return plan


def _deal_plan(state: HandState) -> DealPlan:
    game, street = state.game, state.street
    if not game.is_stud and street > 0:
        return DealPlan(False, 1, (), (), 3 if street == 1 else 1)
    order = tuple(p.seat for p in state.clockwise_from(state.button) if not p.folded)
    if not game.is_stud:
        return DealPlan(False, 0, order, (False,) * game.hole_cards, 0)
    if street == 0:
        return DealPlan(False, 0, order, (False, False, True), 0)
    face_up = (street < 4,)
    available = state.deck_size - state.dealt_from_deck
    if available >= 1 + len(order):
        return DealPlan(False, 1, order, face_up, 0)
    if not state.reshuffled and state.burned:
        return DealPlan(True, 0, (), (), 0)
    return DealPlan(False, 1, (), (), 1)


def next_step(state: HandState, memo: Memo | None = None) -> Step:
    """What the hand needs now, derived from the fold alone (``memo``: the caller's, which
    keeps what the step's decision asks again: shared/poker/memo.py)."""
    phase = state.phase
    if phase is _BET:
        if state.to_act is None:
            return CloseRound()
        legal = legal_actions(state, state.to_act, memo)
        assert legal is not None  # the seat on turn in a betting round has options
        return Act(state.to_act, legal)
    if phase is _DEAL:
        plan = deal_plan(state, memo)
        if plan.reshuffle:
            return Reshuffle(state.deck_size - state.dealt_from_deck + len(state.burned))
        return Deal(state.street, plan.count)
    if phase is _SHOWDOWN:
        return Show(state.show_order[0], must_show=not state.final_round_bet)
    return _SIMPLE_STEPS[phase]


_SIMPLE_STEPS = {
    Phase.COMMIT: CommitDeck(),
    Phase.FORCED: PostForcedBets(),
    Phase.POTS: FormPots(),
    Phase.RAKE: TakeRake(),
    Phase.AWARD: AwardPots(),
    Phase.REVEAL: RevealDeck(),
    Phase.DONE: HandComplete(),
}


def require_phase(state: HandState, phase: Phase, what: str) -> None:
    if state.phase is not phase:
        raise IllegalAction(f"cannot {what} now: the hand is at the {state.phase.value} step")
