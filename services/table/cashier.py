"""The table's side of the wallet saga: it asks the wallet (poker.wallet.v1.WalletService) to
move the money of each open saga of a table (``TableState.sagas``: buy-ins and top-ups to
debit, cash-outs and the house's rake to credit) and appends the answer (BuyInConfirmed,
BuyInRefused, CashOutConfirmed, RakeCredited).

Exactly once: the wallet's idempotency key is ``<table id>/<saga key>``, and the saga key is
the command id that opened it, so whoever finishes a saga a crash left open (the next
command, the driver, the clock keeper of the table's lease) asks with the same key and the
money moves once; the closing commit's command id comes from the key too, so two finishers
append one commit.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial

import grpc
import structlog
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from shared.infra import failpoints
from shared.infra.repository import TableRepository, digest, on_table
from shared.infra.retry import RetryPolicy, retrying
from shared.infra.rpc import Unavailable, system_command_id
from shared.poker import table as T
from shared.poker.errors import IllegalAction
from shared.poker.state import Saga, SagaKind

from .calls import Failures

log = structlog.get_logger()


def wallet_key(table_id: str, saga_key: str) -> str:
    """The wallet's idempotency key of a table's saga."""
    return f"{table_id}/{saga_key}"


def player_account(player_id: str) -> wallet_pb2.Account:
    return wallet_pb2.Account(player_id=player_id)


HOUSE = wallet_pb2.Account(house=True)


#: a call to the wallet a command waits on: a few quick attempts, then the player is told
WALLET = RetryPolicy(total_s=0.5, attempt_s=5.0, wait_for_ready=True)


class WalletUnavailable(Unavailable):
    """The wallet did not answer; the saga stays open and is finished later (UNAVAILABLE)."""


@dataclass
class Settled:
    """What one round of settling did: the table's version after it, and the wallet's reason
    for each buy-in or top-up it refused."""

    version: int
    refused: dict[str, str] = field(default_factory=dict)


class Cashier:
    def __init__(self, repo: TableRepository, wallet: wallet_pb2_grpc.WalletServiceStub) -> None:
        self.repo = repo
        self.wallet = wallet
        self.failures = Failures("settling with the wallet")

    async def check_funds(self, player_id: str, amount: int) -> None:
        """Refuse a buy-in the balance cannot cover before anything is appended (the debit
        decides in the end: the balance may change meanwhile)."""
        try:
            reply = await retrying(self.wallet.Balance, wallet_pb2.BalanceRequest(
                account=player_account(player_id)), policy=WALLET)
        except grpc.aio.AioRpcError as exc:
            raise WalletUnavailable(f"the wallet did not answer ({exc.code().name}: "
                                    f"{exc.details()}); nothing was done: try again") from None
        if reply.balance < amount:
            raise IllegalAction(f"your wallet holds {reply.balance} chips: a buy-in of {amount} "
                                f"needs {amount - reply.balance} more")

    async def settle(self, table_id: str, version: int | None = None,
                     raise_unavailable: bool = False) -> Settled:
        """Finish every saga of the table the wallet can settle now, oldest first. A wallet
        that does not answer leaves the rest open (reported once; ``raise_unavailable``:
        raise WalletUnavailable for the caller instead)."""
        lt = await self.repo.load(table_id, version)
        done = Settled(lt.seq)
        if lt.state is None or not lt.state.sagas:
            return done
        for saga in T.settleable(lt.state):
            try:
                refusal = await self._move(table_id, saga)
            except grpc.aio.AioRpcError as exc:
                failure = WalletUnavailable(
                    f"the wallet did not answer ({exc.code().name}: {exc.details()}): the "
                    f"{saga.kind.value} {saga.key!r} is kept open and finished once it does")
                self.failures.failed(table_id, failure)
                if raise_unavailable:
                    raise failure from None
                return done
            if refusal is not None:
                done.refused[saga.key] = refusal
            try:
                outcome = await self.repo.execute(  # on the fold read above, if still current
                    table_id, system_command_id("wallet", saga.key),
                    digest("settle", saga.key, refusal),
                    on_table(table_id, partial(T.settled, key=saga.key, refusal=refusal)),
                    min_version=done.version)
            except IllegalAction:  # another finisher closed it first
                continue
            done.version = outcome.version
            log.info("saga settled", table_id=table_id, saga=saga.key, kind=saga.kind.value,
                     amount=saga.amount, refused=refusal)
        self.failures.ok(table_id)
        return done

    async def _move(self, table_id: str, saga: Saga) -> str | None:
        """Ask the wallet to move the saga's money; the wallet's reason when it refuses a
        debit (a short balance), None when the money moved."""
        transfer = wallet_pb2.Transfer(
            account=HOUSE if saga.kind is SagaKind.RAKE else player_account(saga.player_id),
            amount=saga.amount, idempotency_key=wallet_key(table_id, saga.key),
            reference=table_id)
        if saga.kind in (SagaKind.BUY_IN, SagaKind.TOP_UP):
            try:
                await retrying(self.wallet.Debit, transfer, policy=WALLET)
            except grpc.aio.AioRpcError as exc:
                if exc.code() is grpc.StatusCode.FAILED_PRECONDITION:
                    return exc.details() or "the wallet refused the debit"
                raise
            failpoints.hit("cashier.after_debit")  # debited, not yet confirmed in the log
            return None
        failpoints.hit("cashier.before_credit")  # off the seat, not yet credited
        await retrying(self.wallet.Credit, transfer, policy=WALLET)
        return None
