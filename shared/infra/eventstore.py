"""The event log on NATS JetStream.

Each table is one subject; one decision is one message (a ``Commit``). Appends are guarded by
``Nats-Expected-Last-Subject-Sequence`` (two writers can never interleave on a table) and carry
``Nats-Msg-Id`` derived from the client's command id (JetStream drops a retry inside the
duplicate window). Reads use batched direct gets, which fold far faster than a ``next_msg``
loop.

The log's layout (:class:`LogLayout`, ``POKER_STREAM_SHARDS``):

- one stream (``POKER`` over ``poker.table.>``, subject ``poker.table.<id>``): the default,
  and every log made before shards;
- N shard streams (``POKER_S0`` .. ``POKER_S{N-1}``, stream k over ``poker.s<k>.table.>``): a
  table lives on shard :func:`shard_of` (a stable hash of its id), so the appends of many
  tables spread over N streams (N stream leaders in a cluster). Each shard stream records
  ``poker-shards: N`` and ``poker-shard: k`` and its own ``poker-log-id``. A table never spans
  two streams: its sequence guard and hash chain are one stream's.
- a sharded log that was one ``POKER`` stream before keeps it as its *legacy* stream: a table
  whose subject is there stays there (looked up once per table per process), new tables go to
  their shard. Changing N once shard streams exist is refused at connect
  (:class:`ShardsChanged`): moving tables between shards is not supported.

A stream sequence is a place in one stream: every reader that compares sequences does so per
stream (the audit's gap check, a mirror's resume point), and :attr:`Stored.log_position`
makes them unique across the streams of a log (the histories' hand ids).

Each log stream has an identity, which a mirror compares before it writes
(shared/infra/mirror.py): a primary stream is made with a random id in its config's
``metadata`` (``poker-log-id``); a stream made before that has none, and its identity is its
name and creation time, which JetStream keeps for the stream's life (no edit, purge or delete
changes them). A mirror's streams (``POKER_MIRROR`` over ``poker.mirror.table.>``, or
``POKER_MIRROR_S<k>`` over ``poker.mirror.s<k>.table.>`` for a sharded primary) record the id
of the primary stream each copies (``poker-mirror-of``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import cached_property

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import APIError, NotFoundError

from . import metrics, natsconn
from .tablecache import TableCache

STREAM = "POKER"
SUBJECT_PREFIX = "poker.table."
#: a mirror's copy of the log: its own stream, on subjects no primary writer may publish to
MIRROR_STREAM = "POKER_MIRROR"
MIRROR_PREFIX = "poker.mirror.table."
#: the subjects of each log's (unsharded) stream, by stream name
PREFIXES = {STREAM: SUBJECT_PREFIX, MIRROR_STREAM: MIRROR_PREFIX}
#: where the primary log's streams republish every commit they store, with its stream sequence
#: (``Nats-Sequence``) and the table's commit before it (``Nats-Last-Sequence``): one subject
#: per table, whatever its stream, so that a process follows a table live without reading the
#: log (services/table/hub.py). Nobody publishes there but the streams themselves.
LIVE_PREFIX = "poker.live."
#: stream metadata: a primary's identity, and the identity of the primary a mirror copies
LOG_ID = "poker-log-id"
MIRROR_OF = "poker-mirror-of"
#: stream metadata of a shard stream: how many shards the log has, and which one this is
SHARDS = "poker-shards"
SHARD = "poker-shard"
#: the most shard streams a log may have (POKER_STREAM_SHARDS, shared/infra/config.py)
MAX_SHARDS = 64
#: shard k's sequences count from (k + 1) * this in :attr:`Stored.log_position`, clear of the
#: unsharded stream's (a stream would need a trillion commits to reach it)
SHARD_SEQ_SPAN = 10**12
WRONG_LAST_SEQUENCE = 10071  # JetStream's "wrong last sequence" error code
READ_BATCH = 512
#: how long a read of the log may take before the log is reported as not answering
READ_TIMEOUT_S = 5.0


class StoreError(RuntimeError):
    """The log could not be written or read (server down, disk full, ...)."""


#: JetStream's answers to an append when its store has no room: a stream's limit reached with
#: discard policy "new" (10077, "maximum bytes/messages exceeded"), the server's disk or
#: storage quota full ("insufficient resources", "insufficient storage resources")
_OUT_OF_SPACE_CODES = frozenset({10023, 10047})
_OUT_OF_SPACE_TEXT = re.compile(r"maximum (bytes|messages)|insufficient (storage )?resources"
                                r"|no space|disk full|storage limit", re.IGNORECASE)


def out_of_space(exc: APIError) -> bool:
    """Whether JetStream refused an append because its store has no room."""
    return exc.err_code in _OUT_OF_SPACE_CODES or bool(
        _OUT_OF_SPACE_TEXT.search(exc.description or ""))


class StoreFull(StoreError):
    """The log refused an append for lack of space: nothing of the commit was stored. The
    table waits (no action, no time-out, no step lands) until an operator frees space; a
    retry with the same command id then lands once. UNAVAILABLE (shared/infra/rpc.py), so
    that clients ride it out with their retries."""

    def __init__(self, table_id: str, stream: str, cause: str) -> None:
        super().__init__(
            f"the event log is out of space (stream {stream}: {cause}): nothing was "
            f"appended to table {table_id} and the table waits; retry with the same command "
            f"id once an operator has freed space in the log")
        self.table_id = table_id
        self.stream = stream


class ShardsChanged(StoreError):
    """The log on the server is split over another number of shard streams than this process
    is configured with: refused, since tables cannot move between shards."""

    def __init__(self, base: str, has: int, asked: int) -> None:
        asked_for = f"{asked} (one stream, {base})" if asked == 1 else str(asked)
        super().__init__(
            f"the log is split over {has} shard streams ({base}_S0..{base}_S{has - 1}, "
            f"{SHARDS}: {has}), but POKER_STREAM_SHARDS={asked_for} was asked for; moving "
            f"tables between shards is not supported: run every process with "
            f"POKER_STREAM_SHARDS={has}")
        self.has = has
        self.asked = asked


class AppendConflict(StoreError):
    """Another writer appended to the table since the sequence this decision was based on."""

    def __init__(self, table_id: str, expected: int) -> None:
        super().__init__(f"table {table_id} moved past sequence {expected}")
        self.table_id = table_id
        self.expected = expected


@dataclass(frozen=True, slots=True)
class Stored:
    seq: int  # stream sequence (of the stream the commit is in)
    data: bytes
    msg_id: str = ""
    #: in a mirror (shared/infra/mirror.py): the commit's sequence in the primary stream
    source_seq: int = 0
    #: the shard stream the commit was read from; None: an unsharded stream (``POKER``,
    #: ``POKER_MIRROR``, the legacy stream of a sharded log)
    shard: int | None = None

    @property
    def primary_seq(self) -> int:
        """The commit's sequence in the primary stream, read from the primary or a mirror."""
        return self.source_seq or self.seq

    @property
    def log_position(self) -> int:
        """:attr:`primary_seq` made unique across the streams of the log: itself in an
        unsharded stream (so the ids of a log made before shards never change), else
        ``(shard + 1) * SHARD_SEQ_SPAN`` + it. The same from the primary and a mirror."""
        if self.shard is None:
            return self.primary_seq
        return (self.shard + 1) * SHARD_SEQ_SPAN + self.primary_seq


