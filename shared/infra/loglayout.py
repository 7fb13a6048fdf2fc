"""Where a table's commits live: the log's streams and subjects, and a commit as read.

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
  (``ShardsChanged``): moving tables between shards is not supported
  (shared/infra/storeerrors.py).

A stream sequence is a place in one stream: every reader that compares sequences does so per
stream (the audit's gap check, a mirror's resume point), and :attr:`Stored.log_position`
makes them unique across the streams of a log (the histories' hand ids).

Pure naming: nothing here talks to NATS (shared/infra/eventstore.py does).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import cached_property

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
