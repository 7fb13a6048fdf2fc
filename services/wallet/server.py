"""WalletService: the reference wallet, an event-sourced ledger of chips on NATS JetStream
(services/wallet/ledger.py). A platform runs its own wallet behind the same proto.

Callers (mutual TLS, shared/infra/tls.py CALLERS): the table service (Debit for buy-ins and
top-ups, Credit for cash-outs and the rake, Balance) and the admin; the cashier's Deposit,
Withdraw and Balances are the admin's alone (``pokerctl wallet``). Over plaintext
(POKER_INSECURE) there is no certificate to tell callers apart: every caller is trusted.
"""

from __future__ import annotations

import structlog
from poker.wallet.v1 import wallet_pb2 as pb
from poker.wallet.v1 import wallet_pb2_grpc

from shared.infra.rpc import Denied, rpc
from shared.infra.tls import peer_identity

from .ledger import (
    CREDIT,
    DEBIT,
    DEPOSIT,
    WITHDRAWAL,
    WORDS,
    AccountId,
    Entry,
    LedgerStore,
    check_transfer,
    ensure_wallet_stream,
)

log = structlog.get_logger()

#: the identity the cashier's calls need
ADMIN = "admin"


def receipt(account: AccountId, entry: Entry, duplicate: bool) -> pb.Receipt:
    return pb.Receipt(account=account.proto(), amount=entry.amount,
                      balance=entry.balance_after, duplicate=duplicate, sequence=entry.seq)


class WalletService(wallet_pb2_grpc.WalletServiceServicer):
    """``caller_checked``: the server runs mutual TLS, so a caller's certificate names it
    (False: plaintext, every caller trusted)."""

    def __init__(self, ledger: LedgerStore, caller_checked: bool = True) -> None:
        self.ledger = ledger
        self.caller_checked = caller_checked

    def _admin_only(self, method: str, context) -> None:
        identity = peer_identity(context)
        if self.caller_checked and identity != ADMIN:
            raise Denied(f"the wallet's {method} is the admin's only (the cashier: pokerctl "
                         f"wallet); this certificate is {identity!r}")

    async def _move(self, movement: pb.Movement, request: pb.Transfer) -> pb.Receipt:
        account = check_transfer(movement, request.account, request.amount,
                                 request.idempotency_key, request.reference)
        structlog.contextvars.bind_contextvars(account=str(account), movement=WORDS[movement],
                                               amount=request.amount,
                                               idempotency_key=request.idempotency_key)
        entry, duplicate = await self.ledger.transfer(account, movement, request.amount,
                                                      request.idempotency_key,
                                                      request.reference)
        log.info("duplicate transfer" if duplicate else "money moved",
                 balance=entry.balance_after, sequence=entry.seq)
        return receipt(account, entry, duplicate)

    @rpc
    async def Debit(self, request: pb.Transfer, context) -> pb.Receipt:
        return await self._move(DEBIT, request)

    @rpc
    async def Credit(self, request: pb.Transfer, context) -> pb.Receipt:
        return await self._move(CREDIT, request)

    @rpc
    async def Deposit(self, request: pb.Transfer, context) -> pb.Receipt:
        self._admin_only("Deposit", context)
        return await self._move(DEPOSIT, request)

    @rpc
    async def Withdraw(self, request: pb.Transfer, context) -> pb.Receipt:
        self._admin_only("Withdraw", context)
        return await self._move(WITHDRAWAL, request)

    @rpc
    async def Balance(self, request: pb.BalanceRequest, context) -> pb.BalanceReply:
        account = AccountId.of(request.account)
        return pb.BalanceReply(account=account.proto(),
                               balance=await self.ledger.balance(account))

    @rpc
    async def Balances(self, request: pb.BalancesRequest, context) -> pb.BalancesReply:
        self._admin_only("Balances", context)
        ledger = await self.ledger.ledger()
        books = sorted(ledger.books.values(), key=lambda b: (not b.account.house, b.account.key))
        return pb.BalancesReply(
            accounts=[pb.BalanceReply(account=b.account.proto(), balance=b.balance)
                      for b in books],
            deposits=ledger.deposits, withdrawals=ledger.withdrawals)


async def setup(server, repo, store, config):
    """boot's setup: the wallet's stream (made if missing and this NATS user may), the
    ledger on the process's NATS connection, the servicer. ``repo``: only its clock."""
    await ensure_wallet_stream(store.js, replicas=config.stream_replicas)
    ledger = LedgerStore(store.nc, store.js, now_ms=repo.now_ms)
    wallet_pb2_grpc.add_WalletServiceServicer_to_server(
        WalletService(ledger, caller_checked=config.tls is not None), server)
