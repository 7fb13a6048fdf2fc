"""The wallet saga in the pure core (shared/poker/table.py, fold.py): at a table whose chips
come from a wallet, chips reach a seat only once the wallet took them and leave it only to be
given back, each movement keyed so that it happens once; the auditor re-decides every saga
event and keeps the chips conserved; tampering with a saga is caught."""

from __future__ import annotations

import random

import pytest

from shared.audit import audit_table
from shared.audit.sample import chain, play_decisions, sample_keyring, seeded_dealer
from shared.poker import decide as D
from shared.poker import events as E
from shared.poker import table as T
from shared.poker.errors import IllegalAction, InvalidEvent
from shared.poker.fold import fold
from shared.poker.handrunner import automatic_decision
from shared.poker.options import table_options
from shared.poker.state import SagaKind
from shared.poker.steprules import table_step

WALLET = table_options("holdem", "no_limit", small_blind=1, big_blind=2, wallet=True)


def play(*decisions):
    table = None
    for d in decisions:
        events = d(table) if callable(d) else d
        table = fold(events, table)
    return table


def created():
    return fold(T.create_table(None, "w1", WALLET))


def seated(table, seat, player, amount=100, key=None):
    key = key or f"sit{seat}"
    table = fold(T.sit_down(table, seat, player, amount, "d", key=key), table)
    return fold(T.settled(table, key), table)


def test_a_sit_down_holds_the_seat_without_chips_until_the_wallet_debits():
    table = created()
    events = T.sit_down(table, 1, "alice", 100, "d", key="c.sit1.a")
    assert events == [E.BuyInRequested("c.sit1.a", 1, "alice", 100, "d", False)]
    table = fold(events, table)
    assert table.seat(1).stack == 0 and table.seat_saga(1).amount == 100
    with pytest.raises(IllegalAction, match="is taken"):
        T.sit_down(table, 1, "bob", 100, "d", key="c.sit1.b")
    table = seated(table, 2, "bob")
    assert table_step(table) is None  # alice has no chips yet: no hand
    table = fold(T.settled(table, "c.sit1.a"), table)
    assert table.seat(1).stack == 100 and not table.sagas
    assert isinstance(table_step(table), T.StartHand)


def test_a_refused_buy_in_frees_the_seat_and_moves_no_chips():
    table = fold(T.sit_down(created(), 1, "alice", 100, "d", key="k1"), created())
    table = fold(T.settled(table, "k1", "the balance is short"), table)
    assert table.seat(1) is None and not table.sagas and T.table_chips(table) == 0


def test_a_leaver_is_cashed_out_and_the_saga_stays_open_until_credited():
    table = seated(seated(created(), 1, "alice"), 2, "bob", 80)
    events = T.leave(table, 2, key="c.s2.x")
    assert events == [E.CashOutRequested("c.s2.x", 2, "bob", 80), E.PlayerLeft(2)]
    table = fold(events, table)
    assert table.seat(2) is None and table.saga("c.s2.x").kind is SagaKind.CASH_OUT
    table = fold(T.settled(table, "c.s2.x"), table)
    assert not table.sagas
    with pytest.raises(IllegalAction, match="cannot be refused"):
        t2 = fold(T.leave(seated(created(), 1, "a"), 1, key="k"), seated(created(), 1, "a"))
        T.settled(t2, "k", "no")


def test_no_leaving_or_topping_up_while_chips_are_with_the_wallet():
    table = seated(created(), 1, "alice", 50)
    table = fold(T.top_up(table, 1, 50, key="t1"), table)
    for decision in (lambda: T.leave(table, 1, key="l"), lambda: T.top_up(table, 1, 10, key="t2")):
        with pytest.raises(IllegalAction, match="still with the wallet"):
            decision()


def _play_out(table):
    """The running hand to its end: every player checks or calls."""
    dealer = seeded_dealer(random.Random(1))  # seeded: a failure replays
    while table.hand_running:
        step = D.next_step(table.hand)
        if isinstance(step, D.Act):
            kind = E.ActionKind.CHECK if step.legal.can_check else E.ActionKind.CALL
            events = D.act(table.hand, step.seat, kind)
        elif isinstance(step, D.Show):
            events = D.show(table.hand, step.seat)
        else:
            events = automatic_decision(table.hand, step, dealer)
        table = fold(events, table)
    return table


def test_a_top_up_waits_for_the_hand_to_end_and_the_house_is_owed_the_rake():
    opts = table_options("holdem", "no_limit", small_blind=10, big_blind=20, wallet=True,
                         rake_basis_points=1000)
    table = fold(T.create_table(None, "w1", opts))
    table = seated(seated(table, 1, "alice", 600), 2, "bob", 600)
    table = fold(T.top_up(table, 1, 400, key="top"), table)
    table = fold(T.start_next_hand(table), table)  # the hand began before the wallet answered
    assert table.saga("top") not in T.settleable(table)
    with pytest.raises(IllegalAction, match="not open for settling"):
        T.settled(table, "top")
    table = _play_out(table)
    assert table.saga("top") in T.settleable(table)
    rake = table.hand.rake
    assert rake > 0
    assert [(g.key, g.amount) for g in table.sagas if g.kind is SagaKind.RAKE] == [
        ("rake/1", rake)]
    table = fold(T.settled(table, "rake/1"), table)
    table = fold(T.settled(table, "top"), table)
    assert not table.sagas and table.seat(1).stack + table.seat(2).stack == 1600 - rake


