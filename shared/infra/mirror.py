"""An independent copy of the event log, and its reconciliation with the primary.

The mirror is a second JetStream (its own server and store, ideally another site) holding the
same commits in its own stream, ``POKER_MIRROR`` over ``poker.mirror.table.<table_id>`` (a
sharded primary's stream for stream, ``POKER_MIRROR_S<k>`` over
``poker.mirror.s<k>.table.<table_id>``: every table keeps its shard): no writer of the
primary log may publish there, and the mirror's NATS user may publish nowhere else
(shared/infra/natsauth.py). Commits are copied in stream order, stream by stream (a sequence
is a place in one stream); each copy carries the primary's stream sequence (header ``Poker-Source-Seq``) and a message id derived from it, so a
copy that is interrupted and run again resumes where it stopped and never doubles a commit.
The audit runs on the mirror as on the primary; ``reconcile`` compares the two table by
table: commit counts and a SHA-256 over every commit's exact bytes, in order.

Before it reads or writes anything the mirror checks its target (:func:`check_target`), by the
logs' identities (shared/infra/eventstore.py), not by URLs: a target that holds the primary
log itself (the same server under another name, or the primary's own stream) is refused, and
so is a mirror stream that copies another log. Copying the primary into itself broke its chain
for ever (its deletes are denied), and reconciling a log with itself proves nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import nats
from nats.js.errors import NotFoundError

from .eventstore import (
    MIRROR_OF,
    MIRROR_STREAM,
    SOURCE_SEQ,
    STREAM,
    EventStore,
    LogStream,
    StoreError,
    StreamSettings,
    log_identity,
)


class MirrorRefused(StoreError):
    """The target is not an independent copy of this primary: nothing was read or written."""


@dataclass
class MirrorReport:
    copied: int = 0
    #: a primary of one stream: the sequence of the last commit the mirror holds (with
    #: several streams, see ``positions``)
    last_source_seq: int = 0
    #: the identity of the primary log that was copied
    primary: str = ""
    #: each primary stream: the sequence of its last commit the mirror holds
    positions: dict[str, int] = field(default_factory=dict)


async def _identity_there(store: EventStore, stream: str) -> str | None:
    """The identity of ``stream`` on ``store``'s server (None: no such stream). A server that
    does not answer (a user not allowed to look) is a refusal: the check cannot be made."""
    try:
        return log_identity(await store.nc.jsm().stream_info(stream))
    except NotFoundError:
        return None
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
        raise MirrorRefused(f"cannot check stream {stream} on the mirror's server ({exc!r}); "
                            "its NATS user must be allowed to read stream info") from None


async def pairs(primary: EventStore, mirror: EventStore) -> list[tuple[LogStream, LogStream]]:
    """Each stream of the primary's log with the mirror's stream that copies it: the same
    placement under the mirror's names (``POKER`` -> ``POKER_MIRROR``, ``POKER_S<k>`` ->
    ``POKER_MIRROR_S<k>``), which the mirror's store holds to from then on. Refused
    (:class:`MirrorRefused`) if the mirror's server has shard streams for another number
    of shards."""
    layout = await primary.layout()
    mirrored = layout.mirrored(mirror.stream, mirror.prefix)
    found = await EventStore(mirror.nc, mirror.js, mirror.stream).layout()
    if found.shards > 1 and found.shards != layout.shards:
        raise MirrorRefused(f"the mirror's server holds {found.label}, a copy of a log of "
                            f"{found.shards} shards; this primary is {layout.label}")
    mirror.use_layout(mirrored)
    return list(zip(layout.streams, mirrored.streams))


async def _checked(primary: EventStore, mirror: EventStore
                   ) -> list[tuple[LogStream, LogStream, str]]:
    """:func:`check_target`'s checks: each (primary stream, mirror stream, the primary
    stream's identity)."""
    out = []
    for source_stream, target in await pairs(primary, mirror):
        info = await primary.info(source_stream.name)
        if info is None:
            raise MirrorRefused(f"the primary has no stream {source_stream.name}")
        source = log_identity(info)
        for stream in dict.fromkeys((source_stream.name, STREAM, target.name)):
            if await _identity_there(mirror, stream) == source:
                raise MirrorRefused(
                    f"the mirror's server holds the primary log itself (stream {stream}, log "
                    f"{source}): a mirror must be another JetStream, not the primary under "
                    "another address")
        out.append((source_stream, target, source))
    for _, target, source in out:
        there = await mirror.info(target.name)
        if there is not None:
            of = (there.config.metadata or {}).get(MIRROR_OF)
            if of != source:
                what = f"a mirror of log {of}" if of else "not a mirror (it records no primary)"
                raise MirrorRefused(f"stream {target.name} on the mirror's server is {what}; "
                                    f"this primary is log {source}")
    return out


