"""The rules keep no state between calls (shared/poker/memo.py): what a hand asks twice of
the same immutable state is kept only in the caller's Memo."""

from __future__ import annotations

from shared.poker import decide as D
from shared.poker.betting import legal_actions
from shared.poker.cards import DECK
from shared.poker.fold import apply, apply_hand
from shared.poker.handrunner import new_table
from shared.poker.memo import Memo
from shared.poker.options import table_options
from shared.poker.steps import deal_plan


def _to_deal():
    table = new_table(table_options("holdem", "no_limit", small_blind=1, big_blind=2))
    for e in D.start_hand(table, 1, 1, [(1, 100), (2, 100), (3, 100)]):
        table = apply(table, e)
    hand = table.hand
    for e in D.commit_deck(hand, "c"):
        hand = apply_hand(hand, e)
    for e in D.post_forced_bets(hand):
        hand = apply_hand(hand, e)
    return hand


def _preflop():
    hand = _to_deal()
    for e in D.deal_from(hand, DECK):
        hand = apply_hand(hand, e)
    assert hand.to_act is not None
    return hand


def test_without_a_memo_nothing_is_kept_between_calls():
    hand = _preflop()
    seat = hand.to_act
    assert legal_actions(hand, seat) == legal_actions(hand, seat)
    assert legal_actions(hand, seat) is not legal_actions(hand, seat)
    [ev] = D.act(hand, seat, "fold")
    assert apply_hand(hand, ev) is not apply_hand(hand, ev)
    dealing = _to_deal()
    assert deal_plan(dealing) == deal_plan(dealing)
    assert deal_plan(dealing) is not deal_plan(dealing)


def test_a_callers_memo_keeps_the_last_result_by_identity():
    hand = _preflop()
    seat = hand.to_act
    memo = Memo()
    assert legal_actions(hand, seat, memo) is legal_actions(hand, seat, memo)
    [ev] = D.act(hand, seat, "fold", memo=memo)
    assert apply_hand(hand, ev, memo) is memo.folded[2]  # the decision's own fold, shared
    dealing = _to_deal()
    assert deal_plan(dealing, memo) is deal_plan(dealing, memo)
    other = Memo()
    assert legal_actions(hand, seat, other) is not legal_actions(hand, seat, memo)
