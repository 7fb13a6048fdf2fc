"""An independent copy of the event log, and its reconciliation with the primary.

The mirror is a second JetStream (its own server and store, ideally another site) holding the
same commits in its own stream, ``POKER_MIRROR`` over ``poker.mirror.table.<table_id>``: no
writer of the primary log may publish there, and the mirror's NATS user may publish nowhere
else (shared/infra/natsauth.py). Commits are copied in stream order; each copy carries the
primary's stream sequence (header ``Poker-Source-Seq``) and a message id derived from it, so a
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
    StoreError,
    StreamSettings,
    log_identity,
)


class MirrorRefused(StoreError):
    """The target is not an independent copy of this primary: nothing was read or written."""


@dataclass
class MirrorReport:
    copied: int = 0
    last_source_seq: int = 0
    #: the identity of the primary log that was copied
    primary: str = ""


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


async def check_target(primary: EventStore, mirror: EventStore) -> str:
    """Refuse (:class:`MirrorRefused`) a mirror that is not an independent copy of
    ``primary``; return the primary's identity.

    Refused: the primary has no stream; the mirror's server holds a stream with the primary's
    identity (the primary's own stream, reached by any URL, or the stream the mirror would
    write to); the mirror's stream exists and records another primary, or none."""
    source = await primary.identity()
    if source is None:
        raise MirrorRefused(f"the primary has no stream {primary.stream}")
    for stream in dict.fromkeys((primary.stream, STREAM, mirror.stream)):
        if await _identity_there(mirror, stream) == source:
            raise MirrorRefused(
                f"the mirror's server holds the primary log itself (stream {stream}, log "
                f"{source}): a mirror must be another JetStream, not the primary under "
                "another address")
    info = await mirror.info()
    if info is not None:
        of = (info.config.metadata or {}).get(MIRROR_OF)
        if of != source:
            what = f"a mirror of log {of}" if of else "not a mirror (it records no primary)"
            raise MirrorRefused(f"stream {mirror.stream} on the mirror's server is {what}; "
                                f"this primary is log {source}")
    return source


async def ensure_mirror(primary: EventStore, mirror: EventStore,
                        settings: StreamSettings | None = None) -> str:
    """:func:`check_target`, then make the mirror's stream if it is missing, recording the
    primary it copies; returns the primary's identity."""
    source = await check_target(primary, mirror)
    await mirror.ensure_stream(settings or StreamSettings(), metadata={MIRROR_OF: source})
    return source


async def connect_mirror(url: str, *, name: str = "poker-mirror", ca: str | None = None,
                         connect_timeout: float = 15.0) -> EventStore:
    """The mirror's store at ``url``: its stream is made by the first :func:`copy_new`."""
    return await EventStore.connect(url, stream=MIRROR_STREAM, name=name, create=False, ca=ca,
                                    connect_timeout=connect_timeout)


async def last_mirrored(dst: EventStore) -> int:
    """The primary's sequence of the last commit the mirror holds (0: none)."""
    info = await dst.info()
    if info is None or not info.state.messages:
        return 0
    msg = await dst.nc.jsm().get_msg(dst.stream, info.state.last_seq)
    return int((msg.headers or {}).get(SOURCE_SEQ, 0))


async def copy_new(src: EventStore, dst: EventStore,
                   settings: StreamSettings | None = None) -> MirrorReport:
    """Copy every commit of the primary that the mirror does not hold yet, in stream order,
    into the mirror's stream (made if missing); refused as :func:`check_target` says."""
    report = MirrorReport(primary=await ensure_mirror(src, dst, settings))
    report.last_source_seq = await last_mirrored(dst)
    for subject, stored in await src.read_all(after_seq=report.last_source_seq):
        table = subject[len(src.prefix):]
        # stream=: JetStream refuses the copy unless it lands in the mirror's stream
        await dst.js.publish(dst.subject(table), stored.data, stream=dst.stream, headers={
            SOURCE_SEQ: str(stored.seq), "Nats-Msg-Id": f"mirror:{stored.seq}",
            "Poker-Source-Msg-Id": stored.msg_id})
        report.copied += 1
        report.last_source_seq = stored.seq
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
    if await store.info() is None:
        return out
    for subject, stored in await store.read_all():
        table = subject[len(store.prefix):]
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