def test_a_closing_table_cashes_everyone_out_and_takes_no_one():
    table = seated(seated(created(), 1, "alice"), 2, "bob")
    table = fold(T.close(table, "end of the night"), table)
    assert table_step(table) == T.FreeSeat(1)
    with pytest.raises(IllegalAction, match="closing"):
        T.sit_down(table, 3, "carol", 100, "d", key="k")
    for seat in (1, 2):
        table = fold(T.free_seat(table, seat, key=f"out{seat}"), table)
    assert not table.seats and not table.closed  # the credits are still owed
    for seat in (1, 2):
        table = fold(T.settled(table, f"out{seat}"), table)
    assert table.closed and table_step(table) is None


def test_a_paused_table_starts_no_hand_until_resumed():
    table = seated(seated(created(), 1, "alice"), 2, "bob")
    table = fold(T.pause(table, True), table)
    assert table_step(table) is None
    with pytest.raises(IllegalAction, match="paused"):
        T.start_next_hand(table)
    table = fold(T.pause(table, False), table)
    assert isinstance(table_step(table), T.StartHand)


def test_an_operator_configures_a_table_between_hands_only():
    table = seated(seated(created(), 1, "alice"), 2, "bob")
    bigger = table_options("holdem", "no_limit", small_blind=2, big_blind=4, wallet=True)
    paused = fold(T.pause(table, True), table)
    table2 = fold(T.configure(paused, bigger), paused)
    assert table2.options == bigger and table2.seat(1).stack == 100  # stacks kept
    for other, why in [
            (table_options("omaha", "no_limit", small_blind=1, big_blind=2, wallet=True),
             "keeps its game"),
            (table_options("holdem", "no_limit", small_blind=1, big_blind=2), "chips come"),
            (WALLET, "already"),
            (table_options("holdem", "no_limit", small_blind=1, big_blind=2, wallet=True,
                           max_seats=2, rake_basis_points=100), None)]:
        if why is None:
            assert T.configure(paused, other)  # two seats hold both players
            continue
        with pytest.raises(IllegalAction, match=why):
            T.configure(paused, other)
    running = fold(T.start_next_hand(table), table)
    with pytest.raises(IllegalAction, match="between hands"):
        T.configure(running, bigger)
    with pytest.raises(InvalidEvent):
        fold([E.TableConfigured(bigger)], running)


def test_the_fold_refuses_saga_events_that_do_not_follow_the_rules():
    table = created()
    with pytest.raises(InvalidEvent):
        fold([E.BuyInConfirmed("nothing-open")], table)
    plain = fold(T.create_table(None, "p1", table_options("holdem", "no_limit", small_blind=1,
                                                          big_blind=2)))
    with pytest.raises(InvalidEvent, match="without a wallet"):
        fold([E.BuyInRequested("k", 1, "alice", 100)], plain)


WALLET_SAMPLE = table_options("omaha_hilo", "pot_limit", small_blind=1, big_blind=2,
                              wallet=True)


@pytest.fixture(scope="module")
def wallet_decisions():
    return list(play_decisions("t1", WALLET_SAMPLE, hands=30, seats=6, seed=4, churn=0.08))


def test_a_wallet_table_audits_with_its_sagas(wallet_decisions):
    kinds = {type(e) for d in wallet_decisions for e in d}
    assert {E.BuyInRequested, E.BuyInConfirmed, E.BuyInRefused, E.CashOutRequested,
            E.CashOutConfirmed, E.RakeCredited} <= kinds
    a = audit_table("t1", list(chain("t1", wallet_decisions, options=WALLET_SAMPLE)),
                    sample_keyring())
    assert a.ok, a.failure
    assert a.conserved and a.hands == 30


@pytest.mark.parametrize("tamper", ["confirm_a_refused", "cash_out_short", "confirm_twice"])
def test_a_tampered_saga_is_caught(wallet_decisions, tamper):
    out = list(wallet_decisions)
    if tamper == "confirm_a_refused":
        i = next(i for i, d in enumerate(out) if isinstance(d[0], E.BuyInRefused))
        out[i] = [E.BuyInConfirmed(out[i][0].key)]
    elif tamper == "cash_out_short":
        i = next(i for i, d in enumerate(out) if isinstance(d[0], E.CashOutRequested))
        e = out[i][0]
        out[i] = [E.CashOutRequested(e.key, e.seat, e.player_id, e.amount - 1), *out[i][1:]]
    else:
        i = next(i for i, d in enumerate(out) if isinstance(d[0], E.BuyInConfirmed))
        out.insert(i + 1, out[i])
    a = audit_table("t1", list(chain("t1", out, options=WALLET_SAMPLE)), sample_keyring())
    assert not a.ok
