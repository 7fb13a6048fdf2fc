"""The Merkle tree that forgets (issue 29's review: the table service's tree of hands grew by
~150 bytes a hand for ever): after ``Tree.forget(b)`` it holds the hashes of the leaves from
the boundary on and one hash per 4,096 leaves before it, and still gives every root from the
boundary on and every proof of a leaf after it exactly as the whole tree does; a forgotten
leaf's proof is refused, and appending goes on as before."""

from __future__ import annotations

import pytest

from shared.tlog import merkle
from shared.tlog.merkle import FORGET_LEVEL, ProofError, Tree

BLOCK = 1 << FORGET_LEVEL


def hashes(n: int, start: int = 0) -> list[bytes]:
    return [merkle.leaf_hash(b"leaf %d" % i) for i in range(start, start + n)]


def test_a_forgetful_tree_proves_the_leaves_it_keeps_as_the_whole_tree_does():
    n = 3 * BLOCK + 123
    whole, forgetful = Tree(hashes(n)), Tree(hashes(n))
    assert forgetful.forget(2 * BLOCK + 5) == 2 * BLOCK  # rounded down to a block
    assert len(forgetful.levels[0]) == n - 2 * BLOCK
    kept = sum(map(len, forgetful.levels))
    assert kept < sum(map(len, whole.levels)) // 2
    assert forgetful.root(2 * BLOCK) == whole.root(2 * BLOCK)
    for size in (2 * BLOCK + 1, 2 * BLOCK + 2, 3 * BLOCK - 1, 3 * BLOCK, n):
        assert forgetful.root(size) == whole.root(size)
        for index in {2 * BLOCK, size - 1, (2 * BLOCK + size) // 2}:
            proof = forgetful.inclusion_proof(index, size)
            assert proof == whole.inclusion_proof(index, size)
            merkle.verify_inclusion(whole.leaf(index), index, size, proof, whole.root(size))
    for index in (0, BLOCK, 2 * BLOCK - 1):
        with pytest.raises(ProofError, match="forgotten"):
            forgetful.inclusion_proof(index, n)
    for h in hashes(BLOCK + 7, start=n):  # it grows on as before
        assert forgetful.append(h) == whole.append(h)
    size = whole.size
    assert forgetful.root() == whole.root()
    assert forgetful.inclusion_proof(size - 1) == whole.inclusion_proof(size - 1)
    assert forgetful.forget(size) == 4 * BLOCK  # and forgets again
    assert forgetful.inclusion_proof(size - 1) == whole.inclusion_proof(size - 1)


def test_forgetting_less_than_a_block_forgets_nothing():
    tree = Tree(hashes(BLOCK - 1))
    assert tree.forget(BLOCK - 1) == 0
    assert tree.inclusion_proof(0) == Tree(hashes(BLOCK - 1)).inclusion_proof(0)
    assert tree.root() == Tree(hashes(BLOCK - 1)).root()
