"""The event log on NATS JetStream.

One stream (``POKER``) over ``poker.table.>``; each table is one subject; one decision is one
message (a ``Commit``). Appends are guarded by ``Nats-Expected-Last-Subject-Sequence`` (two
writers can never interleave on a table) and carry ``Nats-Msg-Id`` derived from the client's
command id (JetStream drops a retry inside the duplicate window). Reads use batched direct
gets, which fold far faster than a ``next_msg`` loop.

Each log has an identity, which a mirror compares before it writes (shared/infra/mirror.py):
a primary stream is made with a random id in its config's ``metadata`` (``poker-log-id``); a
stream made before that has none, and its identity is its name and creation time, which
JetStream keeps for the stream's life (no edit, purge or delete changes them). A mirror's
stream (``POKER_MIRROR`` over ``poker.mirror.table.>``) records the id of the primary it
copies (``poker-mirror-of``).
"""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from dataclasses import dataclass

import nats
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import APIError, NotFoundError

from . import natsconn

STREAM = "POKER"
SUBJECT_PREFIX = "poker.table."
#: a mirror's copy of the log: its own stream, on subjects no primary writer may publish to
MIRROR_STREAM = "POKER_MIRROR"
MIRROR_PREFIX = "poker.mirror.table."
#: the subjects of each log's stream, by stream name
PREFIXES = {STREAM: SUBJECT_PREFIX, MIRROR_STREAM: MIRROR_PREFIX}
#: stream metadata: a primary's identity, and the identity of the primary a mirror copies
LOG_ID = "poker-log-id"
MIRROR_OF = "poker-mirror-of"
WRONG_LAST_SEQUENCE = 10071  # JetStream's "wrong last sequence" error code
READ_BATCH = 512


class StoreError(RuntimeError):
    """The log could not be written or read (server down, disk full, ...)."""


class AppendConflict(StoreError):
    """Another writer appended to the table since the sequence this decision was based on."""

    def __init__(self, table_id: str, expected: int) -> None:
        super().__init__(f"table {table_id} moved past sequence {expected}")
        self.table_id = table_id
        self.expected = expected


@dataclass(frozen=True, slots=True)
class Stored:
    seq: int  # stream sequence
    data: bytes
    msg_id: str = ""
    #: in a mirror (shared/infra/mirror.py): the commit's sequence in the primary stream
    source_seq: int = 0

    @property
    def primary_seq(self) -> int:
        """The commit's sequence in the primary stream, read from the primary or a mirror."""
        return self.source_seq or self.seq


#: the header a mirror's copy carries: the commit's sequence in the primary stream
SOURCE_SEQ = "Poker-Source-Seq"


def subject(table_id: str) -> str:
    """A table's subject in the primary log."""
    return SUBJECT_PREFIX + table_id


