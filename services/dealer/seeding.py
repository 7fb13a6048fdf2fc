"""The dealer's part of the players' entropy (issue 29; the rules: shared/poker/seeds.py, the
derivation: shared/poker/shuffle.py): the server's seed of each hand, from the table's master
seed (the vault's ``POKER_SEEDS``), and the decks derived from it and the seeds the players
revealed.

The seed of hand ``N`` goes, as its SHA-256, into hand ``N - 1``'s ``DeckCommitted``
(``next_seed_sha256``) before any player's seed for hand ``N`` may be revealed, and in clear,
sealed with the decks, into hand ``N``'s ``DeckRevealed`` (the compliance role opens it at
once). A hand's seed is given to the hand's players once the table has closed
(:meth:`Seeds.published`, with their receipts): it reveals that hand's whole deck.
"""

from __future__ import annotations

from shared.infra.tablecache import TableCache
from shared.infra.vault import DeckVault
from shared.poker.cards import Card
from shared.poker.shuffle import (
    ALGORITHM,
    Entropy,
    deck_salt,
    derive_deck,
    seed_digest,
    server_seed,
)
from shared.poker.state import HandState


class Seeds:
    def __init__(self, vault: DeckVault) -> None:
        self.vault = vault
        #: table -> its master seed (it never changes)
        self._masters: TableCache[bytes] = TableCache("seeds")

    async def _master(self, table_id: str) -> bytes:
        master = self._masters.get(table_id)
        if master is None:
            master = await self.vault.master_seed(table_id)
            assert master is not None  # (created if missing)
            self._masters.put(table_id, master)
        return master

    async def seed(self, table_id: str, hand_no: int) -> str:
        """The server's seed of hand ``hand_no`` (hex)."""
        return server_seed(await self._master(table_id), table_id, hand_no)

    async def first_deck(self, table_id: str,
                         hand: HandState) -> tuple[tuple[Card, ...], str, Entropy]:
        """The hand's deck, its salt, and what its commitment says of its seeds."""
        seed = await self.seed(table_id, hand.hand_no)
        entropy = Entropy(ALGORITHM, seed_digest(seed), hand.player_seeds,
                          seed_digest(await self.seed(table_id, hand.hand_no + 1)))
        return derive_deck(seed, hand.player_seeds), deck_salt(seed), entropy

    async def reshuffled(self, table_id: str, hand: HandState, cards: tuple[Card, ...],
                         index: int) -> tuple[tuple[Card, ...], str]:
        """Deck ``index`` of a derived hand: ``cards`` (sorted) shuffled from its seeds."""
        seed = await self.seed(table_id, hand.hand_no)
        return derive_deck(seed, hand.player_seeds, tuple(sorted(cards)), index), \
            deck_salt(seed, index)

    async def published(self, table_id: str, hand_no: int) -> str:
        """The server's seed of a hand, for the hand's players once the table has closed
        ("": the table has no master seed)."""
        master = await self.vault.master_seed(table_id, create=False)
        return server_seed(master, table_id, hand_no) if master is not None else ""
