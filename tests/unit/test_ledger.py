"""The wallet's ledger, pure (services/wallet/ledger.py): the checks of a transfer, the
decisions on an account's book, the fold and what it refuses; and, as a property, that no
sequence of requests overdraws an account or makes money: every balance stays within
0..MAX_CHIPS and their sum is deposits - withdrawals - debits + credits."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from poker.wallet.v1 import wallet_pb2 as pb

from services.wallet.ledger import (
    CREDIT,
    DEBIT,
    DEPOSIT,
    HOUSE,
    WITHDRAWAL,
    AccountId,
    Book,
    Entry,
    Ledger,
    LedgerCorrupt,
    check_transfer,
    decide,
    fold_ledger,
    msg_id,
)
from shared.infra.rpc import BadRequest
from shared.poker.errors import IllegalAction
from shared.poker.options import MAX_CHIPS

ALICE = AccountId.player("alice")


def player(pid: str) -> pb.Account:
    return pb.Account(player_id=pid)


def booked(account: AccountId, *moves: tuple[int, int, str]) -> tuple[Book, list]:
    """A book after ``moves`` (movement, amount, key), each decided and applied; the events."""
    book, events = Book(account), []
    for seq, (movement, amount, key) in enumerate(moves, start=1):
        event = decide(book, movement, amount, key, now_ms=1000 + seq)
        assert isinstance(event, pb.LedgerEvent)
        book.apply(seq, event)
        events.append(event)
    return book, events


# --- accounts and checks -------------------------------------------------------------------


def test_one_account_per_player_id_exactly():
    """The account is the identity provider's subject byte for byte: ids that differ in case
    or form are two people's accounts (OpenID Connect's sub is case-sensitive)."""
    assert AccountId.player("alice") == ALICE
    assert len({AccountId.player(i) for i in ("alice", "Alice", "ALICE",
                                             "\uff41\uff4c\uff49\uff43\uff45")}) == 4
    assert AccountId.player("\uff41\uff4c\uff49\uff43\uff45").player_id == \
        "\uff41\uff4c\uff49\uff43\uff45"
    assert AccountId.player("Alice").token != ALICE.token
    assert ALICE.token == "p." + hashlib.sha256(b"alice").hexdigest()[:32]
    assert ALICE.subject == "poker.wallet." + ALICE.token
    assert HOUSE.subject == "poker.wallet.house" and str(HOUSE) == "the house"
    assert AccountId.player("house") != HOUSE
    assert AccountId.of(pb.Account(house=True)) == HOUSE
    assert AccountId.of(player("bob")).proto() == player("bob")
    assert msg_id(ALICE, "k") != msg_id(HOUSE, "k") != msg_id(ALICE, "k2")


@pytest.mark.parametrize("account, amount, key, reference, reason", [
    (pb.Account(), 5, "k", "", "an account is a player (player_id) or the house"),
    (pb.Account(house=False), 5, "k", "", "an account is a player"),
    (player(""), 5, "k", "", "a player id (the token's subject) is 1 to 255 characters"),
    (player("al\nice"), 5, "k", "", "control character"),
    (player("x" * 256), 5, "k", "", "1 to 255"),
    (player("alice"), 0, "k", "", "an amount is 1 to"),
    (player("alice"), -3, "k", "", "an amount is 1 to"),
    (player("alice"), MAX_CHIPS + 1, "k", "", "an amount is 1 to"),
    (player("alice"), 5, "", "", "idempotency_key must be 1 to 200 printable ASCII"),
    (player("alice"), 5, "k" * 201, "", "idempotency_key must be"),
    (player("alice"), 5, "new\nline", "", "idempotency_key must be"),
    (player("alice"), 5, "k", "x" * 201, "reference must be at most 200"),
    (player("alice"), 5, "k", "a\x1b[2J", "reference must be at most 200 printable"),
])
def test_a_malformed_transfer_is_a_bad_request_with_the_reason(account, amount, key,
                                                               reference, reason):
    with pytest.raises(BadRequest, match=None) as info:
        check_transfer(DEPOSIT, account, amount, key, reference)
    assert reason in str(info.value)


def test_the_house_takes_credits_and_gives_withdrawals_and_overlays_only():
    with pytest.raises(BadRequest, match="the house takes no deposits"):
        check_transfer(DEPOSIT, pb.Account(house=True), 5, "k", "")
    for movement in (CREDIT, WITHDRAWAL, DEBIT):  # a debit: a tournament's overlay
        assert check_transfer(movement, pb.Account(house=True), 5, "k", "") == HOUSE
    assert check_transfer(DEBIT, player("Bob"), MAX_CHIPS, "~" * 200, "t1 seat 3").key == "Bob"


# --- decisions -----------------------------------------------------------------------------


def test_a_short_debit_is_refused_with_what_it_needs():
    book, _ = booked(ALICE, (DEPOSIT, 150, "d1"))
    with pytest.raises(IllegalAction) as info:
        decide(book, DEBIT, 200, "b1")
    assert info.value.reason == "the balance of alice is 150 chips: a debit of 200 needs 50 more"
    assert book.balance == 150 and "b1" not in book.entries  # nothing recorded
    event = decide(book, DEBIT, 150, "b1", reference="t1 seat 2", now_ms=7)
    assert (event.balance_after, event.movement, event.reference, event.at_unix_ms) == \
        (0, DEBIT, "t1 seat 2", 7)


def test_no_balance_goes_past_max_chips():
    book, _ = booked(HOUSE, (CREDIT, MAX_CHIPS, "rake-1"))
    with pytest.raises(IllegalAction, match=f"would take it past {MAX_CHIPS}"):
        decide(book, CREDIT, 1, "rake-2")


def test_a_key_returns_its_first_receipt_and_refuses_another_transfer():
    book, _ = booked(ALICE, (DEPOSIT, 100, "k1"), (DEBIT, 40, "k2"))
    assert decide(book, DEPOSIT, 100, "k1") == Entry(DEPOSIT, 100, 100, 1, "", 1001)
    # a duplicate is answered even when the same transfer would be refused now
    assert decide(book, DEBIT, 40, "k2").balance_after == 60
    with pytest.raises(IllegalAction) as info:
        decide(book, DEBIT, 41, "k2")
    assert info.value.reason.startswith(
        "idempotency key 'k2' was used for another transfer: a debit of 40 chips (ledger "
        "sequence 2), not a debit of 41")
    with pytest.raises(IllegalAction, match="not a credit of 40"):
        decide(book, CREDIT, 40, "k2")
    # keys are per account
    other, _ = booked(AccountId.player("bob"), (DEPOSIT, 5, "k1"))
    assert other.entries["k1"].amount == 5


# --- the fold ------------------------------------------------------------------------------


def test_the_fold_totals_every_movement():
    _, alice = booked(ALICE, (DEPOSIT, 500, "d"), (DEBIT, 200, "buy"), (CREDIT, 150, "out"),
                      (WITHDRAWAL, 100, "w"))
    _, house = booked(HOUSE, (CREDIT, 10, "rake"), (WITHDRAWAL, 4, "take"))
    ledger = fold_ledger([*alice, *house])
    assert ledger.balances == {ALICE: 350, HOUSE: 6}
    assert (ledger.deposits, ledger.withdrawals, ledger.debits, ledger.credits) == \
        (500, 104, 200, 160)
    assert ledger.receipts[(HOUSE, "rake")] == Entry(CREDIT, 10, 10, 5, "", 1001)
    pairs = fold_ledger([(10 * i, e) for i, e in enumerate([*alice, *house], start=1)])
    assert pairs.receipts[(ALICE, "w")].seq == 40


def _corrupt(change) -> pb.LedgerEvent:
    _, (event,) = booked(ALICE, (DEPOSIT, 100, "d"))
    change(event)
    return event


@pytest.mark.parametrize("change, reason", [
    (lambda e: setattr(e, "balance_after", 101), "the event says 101"),
    (lambda e: setattr(e, "amount", 0), "an amount is 1 to"),
    (lambda e: setattr(e, "movement", 0), "unknown movement"),
    (lambda e: setattr(e, "idempotency_key", ""), "not an idempotency key"),
    (lambda e: e.account.CopyFrom(pb.Account()), "an account is a player"),
    (lambda e: e.account.CopyFrom(pb.Account(house=True)), "the house takes no deposits"),
])
def test_a_ledger_that_does_not_add_up_is_refused(change, reason):
    with pytest.raises(LedgerCorrupt) as info:
        fold_ledger([_corrupt(change)])
    assert reason in str(info.value)


def test_a_book_refuses_another_accounts_event_a_reused_key_and_disorder():
    book, (event,) = booked(ALICE, (DEPOSIT, 100, "d"))
    with pytest.raises(LedgerCorrupt, match="moved money twice"):
        fold_ledger([event, event])
    with pytest.raises(LedgerCorrupt, match="names another account"):
        Book(HOUSE).apply(1, event)
    again = decide(book, DEPOSIT, 1, "d2")
    with pytest.raises(LedgerCorrupt, match="out of order"):
        book.apply(1, again)


# --- the property --------------------------------------------------------------------------

ACCOUNTS = (ALICE, AccountId.player("bob"), HOUSE)
AMOUNTS = st.one_of(st.integers(1, 300), st.sampled_from([MAX_CHIPS, MAX_CHIPS - 1]))
REQUESTS = st.lists(st.tuples(st.sampled_from(ACCOUNTS),
                              st.sampled_from((DEPOSIT, WITHDRAWAL, DEBIT, CREDIT)),
                              AMOUNTS, st.sampled_from([f"k{i}" for i in range(8)])),
                    max_size=60)


@settings(max_examples=300, deadline=None)
@given(REQUESTS)
def test_no_requests_overdraw_an_account_or_make_money(requests):
    ledger, events, seq = Ledger(), [], 0
    for account, movement, amount, key in requests:
        try:
            check_transfer(movement, account.proto(), amount, key, "")
        except BadRequest:
            continue  # the house's deposits and debits
        book = ledger.books.get(account) or Book(account)
        before = book.balance
        try:
            decision = decide(book, movement, amount, key)
        except IllegalAction:
            assert ledger.books.get(account, Book(account)).balance == before
            continue
        if isinstance(decision, Entry):  # a duplicate moves nothing
            assert (decision.movement, decision.amount) == (movement, amount)
            continue
        seq += 1
        ledger.apply(seq, decision)
        events.append(decision)
        balances = ledger.balances.values()
        assert all(0 <= b <= MAX_CHIPS for b in balances)
        assert sum(balances) == (ledger.deposits - ledger.withdrawals - ledger.debits
                                 + ledger.credits)
    refolded = fold_ledger(events)
    assert refolded.balances == ledger.balances
    assert refolded.receipts == ledger.receipts
    assert (refolded.deposits, refolded.withdrawals, refolded.debits, refolded.credits) == \
        (ledger.deposits, ledger.withdrawals, ledger.debits, ledger.credits)
