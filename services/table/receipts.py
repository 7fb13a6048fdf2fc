"""A player's receipt for a hand they played (shared/tlog/receipt.py), served by the table
service (``GetReceipt``).

The dealer answers the cards (only it holds the hand's key, and it decides, for the caller's
seat in that hand, what that seat saw: ``HandCards``; a player not dealt in is refused there,
before anything is read here); this adds the hand's leaf in the hands' Merkle log, its
inclusion proof and the latest signed checkpoint, which must cover it (a hand no checkpoint
covers yet is FAILED_PRECONDITION, saying when to ask again: a client that retried it at once
would only wait, as the web's pages would, for up to a checkpoint's interval). The log's tree is kept
per process and read on from where it was (``POKER_HANDS``: one message per leaf, in order).
"""

from __future__ import annotations

import asyncio

from poker.dealer.v1 import dealer_pb2

from shared.infra.eventstore import EventStore
from shared.infra.retry import PEER_RETRY, retrying
from shared.infra.rpc import Unavailable
from shared.poker.cards import card
from shared.poker.errors import IllegalAction
from shared.tlog import merkle
from shared.tlog import store as tstore
from shared.tlog.hands import HandLeaf
from shared.tlog.note import NoteError, SignedCheckpoint
from shared.tlog.receipt import CardProof, Receipt


class HandsTree:
    """The hands' Merkle log as this process last read it: the tree and where each hand's
    leaf is."""

    def __init__(self, store: EventStore) -> None:
        self.store = store
        self.tree = merkle.Tree()
        self.index: dict[tuple[str, int], int] = {}
        self._lock = asyncio.Lock()

    async def refresh(self) -> None:
        async with self._lock:
            for leaf in await tstore.read_leaves(self.store, self.tree.size):
                self.index[HandLeaf.parse(leaf).key] = self.tree.append(merkle.leaf_hash(leaf))

    async def leaf(self, index: int) -> bytes:
        msg = await self.store.js.get_msg(tstore.HANDS_STREAM, seq=index + 1, direct=True)
        return msg.data or b""


class Receipts:
    def __init__(self, store: EventStore, dealer, checkpoint_s: float) -> None:
        self.hands = HandsTree(store)
        self.dealer = dealer
        self.checkpoint_s = checkpoint_s

    async def receipt(self, table_id: str, hand_no: int, player_id: str) -> str:
        cards = await retrying(self.dealer.HandCards, dealer_pb2.HandCardsRequest(
            table_id=table_id, hand_no=hand_no, player_id=player_id), policy=PEER_RETRY)
        retry = (f"retry after the next checkpoint (every POKER_CHECKPOINT_S, "
                 f"{self.checkpoint_s:g} s)")
        text = await tstore.latest_checkpoint(self.hands.store.js)
        await self.hands.refresh()  # after the checkpoint: the tree holds what it signs
        index = self.hands.index.get((table_id, hand_no))
        if index is None:
            raise IllegalAction(f"hand {hand_no} of table {table_id} is not in the hands' "
                              f"Merkle log yet: {retry}")
        try:
            signed = SignedCheckpoint.parse(text or "")
        except NoteError:
            signed = None
        if signed is None or signed.checkpoint.size <= index:
            raise IllegalAction(f"no checkpoint covers hand {hand_no} of table {table_id} yet: "
                              f"{retry}")
        size = signed.checkpoint.size
        if self.hands.tree.root(size) != signed.checkpoint.root:
            raise Unavailable("the hands' Merkle log does not hash to its latest checkpoint: "
                              "tell the operator")
        return Receipt(
            table_id, hand_no, cards.seat, player_id, tuple(cards.deck_sizes),
            tuple(CardProof(c.deck, c.position, card(c.card), c.salt, tuple(c.proof), c.seen)
                  for c in cards.cards),
            await self.hands.leaf(index), index,
            tuple(self.hands.tree.inclusion_proof(index, size)), signed.encode(),
            {"server_seed": cards.server_seed} if cards.server_seed else {}).encode()
