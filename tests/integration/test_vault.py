"""The dealer's vault (a KV bucket): a hand's decks, salts and key round-trip; the first
store wins (a retried CommitDeck reuses it); entries expire after a day, so the vault holds
only recent hands."""

from __future__ import annotations

from shared.infra.secrecy import HandKey
from shared.infra.vault import BUCKET, TTL_SECONDS, DeckVault, HandDecks
from shared.poker.cards import DECK


async def test_a_hand_round_trips_the_first_store_wins_and_entries_expire(store):
    vault = await DeckVault.open(store.js)
    first = HandDecks((DECK,), ("ab" * 16,), HandKey.generate("t1", 3).key)
    assert await vault.create("t1", 3, first) == first
    again = HandDecks((tuple(reversed(DECK)),), ("cd" * 16,), HandKey.generate("t1", 3).key)
    assert await vault.create("t1", 3, again) == first
    stored, revision = await vault.get("t1", 3)
    assert stored == first and len(stored.key) == 32
    assert await vault.get("t1", 4) is None
    info = await store.nc.jsm().stream_info(f"KV_{BUCKET}")
    assert info.config.max_age == TTL_SECONDS
