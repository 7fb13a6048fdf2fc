"""The replay's chips step by step (shared/history/pots.py) on the golden log's hands (every
game): one entry per step the hand page shows, the pot of a street's deal is every chip put in
before it, the bets of a closed round are in the pot, and the pot is empty at the end."""

from __future__ import annotations

import pytest

from shared.history import to_json
from shared.history.log import table_hands
from shared.history.pots import running_pots
from shared.poker import events as E
from tests.data.golden import make_golden as golden

LOG = golden.load_log(golden.HERE / golden.LOG)


def page_steps(hand: dict) -> int:
    """How many steps the hand page (hand.js) shows of a hand's JSON."""
    return (1 + len(hand["forced_bets"]) + sum(1 + len(s["actions"]) for s in hand["streets"])
            + len(hand["shows"]) + sum(len(a["shares"]) for a in hand["awards"])
            + (1 if hand["rake"] else 0))


def put_in_before_each_deal(record) -> list[int]:
    """The chips put in before each CardsDealt, from the events' amounts alone."""
    total, out = 0, []
    for e in record.events:
        if isinstance(e, E.ForcedBetPosted):
            total += e.amount
        elif isinstance(e, E.ActionTaken):
            total += e.added
        elif isinstance(e, E.BetReturned):
            total -= e.amount
        elif isinstance(e, E.CardsDealt):
            out.append(total)
    return out


@pytest.mark.parametrize("table_id", sorted(LOG))
def test_each_step_of_a_replay_has_the_cores_pot(table_id):
    records = [r for r in table_hands(LOG[table_id]) if r.complete]
    assert records
    for record in records:
        steps = running_pots(record)
        hand = to_json(record)
        assert len(steps) == page_steps(hand), record.hand_no
        assert steps[-1] == {"pot": 0, "bets": {}} and all(s["pot"] >= 0 for s in steps)
        first = 1 + len(hand["forced_bets"])
        deals, at = [], first
        for street in hand["streets"]:
            deals.append(steps[at])
            at += 1 + len(street["actions"])
        dealt = put_in_before_each_deal(record)
        for deal, put_in in zip(deals, dealt):
            assert deal["pot"] + sum(deal["bets"].values()) == put_in, record.hand_no
        for deal in deals[1:]:  # a street dealt after a round closed: its bets in the pot
            assert deal["bets"] == {}, record.hand_no
