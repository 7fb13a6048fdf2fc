"""An audit against a checkpoint of the hands' Merkle log (shared/tlog): does this log hold
the tree the checkpoint signs?

Given the signed checkpoint (c2sp.org/tlog-checkpoint), the log's key and the witnesses'
keys trusted, the tree's leaves (POKER_HANDS, or a whole-log export's leaf lines) and the
audit of every table (each :class:`~shared.audit.auditor.TableAudit` carries the leaves its
commits make, shared/tlog/hands.py):

1. the checkpoint is signed by the log's key (its name is the origin) and cosigned by every
   witness given (timestamped cosignatures, c2sp.org/tlog-cosignature);
2. the first ``size`` leaves hash (RFC 6962) to the checkpoint's root;
3. each table's leaves among them are the leaves its audited log makes, hand for hand from
   its first: the same hand number, the same first and last stream sequence, the same chain
   head (the hash of the hand's last envelope: every event up to there, and each command's
   digest, are under it), the same deck commitments and the same result.

A log whose tail was dropped, whose last events were changed, whose hand was replaced or
whose command digest was changed (with the envelope that carries it) fails 2 or 3, although
its own chain may check: the checkpoint was signed, and witnessed, before. What it cannot
show: anything after a table's last hand in the tree (a hand running at the checkpoint, seats
leaving after it), and a hand made up before the checkpoint was signed.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from shared.tlog import merkle
from shared.tlog.hands import HandLeaf, LeafError
from shared.tlog.note import NoteError, SignedCheckpoint, Verifier


@dataclass
class CheckpointAudit:
    origin: str
    size: int
    root: str  # base64
    cosigned: dict[str, int] = field(default_factory=dict)  # witness name -> its time
    hands: int = 0  # hands of the tree matched with the log
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def as_dict(self) -> dict:
        return {"origin": self.origin, "size": self.size, "root": self.root,
                "cosigned": self.cosigned, "hands": self.hands, "ok": self.ok,
                "problems": self.problems}

    def summary(self) -> str:
        by = (", cosigned by " + ", ".join(f"{w} at {t}" for w, t in self.cosigned.items())
              if self.cosigned else "")
        verdict = "the log holds its tree" if self.ok else "the log does NOT hold its tree"
        return (f"checkpoint {self.origin} size {self.size} root {self.root}{by}: "
                f"{self.hands} hands matched; {verdict}")


def _differs(got: HandLeaf, want: HandLeaf) -> str:
    parts = []
    if (got.first_seq, got.last_seq, got.shard) != (want.first_seq, want.last_seq, want.shard):
        parts.append(f"its commits are stream seq {got.first_seq}..{got.last_seq}, the tree's "
                     f"{want.first_seq}..{want.last_seq}")
    if got.head != want.head:
        parts.append("its last event (the chain head) is not the tree's")
    if got.decks != want.decks:
        parts.append("its deck commitments are not the tree's")
    if got.result != want.result:
        parts.append("its result (pots awarded, rake, final stacks) is not the tree's")
    return "; ".join(parts) or "its leaf is not the tree's"


def audit_checkpoint(signed: SignedCheckpoint, leaves: Sequence[bytes],
                     table_leaves: dict[str, list[bytes]], log_key: Verifier,
                     witnesses: Iterable[Verifier] = ()) -> CheckpointAudit:
    """Check the log (``table_leaves``: each table's leaves, as its audit made them) against
    the checkpoint ``signed`` over the tree of ``leaves``."""
    cp = signed.checkpoint
    out = CheckpointAudit(cp.origin, cp.size, base64.b64encode(cp.root).decode())
    try:
        signed.verify(log_key)
    except NoteError as exc:
        out.problems.append(f"the checkpoint's signature: {exc}")
        return out
    for witness in witnesses:
        try:
            out.cosigned[witness.name] = signed.cosigned_by(witness)
        except NoteError as exc:
            out.problems.append(f"the checkpoint's cosignature: {exc}")
    if len(leaves) < cp.size:
        out.problems.append(f"the hands' log holds {len(leaves)} leaves, the checkpoint signs "
                            f"a tree of {cp.size}: leaves were removed")
        return out
    tree = merkle.Tree([merkle.leaf_hash(leaf) for leaf in leaves[:cp.size]])
    if tree.root() != cp.root:
        out.problems.append(f"the first {cp.size} leaves of the hands' log do not hash to the "
                            f"checkpoint's root: a leaf was changed, removed or reordered")
        return out
    covered: dict[str, list[HandLeaf]] = {}
    for i, raw in enumerate(leaves[:cp.size]):
        try:
            leaf = HandLeaf.parse(raw)
        except LeafError as exc:
            out.problems.append(f"leaf {i} of the tree: {exc}")
            continue
        covered.setdefault(leaf.table_id, []).append(leaf)
    for table, want in sorted(covered.items()):
        got = [HandLeaf.parse(raw) for raw in table_leaves.get(table, [])]
        if table not in table_leaves:
            out.problems.append(f"table {table}: {len(want)} hand(s) in the checkpoint's tree "
                                f"(hands {want[0].hand_no}..{want[-1].hand_no}), none in the "
                                f"log")
            continue
        for k, w in enumerate(want):
            if k >= len(got):
                out.problems.append(
                    f"table {table}: the checkpoint's tree holds hand {w.hand_no} (stream seq "
                    f"{w.first_seq}..{w.last_seq}) and {len(want) - k - 1} after it, the "
                    f"log ends before (its tail was dropped, or the table's audit stopped)")
                break
            g = got[k]
            if g.hand_no != w.hand_no:
                out.problems.append(f"table {table}: the tree's hand {w.hand_no} is hand "
                                    f"{g.hand_no} in the log (a hand was replaced or removed)")
                break
            if g.encode() != w.encode():
                out.problems.append(f"table {table}, hand {w.hand_no}: {_differs(g, w)} "
                                    f"(the hand was changed or replaced after the checkpoint)")
                break
            out.hands += 1
    return out
