"""What the director's modules share (director.py, chips.py, server.py): how a player id
goes into a command id, and how the wallet is called."""

from __future__ import annotations

import hashlib

from shared.infra.retry import RetryPolicy

#: the wallet's calls: retried within 2 s, each attempt given 5 s, waiting for it to be ready
WALLET = RetryPolicy(total_s=2.0, attempt_s=5.0, wait_for_ready=True)


def player_digest(player: str) -> str:
    """A player id as a command id may hold it."""
    return hashlib.sha256(player.encode()).hexdigest()[:16]
