"""Hand receipts (shared/tlog/receipt.py), offline: a receipt made from a deck, its positions
tree, a hand's leaf and a signed checkpoint verifies with the log's key alone; a changed
card, position, salt, proof, root, leaf, checkpoint or key fails, naming what."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from shared.poker.cards import DECK, card
from shared.tlog import merkle
from shared.tlog.hands import HandLeaf
from shared.tlog.note import Checkpoint, Signer, sign_checkpoint
from shared.tlog.receipt import (
    Receipt,
    ReceiptError,
    card_proofs,
    position_salt,
    positions_root,
    verify,
)

KEY = bytes(range(32))
SIGNER = Signer.generate("poker.test/hands")


def make(seen=("hole", "hole", "board", "board", "board"), other_hands: int = 6,
         index: int = 3) -> tuple[Receipt, list]:
    deck = list(DECK)
    random.Random(5).shuffle(deck)
    root = positions_root(deck, KEY, 0)
    leaf = HandLeaf("t1", 4, None, 10, 20, b"\x01" * 32, ("c" * 64,), b"\x02" * 32, (root,))
    leaves = [HandLeaf("t2", i + 1, None, i, i, b"\x03" * 32, ("d" * 64,),
                       b"\x04" * 32).encode() for i in range(other_hands)]
    leaves.insert(index, leaf.encode())
    tree = merkle.Tree([merkle.leaf_hash(x) for x in leaves])
    signed = sign_checkpoint(Checkpoint("poker.test/hands", tree.size, tree.root()), SIGNER)
    cards = card_proofs([deck], KEY, [(deck[i], how) for i, how in enumerate(seen)])
    return Receipt("t1", 4, 2, "alice", (52,), tuple(cards), leaf.encode(), index,
                   tuple(tree.inclusion_proof(index)), signed.encode()), deck


def test_a_receipt_verifies_offline_and_round_trips_as_json():
    receipt, deck = make()
    again = Receipt.parse(receipt.encode())
    assert again == receipt
    lines = verify(again, SIGNER.verifier)
    assert len(lines) == 7 and "leaf 3 of the tree of size 7" in lines[-1]
    assert [c.card for c in receipt.cards] == deck[:5]


@pytest.mark.parametrize("change, says", [
    (lambda r, d: _card(r, 0, card=d[10]), "does not lead to the root"),
    (lambda r, d: _card(r, 1, position=7), "position 7"),
    (lambda r, d: _card(r, 2, salt=bytes(16)), "does not lead to the root"),
    (lambda r, d: _card(r, 0, proof=r.cards[1].proof), "does not lead to the root"),
    (lambda r, d: _card(r, 0, deck=1), "no deck 1"),
    (lambda r, d: dataclasses.replace(r, cards=r.cards + (r.cards[0],)), "given twice"),
    (lambda r, d: dataclasses.replace(r, leaf=_leaf(r, roots=("ab" * 32,))),
     "does not lead to the root"),
    (lambda r, d: dataclasses.replace(r, leaf=_leaf(r, roots=())), "one positions root"),
    (lambda r, d: dataclasses.replace(r, leaf=_leaf(r, hand_no=5)), "not hand 4"),
    (lambda r, d: dataclasses.replace(r, leaf_index=2), "leaf is not in the checkpoint"),
    (lambda r, d: dataclasses.replace(r, checkpoint=r.checkpoint.replace("\n7\n", "\n8\n")),
     "does not verify"),
    (lambda r, d: dataclasses.replace(r, deck_sizes=(51,)), "one positions root"),
])
def test_a_changed_part_fails(change, says):
    receipt, deck = make()
    with pytest.raises(ReceiptError, match=says):
        verify(change(receipt, deck), SIGNER.verifier)


def test_another_log_key_fails():
    receipt, _ = make()
    with pytest.raises(ReceiptError, match="the checkpoint"):
        verify(receipt, Signer.generate("poker.test/hands").verifier)


def test_a_leaf_of_another_shape_fails():
    receipt, _ = make()
    for text in ("", receipt.encode().replace('"poker-receipt/v1"', '"v0"'),
                 json.dumps({"version": "poker-receipt/v1"})):
        with pytest.raises(ReceiptError):
            Receipt.parse(text)


def test_salts_differ_per_position_deck_and_key_and_cards_are_found_in_the_last_deck():
    salts = {position_salt(KEY, d, p) for d in range(2) for p in range(52)}
    assert len(salts) == 104 and position_salt(bytes(32), 0, 0) not in salts
    first, second = list(DECK), list(reversed(DECK[10:]))  # a reshuffle of the undealt cards
    proofs = card_proofs([first, second], KEY, [(card("2c"), "hole"), (DECK[20], "up 3")])
    assert [(p.deck, p.position) for p in proofs] == [(0, 0), (1, len(second) - 1 - 10)]


def _card(r: Receipt, i: int, **changes) -> Receipt:
    cards = list(r.cards)
    cards[i] = dataclasses.replace(cards[i], **changes)
    return dataclasses.replace(r, cards=tuple(cards))


def _leaf(r: Receipt, **changes) -> bytes:
    return dataclasses.replace(HandLeaf.parse(r.leaf), **changes).encode()
