"""Hand receipts: what a player can check about a hand they played, offline, without
learning a card they did not see at the table.

**The deck's positions tree.** At a hand's start the dealer commits, beside the deck's
commitment (shared/poker/deck.py), to an RFC 6962 Merkle root (shared/tlog/merkle.py) over
the deck's positions, in order; position ``i`` holding card ``c`` with salt ``s`` is the leaf

    poker-deck-position/v1\\n<i> <card, e.g. Ah> <hex salt>\\n

Each salt is 16 bytes of HMAC-SHA256 under the hand's 256-bit key (shared/infra/secrecy.py:
random per hand, kept in the dealer's vault and sealed to the compliance role in the log)
over ``poker-deck-position/v1|<deck>|<position>``: a pseudorandom salt per position, so a
revealed leaf tells nothing of its neighbours, and the salts are kept (and opened by
compliance) exactly as the deck is. A stud reshuffle commits a root over its own deck.

**A receipt** (JSON, ``poker-receipt/v1``) holds, for one player and one finished hand: every
card that player saw at the table (their own, the board, face-up cards, the hands shown at
the showdown) with its deck, position, salt and inclusion proof; the hand's leaf in the hands'
Merkle log (shared/tlog/hands.py: its ``cards`` lines name the roots) with its inclusion
proof; and a signed checkpoint whose tree holds that leaf. :func:`verify` checks it all with
the log's public key alone.
"""

from __future__ import annotations

import base64
import hmac
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.poker.cards import Card, InvalidCard, card
from shared.tlog import merkle
from shared.tlog.hands import HandLeaf, LeafError
from shared.tlog.note import NoteError, SignedCheckpoint, Verifier

POSITION_VERSION = "poker-deck-position/v1"
VERSION = "poker-receipt/v1"
SALT_BYTES = 16


class ReceiptError(ValueError):
    """A receipt that does not parse or does not verify (the message says which part)."""


# --- the deck's positions tree -------------------------------------------------------------


def position_salt(hand_key: bytes, deck: int, position: int) -> bytes:
    """The salt of ``position`` of the hand's deck number ``deck`` (0: the first)."""
    return hmac.digest(hand_key, f"{POSITION_VERSION}|{deck}|{position}".encode(),
                       "sha256")[:SALT_BYTES]


def position_leaf(position: int, c: Card, salt: bytes) -> bytes:
    return f"{POSITION_VERSION}\n{position} {c} {salt.hex()}\n".encode()


def position_hashes(deck: Sequence[Card], hand_key: bytes, index: int) -> list[bytes]:
    """The leaf hashes of every position of the hand's deck number ``index``."""
    return [merkle.leaf_hash(position_leaf(i, c, position_salt(hand_key, index, i)))
            for i, c in enumerate(deck)]


def positions_root(deck: Sequence[Card], hand_key: bytes, index: int) -> str:
    """The hex root the dealer commits to for the hand's deck number ``index``."""
    return merkle.root(position_hashes(deck, hand_key, index)).hex()


@dataclass(frozen=True)
class CardProof:
    deck: int
    position: int
    card: Card
    salt: bytes
    proof: tuple[bytes, ...]
    seen: str  # how the player saw it: "hole", "board", "up 3" (face up at seat 3), "shown 3"

    def as_dict(self) -> dict:
        return {"deck": self.deck, "position": self.position, "card": str(self.card),
                "salt": self.salt.hex(), "proof": [p.hex() for p in self.proof],
                "seen": self.seen}


def card_proofs(decks: Sequence[Sequence[Card]], hand_key: bytes,
                seen: Sequence[tuple[Card, str]]) -> list[CardProof]:
    """The proofs of the cards ``seen`` (card, how). A card's place is the last deck that
    holds it (a reshuffle takes only cards nobody saw, so a card seen from an earlier deck is
    not in a later one)."""
    hashes = [position_hashes(d, hand_key, i) for i, d in enumerate(decks)]
    out = []
    for c, how in seen:
        index = max(i for i, d in enumerate(decks) if c in d)
        position = list(decks[index]).index(c)
        out.append(CardProof(index, position, c, position_salt(hand_key, index, position),
                             tuple(merkle.inclusion_proof(hashes[index], position)), how))
    return out


