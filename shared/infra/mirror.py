"""An independent copy of the event log, and its reconciliation with the primary.

The mirror is a second JetStream (its own server and store, ideally another site) holding the
same commits on the same subjects, copied in stream order. Each copy carries the primary's
stream sequence (header ``Poker-Source-Seq``) and a message id derived from it, so a copy
that is interrupted and run again resumes where it stopped and never doubles a commit. The
audit runs on the mirror as on the primary; ``reconcile`` compares the two table by table:
commit counts and a SHA-256 over every commit's exact bytes, in order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from nats.js.errors import NotFoundError

from .eventstore import SOURCE_SEQ, SUBJECT_PREFIX, EventStore


@dataclass
class MirrorReport:
    copied: int = 0
    last_source_seq: int = 0


async def last_mirrored(dst: EventStore) -> int:
    """The primary's sequence of the last commit the mirror holds (0: none)."""
    try:
        info = await dst.nc.jsm().stream_info(dst.stream)
    except NotFoundError:
        return 0
    if not info.state.messages:
        return 0
    msg = await dst.nc.jsm().get_msg(dst.stream, info.state.last_seq)
    return int((msg.headers or {}).get(SOURCE_SEQ, 0))


async def copy_new(src: EventStore, dst: EventStore) -> MirrorReport:
    """Copy every commit of the primary that the mirror does not hold yet, in stream order."""
    report = MirrorReport(last_source_seq=await last_mirrored(dst))
    for subject, stored in await src.read_all(after_seq=report.last_source_seq):
        await dst.js.publish(subject, stored.data, stream=dst.stream, headers={
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
    for subject, stored in await store.read_all():
        table = subject[len(SUBJECT_PREFIX):]
        h = hashes.setdefault(table, hashlib.sha256())
        h.update(len(stored.data).to_bytes(8, "big"))
        h.update(stored.data)
        out.setdefault(table, TableDigest()).commits += 1
    for table, h in hashes.items():
        out[table].sha256 = h.hexdigest()
    return out


async def reconcile(primary: EventStore, mirror: EventStore) -> Reconciliation:
    return Reconciliation(await digests(primary), await digests(mirror))
