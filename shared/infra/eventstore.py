"""The event log on NATS JetStream.

Each table is one subject; one decision is one message (a ``Commit``). Appends are guarded by
``Nats-Expected-Last-Subject-Sequence`` (two writers can never interleave on a table) and carry
``Nats-Msg-Id`` derived from the client's command id (JetStream drops a retry inside the
duplicate window). Reads use batched direct gets (shared/infra/directget.py), which fold far
faster than a ``next_msg`` loop.

Where a table lives (streams, subjects, shards): shared/infra/loglayout.py; the log's streams
on the server (listing, identity, settings): shared/infra/logstreams.py; its errors:
shared/infra/storeerrors.py; header parsing: shared/infra/natsheaders.py. Their public names
are re-exported here, the log's one entry point for the rest of the code.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import APIError, NotFoundError

from . import metrics, natsconn
from .directget import READ_BATCH, READ_TIMEOUT_S, direct_batch
from .loglayout import (
    LIVE_PREFIX,
    LOG_ID,
    MAX_SHARDS,
    MIRROR_OF,
    MIRROR_PREFIX,
    MIRROR_STREAM,
    PREFIXES,
    SHARD,
    SHARD_SEQ_SPAN,
    SHARDS,
    SOURCE_SEQ,
    STREAM,
    SUBJECT_PREFIX,
    LogLayout,
    LogStream,
    Stored,
    prefix_of,
    shard_index,
    shard_of,
    shard_prefix,
    subject,
)
from .logstreams import StreamSettings, find_log, log_identity, stream_names, stream_subjects
from .natsheaders import header_lines, use_fast_headers
from .storeerrors import AppendConflict, ShardsChanged, StoreError, StoreFull, out_of_space
from .tablecache import TableCache

__all__ = [
    "LIVE_PREFIX", "LOG_ID", "MAX_SHARDS", "MIRROR_OF", "MIRROR_PREFIX", "MIRROR_STREAM",
    "PREFIXES", "READ_BATCH", "READ_TIMEOUT_S", "SHARD", "SHARDS", "SHARD_SEQ_SPAN",
    "SOURCE_SEQ", "STREAM", "SUBJECT_PREFIX", "WRONG_LAST_SEQUENCE", "AppendConflict",
    "EventStore", "LogLayout", "LogStream", "ShardsChanged", "StoreError", "StoreFull",
    "Stored", "StreamSettings", "find_log", "header_lines", "log_identity", "out_of_space",
    "prefix_of", "shard_index", "shard_of", "shard_prefix", "stream_names", "subject",
    "use_fast_headers",
]

WRONG_LAST_SEQUENCE = 10071  # JetStream's "wrong last sequence" error code


class EventStore:
    """Append and read table commits, each table in its stream of the log's
    :class:`LogLayout`. Create with :meth:`connect`.

    ``stream``: the log's (unsharded) stream name, ``POKER`` or a mirror's ``POKER_MIRROR``,
    whose layout (one stream or shards) is found on the server at first use
    (:meth:`settle`); another stream (the wallet's ledger) is that one stream alone.
    ``prefix``: the subjects of that stream's tables (default: :func:`prefix_of` the stream;
    given, the store is that one stream). ``layout``: the layout, known already (an audit
    worker's, a mirror's)."""

    def __init__(self, nc: Client, js: JetStreamContext, stream: str = STREAM,
                 prefix: str | None = None, layout: LogLayout | None = None) -> None:
        use_fast_headers(nc)
        self.nc = nc
        self.js = js
        if layout is not None:
            stream, prefix = layout.base, layout.prefix
        self.stream = stream
        self.prefix = prefix or prefix_of(stream)
        #: a stream that is not a poker log's (the wallet's ledger), or a prefix given: that
        #: stream alone, never looked for on the server
        self._fixed = layout is None and (prefix is not None or stream not in PREFIXES)
        if self._fixed:
            layout = LogLayout(stream, self.prefix)
        self._layout: LogLayout | None = layout
        #: table -> the stream it lives in, once looked up (a table never moves; forgotten
        #: with the table's other caches, shared/infra/tablecache.py)
        self._placed: TableCache[LogStream] = TableCache("placements")
        #: stream -> whether it republishes its commits live (read once per stream)
        self._live: dict[str, bool] = {}
        #: called after the connection to NATS came back (what went by meanwhile was missed)
        self._reconnected: list[Callable[[], None]] = []
        #: how many times a table's commits were read (:meth:`read`): what following the
        #: live feed saves is seen here
        self.reads = 0

    def on_reconnect(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` each time the connection comes back after a break (a follower of
        the live feed missed what was stored meanwhile); only for a store made by
        :meth:`connect`."""
        self._reconnected.append(callback)

    @classmethod
    async def connect(cls, url: str, *, stream: str = STREAM, name: str = "poker",
                      settings: StreamSettings | None = None,
                      create: bool = True, connect_timeout: float = 15.0,
                      ca: str | None = None, shards: int | None = None) -> EventStore:
        """Connect (TLS and credentials: shared/infra/natsconn.py; ``ca`` overrides the CA of
        the environment); with ``create``, make the log's streams that are missing.
        ``shards``: the layout this process is configured with (POKER_STREAM_SHARDS),
        checked against the server's now (:meth:`settle`); None: the server's, else one
        stream."""
        reconnected: list[Callable[[], None]] = []

        async def on_reconnected() -> None:
            for callback in reconnected:
                callback()

        try:
            # Reconnect for ever once connected; the first connection must come quickly.
            nc = await asyncio.wait_for(natsconn.connect(
                url, name=name, ca=ca, max_reconnect_attempts=-1, reconnect_time_wait=0.2,
                connect_timeout=2, allow_reconnect=True, reconnected_cb=on_reconnected),
                timeout=connect_timeout)
        except (TimeoutError, OSError, nats.errors.Error) as exc:
            raise StoreError(f"cannot reach NATS at {natsconn.redact(url)}: {exc!r}") from None
        store = cls(nc, nc.jetstream(timeout=5), stream)
        store._reconnected = reconnected
        try:
            if create or shards is not None:
                await store.settle(shards)
            if create:
                await store.ensure_stream(settings or StreamSettings())
        except BaseException:
            await nc.close()
            raise
        return store

    # --- the layout ----------------------------------------------------------------------

    async def settle(self, shards: int | None = None) -> LogLayout:
        """Find the log's layout on the server and keep to it. ``shards`` (the number this
        process is configured with): :class:`ShardsChanged` if shard streams exist with
        another; with none there, the layout to make (a ``POKER`` stream found beside it is
        the legacy stream). None: what the server has, else one stream."""
        if self._fixed:
            if shards not in (None, 1):
                raise ValueError(f"stream {self.stream} is not a poker log: it has no shards")
            assert self._layout is not None  # fixed at construction
            return self._layout
        names = await stream_names(self.nc)
        has = await self._shards_there(names)
        if has is not None and shards is not None and has != shards:
            raise ShardsChanged(self.stream, has, shards)
        count = has or shards or 1
        self._layout = LogLayout(self.stream, self.prefix, count,
                                 legacy=count > 1 and self.stream in names)
        return self._layout

    async def _shards_there(self, names: set[str]) -> int | None:
        """How many shard streams the log has on the server (None: none): the
        ``poker-shards`` of the first one, else (a user not allowed to look) by their names."""
        found = sorted(k for n in names if (k := shard_index(self.stream, n)) is not None)
        if not found:
            return None
        try:
            info = await self.nc.jsm().stream_info(f"{self.stream}_S{found[0]}")
            recorded = (info.config.metadata or {}).get(SHARDS, "")
            if recorded.isdigit() and int(recorded) > 1:
                return int(recorded)
        except (NotFoundError, nats.errors.TimeoutError, nats.errors.NoRespondersError):
            pass
        return found[-1] + 1

    async def layout(self) -> LogLayout:
        """The log's layout: as given or settled, else found on the server now."""
        if self._layout is None:
            return await self.settle()
        return self._layout

    def use_layout(self, layout: LogLayout) -> None:
        """Hold to ``layout`` (a mirror takes its primary's, stream for stream)."""
        self._layout = layout
        self._placed.clear()

    async def stream_of(self, table_id: str) -> LogStream:
        """The stream a table lives in: the legacy stream if its subject is there (asked once
        per table, then kept: a table never moves), else its hash's shard."""
        placed = self._placed.get(table_id)
        if placed is not None:
            return placed
        layout = self._layout or await self.layout()
        placed = layout.home(table_id)
        if layout.legacy and await self._holds(layout.unsharded, table_id):
            placed = layout.unsharded
        self._placed.put(table_id, placed)
        return placed

    async def _holds(self, stream: LogStream, table_id: str) -> bool:
        try:
            await self.js.get_last_msg(stream.name, stream.subject(table_id), direct=True)
        except NotFoundError:
            return False
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
            raise StoreError(f"cannot look table {table_id} up in stream {stream.name}: "
                             f"{exc!r}") from None
        return True

    def subject(self, table_id: str) -> str:
        """The table's subject: where its commits are once this store has read, written or
        listed it (every service reads a table before it watches or writes it), else where
        its hash puts it."""
        placed = self._placed.peek(table_id)
        if placed is None:
            placed = (self._layout or LogLayout(self.stream, self.prefix)).home(table_id)
        return placed.subject(table_id)

    async def streams(self) -> list[LogStream]:
        """The log's streams that exist on the server, in reading order."""
        return [s for s in (await self.layout()).streams if await self.info(s.name) is not None]

    # --- streams -------------------------------------------------------------------------

    async def ensure_stream(self, settings: StreamSettings,
                            metadata: dict[str, str] | None = None,
                            stream: LogStream | None = None) -> None:
        """Create the log's streams that are missing (``stream``: that one alone): file
        storage, no deletes, no purges, and ``metadata`` in each config (default: a new
        primary's identity, a random ``poker-log-id`` per stream); a shard stream also
        records ``poker-shards`` and ``poker-shard``. The legacy stream is never made."""
        layout = await self.layout()
        for s in [stream] if stream is not None else layout.shard_streams:
            meta = dict(metadata) if metadata is not None else {LOG_ID: uuid.uuid4().hex}
            if s.shard is not None:
                meta.update({SHARDS: str(layout.shards), SHARD: str(s.shard)})
            await self._ensure_one(s, settings, meta)

    async def _ensure_one(self, stream: LogStream, settings: StreamSettings,
                          metadata: dict[str, str]) -> None:
        live = self._republish(stream)
        config = js_api.StreamConfig(
            name=stream.name,
            subjects=[stream.subjects],
            storage=js_api.StorageType.FILE,
            retention=js_api.RetentionPolicy.LIMITS,
            num_replicas=settings.replicas,
            duplicate_window=settings.duplicate_window_s,
            max_bytes=settings.max_bytes,
            deny_delete=True,
            deny_purge=True,
            allow_direct=True,
            discard=js_api.DiscardPolicy.NEW,
            metadata=metadata,
            republish=live,
        )
        jsm = self.nc.jsm() if hasattr(self.nc, "jsm") else self.js
        try:
            info = await jsm.stream_info(stream.name)
        except NotFoundError:
            try:
                await jsm.add_stream(config)
            except APIError:
                try:  # made meanwhile by another process (with its own log id): it stands
                    await jsm.stream_info(stream.name)
                except NotFoundError:
                    raise StoreError(f"cannot make stream {stream.name}") from None
            return
        if live is not None and info.config.republish is None and settings.upgrade:
            # a log made before the live feed: the same stream, republishing from now on
            # (nothing stored changes)
            info.config.republish = live
            await jsm.update_stream(info.config)
            self._live.pop(stream.name, None)

    def _republish(self, stream: LogStream) -> js_api.RePublish | None:
        """The live feed of a primary log stream (every commit to ``poker.live.<table>``);
        None for another log's stream (a mirror's copy)."""
        if self.stream != STREAM:
            return None
        return js_api.RePublish(src=stream.subjects, dest=LIVE_PREFIX + ">")

    async def feed(self, table_id: str) -> tuple[str, bool]:
        """The subject to follow a table's commits on as they are stored, and whether its
        messages carry their stream sequence: ``poker.live.<table>`` where the table's stream
        republishes (:data:`LIVE_PREFIX`), else the table's own subject, whose messages are
        the commits as published (a log made before the live feed: a follower reads the log
        for their sequence)."""
        stream = await self.stream_of(table_id)
        live = self._live.get(stream.name)
        if live is None:
            info = await self.info(stream.name)
            republish = info.config.republish if info is not None else None
            live = self._live[stream.name] = (
                republish is not None and republish.dest == LIVE_PREFIX + ">"
                and not republish.headers_only)
        return (LIVE_PREFIX + table_id, True) if live else (stream.subject(table_id), False)

    async def info(self, stream: str | None = None) -> js_api.StreamInfo | None:
        """A stream's info (default: the log's first stream, its only one unless sharded),
        or None when the server holds no such stream."""
        name = stream or (await self.layout()).streams[0].name
        try:
            return await self.nc.jsm().stream_info(name)
        except NotFoundError:
            return None

    async def identity(self) -> str | None:
        """The log's identity (see the module's docstring; a sharded log's: its streams'
        identities, comma-separated, in reading order), or None without a stream."""
        found = []
        for s in (await self.layout()).streams:
            info = await self.info(s.name)
            if info is not None:
                found.append(log_identity(info))
        return ",".join(found) or None

    async def close(self) -> None:
        if not self.nc.is_closed:
            await self.nc.drain()

    # --- tables --------------------------------------------------------------------------

    async def append(self, table_id: str, data: bytes, expected_seq: int,
                     msg_id: str) -> tuple[int, bool]:
        """Append one commit if the table's last commit is still ``expected_seq`` (0: none).

        Returns the commit's stream sequence and whether it was a duplicate. A retry of an append that already landed
        (same ``msg_id``) returns the original sequence: inside the duplicate window JetStream
        acknowledges it as a duplicate or, on a single node, answers "wrong last sequence",
        after which the subject's last commit is compared by message id.
        """
        stream = await self.stream_of(table_id)
        headers = {"Nats-Expected-Last-Subject-Sequence": str(expected_seq),
                   "Nats-Msg-Id": msg_id}
        try:
            ack = await self.js.publish(stream.subject(table_id), data, headers=headers,
                                        stream=stream.name)
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                last = await self.last(table_id)
                if last is not None and last.msg_id == msg_id:
                    return last.seq, True
                raise AppendConflict(table_id, expected_seq) from None
            if out_of_space(exc):
                raise StoreFull(table_id, stream.name, exc.description or "full") from None
            raise StoreError(f"append to table {table_id} failed: {exc.description}") from exc
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError,
                nats.js.errors.NoStreamResponseError) as exc:
            raise StoreError(f"the event log did not acknowledge an append to table {table_id} "
                             f"({type(exc).__name__}): is NATS up?") from exc
        return ack.seq, bool(ack.duplicate)

    async def table_ids(self) -> list[str]:
        """Every table with at least one commit, in every stream of the log (the streams'
        subjects)."""
        return sorted(await self.table_counts())

    async def table_counts(self) -> dict[str, int]:
        """Every table with at least one commit and how many commits it has, in every
        stream of the log (the streams' subjects and their message counts)."""
        streams = (await self.layout()).streams
        found: dict[str, int] = {}
        for s in streams:
            try:
                info = await stream_subjects(self.nc, s.name, s.subjects)
            except NotFoundError:
                if len(streams) == 1:
                    raise
                continue  # a shard stream not made yet holds no table
            for subj, count in (info.state.subjects or {}).items():
                table = subj[len(s.prefix):]
                found[table] = found.get(table, 0) + count
        return found

    async def last(self, table_id: str) -> Stored | None:
        """The table's last commit, or None for a table with no events."""
        stream = await self.stream_of(table_id)
        try:
            msg = await self.js.get_last_msg(stream.name, stream.subject(table_id),
                                             direct=True)
        except NotFoundError:
            return None
        headers = msg.headers or {}
        assert msg.seq is not None  # a direct get's reply always carries Nats-Sequence
        return Stored(msg.seq, msg.data or b"", headers.get("Nats-Msg-Id", ""),
                      shard=stream.shard)

    async def read_current(self, table_id: str, after_seq: int = 0) -> list[Stored]:
        """:meth:`read`, confirmed against the stream's leader: a direct get may be answered by
        a follower that has not applied the last writes yet (on a replicated stream), so the
        subject's last sequence is asked of the leader (``STREAM.MSG.GET``, which only it
        answers) and anything the read missed is read from the leader. For reads a decision
        hangs on: a balance, a catch-up after a refused append."""
        out = await self.read(table_id, after_seq)
        last = out[-1].seq if out else after_seq
        stream = await self.stream_of(table_id)
        subj = stream.subject(table_id)
        try:
            newest = await self.js.get_msg(stream.name, subject=subj)  # the leader's
        except NotFoundError:
            return out
        assert newest.seq is not None  # a stored message has its sequence
        while last < newest.seq:  # the read came from a follower behind: the rest
            msg = await self.js.get_msg(stream.name, seq=last + 1, subject=subj, next=True)
            assert msg.seq is not None
            out.append(Stored(msg.seq, msg.data or b"", (msg.headers or {}).get(
                "Nats-Msg-Id", ""), shard=stream.shard))
            last = msg.seq
        return out

    async def read(self, table_id: str, after_seq: int = 0) -> list[Stored]:
        """Every commit of the table after stream sequence ``after_seq``, in order."""
        return [commit async for commit in self.commits(table_id, after_seq)]

    async def commits(self, table_id: str, after_seq: int = 0) -> AsyncIterator[Stored]:
        """The table's commits after stream sequence ``after_seq``, in order, read a batch
        (READ_BATCH) at a time as they are taken: a reader that stops early (a hand's end)
        reads no further than that batch."""
        self.reads += 1
        metrics.LOG_READS.inc()
        stream = await self.stream_of(table_id)
        subj = stream.subject(table_id)
        start = after_seq + 1
        while True:
            batch = await direct_batch(self.nc, stream, subj, start)
            metrics.LOG_COMMITS_READ.inc(len(batch))
            for commit in batch:
                yield commit
            if len(batch) < READ_BATCH:
                return
            start = batch[-1].seq + 1

    async def read_all(self, after_seq: int = 0, subject_filter: str | None = None,
                       stream: str | None = None) -> list[tuple[str, Stored]]:
        """Every commit of every table (or of ``subject_filter``) as (subject, commit), for
        audits and mirrors: stream by stream in reading order (the legacy stream, then the
        shards), each in stream order; :meth:`LogLayout.table_of` names a subject's table.
        ``stream``: that stream of the log alone. ``after_seq`` is a place in one stream: with
        several, name the stream."""
        layout = await self.layout()
        streams = [layout.named(stream)] if stream is not None else list(layout.streams)
        if len(streams) > 1:
            if after_seq:
                raise ValueError(f"after_seq is a sequence of one stream: name one of "
                                 f"{layout.label}")
            streams = await self.streams()
        out: list[tuple[str, Stored]] = []
        for s in streams:
            async for batch in self.batches(s, subject_filter, after_seq):
                out.extend(batch)
        return out

    async def batches(self, stream: LogStream, subject_filter: str | None = None,
                      after_seq: int = 0) -> AsyncIterator[list[tuple[str, Stored]]]:
        """One stream's commits (of ``subject_filter``, default all) after ``after_seq``, as
        they come, one batch of (subject, commit) at a time: for readers that need not hold
        the whole log (the audit)."""
        start = after_seq + 1
        filt = subject_filter or stream.subjects
        while True:
            batch = await direct_batch(self.nc, stream, filt, start, with_subject=True)
            if batch:
                yield batch
            if len(batch) < READ_BATCH:
                return
            start = batch[-1][1].seq + 1
