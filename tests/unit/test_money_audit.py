"""The money audit (shared/audit/money.py) on a sampled wallet table and the ledger its sagas
would make at the wallet (services/wallet/ledger.py's fold): it balances to the chip, names
the money in transit, and catches each way the two logs can disagree."""

from __future__ import annotations

import dataclasses

import pytest
from poker.wallet.v1 import wallet_pb2 as pb

from services.wallet.ledger import fold_ledger
from shared.audit import audit_table
from shared.audit.money import audit_money
from shared.audit.sample import chain, play_decisions, sample_keyring
from shared.poker.options import table_options

OPTIONS = table_options("holdem", "no_limit", small_blind=5, big_blind=10, wallet=True,
                        rake_basis_points=500, no_flop_no_drop=False)


@pytest.fixture(scope="module")
def audit():
    decisions = list(play_decisions("m1", OPTIONS, hands=25, seats=5, seed=9, churn=0.08))
    a = audit_table("m1", list(chain("m1", decisions, options=OPTIONS)), sample_keyring())
    assert a.ok, a.failure
    return a


def account(player_id: str) -> pb.Account:
    return pb.Account(house=True) if player_id == "" else pb.Account(player_id=player_id)


def _mover(events: list[pb.LedgerEvent]):
    """A wallet's movement appended to ``events`` as its ledger records it (the account's
    balance after it), for ledgers written by hand."""
    balances: dict[str, int] = {}

    def move(who: str, movement: int, amount: int, key: str) -> None:
        grows = movement in (pb.MOVEMENT_DEPOSIT, pb.MOVEMENT_CREDIT)
        balances[who] = balances.get(who, 0) + (amount if grows else -amount)
        events.append(pb.LedgerEvent(idempotency_key=key, account=account(who),
                                     movement=movement, amount=amount,
                                     balance_after=balances[who]))
    return move


def ledger_for(audit, *, skip: str = "", tweak=None) -> list[pb.LedgerEvent]:
    """Deposits enough for every player, then the movement of every settled saga."""
    events: list[pb.LedgerEvent] = []
    move = _mover(events)

    players = {s.player_id for s in audit.sagas if s.player_id}
    for p in sorted(players):
        move(p, pb.MOVEMENT_DEPOSIT, 100_000, f"cash/{p}")
    for s in audit.sagas:
        if s.key == skip or s.outcome == "refused":
            continue
        who, amount = s.player_id, s.amount
        if tweak is not None:
            who, amount = tweak(s, who, amount)
        movement = pb.MOVEMENT_DEBIT if s.kind in ("buy_in", "top_up") else pb.MOVEMENT_CREDIT
        move(who, movement, amount, f"m1/{s.key}")
    return events


def test_the_sample_table_and_its_ledger_balance_to_the_chip(audit):
    kinds = {(s.kind, s.outcome) for s in audit.sagas}
    assert {("buy_in", "confirmed"), ("buy_in", "refused"), ("cash_out", "credited"),
            ("rake", "credited")} <= kinds
    money = audit_money([audit], fold_ledger(ledger_for(audit)))
    assert money.ok, money.problems
    assert money.house == audit.rake and money.at_tables == audit.stacks
    assert money.deposits == money.player_balances + money.house + money.at_tables


def test_a_missing_debit_is_chips_from_nowhere(audit):
    key = next(s.key for s in audit.sagas if s.kind == "buy_in" and s.outcome == "confirmed")
    money = audit_money([audit], fold_ledger(ledger_for(audit, skip=key)))
    assert not money.ok and any("no debit" in p for p in money.problems)


def test_a_debit_of_a_refused_buy_in_is_money_lost(audit):
    refused = next(s for s in audit.sagas if s.outcome == "refused")
    events = ledger_for(audit)
    events.append(pb.LedgerEvent(idempotency_key=f"m1/{refused.key}",
                                 account=account(refused.player_id),
                                 movement=pb.MOVEMENT_DEBIT, amount=refused.amount,
                                 balance_after=0))
    # balance_after is checked by the fold: recompute it from the player's last event
    last = [e for e in events[:-1] if e.account.player_id == refused.player_id][-1]
    events[-1].balance_after = last.balance_after - refused.amount
    money = audit_money([audit], fold_ledger(events))
    assert not money.ok and any("refused at the table" in p for p in money.problems)


