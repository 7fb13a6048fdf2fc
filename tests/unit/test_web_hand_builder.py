"""The web's hand pages cache (services/web/hands.py) on a real log: the golden log's ten
tables (tests/data/golden, every game), read as the web reads the log.

The incremental per-table builder splits a log into the same hand records as
shared/history's ``table_hands`` (the pages' old source, and `pokerctl history`'s), whether it
folds the log at once or a few commits at a time; the caches stay within their bounds, and
a hand that fell out of them is folded again, from the log, to the same page."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle

import pytest

from services.web.hands import HandPages, NotShown, TableHands, render
from shared.history.log import table_hands
from tests.data.golden import make_golden as golden

LOG = golden.load_log(golden.HERE / golden.LOG)


def records_of(hands: TableHands) -> list:
    out = [hands.final(n) for n in hands.done]
    running = hands.running_record()
    return out + ([running] if running is not None else [])


def reader(stored, step: int | None = None):
    """A table's commits after a sequence, ``step`` at a time (None: all of them)."""
    async def read_after(table_id: str, after: int):
        later = [s for s in stored if s.seq > after]
        return later if step is None else later[:step]
    return read_after


@pytest.mark.parametrize("table_id", sorted(LOG))
@pytest.mark.parametrize("step", [None, 7])
def test_the_builder_makes_the_histories_hand_records(table_id, step):
    stored = LOG[table_id]
    expected = table_hands(stored)
    assert expected, "the golden table has hands"
    hands = TableHands(table_id)

    async def fold():
        read = reader(stored, step)
        while hands.seq < stored[-1].seq:
            await hands.catch_up(read)
    asyncio.run(fold())
    assert hands.broken is None and hands.commits == len(stored)
    assert records_of(hands) == expected
    # every final hand is kept as it will be rendered, the last one is not final yet
    assert list(hands.done) == [r.hand_no for r in expected[:-1]]


def test_a_changed_byte_breaks_the_table_at_that_commit_and_not_before():
    table_id = sorted(LOG)[0]
    stored = list(LOG[table_id])
    k = len(stored) // 2
    data = bytearray(stored[k].data)
    data[len(data) // 2] ^= 0x01
    stored[k] = dataclasses.replace(stored[k], data=bytes(data))
    pages = HandPages(lambda t: asyncio.sleep(0, stored))
    before = table_hands(stored[:k])
    last = before[-2].hand_no  # a hand final before the changed commit

    async def ask(n: int):
        try:
            return await pages.get(table_id, n)
        except NotShown as exc:
            return exc.status
    assert asyncio.run(ask(last)).json == render(before[-2]).json
    assert asyncio.run(ask(before[-1].hand_no + 5)) == 503


def test_the_caches_stay_within_their_bounds_and_a_dropped_hand_is_folded_again():
    table_id = max(LOG, key=lambda t: len(table_hands(LOG[t])))
    stored = LOG[table_id]
    expected = {r.hand_no: r for r in table_hands(stored) if r.complete}
    one = max(len(pickle.dumps(r)) for r in expected.values())
    pages = HandPages(lambda t: asyncio.sleep(0, stored), max_record_bytes=one,
                      max_page_bytes=max(render(r).size for r in expected.values()))

    async def every_hand():
        return [await pages.get(table_id, n) for n in sorted(expected)]
    served = asyncio.run(every_hand())
    assert len(expected) >= 3
    assert [p.json for p in served] == [render(r).json for r in sorted(
        expected.values(), key=lambda r: r.hand_no)]
    hands = pages.tables[table_id]
    assert hands.bytes <= one and len(hands.done) == 1 and hands.dropped_to > 0
    assert pages.page_bytes <= pages.max_page_bytes and len(pages.pages) == 1
    # a hand that fell out of both caches: folded again from the log, the same page
    gone = min(n for n in expected if n <= hands.dropped_to and (table_id, n) not in pages.pages)
    folds = pages.folds
    again = asyncio.run(pages.get(table_id, gone))
    assert again.json == render(expected[gone]).json and pages.folds == folds + 1


def test_tables_beyond_the_bound_go_least_recently_used_first():
    tables = sorted(LOG)[:4]
    pages = HandPages(lambda t: asyncio.sleep(0, LOG.get(t, [])), max_tables=2)

    async def first_hands():
        for t in tables:
            await pages.get(t, 1)
    asyncio.run(first_hands())
    assert list(pages.tables) == tables[-2:]
    assert asyncio.run(_status(pages, "nope", 1)) == 404
    assert "nope" not in pages.tables  # nothing kept for a table that is not there


async def _status(pages: HandPages, table_id: str, n: int) -> int:
    try:
        await pages.get(table_id, n)
    except NotShown as exc:
        return exc.status
    return 200
