"""The public hand pages (``/table/{id}/hands/{n}``, its JSON, PokerStars text and PHH), served
from caches rather than a fold of the table's whole log per request.

- Per table, a :class:`TableHands` folds the log once, incrementally: each request that needs
  a hand it has not seen reads only the commits after the last it folded (the hash chain and
  the fold checked, as shared/history/log.table_hands does), and splits them into hands as
  shared/history/record.hands does (a unit test keeps the two equal on real logs). A hand is
  final once the next one starts: its record is kept (pickled, about 1.5 KB) and never
  changes. The fold gives the event loop back every few milliseconds, so a long table does
  not stall the other requests (``/healthz``, the live streams).
- The rendered forms of a final hand are kept in an LRU bounded in bytes; the tables' records
  in one bounded in bytes too (the least recently used table goes; a table with more than
  the whole budget keeps its latest hands, and an older one is folded again from the start,
  one such fold at a time in the process).
- The requests are limited per visitor in app.py (limits.HAND_PAGES_PER_VISITOR).

Read without a key: the cards nobody saw read ``??``; a private table's hands are not shown.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import cast

from shared.history import phh, pokerstars
from shared.history.pots import replay_json
from shared.history.record import HandRecord, HandSplitter
from shared.infra.eventstore import Stored
from shared.infra.repository import CorruptLog, LoadedTable, fold_commit, read_commit
from shared.poker.options import TableOptions

#: the tables whose hands are kept, and the bytes of their records (pickled) in all
MAX_TABLES = 256
MAX_RECORD_BYTES = 48 * 1024 * 1024
#: the bytes of the rendered hands kept (JSON, PokerStars text, PHH: ~10 KB a hand)
MAX_PAGE_BYTES = 32 * 1024 * 1024
#: the longest the fold runs before it gives the event loop back
SLICE_S = 0.004

Read = Callable[[str], Awaitable[list[Stored]]]
ReadAfter = Callable[[str, int], Awaitable[list[Stored]]]


class NotShown(Exception):
    """A hand the pages do not show: the HTTP status and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


@dataclass(frozen=True)
class Rendered:
    """A hand's public forms, as the pages send them."""

    table_id: str
    hand_no: int
    json: bytes
    text: str  # PokerStars (the page shows it; its download ends it with a newline)
    phh: str

    @property
    def size(self) -> int:
        return len(self.json) + len(self.text) + len(self.phh) + 200


def render(record: HandRecord) -> Rendered:
    data = json.dumps(replay_json(record), ensure_ascii=False, allow_nan=False, indent=None,
                      separators=(",", ":")).encode()
    return Rendered(record.table_id, record.hand_no, data, pokerstars(record), phh(record))


class TableHands:
    """One table's hands, folded from its log incrementally (:meth:`catch_up`). ``keep``:
    which final hands to keep (all, unless told: a fold for one old hand keeps that one)."""

    def __init__(self, table_id: str, keep: Callable[[int], bool] = lambda n: True) -> None:
        self.table_id = table_id
        self.keep = keep
        self.lock = asyncio.Lock()
        self.lt = LoadedTable()
        self.seq = 0  # the stream sequence of the last commit folded
        self.commits = 0
        self.broken: str | None = None  # why the log stopped checking, at the commit after
        self.split = HandSplitter(table_id)  # who sits where, the running hand's events
        self.done: dict[int, bytes] = {}  # final hands' records, pickled, oldest first
        self.bytes = 0
        self.dropped_to = 0  # final hands up to this one are no longer kept here

    @property
    def last_hand(self) -> int:
        return self.split.hand_no

    @property
    def options(self) -> TableOptions | None:
        return self.split.options

    async def catch_up(self, read_after: ReadAfter) -> None:
        """Fold the commits the log holds after the last folded (giving the event loop back
        every SLICE_S); a commit that does not check marks the table broken there."""
        if self.broken is not None:
            return
        stored = await read_after(self.table_id, self.seq)
        mark = time.monotonic()
        for s in stored:
            if s.seq <= self.seq:
                continue
            try:
                self._fold(s)
            except (CorruptLog, ValueError) as exc:
                self.broken = str(exc)
                return
            if time.monotonic() - mark > SLICE_S:
                await asyncio.sleep(0)
                mark = time.monotonic()

    def _fold(self, stored: Stored) -> None:
        parsed = read_commit(stored)
        self.lt = fold_commit(self.lt, stored, None, parsed)
        self.lt.commands.clear()  # (the index of command ids: not needed to read hands)
        self.seq, self.commits = stored.seq, self.commits + 1
        for k, event in enumerate(parsed.events(None)):
            self._event(event, parsed.envelope(k).occurred_at_unix_ms or None,
                        stored.log_position)

    def _event(self, e: object, at_ms: int | None, seq: int) -> None:
        closed = self.split.feed(e, at_ms, seq)
        if closed is not None:
            self._keep(closed)

    def running_record(self) -> HandRecord | None:
        """The last hand's record as the log has it so far."""
        return self.split.running()

    def _keep(self, record: HandRecord) -> None:
        """A final hand (the next started): kept, if wanted and shown."""
        if record.options.private or not self.keep(record.hand_no):
            return
        data = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        self.done[record.hand_no] = data
        self.bytes += len(data)

    def final(self, hand_no: int) -> HandRecord | None:
        data = self.done.get(hand_no)
        return None if data is None else cast(HandRecord, pickle.loads(data))

    def drop_oldest(self, budget: int) -> None:
        """Keep at most ``budget`` bytes of records: the oldest hands go."""
        while self.done and self.bytes > budget:
            n = next(iter(self.done))
            self.bytes -= len(self.done.pop(n))
            self.dropped_to = max(self.dropped_to, n)


