"""The chips of a hand's replay, step by step, as the core's fold has them: for each step the
hand page shows (services/web/static/hand.js draws them, it computes none), the pot in the
middle and the bets in front of the seats.

The steps, in the page's order: the seats taken; each forced bet; each street's deal and its
actions (an uncalled bet returned among them); each show or muck; each share of each pot
awarded; the rake, when there is one. After each, the hand's state is the core's fold of its
events to that one (shared/poker/fold.apply_hand): the pot is every chip in the middle
(``HandState.pot_total``) but the bets still in front of a seat (``round_bet``: a round's
bets go to the pot when it closes, RULES.md §4). Once the betting is over every chip is in
the pot; a share awarded leaves it.
"""

from __future__ import annotations

from shared.poker import events as E
from shared.poker.fold import HAND_HANDLERS, apply_hand, start_hand_state
from shared.poker.state import HandState, TableState

from .record import HandRecord
from .render_json import to_json

#: the events the page shows as a step of its streets (once a street was dealt)
_STREET_STEPS = (E.CardsDealt, E.ActionTaken, E.PlayerTimedOut, E.BetReturned)


def _step(hand: HandState, over: bool = False, paid: int = 0) -> dict:
    """A step's chips: the pot and the bets in front of the seats (seat as text, as in
    JSON); ``over``: the betting is over (every chip in the pot), ``paid``: chips of the pot
    awarded so far at this step."""
    if over:
        return {"pot": hand.pot_total - paid, "bets": {}}
    bets = {str(p.seat): p.round_bet for p in hand.players if p.round_bet}
    return {"pot": hand.pot_total - sum(p.round_bet for p in hand.players), "bets": bets}


def running_pots(record: HandRecord) -> list[dict]:
    """The hand's steps' chips (see the module's docstring), in the page's order of steps."""
    hand = start_hand_state(TableState(table_id=record.table_id, options=record.options),
                            record.start)
    first = _step(hand)
    forced: list[dict] = []
    streets: list[dict] = []
    shows: list[dict] = []
    awards: list[dict] = []
    dealt = False
    for e in record.events[1:]:
        before = hand
        if type(e) in HAND_HANDLERS:
            hand = apply_hand(hand, e)
        if isinstance(e, E.ForcedBetPosted):
            forced.append(_step(hand))
        elif isinstance(e, _STREET_STEPS) and (dealt or isinstance(e, E.CardsDealt)):
            dealt = True
            streets.append(_step(hand))
        elif isinstance(e, (E.HandShown, E.HandMucked)):
            shows.append(_step(hand, over=True))
        elif isinstance(e, E.PotAwarded):
            paid = 0
            for share in e.shares:
                paid += share.amount
                awards.append(_step(before, over=True, paid=paid))
    rake = [_step(hand, over=True)] if any(r.amount for r in record.of(E.RakeTaken)) else []
    return [first, *forced, *streets, *shows, *awards, *rake]


def replay_json(record: HandRecord) -> dict:
    """The hand as the replay reads it: :func:`~shared.history.render_json.to_json` and its steps'
    chips (``steps``: :func:`running_pots`)."""
    return {**to_json(record), "steps": running_pots(record)}
