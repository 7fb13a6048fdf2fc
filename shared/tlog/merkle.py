"""The Merkle hash tree of RFC 6962 §2.1 (RFC 9162 §2.1): pure, no I/O.

    leaf hash  = SHA-256(0x00 || leaf)
    node hash  = SHA-256(0x01 || left || right)
    MTH({})    = SHA-256()                      (the empty tree)
    MTH(D[n])  = node(MTH(D[0:k]), MTH(D[k:n]))  k: the largest power of two < n

:func:`root`, :func:`inclusion_proof` (PATH, RFC 6962 §2.1.1) and :func:`consistency_proof`
(PROOF/SUBPROOF, §2.1.2) are the RFC's definitions, written as they read (recursive, over a
list of leaf hashes): the reference. :class:`Tree` gives the same answers from the complete
subtrees it keeps as leaves are appended (O(log n) hashes a root or a proof).
:func:`verify_inclusion` and :func:`verify_consistency` are RFC 9162's verification
algorithms (§2.1.3.2, §2.1.4.2).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

HASH_SIZE = 32
EMPTY_ROOT = hashlib.sha256(b"").digest()


class ProofError(ValueError):
    """A proof that does not verify, or arguments no proof exists for."""


def leaf_hash(leaf: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + leaf).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


# --- the RFC's definitions, over a list of leaf hashes ------------------------------------


def root(hashes: Sequence[bytes]) -> bytes:
    """MTH of the leaves whose hashes are ``hashes``."""
    n = len(hashes)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return hashes[0]
    k = _split(n)
    return node_hash(root(hashes[:k]), root(hashes[k:]))


def inclusion_proof(hashes: Sequence[bytes], index: int) -> list[bytes]:
    """PATH(m, D[n]): the audit path of leaf ``index`` in the tree of ``hashes``."""
    n = len(hashes)
    if not 0 <= index < n:
        raise ProofError(f"leaf {index} is not in a tree of {n}")
    if n == 1:
        return []
    k = _split(n)
    if index < k:
        return inclusion_proof(hashes[:k], index) + [root(hashes[k:])]
    return inclusion_proof(hashes[k:], index - k) + [root(hashes[:k])]


def consistency_proof(hashes: Sequence[bytes], m: int) -> list[bytes]:
    """PROOF(m, D[n]): that the tree of the first ``m`` leaves is a prefix of the tree of
    ``hashes`` (0 < m <= n; m == n: the empty proof)."""
    n = len(hashes)
    if not 0 < m <= n:
        raise ProofError(f"no consistency proof from size {m} to size {n}")
    return _subproof(hashes, m, True)


def _subproof(hashes: Sequence[bytes], m: int, b: bool) -> list[bytes]:
    n = len(hashes)
    if m == n:
        return [] if b else [root(hashes)]
    k = _split(n)
    if m <= k:
        return _subproof(hashes[:k], m, b) + [root(hashes[k:])]
    return _subproof(hashes[k:], m - k, False) + [root(hashes[:k])]


# --- RFC 9162's verification ---------------------------------------------------------------


def verify_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes],
                     expected_root: bytes) -> None:
    """RFC 9162 §2.1.3.2: ``leaf`` (a leaf hash) is leaf ``index`` of the tree of ``size``
    leaves whose root is ``expected_root``; ProofError if not."""
    if not 0 <= index < size:
        raise ProofError(f"leaf {index} is not in a tree of {size}")
    if any(len(p) != HASH_SIZE for p in proof) or len(leaf) != HASH_SIZE:
        raise ProofError("a hash of the proof is not 32 bytes")
    fn, sn = index, size - 1
    r = leaf
    for p in proof:
        if sn == 0:
            raise ProofError("the inclusion proof is too long")
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the inclusion proof is too short")
    if r != expected_root:
        raise ProofError("the inclusion proof does not lead to the root")


def _check_consistency_sizes(size1: int, size2: int, proof: Sequence[bytes]) -> None:
    """What a consistency proof needs before its path is followed: ``size1`` from 1 to
    ``size2`` (from the empty tree nothing is proved), and hashes of 32 bytes."""
    if not 0 <= size1 <= size2:
        raise ProofError(f"size {size1} is not at most size {size2}")
    if size1 == 0:
        raise ProofError("a consistency proof from the empty tree proves nothing")
    if any(len(p) != HASH_SIZE for p in proof):
        raise ProofError("a hash of the proof is not 32 bytes")


def verify_consistency(size1: int, size2: int, root1: bytes, root2: bytes,
                       proof: Sequence[bytes]) -> None:
    """RFC 9162 §2.1.4.2: the tree of ``size2`` leaves with root ``root2`` extends the tree of
    ``size1`` leaves with root ``root1``; ProofError if the proof does not show it. Equal
    sizes need equal roots and an empty proof. From the empty tree (size1 = 0) nothing is
    proved (every tree extends it): refused, as the reference implementation refuses it; a
    caller for whom size 0 means "nothing seen yet" (a witness) handles it before."""
    _check_consistency_sizes(size1, size2, proof)
    if size1 == size2:
        if proof:
            raise ProofError("the sizes are equal: the proof must be empty")
        if root1 != root2:
            raise ProofError("the sizes are equal and the roots differ")
        return
    if not proof:
        raise ProofError("the consistency proof is empty")
    path = list(proof)
    if size1 & (size1 - 1) == 0:  # a power of two: the first tree is a node of the second
        path.insert(0, root1)
    fn, sn = size1 - 1, size2 - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            raise ProofError("the consistency proof is too long")
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    if sn != 0:
        raise ProofError("the consistency proof is too short")
    if fr != root1:
        raise ProofError("the consistency proof does not lead to the first root")
    if sr != root2:
        raise ProofError("the consistency proof does not lead to the second root")


# --- a tree that grows ---------------------------------------------------------------------


#: :meth:`Tree.forget` keeps every hash of this level and above (one per 4,096 leaves)
FORGET_LEVEL = 12


class Tree:
    """Leaf hashes appended in order, with every complete subtree's hash kept:
    ``levels[h][i]`` is the hash of leaves [i * 2^h, (i + 1) * 2^h). Roots and proofs for
    any size up to :attr:`size` come from those (the RFC's tree shape splits every range at
    an aligned power of two, whose left part is a complete subtree).

    :meth:`forget` drops the hashes below level ``FORGET_LEVEL`` of the leaves before a
    boundary aligned to ``2**FORGET_LEVEL``: the root of any size from the boundary on, and
    the inclusion proof of any leaf after it, need none of them (every range the RFC's recursion visits
    lies in one aligned block of a power of two at least its size, so a range below that
    level lies wholly before or wholly after the boundary, and a range above it is a kept
    hash). A forgotten leaf's proof is ProofError."""

    def __init__(self, hashes: Sequence[bytes] = ()) -> None:
        self.levels: list[list[bytes]] = [[]]
        #: how many hashes of each level were forgotten (from the left)
        self.forgotten: list[int] = [0]
        for h in hashes:
            self.append(h)

    @property
    def size(self) -> int:
        return len(self.levels[0]) + self.forgotten[0]

    def _hash(self, level: int, i: int) -> bytes:
        at = i - self.forgotten[level]
        if at < 0:
            raise ProofError(f"the hashes of leaves before {self.forgotten[0]} were forgotten")
        return self.levels[level][at]

    def append(self, h: bytes) -> int:
        """Append a leaf hash; returns its index."""
        if len(h) != HASH_SIZE:
            raise ValueError("a leaf hash is 32 bytes")
        index = self.size
        self.levels[0].append(h)
        level, i = 0, index
        while i & 1:  # it completes a subtree one level up
            left = self._hash(level, i - 1)
            level += 1
            if len(self.levels) == level:
                self.levels.append([])
                self.forgotten.append(0)
            self.levels[level].append(node_hash(left, h))
            h = self.levels[level][-1]
            i >>= 1
        return index

    def forget(self, before: int) -> int:
        """Drop what proofs of leaves from ``before`` on do not need (rounded down to a
        multiple of ``2**FORGET_LEVEL``); returns the first leaf whose proof can still be made."""
        boundary = min(before, self.size) >> FORGET_LEVEL << FORGET_LEVEL
        for level in range(min(FORGET_LEVEL, len(self.levels))):
            drop = (boundary >> level) - self.forgotten[level]
            if drop > 0:
                del self.levels[level][:drop]
                self.forgotten[level] += drop
        return self.forgotten[0]

    def leaf(self, index: int) -> bytes:
        return self._hash(0, index)

    def _range(self, start: int, end: int) -> bytes:
        """MTH of leaves [start, end): start aligned to the largest power of two <= the
        range's size (as every range the RFC's recursion visits is)."""
        n = end - start
        if n == 0:
            return EMPTY_ROOT
        if n & (n - 1) == 0:
            h = n.bit_length() - 1
            return self._hash(h, start >> h)
        k = _split(n)
        return node_hash(self._range(start, start + k), self._range(start + k, end))

    def root(self, size: int | None = None) -> bytes:
        size = self.size if size is None else size
        self._check(size)
        return self._range(0, size)

    def inclusion_proof(self, index: int, size: int | None = None) -> list[bytes]:
        size = self.size if size is None else size
        self._check(size)
        if not 0 <= index < size:
            raise ProofError(f"leaf {index} is not in a tree of {size}")
        out: list[bytes] = []
        start, end = 0, size
        while end - start > 1:
            k = _split(end - start)
            if index < start + k:
                out.append(self._range(start + k, end))
                end = start + k
            else:
                out.append(self._range(start, start + k))
                start += k
        out.reverse()
        return out

    def consistency_proof(self, m: int, size: int | None = None) -> list[bytes]:
        size = self.size if size is None else size
        self._check(size)
        if not 0 < m <= size:
            raise ProofError(f"no consistency proof from size {m} to size {size}")
        out: list[bytes] = []
        start, end, b = 0, size, True
        while True:
            if m == end - start:
                if not b:
                    out.append(self._range(start, end))
                break
            k = _split(end - start)
            if m <= k:
                out.append(self._range(start + k, end))
                end = start + k
            else:
                out.append(self._range(start, start + k))
                m -= k
                start += k
                b = False
        out.reverse()
        return out

    def _check(self, size: int) -> None:
        if not 0 <= size <= self.size:
            raise ProofError(f"the tree has {self.size} leaves, not {size}")