class HandPages:
    """The rendered public hands of the log's tables (see the module's doc)."""

    def __init__(self, read: Read, read_after: ReadAfter | None = None, *,
                 max_tables: int = MAX_TABLES, max_record_bytes: int = MAX_RECORD_BYTES,
                 max_page_bytes: int = MAX_PAGE_BYTES) -> None:
        async def filtered(table_id: str, after: int) -> list[Stored]:
            return [s for s in await read(table_id) if s.seq > after]
        self.read_after: ReadAfter = read_after or filtered
        self.max_tables, self.max_record_bytes = max_tables, max_record_bytes
        self.max_page_bytes = max_page_bytes
        self.tables: OrderedDict[str, TableHands] = OrderedDict()
        self.pages: OrderedDict[tuple[str, int], Rendered] = OrderedDict()
        self.page_bytes = 0
        self.cold = asyncio.Semaphore(1)  # a fold from the start for an old hand
        self.folds = 0  # tables folded from their start (for tests and metrics)

    async def get(self, table_id: str, hand_no: int) -> Rendered:
        """Hand ``hand_no`` of the table rendered; NotShown with the status if it is not
        there (404), private (403), still running (409) or its log does not check (503)."""
        key = (table_id, hand_no)
        hit = self.pages.get(key)
        if hit is not None:
            self.pages.move_to_end(key)
            return hit
        record, final = await self._record(table_id, hand_no)
        rendered = render(record)
        if final and key not in self.pages and rendered.size <= self.max_page_bytes:
            self.pages[key] = rendered
            self.page_bytes += rendered.size
            while self.page_bytes > self.max_page_bytes:
                _, old = self.pages.popitem(last=False)
                self.page_bytes -= old.size
        return rendered

    async def latest(self, table_id: str) -> TableHands:
        """The table's hands folded to the log's end (its running hand, its last final one,
        its options): NotShown (404) for a table the log does not hold, (403) for a private
        one; nothing is kept of a table that is not there."""
        hands = self._table(table_id)
        async with hands.lock:
            await hands.catch_up(self.read_after)
            if not hands.commits:
                if self.tables.get(table_id) is hands:
                    del self.tables[table_id]
                raise NotShown(404, f"there is no table {table_id!r}")
            self._trim(hands)
        if hands.options is not None and hands.options.private:
            raise NotShown(403, f"table {table_id} is private: it is not shown here")
        return hands

    def _table(self, table_id: str) -> TableHands:
        hands = self.tables.get(table_id)
        if hands is None:
            hands = self.tables[table_id] = TableHands(table_id)
            self.folds += 1
        self.tables.move_to_end(table_id)
        return hands

    async def _record(self, table_id: str, hand_no: int) -> tuple[HandRecord, bool]:
        hands = self._table(table_id)
        record = hands.final(hand_no)
        if record is not None:
            return record, True
        if hand_no <= hands.dropped_to:
            return await self._cold(table_id, hand_no)
        async with hands.lock:
            if hands.final(hand_no) is None and hand_no >= hands.last_hand:
                await hands.catch_up(self.read_after)
            try:
                return self._answer(hands, hand_no)
            finally:  # (then within the bounds: this hand may be one that goes)
                if not hands.commits and self.tables.get(table_id) is hands:
                    del self.tables[table_id]  # no such table: nothing kept for it
                self._trim(hands)

    def _answer(self, hands: TableHands, hand_no: int) -> tuple[HandRecord, bool]:
        tid = hands.table_id
        if not hands.commits:
            raise NotShown(404, f"there is no table {tid!r}")
        if hands.options is not None and hands.options.private:
            raise NotShown(403, f"table {tid} is private: its hands are not shown here")
        record = hands.final(hand_no)
        final = record is not None
        if record is None and hands.last_hand == hand_no:
            try:
                record = hands.running_record()
            except ValueError as exc:
                raise NotShown(503, f"table {tid}'s log does not check: {exc}") from None
        if record is None:
            if hands.broken is not None:
                raise NotShown(503, f"table {tid}'s log does not check: {hands.broken}")
            raise NotShown(404, f"table {tid} has no hand {hand_no}")
        if not record.complete:
            raise NotShown(409, f"hand {hand_no} of table {tid} is still running")
        return record, final

    async def _cold(self, table_id: str, hand_no: int) -> tuple[HandRecord, bool]:
        """An old hand no longer kept: the table folded again from its start, keeping that
        hand only (one such fold at a time in this process)."""
        async with self.cold:
            one = TableHands(table_id, keep=lambda n: n == hand_no)
            self.folds += 1
            await one.catch_up(self.read_after)
            return self._answer(one, hand_no)

    def _trim(self, using: TableHands) -> None:
        """Within the bounds: the least recently used tables go, then the oldest hands of
        the one in use."""
        total = sum(t.bytes for t in self.tables.values())
        while len(self.tables) > 1 and (total > self.max_record_bytes
                                        or len(self.tables) > self.max_tables):
            oldest = next(iter(self.tables))
            if self.tables[oldest] is using:
                break
            total -= self.tables.pop(oldest).bytes
        if total > self.max_record_bytes:
            using.drop_oldest(self.max_record_bytes - (total - using.bytes))
