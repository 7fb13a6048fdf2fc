"""`pokerctl audit --all` over several processes.

A table's log is audited in order, one commit after another, but tables are independent: the
log's tables (of every stream: one, or each shard's) are spread over worker processes,
balanced by their commit counts (largest first, each to the least loaded worker), whatever
shard they are on. Each worker connects to JetStream, reads its tables subject by subject from
the stream each lives in (direct batch gets) and audits them with its own compliance keyring;
it reports progress and its results through a queue. The parent checks each stream as a whole
(a sequence is a place in one stream): no sequence purged or deleted (first, last and
messages held), no table in two streams, and every message held was read by some worker.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import queue as queue_mod
from collections.abc import Callable

import nats
from nats.js import api as js_api

from shared.audit.auditor import TableAudit, TableAuditor
from shared.infra import natsconn
from shared.infra.eventstore import EventStore, LogLayout, LogStream, StoreError, prefix_of
from shared.infra.logstreams import stream_subjects
from shared.infra.secrecy import ComplianceKeyring

PROGRESS_EVERY = 2000  # commits between a worker's progress reports


def balance(counts: dict[str, int], workers: int) -> list[list[str]]:
    """Tables to workers: the largest first, each to the worker with the fewest commits."""
    shares: list[list[str]] = [[] for _ in range(max(1, workers))]
    load = [0] * len(shares)
    for table, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        i = load.index(min(load))
        shares[i].append(table)
        load[i] += n
    return [s for s in shares if s]


def _work(url: str, layout: LogLayout, tables: list[str], key_files: list[str], out) -> None:
    """A worker process: audit ``tables`` of the log ``layout``; put ("progress", commits,
    events) now and then, then ("done", audits, commits read), or ("error", reason)."""
    try:
        out.put(("done", *asyncio.run(_audit(url, layout, tables, key_files, out))))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the run
        out.put(("error", f"{type(exc).__name__}: {exc}"))


async def _audit(url: str, layout: LogLayout, tables: list[str], key_files: list[str],
                 out) -> tuple[list[TableAudit], int]:
    from .datadir import client_ca  # the same CA the parent checked the server against
    keyring = ComplianceKeyring.from_files(key_files) if key_files else None
    nc = await natsconn.connect_once(url, name="pokerctl-audit-worker", ca=client_ca())
    store = EventStore(nc, nc.jetstream(timeout=10), layout=layout)
    audits, read, commits, events = [], 0, 0, 0
    try:
        for table in tables:
            auditor = TableAuditor(table, keyring)
            for stored in await store.read(table):
                auditor.feed(stored)
                commits += 1
                if commits == PROGRESS_EVERY:
                    out.put(("progress", commits, auditor.audit.events - events))
                    read += commits
                    commits, events = 0, auditor.audit.events
            result = auditor.result()
            out.put(("progress", commits, result.events - events))
            read += commits
            commits = events = 0
            audits.append(result)
    finally:
        await nc.close()
    return audits, read


def sequence_problems(first: int, last: int, held: int) -> list[str]:
    """What a stream's first and last sequence and message count say was taken away."""
    problems = []
    if held and first > 1:
        problems.append(f"the stream starts at sequence {first}: 1..{first - 1} were purged")
    if held and held != last - first + 1:
        problems.append(f"{last - first + 1 - held} message(s) between {first} and {last} "
                        f"were deleted")
    return problems


def stream_state(name: str, info: js_api.StreamInfo | None) -> dict:
    """One stream's part of an audit's source: its first and last sequence, the messages it
    holds and what they say was taken away (a stream not there: all of it)."""
    if info is None:
        return {"stream": name, "first_seq": 0, "last_seq": 0, "messages": 0,
                "problems": [f"stream {name} of the log is missing (deleted, or never made)"]}
    st = info.state
    return {"stream": name, "first_seq": st.first_seq, "last_seq": st.last_seq,
            "messages": st.messages,
            "problems": sequence_problems(st.first_seq, st.last_seq, st.messages)}