async def find_log(nc: Client) -> str:
    """The log a reader of this server means: the primary stream if the server holds it, else
    a mirror's stream if it holds that (a mirror's server), else the primary's name."""
    jsm = nc.jsm()
    for stream in (STREAM, MIRROR_STREAM):
        try:
            await jsm.stream_info(stream)
            return stream
        except NotFoundError:
            continue
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
    """Append and read table commits. Create with :meth:`connect`. ``prefix``: the subjects
    of the stream's tables (default: :data:`PREFIXES` of the stream, else the primary's)."""

    def __init__(self, nc: Client, js: JetStreamContext, stream: str = STREAM,
                 prefix: str | None = None) -> None:
        use_fast_headers(nc)
        self.nc = nc
        self.js = js
        self.stream = stream
        self.prefix = prefix or PREFIXES.get(stream, SUBJECT_PREFIX)

    @classmethod
    async def connect(cls, url: str, *, stream: str = STREAM, name: str = "poker",
                      settings: StreamSettings | None = None,
                      create: bool = True, connect_timeout: float = 15.0,
                      ca: str | None = None) -> EventStore:
        """Connect (TLS and credentials: shared/infra/natsconn.py; ``ca`` overrides the CA of
        the environment) and, with ``create``, make the primary stream if it is missing."""
        try:
            # Reconnect for ever once connected; the first connection must come quickly.
            nc = await asyncio.wait_for(natsconn.connect(
                url, name=name, ca=ca, max_reconnect_attempts=-1, reconnect_time_wait=0.2,
                connect_timeout=2, allow_reconnect=True), timeout=connect_timeout)
        except (asyncio.TimeoutError, OSError, nats.errors.Error) as exc:
            raise StoreError(f"cannot reach NATS at {natsconn.redact(url)}: {exc!r}") from None
        store = cls(nc, nc.jetstream(timeout=5), stream)
        if create:
            await store.ensure_stream(settings or StreamSettings())
        return store

    def subject(self, table_id: str) -> str:
        return self.prefix + table_id

    async def ensure_stream(self, settings: StreamSettings,
                            metadata: dict[str, str] | None = None) -> None:
        """Create the stream if it is missing: file storage, no deletes, no purges, and
        ``metadata`` in its config (default: a new primary's identity, a random
        ``poker-log-id``)."""
        config = js_api.StreamConfig(
            name=self.stream,
            subjects=[self.prefix + ">"],
            storage=js_api.StorageType.FILE,
            retention=js_api.RetentionPolicy.LIMITS,
            num_replicas=settings.replicas,
            duplicate_window=settings.duplicate_window_s,
            max_bytes=settings.max_bytes,
            deny_delete=True,
            deny_purge=True,
            allow_direct=True,
            discard=js_api.DiscardPolicy.NEW,
            metadata=metadata if metadata is not None else {LOG_ID: uuid.uuid4().hex},
        )
        jsm = self.nc.jsm() if hasattr(self.nc, "jsm") else self.js
        try:
            await jsm.stream_info(self.stream)
        except NotFoundError:
            await jsm.add_stream(config)

    async def info(self) -> js_api.StreamInfo | None:
        """The stream's info, or None when the server holds no such stream."""
        try:
            return await self.nc.jsm().stream_info(self.stream)
        except NotFoundError:
            return None

    async def identity(self) -> str | None:
        """The log's identity (see the module's docstring), or None without a stream."""
        info = await self.info()
        return None if info is None else log_identity(info)

    async def close(self) -> None:
        if not self.nc.is_closed:
            await self.nc.drain()

    async def append(self, table_id: str, data: bytes, expected_seq: int,
                     msg_id: str) -> tuple[int, bool]:
        """Append one commit if the table's last commit is still ``expected_seq`` (0: none).

        Returns the commit's stream sequence and whether it was a duplicate. A retry of an append that already landed
        (same ``msg_id``) returns the original sequence: inside the duplicate window JetStream
        acknowledges it as a duplicate or, on a single node, answers "wrong last sequence",
        after which the subject's last commit is compared by message id.
        """
        headers = {"Nats-Expected-Last-Subject-Sequence": str(expected_seq),
                   "Nats-Msg-Id": msg_id}
        try:
            ack = await self.js.publish(self.subject(table_id), data, headers=headers,
                                        stream=self.stream)
        except APIError as exc:
            if exc.err_code == WRONG_LAST_SEQUENCE:
                last = await self.last(table_id)
                if last is not None and last.msg_id == msg_id:
                    return last.seq, True
                raise AppendConflict(table_id, expected_seq) from None
            raise StoreError(f"append to table {table_id} failed: {exc.description}") from exc
        except (nats.errors.TimeoutError, nats.errors.NoRespondersError,
                nats.js.errors.NoStreamResponseError) as exc:
            raise StoreError(f"append to table {table_id} was not acknowledged: {exc!r}") from exc
        return ack.seq, bool(ack.duplicate)

    async def table_ids(self) -> list[str]:
        """Every table with at least one commit (the stream's subjects)."""
        jsm = self.nc.jsm()
        info = await jsm.stream_info(self.stream, subjects_filter=self.prefix + ">")
        subjects = info.state.subjects or {}
        return sorted(s[len(self.prefix):] for s in subjects)

    async def last(self, table_id: str) -> Stored | None:
        """The table's last commit, or None for a table with no events."""
        try:
            msg = await self.js.get_last_msg(self.stream, self.subject(table_id), direct=True)
        except NotFoundError:
            return None
        headers = msg.headers or {}
        assert msg.seq is not None  # a direct get's reply always carries Nats-Sequence
        return Stored(msg.seq, msg.data or b"", headers.get("Nats-Msg-Id", ""))

    async def read(self, table_id: str, after_seq: int = 0) -> list[Stored]:
        """Every commit of the table after stream sequence ``after_seq``, in order."""
        out: list[Stored] = []
        start = after_seq + 1
        while True:
            batch = await self._direct_batch(self.subject(table_id), start)
            out.extend(batch)
            if len(batch) < READ_BATCH:
                return out
            start = batch[-1].seq + 1

    async def read_all(self, after_seq: int = 0, subject_filter: str | None = None,
                       ) -> list[tuple[str, Stored]]:
        """Every commit of every table (or of ``subject_filter``), for audits and mirrors."""
        out: list[tuple[str, Stored]] = []
        start = after_seq + 1
        filt = subject_filter or self.prefix + ">"
        while True:
            batch = await self._direct_batch(filt, start, with_subject=True)
            out.extend(batch)
            if len(batch) < READ_BATCH:
                return out
            start = batch[-1][1].seq + 1

    async def _direct_batch(self, subj: str, start: int, with_subject: bool = False) -> list:
        """One batched direct get: up to READ_BATCH messages from ``start`` on ``subj``,
        terminated by an end-of-batch status message."""
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
                            headers.get("Nats-Msg-Id", ""), int(headers.get(SOURCE_SEQ, 0)))
            items.append((headers["Nats-Subject"], stored) if with_subject else stored)

        sub = await self.nc.subscribe(inbox, cb=on_msg)
        try:
            request = json.dumps({"seq": start, "next_by_subj": subj, "batch": READ_BATCH})
            await self.nc.publish(f"$JS.API.DIRECT.GET.{self.stream}", request.encode(),
                                  reply=inbox)
            await asyncio.wait_for(done, timeout=10)
        except asyncio.TimeoutError:
            raise StoreError(f"reading {subj} from {start} timed out") from None
        finally:
            await sub.unsubscribe()
        return items
