"""The dealer's private store of running hands' decks and keys: a JetStream key-value bucket
that only the dealer's account may read (see deploy/). A deck and the hand's key are stored
before the commitment is appended, so a dealer killed after the commitment deals from the same
deck, and seals with the same key, when it returns.

Beside it, the tables' master seeds (``POKER_SEEDS``, the dealer's alone too, kept without an
expiry): each table's 32 random bytes from which the server's seed of every hand comes
(shared/poker/shuffle.py ``server_seed``), made at the table's first deck and kept for as long
as the table's log, so that they can be published to the players once the table has closed,
however long after its last hand.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass

from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError

from shared.poker.cards import DECK, Card

from .eventstore import StoreError
from .randomness import entropy

BUCKET = "POKER_DECKS"
SEEDS_BUCKET = "POKER_SEEDS"
#: how long a hand's deck and key stay in the vault: far longer than any hand lasts (the log
#: keeps the deck, sealed, and the key, sealed to compliance, for ever); then they go, so the
#: vault holds only recent hands and does not grow with the history
TTL_SECONDS = 24 * 3600


@dataclass(frozen=True, slots=True)
class HandDecks:
    """The deck behind each commitment of one hand (a stud reshuffle adds one), the salts,
    the hand's key (shared/infra/secrecy.py), and who was dealt in ((seat, player id) pairs,
    as the table seated them at the deck's commitment: a receipt's reader need not read the
    table's log from its start to learn it; empty in hands stored before)."""

    decks: tuple[tuple[Card, ...], ...]
    salts: tuple[str, ...]
    key: bytes
    players: tuple[tuple[int, str], ...] = ()

    def encode(self) -> bytes:
        return json.dumps({"decks": [[int(c) for c in d] for d in self.decks],
                           "salts": list(self.salts), "key": self.key.hex(),
                           "players": [list(p) for p in self.players]}).encode()

    @classmethod
    def decode(cls, data: bytes) -> HandDecks:
        raw = json.loads(data)
        return cls(tuple(tuple(DECK[c] for c in d) for d in raw["decks"]), tuple(raw["salts"]),
                   bytes.fromhex(raw["key"]),
                   tuple((int(s), str(p)) for s, p in raw.get("players", ())))


async def _bucket(js: JetStreamContext, name: str, replicas: int, ttl: float | None):
    try:
        return await js.key_value(name)
    except BucketNotFoundError:
        return await js.create_key_value(js_api.KeyValueConfig(
            bucket=name, history=1, storage=js_api.StorageType.FILE, replicas=replicas,
            ttl=ttl))


class DeckVault:
    def __init__(self, kv, seeds) -> None:
        self.kv = kv
        self.seeds = seeds

    @classmethod
    async def open(cls, js: JetStreamContext, replicas: int = 1) -> DeckVault:
        return cls(await _bucket(js, BUCKET, replicas, TTL_SECONDS),
                   await _bucket(js, SEEDS_BUCKET, replicas, None))

    async def master_seed(self, table_id: str, create: bool = True) -> bytes | None:
        """The table's master seed, made (32 bytes of the system's CSPRNG) if it has none and
        ``create``; None if it has none and not ``create``. Two dealers racing both get the
        one stored first."""
        for _ in range(3):
            try:
                entry = await self.seeds.get(table_id)
                if entry.value:
                    return bytes.fromhex(entry.value.decode())
            except KeyNotFoundError:
                pass
            if not create:
                return None
            try:
                await self.seeds.create(table_id, entropy(32).hex().encode())
            except (KeyWrongLastSequenceError, KeyNotFoundError):
                await asyncio.sleep(0.05)  # another dealer stored one first: read it
        raise StoreError(f"the seed store would not return table {table_id}'s seed: retry")

    @staticmethod
    def key(table_id: str, hand_no: int) -> str:
        return f"{table_id}.{hand_no}"

    async def get(self, table_id: str, hand_no: int) -> tuple[HandDecks, int] | None:
        try:
            entry = await self.kv.get(self.key(table_id, hand_no))
        except KeyNotFoundError:
            return None
        if entry.value is None:
            return None
        return HandDecks.decode(entry.value), entry.revision

    async def create(self, table_id: str, hand_no: int, decks: HandDecks) -> HandDecks:
        """Store the hand's first deck unless one is stored already; return what is stored.

        A retried CommitDeck finds the deck stored (the create fails on its sequence). In a
        failover the replica that answers the read may not hold it yet (nats-py's create then
        raises KeyNotFoundError from its own check): read again, briefly, before giving up
        with a retryable error."""
        try:
            await self.kv.create(self.key(table_id, hand_no), decks.encode())
            return decks
        except (KeyWrongLastSequenceError, KeyNotFoundError):
            pass
        delay = 0.05
        for _ in range(6):
            stored = await self.get(table_id, hand_no)
            if stored is not None:
                return stored[0]
            await asyncio.sleep(delay)
            delay *= 2
        raise StoreError(f"the deck vault holds hand {hand_no} of table {table_id} but would "
                         f"not return it: retry")

    async def update(self, table_id: str, hand_no: int, decks: HandDecks,
                     revision: int) -> int:
        """Replace the hand's decks if they are still at ``revision``; the new revision."""
        return await self.kv.update(self.key(table_id, hand_no), decks.encode(), revision)