#: the header a mirror's copy carries: the commit's sequence in the primary stream
SOURCE_SEQ = "Poker-Source-Seq"


def subject(table_id: str) -> str:
    """A table's subject in the primary log of one stream (see :meth:`EventStore.subject`
    for the subject in any layout)."""
    return SUBJECT_PREFIX + table_id


def shard_of(table_id: str, shards: int) -> int:
    """The shard of a table in a log split over ``shards`` streams: the first 8 bytes of the
    SHA-256 of the id's UTF-8 bytes, big-endian, modulo ``shards``. Stable across processes,
    machines and versions (Python's ``hash`` of a str is salted per process); a test pins
    fixed ids to fixed shards, because another function would move every table."""
    if shards == 1:
        return 0
    digest = hashlib.sha256(table_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


def shard_prefix(prefix: str, shard: int) -> str:
    """Shard ``shard``'s subject prefix from the unsharded one: ``poker.table.`` ->
    ``poker.s<k>.table.``, ``poker.mirror.table.`` -> ``poker.mirror.s<k>.table.``."""
    if prefix.endswith("table."):
        return f"{prefix[:-len('table.')]}s{shard}.table."
    return f"{prefix}s{shard}."


_SHARD_STREAM = re.compile(r"(.+)_S(0|[1-9][0-9]*)")


def shard_index(base: str, name: str) -> int | None:
    """k if ``name`` is shard stream k of the log ``base`` (``POKER_S3`` of ``POKER``)."""
    m = _SHARD_STREAM.fullmatch(name)
    return int(m[2]) if m is not None and m[1] == base else None


def prefix_of(stream: str) -> str:
    """The subject prefix of a log stream by its name (a shard's too); else the primary's."""
    if stream in PREFIXES:
        return PREFIXES[stream]
    m = _SHARD_STREAM.fullmatch(stream)
    if m is not None and m[1] in PREFIXES:
        return shard_prefix(PREFIXES[m[1]], int(m[2]))
    return SUBJECT_PREFIX


@dataclass(frozen=True, slots=True)
class LogStream:
    """One stream of a log: its name, its tables' subject prefix, its shard (None: an
    unsharded stream)."""

    name: str
    prefix: str
    shard: int | None = None

    def subject(self, table_id: str) -> str:
        return self.prefix + table_id

    @property
    def subjects(self) -> str:
        """What the stream holds (and every table subject of it matches)."""
        return self.prefix + ">"


@dataclass(frozen=True)
class LogLayout:
    """The streams a log is split over: the one place that says where a table lives.

    ``base``/``prefix``: the unsharded stream and its subject prefix (``POKER``,
    ``poker.table.``); ``shards``: 1 (that stream alone) or N shard streams
    ``<base>_S<k>``; ``legacy``: with N > 1, the unsharded stream is there too and keeps the
    tables it held before the split."""

    base: str = STREAM
    prefix: str = SUBJECT_PREFIX
    shards: int = 1
    legacy: bool = False

    def __post_init__(self) -> None:
        if not 1 <= self.shards <= MAX_SHARDS:
            raise ValueError(f"a log has from 1 to {MAX_SHARDS} shard streams, not "
                             f"{self.shards}")
        if self.legacy and self.shards == 1:
            raise ValueError("a log of one stream has no legacy stream")

    @property
    def unsharded(self) -> LogStream:
        return LogStream(self.base, self.prefix)

    @cached_property
    def shard_streams(self) -> tuple[LogStream, ...]:
        """The streams new tables go to: the unsharded one with N = 1, else the shards."""
        if self.shards == 1:
            return (self.unsharded,)
        return tuple(LogStream(f"{self.base}_S{k}", shard_prefix(self.prefix, k), k)
                     for k in range(self.shards))

    @cached_property
    def streams(self) -> tuple[LogStream, ...]:
        """Every stream of the log, in reading order: the legacy stream first, then the
        shards."""
        return ((self.unsharded,) if self.legacy else ()) + self.shard_streams

    def home(self, table_id: str) -> LogStream:
        """Where a table goes that is not in the legacy stream: its hash's shard."""
        return self.shard_streams[shard_of(table_id, self.shards)]

    def named(self, name: str) -> LogStream:
        for s in self.streams:
            if s.name == name:
                return s
        raise ValueError(f"stream {name} is not one of the log's ({self.label})")

    def table_of(self, subject: str) -> str:
        """The table id of one of the log's subjects."""
        for s in self.streams:
            if subject.startswith(s.prefix):
                return subject[len(s.prefix):]
        raise ValueError(f"{subject} is not a table subject of the log {self.label}")

    def mirrored(self, base: str = MIRROR_STREAM, prefix: str | None = None) -> LogLayout:
        """The same placement under a mirror's stream names: stream for stream."""
        return LogLayout(base, prefix or prefix_of(base), self.shards, self.legacy)

    @property
    def label(self) -> str:
        """The streams, for people: ``POKER``, ``POKER_S0..POKER_S3`` (+ the legacy one)."""
        if self.shards == 1:
            return self.base
        shards = f"{self.base}_S0..{self.base}_S{self.shards - 1}"
        return f"{self.base} + {shards}" if self.legacy else shards


async def stream_names(nc: Client) -> set[str]:
    """The names of every stream of the account (``$JS.API.STREAM.NAMES``, paged)."""
    names: set[str] = set()
    while True:
        try:
            reply = await nc.request("$JS.API.STREAM.NAMES",
                                     json.dumps({"offset": len(names)}).encode(), timeout=5)
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
            raise StoreError(f"cannot list the streams (to find the log's layout): "
                             f"{exc!r}") from None
        body = json.loads(reply.data or b"{}")
        if "error" in body:
            raise StoreError(f"cannot list the streams: {body['error'].get('description')}")
        page = body.get("streams") or []
        names.update(page)
        if not page or len(names) >= int(body.get("total") or 0):
            return names


def _has_log(names: set[str], base: str) -> bool:
    return base in names or any(shard_index(base, n) is not None for n in names)


async def find_log(nc: Client) -> str:
    """The log a reader of this server means: the primary's if the server holds its stream
    or its shard streams, else a mirror's if it holds that (a mirror's server), else the
    primary's name."""
    names = await stream_names(nc)
    for base in (STREAM, MIRROR_STREAM):
        if _has_log(names, base):
            return base
    return STREAM


def log_identity(info: js_api.StreamInfo) -> str:
    """A stream's identity: its ``poker-log-id``, else (a stream made before ids) its name
    and creation time."""
    metadata = info.config.metadata or {}
    if metadata.get(LOG_ID):
        return metadata[LOG_ID]
    created = info.created.isoformat() if info.created else "unknown"
    return f"{info.config.name}@{created}"


@dataclass(frozen=True, slots=True)
class StreamSettings:
    replicas: int = 1
    duplicate_window_s: float = 120.0
    max_bytes: int = -1
    #: a primary log stream found without the live republish (:data:`LIVE_PREFIX`) gets it:
    #: the admin's tools (`pokerctl up`, deploy's init job) upgrade a log made before it; a
    #: service, which may not edit a stream, follows such a log by reading it
    upgrade: bool = False


_NOT_TOKEN = re.compile(rb"[\s\x1c-\x1f]")  # what str.isspace() finds in an ASCII name
_NOT_TOKEN_TEXT = re.compile(r"[\s\x1c-\x1f]")
_BYTES_WHITESPACE = " \t\n\r\x0b\x0c"  # what bytes.strip() strips (str.strip strips more)


def header_lines(raw: bytes) -> dict[str, str]:
    """NATS header lines to a dict: what nats-py's ``Client._parse_header_lines`` returns, in
    a third of its time. nats-py tests every character of every name with a generator
    (``any(c.isspace() for c in key)``); a direct batch get carries eight headers a message,
    so that test was 60% of reading the log (the audit, a service's catch-up). Equivalence
    with nats-py's parser is a test (tests/unit/test_eventstore_headers.py)."""
    out: dict[str, str] = {}
    if raw.isascii():  # the usual case: decode once, split text
        for line in raw.decode("ascii").split("\r\n"):
            name, sep, value = line.partition(":")
            if sep:
                name = name.strip(_BYTES_WHITESPACE)
                if not _NOT_TOKEN_TEXT.search(name):
                    out[name] = value.strip(_BYTES_WHITESPACE)
        return out
    for raw_line in raw.split(b"\r\n"):
        raw_name, raw_sep, raw_value = raw_line.partition(b":")
        if not raw_sep:
            continue
        raw_name = raw_name.strip()
        if _NOT_TOKEN.search(raw_name):
            continue  # names are tokens: no whitespace inside
        try:
            key = raw_name.decode("ascii")
        except UnicodeDecodeError:
            continue
        out[key] = raw_value.strip().decode("utf-8", "replace")
    return out


def use_fast_headers(nc: Client) -> None:
    """Parse this connection's message headers with :func:`header_lines` (nats-py calls
    ``self._parse_header_lines``); a client without that method is left as it is."""
    if callable(getattr(type(nc), "_parse_header_lines", None)):
        # replacing the client's method on this instance is the point (mypy refuses it)
        nc._parse_header_lines = header_lines  # type: ignore[method-assign]


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
        except (asyncio.TimeoutError, OSError, nats.errors.Error) as exc:
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
        jsm = self.nc.jsm()
        found: dict[str, int] = {}
        for s in streams:
            try:
                info = await jsm.stream_info(s.name, subjects_filter=s.subjects)
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
        self.reads += 1
        metrics.LOG_READS.inc()
        stream = await self.stream_of(table_id)
        subj = stream.subject(table_id)
        out: list[Stored] = []
        start = after_seq + 1
        while True:
            batch = await self._direct_batch(subj, start, stream=stream)
            out.extend(batch)
            if len(batch) < READ_BATCH:
                return out
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
            batch = await self._direct_batch(filt, start, with_subject=True, stream=stream)
            if batch:
                yield batch
            if len(batch) < READ_BATCH:
                return
            start = batch[-1][1].seq + 1

    async def _direct_batch(self, subj: str, start: int, with_subject: bool = False,
                            stream: LogStream | None = None) -> list:
        """One batched direct get from ``stream`` (default: the store's one stream): up to
        READ_BATCH messages from ``start`` on ``subj``, terminated by an end-of-batch status
        message."""
        if stream is None:
            stream = LogStream(self.stream, self.prefix)
        shard = stream.shard
        inbox = self.nc.new_inbox()
        done = asyncio.get_running_loop().create_future()
        items: list = []

        async def on_msg(msg) -> None:
            headers = msg.headers or {}
            status = headers.get("Status")
            if status:
                if not done.done():
                    if status in ("204", "404"):
                        done.set_result(None)
                    else:
                        done.set_exception(StoreError(
                            f"read failed: {status} {headers.get('Description', '')}"))
                return
            stored = Stored(int(headers["Nats-Sequence"]), msg.data,
                            headers.get("Nats-Msg-Id", ""), int(headers.get(SOURCE_SEQ, 0)),
                            shard)
            items.append((headers["Nats-Subject"], stored) if with_subject else stored)

        sub = await self.nc.subscribe(inbox, cb=on_msg)
        try:
            request = json.dumps({"seq": start, "next_by_subj": subj, "batch": READ_BATCH})
            await self.nc.publish(f"$JS.API.DIRECT.GET.{stream.name}", request.encode(),
                                  reply=inbox)
            await asyncio.wait_for(done, timeout=READ_TIMEOUT_S)
        except asyncio.TimeoutError:
            raise StoreError(f"the event log did not answer a read of {subj} (from sequence "
                             f"{start}) within {READ_TIMEOUT_S:g} s: is NATS up?") from None
        finally:
            await sub.unsubscribe()
        return items
