"""The table service's tree of the hands (services/table/receipts.py HandsTree) is bounded
(issue 29's review: ~150 bytes a hand for ever): past its ``keep`` last leaves it forgets the
hashes and index entries the proofs of older leaves need; the receipt of a recent hand is
proved from memory as the whole tree proves it, an older one by reading the leaves again, and
a hand of a table it knows that is not in the log yet is not looked for. The search and the
proof of a forgotten leaf run in a worker thread (the loop serves every table meanwhile). Real
nats-server."""

from __future__ import annotations

import threading

from services.table import receipts
from services.table.receipts import HandsTree
from shared.tlog import merkle
from shared.tlog import store as tstore
from shared.tlog.hands import HandLeaf
from shared.tlog.merkle import FORGET_LEVEL

N = (1 << FORGET_LEVEL) + 300


def leaf(i: int) -> bytes:
    return HandLeaf(f"t{i % 7}", i // 7 + 1, None, 2 * i + 1, 2 * i + 2,
                    i.to_bytes(32, "big"), ("c" * 64,), bytes(32)).encode()


async def test_the_tree_keeps_its_last_leaves_and_proves_the_older_from_the_stream(store,
                                                                                   monkeypatch):
    found_in: list[threading.Thread] = []  # a forgotten leaf is found and proved off the loop
    find = receipts._find

    def finding(*args):
        found_in.append(threading.current_thread())
        return find(*args)

    monkeypatch.setattr(receipts, "_find", finding)
    await tstore.ensure_streams(store.js)
    leaves = [leaf(i) for i in range(N)]
    for x in leaves:
        await store.js.publish(tstore.hands_subject("POKER"), x, stream=tstore.HANDS_STREAM)
    hands = HandsTree(store, keep=100)
    await hands.refresh()
    whole = merkle.Tree([merkle.leaf_hash(x) for x in leaves])
    assert hands.tree.size == N and hands.tree.root() == whole.root()
    assert hands.tree.forgotten[0] == 1 << FORGET_LEVEL
    assert len(hands.index) == N - (1 << FORGET_LEVEL)  # only the kept leaves
    assert len(hands.tree.levels[0]) == N - (1 << FORGET_LEVEL)
    for i in (N - 1, N - 100, 1 << FORGET_LEVEL):  # from memory
        found = await hands.locate(HandLeaf.parse(leaves[i]).key, N)
        assert found == (i, leaves[i], whole.inclusion_proof(i, N))
    for i in (0, 12, (1 << FORGET_LEVEL) - 1):  # forgotten: read again
        found = await hands.locate(HandLeaf.parse(leaves[i]).key, N)
        assert found == (i, leaves[i], whole.inclusion_proof(i, N))
    assert len(found_in) == 3 and threading.main_thread() not in found_in
    table, last = HandLeaf.parse(leaves[N - 1]).key
    assert await hands.locate((table, last + 1), N) is None  # not in the log yet
    assert await hands.locate(("nosuch", 1), N) is None
