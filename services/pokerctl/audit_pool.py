"""`pokerctl audit --all` over several processes.

A table's log is audited in order, one commit after another, but tables are independent: the
stream's tables are spread over worker processes, balanced by their commit counts (largest
first, each to the least loaded worker). Each worker connects to JetStream, reads its tables
subject by subject (direct batch gets) and audits them with its own compliance keyring; it
reports progress and its results through a queue. The parent checks the stream as a whole: no
sequence purged or deleted (first, last and messages held), and every message held was read
by some worker.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import queue as queue_mod
from collections.abc import Callable

import nats

from shared.audit.auditor import TableAudit, TableAuditor
from shared.infra import natsconn
from shared.infra.eventstore import EventStore, StoreError
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


def _work(url: str, stream: str, tables: list[str], key_files: list[str], out) -> None:
    """A worker process: audit ``tables``; put ("progress", commits, events) now and then,
    then ("done", audits, commits read), or ("error", reason)."""
    try:
        out.put(("done", *asyncio.run(_audit(url, stream, tables, key_files, out))))
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the run
        out.put(("error", f"{type(exc).__name__}: {exc}"))


async def _audit(url: str, stream: str, tables: list[str], key_files: list[str],
                 out) -> tuple[list[TableAudit], int]:
    from .up import client_ca  # the same CA the parent checked the server against
    keyring = ComplianceKeyring.from_files(key_files) if key_files else None
    nc = await natsconn.connect(url, name="pokerctl-audit-worker", ca=client_ca(),
                                allow_reconnect=False)
    store = EventStore(nc, nc.jetstream(timeout=10), stream)
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


async def stream_tables(store: EventStore) -> tuple[dict, dict[str, int]]:
    """The stream's state (first, last, held, problems) and each table's commit count."""
    jsm = store.nc.jsm()
    try:
        info = await jsm.stream_info(store.stream, subjects_filter=store.prefix + ">")
    except nats.js.errors.NotFoundError:
        raise StoreError(f"there is no stream {store.stream!r}") from None
    st = info.state
    first, last, held = st.first_seq, st.last_seq, st.messages
    problems = sequence_problems(first, last, held)
    counts = {s[len(store.prefix):]: n for s, n in (st.subjects or {}).items()}
    source = {"stream": store.stream, "first_seq": first, "last_seq": last, "messages": held,
              "problems": problems}
    return source, counts


def audit_in_parallel(url: str, source: dict, counts: dict[str, int], key_files: list[str],
                      workers: int, progress: Callable[[int, int], None]
                      ) -> tuple[list[TableAudit], dict]:
    """Audit every table of ``counts`` over ``workers`` processes; ``progress(commits,
    events)`` is called as they come in. Returns the audits (by table id) and ``source``
    with the whole-stream problems added."""
    ctx = multiprocessing.get_context("spawn")  # no event loop or NATS socket inherited
    out = ctx.Queue()
    shares = balance(counts, workers)
    procs = [ctx.Process(target=_work, args=(url, source["stream"], share, key_files, out),
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
