"""The hands' Merkle tree (shared/tlog/merkle.py) against RFC 6962 / RFC 9162: the
reference test vectors of transparency-dev/merkle (tests/data/tlog/merkle-vectors.json, every
inclusion and consistency probe its proofgen writes, kept verbatim: leaves, roots, proofs and
whether each must verify), the RFC's tree of the eight classic leaves, and every size from 1
to 70 computed two ways (the RFC's recursive definition, and the tree that keeps complete
subtrees), each proof made both ways and verified."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from shared.tlog import merkle as M

DATA = Path(__file__).resolve().parents[1] / "data" / "tlog"
VECTORS = json.loads((DATA / "merkle-vectors.json").read_text())
#: testonly.LeafInputs() of transparency-dev/merkle (RFC 6962's classic test leaves)
LEAVES = [bytes.fromhex(x) for x in ("", "00", "10", "2021", "3031", "40414243",
                                     "5051525354555657", "606162636465666768696a6b6c6d6e6f")]
#: testonly.RootHashes(): the root of the tree of the first n of them, n = 0..8
ROOTS = ["e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
         "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
         "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
         "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
         "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
         "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
         "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
         "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
         "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328"]


def _b(s: str | None) -> bytes:
    return base64.b64decode(s) if s else b""


def test_the_hashes_are_rfc_6962s():
    assert M.EMPTY_ROOT.hex() == ROOTS[0]
    assert M.leaf_hash(b"").hex() == ROOTS[1]
    assert M.leaf_hash(b"L123456").hex() == \
        "395aa064aa4c29f7010acfe3f25db9485bbd4b91897b6ad7ad547639252b4d56"
    assert M.node_hash(b"N123", b"N456").hex() == \
        "aa217fe888e47007fa15edab33c2b492a722cb106c64667fc2b044444de66bbb"


def test_the_roots_of_the_rfc_test_leaves():
    hashes = [M.leaf_hash(x) for x in LEAVES]
    tree = M.Tree()
    assert tree.root().hex() == ROOTS[0]
    for n in range(1, 9):
        tree.append(hashes[n - 1])
        assert M.root(hashes[:n]).hex() == ROOTS[n]
        assert tree.root().hex() == ROOTS[n]
        assert tree.root(n - 1).hex() == ROOTS[n - 1]


@pytest.mark.parametrize("name", sorted(VECTORS["inclusion"]))
def test_inclusion_vectors(name):
    v = VECTORS["inclusion"][name]
    proof = [_b(p) for p in v["proof"] or []]

    def verify():
        M.verify_inclusion(_b(v["leafHash"]), v["leafIdx"], v["treeSize"], proof, _b(v["root"]))

    if v["wantErr"]:
        with pytest.raises(M.ProofError):
            verify()
    else:
        verify()
        hashes = [M.leaf_hash(x) for x in LEAVES[:v["treeSize"]]]
        assert M.inclusion_proof(hashes, v["leafIdx"]) == proof
        assert M.Tree(hashes).inclusion_proof(v["leafIdx"]) == proof


@pytest.mark.parametrize("name", sorted(VECTORS["consistency"]))
def test_consistency_vectors(name):
    v = VECTORS["consistency"][name]
    proof = [_b(p) for p in v["proof"] or []]

    def verify():
        M.verify_consistency(v["size1"], v["size2"], _b(v["root1"]), _b(v["root2"]), proof)

    if v["wantErr"]:
        with pytest.raises(M.ProofError):
            verify()
    else:
        verify()
        if 0 < v["size1"] <= v["size2"] <= len(LEAVES):
            hashes = [M.leaf_hash(x) for x in LEAVES[:v["size2"]]]
            assert M.consistency_proof(hashes, v["size1"]) == proof
            assert M.Tree(hashes).consistency_proof(v["size1"]) == proof


def test_every_size_two_ways_with_every_proof_verified():
    hashes = [M.leaf_hash(hashlib.sha256(i.to_bytes(4, "big")).digest()) for i in range(70)]
    tree = M.Tree()
    for n in range(1, 71):
        tree.append(hashes[n - 1])
        root = M.root(hashes[:n])
        assert tree.root() == root, n
        for i in range(n):
            proof = M.inclusion_proof(hashes[:n], i)
            assert tree.inclusion_proof(i) == proof, (n, i)
            M.verify_inclusion(hashes[i], i, n, proof, root)
            with pytest.raises(M.ProofError):
                M.verify_inclusion(hashes[(i + 1) % n] if n > 1 else b"\0" * 32, i, n, proof,
                                   root)
        for m in range(1, n + 1):
            proof = M.consistency_proof(hashes[:n], m)
            assert tree.consistency_proof(m) == proof, (n, m)
            M.verify_consistency(m, n, M.root(hashes[:m]), root, proof)
            if m < n:  # another first tree of that size is not a prefix
                with pytest.raises(M.ProofError):
                    M.verify_consistency(m, n, M.root(hashes[1:m + 1]), root, proof)
    assert tree.root(33) == M.root(hashes[:33])
    assert tree.consistency_proof(5, 33) == M.consistency_proof(hashes[:33], 5)


def test_proofs_of_sizes_the_tree_does_not_have_are_refused():
    tree = M.Tree([M.leaf_hash(b"a")])
    for bad in (lambda: tree.root(2), lambda: tree.inclusion_proof(1),
                lambda: tree.consistency_proof(0), lambda: tree.consistency_proof(2)):
        with pytest.raises(M.ProofError):
            bad()
