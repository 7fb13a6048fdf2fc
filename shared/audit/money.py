"""The money audit: the tables' logs against the wallet's ledger, to the chip.

Each log first balances on its own, at every point: a table's audit (auditor.py) re-decides
every commit and keeps its chips conserved (stacks and pots + rake + chips cashed out =
buy-ins + top-ups), and the ledger's fold (services/wallet/ledger.py) checks every balance
against its movements and never below zero. Across the two logs, every saga of a table
(``TableAudit.sagas``, keyed ``<table id>/<saga key>`` at the wallet) must match the
ledger's movement with that key, once:

- a confirmed buy-in or top-up: a debit of that player for that amount (else the chips came
  from nowhere); a refused one: no debit (else the money is lost);
- a credited cash-out: a credit of that player for that amount; a credited rake: a credit of
  the house; and every debit or credit that names a table saga has one (else it came from
  nowhere).

Then the money identity holds:

    deposits - withdrawals = the wallets' balances (players and house)
                           + the chips at the tables + the money in transit

where the money in transit is what a saga still open holds between the two: a buy-in
debited but not yet at its seat, chips cashed out but not yet credited, rake taken but not
yet credited to the house.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from poker.wallet.v1 import wallet_pb2

from shared.poker.tournament.ranking import (
    house_key,
    money_audit,
    rebuy_key,
    wallet_key,
    wallet_movements,
)
from shared.poker.tournament.state import EntryStatus, RebuyStatus, TournamentState

from .auditor import TableAudit

DEBIT_KINDS = ("buy_in", "top_up")
DEBIT, CREDIT = wallet_pb2.MOVEMENT_DEBIT, wallet_pb2.MOVEMENT_CREDIT


@dataclass
class MoneyAudit:
    deposits: int = 0
    withdrawals: int = 0
    player_balances: int = 0
    house: int = 0
    at_tables: int = 0
    in_transit: int = 0
    tables: int = 0
    sagas: int = 0  # matched with the ledger
    #: what tournaments hold: buy-ins and fees debited and overlays paid in by the house,
    #: less refunds, prizes and the fees credited to the house (prize pools not paid out
    #: yet, fees not credited yet)
    in_tournaments: int = 0
    tournaments: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def balanced(self) -> bool:
        return self.deposits - self.withdrawals == (
            self.player_balances + self.house + self.at_tables + self.in_transit
            + self.in_tournaments)

    @property
    def ok(self) -> bool:
        return self.balanced and not self.problems

    def summary(self) -> str:
        verdict = "balances" if self.ok else "DOES NOT BALANCE"
        return (f"money: deposits {self.deposits} - withdrawals {self.withdrawals} = wallets "
                f"{self.player_balances} + house {self.house} + at {self.tables} tables "
                f"{self.at_tables} + in transit {self.in_transit} + in {self.tournaments} "
                f"tournaments {self.in_tournaments}; {self.sagas} sagas matched with the "
                f"wallet's ledger: {verdict}")

    def as_dict(self) -> dict:
        return {"deposits": self.deposits, "withdrawals": self.withdrawals,
                "player_balances": self.player_balances, "house": self.house,
                "at_tables": self.at_tables, "in_transit": self.in_transit,
                "tables": self.tables, "sagas": self.sagas,
                "in_tournaments": self.in_tournaments, "tournaments": self.tournaments,
                "balanced": self.balanced,
                "ok": self.ok, "problems": list(self.problems)}


def _movements(ledger) -> dict[str, tuple[Any, Any]]:
    """idempotency key -> (account, entry) of every debit and credit: the tables' sagas
    (deposits and withdrawals are the cashier's). The ledger, its AccountId and Entry are the
    wallet's (services/wallet/ledger.py), read here by attribute."""
    return {key: (account, entry) for (account, key), entry in ledger.receipts.items()
            if entry.movement in (DEBIT, CREDIT)}


def audit_money(tables: Iterable[TableAudit], ledger,
                tournaments: Iterable[TournamentState] = ()) -> MoneyAudit:
    """The money audit of ``tables`` (each audited, to the end of its log) against ``ledger``
    (the wallet's fold: services/wallet/ledger.py's ``fold_ledger``).
    Only the tables whose chips come from a wallet are counted; every table of the platform
    must be given, or the ledger's movements for the others are reported as unmatched."""
    tables = [t for t in tables if t.wallet]
    money = MoneyAudit(deposits=ledger.deposits, withdrawals=ledger.withdrawals,
                       tables=len(tables))
    for account, balance in ledger.balances.items():
        if account.house:
            money.house += balance
        else:
            money.player_balances += balance
    moves = _movements(ledger)
    claimed: set[str] = set()
    for t in tables:
        if not t.ok:
            money.problems.append(f"table {t.table_id}: its own audit fails: {t.failure}")
        money.at_tables += t.stacks
        credited_rake = 0
        for saga in [*t.sagas, *t.open_sagas]:
            key = f"{t.table_id}/{saga.key}"
            claimed.add(key)
            move = moves.get(key)
            problem = _mismatch(saga, move)
            if problem is not None:
                money.problems.append(f"table {t.table_id}, {saga.kind} {saga.key!r}: {problem}")
                continue
            money.sagas += 1
            if saga.kind == "rake" and saga.outcome != "open":
                credited_rake += saga.amount
            if saga.outcome == "open":
                if saga.kind in DEBIT_KINDS and move is not None:
                    money.in_transit += saga.amount  # debited, not yet at the seat
                elif saga.kind == "cash_out" and move is None:
                    money.in_transit += saga.amount  # off the seat, not yet credited
        # rake taken and not yet with the house: the running hand's, and open rake sagas
        money.in_transit += t.rake - credited_rake - sum(
            s.amount for s in t.open_sagas if s.kind == "rake" and s.key in moves)
    for state in tournaments:
        _tournament(money, state, moves, claimed)
    for key in sorted(set(moves) - claimed):
        account, entry = moves[key]
        money.problems.append(f"the wallet moved {entry.amount} for {account} with key {key!r}, "
                              f"which no table's log holds")
    return money


def _tournament(money: MoneyAudit, state: TournamentState, moves: dict,
                claimed: set[str]) -> None:
    """A tournament's movements against the ledger (each once, as its log says, the house's
    fees and overlay too), and what it holds: buy-ins + rebuys + the overlay the house paid
    = prizes + fees credited to the house + held, nothing held below 0 (no prize paid from an overlay
    the house has not paid: shared/poker/tournament/ranking.py). A buy-in the wallet debited
    that the log has not settled yet is in transit."""
    money.tournaments += 1
    audit = money_audit(state)
    if not audit.balanced:
        money.problems.append(
            f"tournament {state.tournament_id}: buy-ins {audit.buy_ins} + rebuys "
            f"{audit.rebuys} + overlay "
            f"{audit.overlay} != prizes {audit.prizes} + fees {audit.fees} + held {audit.held}"
            f", or it holds less than nothing (of the pool: {audit.pool_held})")
    for key, player, debit, amount in wallet_movements(state):
        claimed.add(key)
        move = moves.get(key)
        want = DEBIT if debit else CREDIT
        whose = "the house" if not player else player
        if (move is None or move[1].movement != want or move[1].amount != amount
                or move[0].house != (not player)):
            money.problems.append(f"tournament {state.tournament_id}: the wallet has no "
                                  f"{'debit' if debit else 'credit'} of {amount} for {whose} "
                                  f"with key {key!r}")
            continue
        money.sagas += 1
        money.in_tournaments += amount if debit else -amount
    for e in state.entries:  # asked of the wallet, the answer not in the log yet
        key = wallet_key(state.tournament_id, "entry", e.player_id, e.entry_no)
        if e.status is EntryStatus.REQUESTED and key in moves:
            claimed.add(key)
            money.in_transit += moves[key][1].amount
    for r in state.rebuys:
        key = rebuy_key(state.tournament_id, r)
        if r.status is RebuyStatus.REQUESTED and key in moves:
            claimed.add(key)
            money.in_transit += moves[key][1].amount
    for p in state.prize_requests:
        key = wallet_key(state.tournament_id, "prize", p.player_id, p.entry_no)
        if not state.entry(p.player_id, p.entry_no).prize_paid and key in moves:
            claimed.add(key)
            money.in_tournaments -= moves[key][1].amount
    fees, overlay = state.house_due()  # the house's, moved and not in the log yet
    for kind, due, done, sign in (("fees", fees, state.fees_paid, -1),
                                  ("overlay", overlay, state.overlay_paid, 1)):
        key = house_key(state.tournament_id, kind)
        if due and not done and key in moves:
            claimed.add(key)
            money.in_tournaments += sign * moves[key][1].amount


def _mismatch(saga, move) -> str | None:
    """Why the table's saga and the ledger's movement with its key disagree (None: they
    agree)."""
    if saga.kind in DEBIT_KINDS:
        if saga.outcome == "refused":
            return None if move is None else "refused at the table, yet the wallet debited it"
        if move is None:
            return None if saga.outcome == "open" else (
                "chips reached the seat, yet the wallet holds no debit for them")
        want, who = DEBIT, saga.player_id
    else:
        if move is None:
            return None if saga.outcome == "open" else (
                "credited at the table, yet the wallet holds no credit for it")
        want, who = CREDIT, "" if saga.kind == "rake" else saga.player_id
    account, entry = move
    if entry.movement != want or entry.amount != saga.amount:
        return (f"the table moved {saga.amount}, the wallet's movement with its key is "
                f"{entry.amount} (movement {entry.movement})")
    if saga.kind == "rake" and not account.house:
        return f"the rake went to {account}, not the house"
    if saga.kind != "rake" and (account.house or account.key != who):
        return f"the money moved for {account}, not for {who}"
    return None