def log_source(layout: LogLayout, states: list[dict]) -> dict:
    """What an audit read: one stream's state as it is; several streams' (a sharded log):
    each in ``streams``, the messages summed and every problem named by its stream."""
    if len(states) == 1:
        return states[0]
    return {"stream": layout.label, "messages": sum(s["messages"] for s in states),
            "streams": states,
            "problems": [f"{s['stream']}: {p}" for s in states for p in s["problems"]]}


async def stream_info(store: EventStore, stream: LogStream, tables: bool = False
                      ) -> js_api.StreamInfo | None:
    """A stream's info (``tables``: with its subjects), None if the server has no such
    stream; a log of one stream that is not there: StoreError, nothing to audit."""
    try:
        if tables:  # every page of them (a reply holds at most 100,000)
            return await stream_subjects(store.nc, stream.name, stream.subjects)
        return await store.nc.jsm().stream_info(stream.name)
    except nats.js.errors.NotFoundError:
        if len((await store.layout()).streams) == 1:
            raise StoreError(f"there is no stream {stream.name!r}") from None
        return None


async def stream_tables(store: EventStore) -> tuple[dict, dict[str, int]]:
    """The log's state (:func:`log_source`: each stream's first, last, held, problems) and
    each table's commit count, over every stream of the log."""
    layout = await store.layout()
    states: list[dict] = []
    counts: dict[str, int] = {}
    home: dict[str, str] = {}  # table -> the stream it is in
    for s in layout.streams:
        info = await stream_info(store, s, tables=True)
        state = stream_state(s.name, info)
        for subject, n in ((info.state.subjects if info else None) or {}).items():
            table = subject[len(s.prefix):]
            if table in home:  # never made so: each table has one stream
                state["problems"].append(f"table {table} is also in stream {home[table]}")
            home[table] = s.name
            counts[table] = counts.get(table, 0) + n
        states.append(state)
    return log_source(layout, states), counts


def audit_in_parallel(url: str, source: dict, counts: dict[str, int], key_files: list[str],
                      workers: int, progress: Callable[[int, int], None],
                      layout: LogLayout | None = None) -> tuple[list[TableAudit], dict]:
    """Audit every table of ``counts`` (of the log ``layout``, default the one stream
    ``source`` names) over ``workers`` processes; ``progress(commits, events)`` is called as
    they come in. Returns the audits (by table id) and ``source`` with the whole-log problems
    added."""
    if layout is None:
        layout = LogLayout(source["stream"], prefix_of(source["stream"]))
    ctx = multiprocessing.get_context("spawn")  # no event loop or NATS socket inherited
    out = ctx.Queue()
    shares = balance(counts, workers)
    procs = [ctx.Process(target=_work, args=(url, layout, share, key_files, out),
                         daemon=True) for share in shares]
    for p in procs:
        p.start()
    audits: list[TableAudit] = []
    commits = events = read = 0
    running = len(procs)
    try:
        while running:
            try:
                item = out.get(timeout=1.0)
            except queue_mod.Empty:
                dead = [p for p in procs if p.exitcode not in (None, 0)]
                if dead:
                    raise StoreError(f"an audit worker died (exit code "
                                     f"{dead[0].exitcode})") from None
                continue
            kind = item[0]
            if kind == "progress":
                commits += item[1]
                events += item[2]
                progress(commits, events)
            elif kind == "done":
                audits.extend(item[1])
                read += item[2]
                running -= 1
            else:
                raise StoreError(f"an audit worker failed: {item[1]}")
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
            p.join()
    held = source["messages"]
    problems = list(source["problems"])
    if held and read != held:
        problems.append(f"{held} messages held, {read} read")
    return sorted(audits, key=lambda a: a.table_id), {**source, "problems": problems,
                                                      "workers": len(procs)}
