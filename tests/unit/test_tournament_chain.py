"""The tournament log's hash chain (services/tournament/log.py ``read_link``): each commit
carries the previous commit's link_hash, as a table's envelopes do; commits made before the
chain carry none, and are taken only before the first that does."""

from __future__ import annotations

import json

import pytest

from services.tournament.codec import encode
from services.tournament.log import read_link
from shared.infra.commits import link_hash
from shared.infra.eventstore import Stored
from shared.infra.repository import CorruptLog
from shared.poker.tournament import events as E


def _commit(n: int, prev: bytes | None) -> bytes:
    data = encode([E.TournamentCancelled(f"reason {n}")], f"c{n}", n, b"", prev or b"")
    if prev is None:  # as made before the chain
        raw = json.loads(data)
        del raw["prev_hash"]
        data = json.dumps(raw).encode()
    return data


def _read(datas: list[bytes]) -> None:
    last, chained = b"", False
    for seq, data in enumerate(datas, 1):
        _, last, chained = read_link(Stored(seq, data), last, chained)


def test_each_commit_links_to_the_one_before():
    first = _commit(1, b"")
    second = _commit(2, link_hash(first))
    _read([first, second, _commit(3, link_hash(second))])
    with pytest.raises(CorruptLog, match="breaks at commit 3"):
        _read([first, second, _commit(3, link_hash(first))])  # a commit removed
    with pytest.raises(CorruptLog, match="breaks at commit 1"):
        _read([second, first])  # reordered


def test_commits_made_before_the_chain_are_taken_only_before_it_begins():
    old = [_commit(1, None), _commit(2, None)]
    chained = _commit(3, link_hash(old[1]))
    _read([*old, chained])
    with pytest.raises(CorruptLog, match="breaks at commit 4"):
        _read([*old, chained, _commit(4, None)])  # the chain stripped from a later one