# --- the receipt ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Receipt:
    table_id: str
    hand_no: int
    seat: int
    player_id: str
    deck_sizes: tuple[int, ...]
    cards: tuple[CardProof, ...]
    leaf: bytes  # the hand's leaf (shared/tlog/hands.py)
    leaf_index: int
    leaf_proof: tuple[bytes, ...]
    checkpoint: str  # a signed note (c2sp.org/tlog-checkpoint)
    extra: dict = field(default_factory=dict)

    def encode(self) -> str:
        return json.dumps({
            "version": VERSION, "table": self.table_id, "hand": self.hand_no,
            "seat": self.seat, "player": self.player_id, "deck_sizes": list(self.deck_sizes),
            "cards": [c.as_dict() for c in self.cards], "leaf": self.leaf.decode(),
            "leaf_index": self.leaf_index, "leaf_proof": [p.hex() for p in self.leaf_proof],
            "checkpoint": self.checkpoint, **self.extra}, indent=1) + "\n"

    @classmethod
    def parse(cls, text: str | bytes) -> Receipt:
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict) or raw.get("version") != VERSION:
                raise ReceiptError(f"not a {VERSION} receipt")
            known = {"version", "table", "hand", "seat", "player", "deck_sizes", "cards",
                     "leaf", "leaf_index", "leaf_proof", "checkpoint"}
            return cls(
                str(raw["table"]), _int(raw["hand"]), _int(raw["seat"]), str(raw["player"]),
                tuple(_int(n) for n in raw["deck_sizes"]),
                tuple(CardProof(_int(c["deck"]), _int(c["position"]), card(c["card"]),
                                bytes.fromhex(c["salt"]),
                                tuple(bytes.fromhex(p) for p in c["proof"]), str(c["seen"]))
                      for c in raw["cards"]),
                str(raw["leaf"]).encode(), _int(raw["leaf_index"]),
                tuple(bytes.fromhex(p) for p in raw["leaf_proof"]), str(raw["checkpoint"]),
                {k: v for k, v in raw.items() if k not in known})
        except ReceiptError:
            raise
        except (ValueError, KeyError, TypeError, InvalidCard) as exc:
            raise ReceiptError(f"the receipt does not parse: {exc!r}") from None


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ReceiptError(f"{value!r} is not an integer")
    return value


def verify(receipt: Receipt, log_key: Verifier) -> list[str]:
    """Check every part of ``receipt`` with the log's key; the lines of what was proved, or
    ReceiptError naming the first part that fails."""
    try:
        leaf = HandLeaf.parse(receipt.leaf)
    except LeafError as exc:
        raise ReceiptError(f"the hand's leaf: {exc}") from None
    if leaf.key != (receipt.table_id, receipt.hand_no):
        raise ReceiptError(f"the leaf is hand {leaf.hand_no} of table {leaf.table_id!r}, not "
                           f"hand {receipt.hand_no} of {receipt.table_id!r}")
    roots = [bytes.fromhex(r) for r in leaf.roots]
    if not roots or len(roots) != len(receipt.deck_sizes) or receipt.deck_sizes[0] != 52:
        raise ReceiptError("the hand's leaf does not name one positions root per deck (a "
                           "hand dealt before receipts?)")
    lines = []
    places = set()
    for c in receipt.cards:
        if not 0 <= c.deck < len(roots):
            raise ReceiptError(f"{c.card}: no deck {c.deck} in this hand")
        if (c.deck, c.position) in places or c.card in {x.card for x in receipt.cards
                                                        if x is not c}:
            raise ReceiptError(f"{c.card}: a card or position given twice")
        places.add((c.deck, c.position))
        try:
            merkle.verify_inclusion(merkle.leaf_hash(position_leaf(c.position, c.card, c.salt)),
                                    c.position, receipt.deck_sizes[c.deck], c.proof,
                                    roots[c.deck])
        except merkle.ProofError as exc:
            raise ReceiptError(f"{c.card} at position {c.position} of deck {c.deck}: "
                               f"{exc}") from None
        lines.append(f"{c.card} ({c.seen}) was position {c.position} of deck {c.deck}, "
                     f"committed before the deal")
    lines.append(f"the deck root(s) {', '.join(leaf.roots)} are in hand {leaf.hand_no}'s leaf")
    try:
        signed = SignedCheckpoint.parse(receipt.checkpoint)
        signed.verify(log_key)
    except NoteError as exc:
        raise ReceiptError(f"the checkpoint: {exc}") from None
    cp = signed.checkpoint
    try:
        merkle.verify_inclusion(merkle.leaf_hash(receipt.leaf), receipt.leaf_index, cp.size,
                                receipt.leaf_proof, cp.root)
    except merkle.ProofError as exc:
        raise ReceiptError(f"the hand's leaf is not in the checkpoint's tree: {exc}") from None
    lines.append(f"the leaf is leaf {receipt.leaf_index} of the tree of size {cp.size}, root "
                 f"{base64.b64encode(cp.root).decode()}, signed by {log_key.name}")
    return lines