async def check_target(primary: EventStore, mirror: EventStore) -> str:
    """Refuse (:class:`MirrorRefused`) a mirror that is not an independent copy of
    ``primary``; return the primary's identity (:meth:`EventStore.identity`).

    Refused, for any stream of the primary (its one stream, or each shard): the primary has
    no such stream; the mirror's server holds a stream with its identity (the primary's own
    stream, reached by any URL, or the stream the mirror would write to); the mirror's
    stream for it exists and records another primary stream, or none."""
    return ",".join(source for _, _, source in await _checked(primary, mirror))


async def _ensure(primary: EventStore, mirror: EventStore, settings: StreamSettings | None
                  ) -> tuple[str, list[tuple[LogStream, LogStream, str]]]:
    checked = await _checked(primary, mirror)
    for _, target, source in checked:
        await mirror.ensure_stream(settings or StreamSettings(), metadata={MIRROR_OF: source},
                                   stream=target)
    return ",".join(source for _, _, source in checked), checked


async def ensure_mirror(primary: EventStore, mirror: EventStore,
                        settings: StreamSettings | None = None) -> str:
    """:func:`check_target`, then make the mirror's streams that are missing, each recording
    the primary stream it copies; returns the primary's identity."""
    return (await _ensure(primary, mirror, settings))[0]


async def connect_mirror(url: str, *, name: str = "poker-mirror", ca: str | None = None,
                         connect_timeout: float = 15.0) -> EventStore:
    """The mirror's store at ``url``: its streams are made by the first :func:`copy_new`."""
    return await EventStore.connect(url, stream=MIRROR_STREAM, name=name, create=False, ca=ca,
                                    connect_timeout=connect_timeout)


async def last_mirrored(dst: EventStore, stream: str | None = None) -> int:
    """The primary's sequence of the last commit the mirror's ``stream`` (default: its first)
    holds (0: none)."""
    name = stream or (await dst.layout()).streams[0].name
    info = await dst.info(name)
    if info is None or not info.state.messages:
        return 0
    msg = await dst.nc.jsm().get_msg(name, info.state.last_seq)
    return int((msg.headers or {}).get(SOURCE_SEQ, 0))


async def copy_new(src: EventStore, dst: EventStore,
                   settings: StreamSettings | None = None) -> MirrorReport:
    """Copy every commit of the primary that the mirror does not hold yet, stream by stream
    (each into its mirror stream, in stream order; made if missing); refused as
    :func:`check_target` says. A sequence is a place in one stream, so each mirror stream
    resumes from its own last copy."""
    identity, checked = await _ensure(src, dst, settings)
    report = MirrorReport(primary=identity)
    for source_stream, target, _ in checked:
        last = await last_mirrored(dst, target.name)
        for subject, stored in await src.read_all(after_seq=last, stream=source_stream.name):
            table = subject[len(source_stream.prefix):]
            # stream=: JetStream refuses the copy unless it lands in the mirror's stream
            await dst.js.publish(target.subject(table), stored.data, stream=target.name,
                                 headers={SOURCE_SEQ: str(stored.seq),
                                          "Nats-Msg-Id": f"mirror:{stored.seq}",
                                          "Poker-Source-Msg-Id": stored.msg_id})
            report.copied += 1
            last = stored.seq
        report.positions[source_stream.name] = last
    if len(report.positions) == 1:
        report.last_source_seq = next(iter(report.positions.values()))
    return report


@dataclass
class TableDigest:
    commits: int = 0
    sha256: str = ""


@dataclass
class Reconciliation:
    primary: dict[str, TableDigest] = field(default_factory=dict)
    mirror: dict[str, TableDigest] = field(default_factory=dict)

    @property
    def differences(self) -> list[str]:
        out = []
        for table in sorted(set(self.primary) | set(self.mirror)):
            a, b = self.primary.get(table), self.mirror.get(table)
            if a is None or b is None:
                out.append(f"table {table}: only in the {'mirror' if a is None else 'primary'}")
            elif a.commits != b.commits:
                out.append(f"table {table}: {a.commits} commits in the primary, {b.commits} in "
                           f"the mirror")
            elif a.sha256 != b.sha256:
                out.append(f"table {table}: the commits differ (digest {a.sha256[:12]} vs "
                           f"{b.sha256[:12]})")
        return out

    @property
    def ok(self) -> bool:
        return not self.differences


async def digests(store: EventStore) -> dict[str, TableDigest]:
    """Per table: how many commits, and a SHA-256 chained over their exact bytes in order."""
    out: dict[str, TableDigest] = {}
    hashes: dict[str, hashlib._Hash] = {}
    if not await store.streams():
        return out
    layout = await store.layout()
    for subject, stored in await store.read_all():
        table = layout.table_of(subject)
        h = hashes.setdefault(table, hashlib.sha256())
        h.update(len(stored.data).to_bytes(8, "big"))
        h.update(stored.data)
        out.setdefault(table, TableDigest()).commits += 1
    for table, h in hashes.items():
        out[table].sha256 = h.hexdigest()
    return out


async def reconcile(primary: EventStore, mirror: EventStore) -> Reconciliation:
    """Compare the two logs table by table, once :func:`check_target` accepts the mirror (a
    log compared with itself would always agree)."""
    await check_target(primary, mirror)
    return Reconciliation(await digests(primary), await digests(mirror))
