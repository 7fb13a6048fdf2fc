"""What the director's modules share (director.py, chips.py, server.py): how a player id
goes into a command id, and how the wallet is called."""

from __future__ import annotations

import hashlib

import grpc
from poker.wallet.v1 import wallet_pb2

from shared.infra.retry import RetryPolicy, retrying

#: the wallet's calls: retried within 2 s, each attempt given 5 s, waiting for it to be ready
WALLET = RetryPolicy(total_s=2.0, attempt_s=5.0, wait_for_ready=True)


def player_digest(player: str) -> str:
    """A player id as a command id may hold it."""
    return hashlib.sha256(player.encode()).hexdigest()[:16]


async def debit(wallet, transfer: wallet_pb2.Transfer, refused: str) -> str:
    """Debit ``transfer`` once (its idempotency key) if it moves anything: "" when done, the
    wallet's reason (else ``refused``) when it refuses; any other failure is raised."""
    if not transfer.amount:
        return ""
    try:
        await retrying(wallet.Debit, transfer, policy=WALLET)
    except grpc.aio.AioRpcError as exc:
        if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
            raise
        return exc.details() or refused
    return ""