@pytest.mark.parametrize("how,why", [
    ("amount", "the table moved"),
    ("player", "not for"),
    ("rake_to_a_player", "not the house"),
])
def test_a_movement_that_disagrees_with_its_saga_is_caught(audit, how, why):
    def tweak(saga, who, amount):
        if how == "amount" and saga.kind == "cash_out":
            return who, amount + 1
        if how == "player" and saga.kind == "cash_out":
            return next(s.player_id for s in audit.sagas
                        if s.player_id and s.player_id != who), amount
        if how == "rake_to_a_player" and saga.kind == "rake":
            return next(s.player_id for s in audit.sagas if s.player_id), amount
        return who, amount
    money = audit_money([audit], fold_ledger(ledger_for(audit, tweak=tweak)))
    assert not money.ok and any(why in p for p in money.problems), money.problems


def test_a_credit_no_table_asked_for_is_caught(audit):
    events = ledger_for(audit)
    events.append(pb.LedgerEvent(idempotency_key="m1/c.s9.gift", account=account("p1"),
                                 movement=pb.MOVEMENT_CREDIT, amount=5))
    last = [e for e in events[:-1] if e.account.player_id == "p1"][-1]
    events[-1].balance_after = last.balance_after + 5
    money = audit_money([audit], fold_ledger(events))
    assert not money.ok and any("c.s9.gift" in p for p in money.problems)


@pytest.mark.parametrize("chips", [-1, +1], ids=["a chip vanished", "a chip from nowhere"])
def test_a_break_of_the_money_identity_alone_does_not_balance(audit, chips):
    """Every saga matches the ledger and the table's own books conserve its chips, but the
    chips at the table are one fewer (more) than the wallets' money says: only the money
    identity (deposits - withdrawals = wallets + house + tables + in transit) breaks, and
    that alone makes the audit fail."""
    ledger = fold_ledger(ledger_for(audit))
    assert audit_money([audit], ledger).balanced  # the sample itself balances
    off = dataclasses.replace(audit, stacks=audit.stacks + chips,
                              buy_ins=audit.buy_ins + chips)
    assert off.ok and off.conserved  # the table's own audit has nothing to say
    money = audit_money([off], ledger)
    assert money.problems == []  # no named problem: the sagas all match
    assert money.deposits - money.withdrawals == (money.player_balances + money.house
                                                  + money.at_tables + money.in_transit) - chips
    assert not money.balanced and not money.ok
    assert money.as_dict()["balanced"] is False and money.as_dict()["ok"] is False
    assert money.summary().endswith("DOES NOT BALANCE")


def _tournament_ledger(state, house_fees_to: str = "") -> list[pb.LedgerEvent]:
    """The wallet's movements for a tournament's log: each entry's deposit and buy-in, the
    fees credited to ``house_fees_to`` ("": the house), the overlay debited of the house."""
    from shared.poker.tournament.ranking import wallet_movements
    events: list[pb.LedgerEvent] = []
    move = _mover(events)

    if house_fees_to:  # the house's money for the overlay from elsewhere
        move("", pb.MOVEMENT_CREDIT, state.overlay_paid, "t9/rake")
    for key, player, debit, amount in wallet_movements(state):
        if key.endswith("/fees/house"):
            player = house_fees_to
        if player:
            move(player, pb.MOVEMENT_DEPOSIT, amount, f"cash/{key}")
        move(player, pb.MOVEMENT_DEBIT if debit else pb.MOVEMENT_CREDIT, amount, key)
    return events


def test_a_tournaments_fees_go_to_the_house_and_its_overlay_comes_from_it():
    """buy-ins + overlay = prizes + fees + held, by the log and by the wallet: the fees
    credited to the house, the overlay debited of it; fees credited to a player are found."""
    from shared.poker.tournament import decide as D
    from shared.poker.tournament.state import fold
    from tests.unit.test_tournament_core import _guaranteed
    state = _guaranteed(400)
    state = fold([*D.fees_paid(state), *D.overlay_paid(state)], state)
    money = audit_money([], fold_ledger(_tournament_ledger(state)), [state])
    assert money.ok, money.problems
    assert (money.house, money.in_tournaments) == (150 - 100, 450 + 100 - 150)
    wrong = audit_money([], fold_ledger(_tournament_ledger(state, house_fees_to="p0")),
                        [state])
    assert not wrong.ok
    assert any("no credit of 150 for the house" in p for p in wrong.problems), wrong.problems


def test_a_prize_paid_from_an_overlay_the_house_has_not_paid_is_found():
    from shared.poker.tournament import events as E
    from shared.poker.tournament.state import fold
    from tests.unit.test_tournament_core import _guaranteed
    state = _guaranteed(400)  # the overlay owed, not paid; the winner paid 400 of 300
    state = fold([E.PrizeRequested("p0", 1, 1, 400), E.PrizePaid("p0", 1)], state)
    money = audit_money([], fold_ledger(_tournament_ledger(state)), [state])
    assert any("holds less than nothing (of the pool: -100)" in p for p in money.problems)
