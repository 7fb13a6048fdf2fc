"""`pokerctl audit`'s reading: the log's commits (from NATS, stream by stream, or from an
export file) routed to one auditor per table (shared/audit/auditor.py), with each stream's
sequence check and the progress shown on stderr."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable

from shared.audit.auditor import TableAudit, TableAuditor
from shared.audit.export import load_lines
from shared.infra.eventstore import EventStore, Stored
from shared.infra.secrecy import Keyring

from .audit_pool import log_source, stream_info, stream_state
from .bots_cmd import connect_store


class Progress:
    """Events audited and events/s on stderr: a bar on a terminal, a line every few seconds
    otherwise. ``total``: messages expected (0: unknown)."""

    def __init__(self, total: int = 0, out=None, enabled: bool = True) -> None:
        self.out = out if out is not None else sys.stderr
        self.total = total
        self.enabled = enabled
        self.tty = bool(getattr(self.out, "isatty", lambda: False)())
        self.started = time.perf_counter()
        self.last = 0.0
        self.messages = 0
        self.events = 0

    def update(self, messages: int, events: int, force: bool = False) -> None:
        self.messages, self.events = messages, events
        now = time.perf_counter()
        if not self.enabled or (not force and now - self.last < (0.2 if self.tty else 5.0)):
            return
        self.last = now
        rate = events / max(now - self.started, 1e-9)
        if self.total:
            frac = min(1.0, messages / self.total)
            head = f"{messages}/{self.total} commits {frac:6.1%}"
        else:
            frac, head = 0.0, f"{messages} commits"
        text = f"{head}, {events} events, {rate:,.0f} events/s"
        if self.tty:
            bar = "#" * int(frac * 30)
            print(f"\raudit [{bar:<30}] {text}", end="", file=self.out, flush=True)
        else:
            print(f"audit: {text}", file=self.out, flush=True)

    def finish(self) -> float:
        self.update(self.messages, self.events, force=True)
        if self.enabled and self.tty:
            print(file=self.out, flush=True)
        return time.perf_counter() - self.started


def progress_wanted(args: argparse.Namespace) -> bool:
    """Progress lines go to stderr when it is a terminal, or when asked (--progress); never
    with --quiet, and never into a pipe or a file unasked (a script reads the result only)."""
    if args.quiet:
        return False
    return args.progress or sys.stderr.isatty()


class Run:
    """Commits routed to one auditor per table, with the stream-level sequence check."""

    def __init__(self, tables: set[str] | None, progress: Progress,
                 keyring: Keyring | None = None) -> None:
        self.tables = tables  # None: every table
        self.keyring = keyring  # the compliance role's: opens the sealed cards
        self.auditors: dict[str, TableAuditor] = {}
        self.progress = progress
        self.messages = 0
        self.events = 0
        self.seqs_read = 0
        self.prev_seq = 0
        self.gaps: list[str] = []

    def begin(self) -> None:
        """The next commits are another stream's (a log of several): its sequences count
        from 1 again, and its own gaps are collected (a sequence is a place in one stream)."""
        self.prev_seq, self.gaps = 0, []

    def feed(self, table_id: str, stored: Stored, contiguous: bool = False) -> None:
        if contiguous and stored.seq != self.prev_seq + 1 and len(self.gaps) < 20:
            self.gaps.append(f"stream sequences {self.prev_seq + 1}..{stored.seq - 1} are "
                             f"missing (deleted or purged)")
        self.prev_seq = stored.seq
        self.messages += 1
        if self.tables is not None and table_id not in self.tables:
            return
        auditor = self.auditors.get(table_id)
        if auditor is None:
            auditor = self.auditors[table_id] = TableAuditor(table_id, self.keyring)
        before = auditor.audit.events
        auditor.feed(stored)
        self.events += auditor.audit.events - before
        if self.messages % 256 == 0:
            self.progress.update(self.messages, self.events)

    def results(self) -> list[TableAudit]:
        return [self.auditors[t].result() for t in sorted(self.auditors)]


# --- sources -----------------------------------------------------------------------------------


async def connect(url: str, stream: str | None, timeout: float = 3.0) -> EventStore:
    """``stream`` None: the log the server holds (the primary, else a mirror's copy)."""
    return await connect_store(url, timeout, stream, name="pokerctl-audit")


async def read_stream(store: EventStore, table: str | None, run: Run | None,
                      rows: list | None = None) -> dict:
    """Read the log (one table's subject, or all: every stream of it, one after another) in
    batches into ``run`` (or ``rows``); returns the log's state and its sequence problems,
    stream by stream (:func:`~.audit_pool.log_source`)."""
    if run is None and rows is None:
        raise ValueError("read_stream reads into a run or into rows: give one")
    layout = await store.layout()
    streams = [await store.stream_of(table)] if table is not None else list(layout.streams)
    infos = [await stream_info(store, s) for s in streams]
    states = [stream_state(s.name, info) for s, info in zip(streams, infos)]
    if run is not None:
        run.progress.total = sum(st["messages"] for st in states) if table is None else 0
    for s, info, state in zip(streams, infos, states):
        if info is None:
            continue
        if run is not None:
            run.begin()
        read = 0
        async for batch in store.batches(s, s.subject(table) if table is not None else None):
            read += len(batch)
            for subject, stored in batch:
                table_id = subject[len(s.prefix):]
                if run is not None:
                    run.feed(table_id, stored, contiguous=table is None)
                elif rows is not None:
                    rows.append((table_id, stored))
        if run is not None:
            state["problems"] += run.gaps
            held = state["messages"]
            if table is None and held and read != held:
                state["problems"].append(f"{held} messages held, {read} read")
    return log_source(layout, states)


def read_file(path: str, table: str | None, run: Run) -> dict:
    with open(path, encoding="utf-8") as f:
        for table_id, stored in load_lines(f):
            if table is None or table_id == table:
                run.feed(table_id, stored)
    return {"file": path, "problems": []}


def audit_rows(rows: Iterable[tuple[str, Stored]],
               keyring: Keyring | None = None) -> list[TableAudit]:
    """Audit (table, commit) pairs in stream order (for callers holding the commits)."""
    run = Run(None, Progress(enabled=False), keyring)
    for table_id, stored in rows:
        run.feed(table_id, stored)
    return run.results()
