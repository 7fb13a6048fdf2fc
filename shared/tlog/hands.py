"""The hands' Merkle log: one leaf per finished hand, made from the table's commits alone.

A hand runs from the commit holding its ``HandStarted`` to the commit holding its
``DeckRevealed`` (the dealer's reveal, the hand's last event: the fold's phase DONE). Its leaf
is this text (UTF-8, every line ending in a newline; the hash of the leaf is RFC 6962's,
SHA-256(0x00 || leaf), shared/tlog/merkle.py):

    poker-hand/v1
    table <table id>
    hand <hand number>
    shard <k, or - for a log of one stream>
    seq <stream sequence of the first commit> <stream sequence of the last commit>
    head <hex SHA-256 of the last envelope of the hand's last commit: the chain's head then>
    deck <commitment>                       (one line per DeckCommitted, in order)
    cards <hex root>                        (one line per DeckCommitted with a positions root)
    shuffle <algorithm> <hex SHA-256 of the server's seed> <player seed>...
                                            (a deck derived from seeds: shared/poker/shuffle.py)
    result <hex SHA-256 of the hand's result>

A ``cards`` line is the RFC 6962 root the dealer committed to over the deck's salted
positions (``DeckCommitted.positions_root``, shared/tlog/receipt.py): a player's receipt proves
its cards to it. Hands dealt before those roots have no such line (their leaves are as before).
The ``shuffle`` line names what the hand's first ``DeckCommitted`` says of its seeds: with the
server's seed, published to the hand's players once the table has closed, a player recomputes
the deck, checks it against the ``deck`` line and sees their own seed among those used
(shared/tlog/seedcheck.py). Hands shuffled by the CSPRNG alone have none.

The result is SHA-256 over the hand's ``HandEnded``, ``PotAwarded`` and ``RakeTaken`` events
in log order, each as its body's field name, a newline, the 8-byte big-endian length of the
body message's deterministic protobuf bytes, and those bytes. The sequences are the primary
log's (``Stored.primary_seq``: the same read from a mirror or an export), the shard the
table's stream (``Stored.shard``).

The head commits to everything in the table's log up to the hand's end (each envelope holds
the SHA-256 of the one before, and its command's digest): a leaf in a signed tree pins the
table's log up to there. What comes after a table's last finished hand (a hand still running,
players leaving) is covered by the next hand's leaf, not before.

:class:`HandLeaves` is fed a table's commits in order (the notary, services/notary; the
auditor, shared/audit/auditor.py) and returns each leaf as its hand ends. It reads the
envelopes' bodies only (no key needed: the deck reveal is sealed, its presence is enough).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from shared.infra.eventstore import Stored

VERSION = "poker-hand/v1"
#: the events whose bodies make a hand's result
RESULT_BODIES = ("hand_ended", "pot_awarded", "rake_taken")


class LeafError(ValueError):
    pass


@dataclass(frozen=True)
class HandLeaf:
    table_id: str
    hand_no: int
    shard: int | None
    first_seq: int
    last_seq: int
    head: bytes
    decks: tuple[str, ...]
    result: bytes
    roots: tuple[str, ...] = ()  # the decks' positions roots (hex), when they were committed
    shuffle: str = ""  # "<algorithm> <seed sha256> <player seeds...>" of a derived deck

    def encode(self) -> bytes:
        lines = [VERSION, f"table {self.table_id}", f"hand {self.hand_no}",
                 f"shard {'-' if self.shard is None else self.shard}",
                 f"seq {self.first_seq} {self.last_seq}", f"head {self.head.hex()}",
                 *(f"deck {d}" for d in self.decks), *(f"cards {r}" for r in self.roots),
                 *([f"shuffle {self.shuffle}"] if self.shuffle else []),
                 f"result {self.result.hex()}"]
        return "".join(line + "\n" for line in lines).encode()

    @classmethod
    def parse(cls, data: bytes) -> HandLeaf:
        try:
            lines = data.decode().split("\n")
            if lines[-1] != "" or lines[0] != VERSION:
                raise LeafError("not a poker-hand/v1 leaf")
            fields = [line.split(" ") for line in lines[1:-1]]
            head = {f[0]: f[1:] for f in fields if f[0] not in ("deck", "cards", "shuffle")}
            decks = tuple(" ".join(f[1:]) for f in fields if f[0] == "deck")
            roots = tuple(" ".join(f[1:]) for f in fields if f[0] == "cards")
            shuffle = next((" ".join(f[1:]) for f in fields if f[0] == "shuffle"), "")
            shard = head["shard"][0]
            first, last = (int(x) for x in head["seq"])
            leaf = cls(" ".join(head["table"]), int(head["hand"][0]),
                       None if shard == "-" else int(shard), first, last,
                       bytes.fromhex(head["head"][0]), decks, bytes.fromhex(head["result"][0]),
                       roots, shuffle)
        except LeafError:
            raise
        except (ValueError, KeyError, IndexError, UnicodeDecodeError) as exc:
            raise LeafError(f"not a poker-hand/v1 leaf: {exc}") from None
        if leaf.encode() != data:
            raise LeafError("not a leaf in its canonical form")
        return leaf

    @property
    def key(self) -> tuple[str, int]:
        return self.table_id, self.hand_no


@dataclass
class _Open:
    hand_no: int
    shard: int | None
    first_seq: int
    decks: list[str] = field(default_factory=list)
    roots: list[str] = field(default_factory=list)
    shuffle: str = ""
    result: hashlib._Hash = field(default_factory=hashlib.sha256)


class HandLeaves:
    """One table's hands as their commits come, in order: :meth:`feed` returns the leaves
    of the hands the commit finished (all of them are kept in :attr:`leaves`)."""

    def __init__(self, table_id: str, keep: bool = True) -> None:
        self.table_id = table_id
        self.keep = keep
        self.leaves: list[bytes] = []
        self.open: _Open | None = None

    @property
    def open_since(self) -> int | None:
        """The primary sequence of the running hand's first commit (None: no hand open)."""
        return self.open.first_seq if self.open is not None else None

    def feed(self, stored: Stored, raws: Sequence[bytes], envelopes: Sequence) -> list[HandLeaf]:
        done: list[HandLeaf] = []
        for env in envelopes:
            kind = env.WhichOneof("body")
            if kind == "hand_started":
                self.open = _Open(env.hand_started.hand_no or env.hand_no, stored.shard,
                                  stored.primary_seq)
                continue
            hand = self.open
            if hand is None:  # a hand whose start this reader did not see
                continue
            if kind == "deck_committed":
                hand.decks.append(env.deck_committed.commitment)
                dc = env.deck_committed
                if dc.positions_root:
                    hand.roots.append(dc.positions_root)
                if dc.shuffle and not dc.reshuffle:
                    hand.shuffle = " ".join([dc.shuffle, dc.seed_sha256, *dc.player_seeds])
            elif kind in RESULT_BODIES:
                body = getattr(env, kind).SerializeToString(deterministic=True)
                hand.result.update(kind.encode() + b"\n" + len(body).to_bytes(8, "big") + body)
            elif kind == "deck_revealed":
                leaf = HandLeaf(self.table_id, hand.hand_no, hand.shard, hand.first_seq,
                                stored.primary_seq, hashlib.sha256(raws[-1]).digest(),
                                tuple(hand.decks), hand.result.digest(), tuple(hand.roots),
                                hand.shuffle)
                done.append(leaf)
                self.open = None
        if self.keep:
            self.leaves.extend(leaf.encode() for leaf in done)
        return done
