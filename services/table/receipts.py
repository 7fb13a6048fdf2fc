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
from shared.tlog.hands import VERSION as LEAF_VERSION
from shared.tlog.hands import HandLeaf
from shared.tlog.note import NoteError, SignedCheckpoint
from shared.tlog.receipt import CardProof, Receipt

#: the hands' leaves whose receipts the table service answers from memory (about a day of
#: hands at three a second; at ~150 bytes each); older ones are read from the stream
KEEP_LEAVES = 1 << 18


class HandsTree:
    """The hands' Merkle log as this process last read it: the tree and where each hand's
    leaf is, for the last ``keep`` leaves (the tree forgets the hashes the proofs of the rest
    need, and the index their entries: shared/tlog/merkle.py ``Tree.forget``), so that it
    does not grow with the history. A receipt of an older hand reads the leaves from the
    stream again (:meth:`locate`: rare, the receipts are limited per player)."""

    def __init__(self, store: EventStore, keep: int = KEEP_LEAVES) -> None:
        self.store = store
        self.keep = keep
        self.tree = merkle.Tree()
        self.index: dict[tuple[str, int], int] = {}  # in leaf order
        self.latest: dict[str, int] = {}  # table -> its last hand in the index
        self._lock = asyncio.Lock()

    async def refresh(self) -> None:
        async with self._lock:
            for leaf in await tstore.read_leaves(self.store, self.tree.size):
                key = HandLeaf.parse(leaf).key
                self.index[key] = self.tree.append(merkle.leaf_hash(leaf))
                self.latest[key[0]] = key[1]
            first = self.tree.forget(self.tree.size - self.keep)
            while self.index and next(iter(self.index.values())) < first:
                table, hand = next(iter(self.index))
                del self.index[(table, hand)]
                if self.latest.get(table) == hand:
                    del self.latest[table]

    async def leaf(self, index: int) -> bytes:
        msg = await self.store.js.get_msg(tstore.HANDS_STREAM, seq=index + 1, direct=True)
        return msg.data or b""

    def may_be_forgotten(self, key: tuple[str, int]) -> bool:
        """The hand's leaf may be one the tree forgot (only a read of the stream would find
        it): none in the index, the tree forgot some, and the table's hands in the index, if
        any, come after it. Else a hand with no leaf here has none in the log yet."""
        return key not in self.index and self.tree.forgotten[0] > 0 and \
            not key[1] > self.latest.get(key[0], 0) > 0

    async def locate(self, key: tuple[str, int],
                     size: int) -> tuple[int, bytes, list[bytes]] | None:
        """The hand's leaf index, the leaf and its inclusion proof in the tree of ``size``
        (None: no leaf of that hand in it)."""
        index = self.index.get(key)
        if index is not None and index < size:
            return index, await self.leaf(index), self.tree.inclusion_proof(index, size)
        if index is not None or not self.may_be_forgotten(key):
            return None  # (not forgotten: not in the log yet)
        leaves = await tstore.read_leaves(self.store, 0)
        # found and proved in a worker thread: hashing a day of leaves would hold the loop,
        # and with it every table of this process, for a second or more
        return await asyncio.to_thread(_find, leaves[:size], key)


def _find(leaves: list[bytes], key: tuple[str, int]) -> tuple[int, bytes, list[bytes]] | None:
    """The hand's leaf among all the ``leaves`` of a tree, with its inclusion proof there."""
    head = f"{LEAF_VERSION}\ntable {key[0]}\nhand {key[1]}\n".encode()
    for i, x in enumerate(leaves):
        if x.startswith(head):
            whole = merkle.Tree([merkle.leaf_hash(y) for y in leaves])
            return i, x, whole.inclusion_proof(i, len(leaves))
    return None


class Receipts:
    def __init__(self, store: EventStore, dealer, checkpoint_s: float) -> None:
        self.hands = HandsTree(store)
        self.dealer = dealer
        self.checkpoint_s = checkpoint_s

    async def receipt(self, table_id: str, hand_no: int, player_id: str) -> str:
        """The receipt of a hand the table has played to its end (``finished_hand`` on the
        table service's fold, checked by the caller)."""
        retry = (f"retry after the next checkpoint (every POKER_CHECKPOINT_S, "
                 f"{self.checkpoint_s:g} s)")
        await self.hands.refresh()
        key = (table_id, hand_no)
        index = self.hands.index.get(key)
        if index is None and not self.hands.may_be_forgotten(key):  # nothing to prove yet:
            # the dealer is not asked (without the leaf's first commit it reads the whole log)
            raise IllegalAction(f"hand {hand_no} of table {table_id} is not in the hands' "
                                f"Merkle log yet: {retry}")
        first = HandLeaf.parse(await self.hands.leaf(index)).first_seq if index is not None else 0
        cards = await retrying(self.dealer.HandCards, dealer_pb2.HandCardsRequest(
            table_id=table_id, hand_no=hand_no, player_id=player_id, first_seq=first),
            policy=PEER_RETRY)
        text = await tstore.latest_checkpoint(self.hands.store.js)
        await self.hands.refresh()  # after the checkpoint: the tree holds what it signs
        try:
            signed = SignedCheckpoint.parse(text or "")
        except NoteError:
            signed = None
        size = signed.checkpoint.size if signed is not None else 0
        found = await self.hands.locate((table_id, hand_no), size)
        if found is None:
            if (table_id, hand_no) in self.hands.index:
                raise IllegalAction(f"no checkpoint covers hand {hand_no} of table {table_id} "
                                    f"yet: {retry}")
            raise IllegalAction(f"hand {hand_no} of table {table_id} is not in the hands' "
                                f"Merkle log yet: {retry}")
        assert signed is not None  # (a leaf was found in its tree)
        if self.hands.tree.root(size) != signed.checkpoint.root:
            raise Unavailable("the hands' Merkle log does not hash to its latest checkpoint: "
                              "tell the operator")
        index, leaf, proof = found
        return Receipt(
            table_id, hand_no, cards.seat, player_id, tuple(cards.deck_sizes),
            tuple(CardProof(c.deck, c.position, card(c.card), c.salt, tuple(c.proof), c.seen)
                  for c in cards.cards),
            leaf, index, tuple(proof), signed.encode(),
            {"server_seed": cards.server_seed} if cards.server_seed else {}).encode()
