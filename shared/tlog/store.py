"""Where the notary (services/notary) keeps the hands' Merkle log and its checkpoints.

- ``POKER_HANDS`` over ``poker.hands.>``: one message per leaf (shared/tlog/hands.py), in
  tree order: the leaf of index i is the message of stream sequence i + 1. A leaf of a hand
  of log stream S (``POKER``, ``POKER_S3``) is on subject ``poker.hands.S`` and carries the
  stream sequence of the hand's last commit (``Poker-Log-Seq``) and where to read S again
  to find every hand running then (``Poker-Resume-Seq``): a notary that starts takes its
  place in each log stream from its own stream's last leaf of it. Every append is guarded
  by ``Nats-Expected-Last-Sequence`` (the tree's size): two writers never interleave.
- ``POKER_CHECKPOINTS`` over ``poker.checkpoints``: each signed (and cosigned) checkpoint,
  in order; the last is the latest.

File storage, no deletes, no purges (as the log). The notary's NATS user may make these
streams and write them, and nothing else (shared/infra/natsauth.py).
"""

from __future__ import annotations

import nats
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import NotFoundError

from shared.infra.eventstore import EventStore, LogStream

HANDS_STREAM = "POKER_HANDS"
HANDS_PREFIX = "poker.hands."
CHECKPOINT_STREAM = "POKER_CHECKPOINTS"
CHECKPOINT_SUBJECT = "poker.checkpoints"
LOG_SEQ = "Poker-Log-Seq"
RESUME_SEQ = "Poker-Resume-Seq"
#: the lease bucket of the notaries (one of them keeps the log at a time)
NOTARY_BUCKET = "POKER_NOTARY"


def hands_subject(log_stream: str) -> str:
    return HANDS_PREFIX + log_stream


def _config(name: str, subjects: list[str], replicas: int, what: str) -> js_api.StreamConfig:
    return js_api.StreamConfig(
        name=name, subjects=subjects, storage=js_api.StorageType.FILE,
        retention=js_api.RetentionPolicy.LIMITS, num_replicas=replicas,
        duplicate_window=120.0, deny_delete=True, deny_purge=True, allow_direct=True,
        discard=js_api.DiscardPolicy.NEW, description=what)


async def ensure_streams(js: JetStreamContext, replicas: int = 1) -> None:
    """Make POKER_HANDS and POKER_CHECKPOINTS if they are missing."""
    for name, config in (
            (HANDS_STREAM, _config(HANDS_STREAM, [HANDS_PREFIX + ">"], replicas,
                                   "the hands' Merkle log: one leaf per finished hand")),
            (CHECKPOINT_STREAM, _config(CHECKPOINT_STREAM, [CHECKPOINT_SUBJECT], replicas,
                                        "signed checkpoints of the hands' Merkle log"))):
        try:
            await js.stream_info(name)
        except NotFoundError:
            try:
                await js.add_stream(config)
            except nats.js.errors.BadRequestError:
                await js.stream_info(name)  # made meanwhile


async def read_leaves(store: EventStore, after: int = 0) -> list[bytes]:
    """Every leaf of POKER_HANDS in tree order after the first ``after`` (none: the stream is
    not there). Raises ValueError if the stream's sequences are not consecutive (a leaf
    missing)."""
    stream = LogStream(HANDS_STREAM, HANDS_PREFIX)
    try:
        await store.nc.jsm().stream_info(HANDS_STREAM)
    except NotFoundError:
        return []
    out: list[bytes] = []
    async for batch in store.batches(stream, after_seq=after):
        for _, stored in batch:
            if stored.seq != after + len(out) + 1:
                raise ValueError(f"{HANDS_STREAM} lacks the leaves {after + len(out) + 1}.."
                                 f"{stored.seq - 1}")
            out.append(stored.data)
    return out


async def last_leaf_of(js: JetStreamContext, log_stream: str) -> tuple[int, int] | None:
    """(Poker-Log-Seq, Poker-Resume-Seq) of the last leaf of a hand of ``log_stream`` (None:
    no leaf of it yet)."""
    try:
        msg = await js.get_last_msg(HANDS_STREAM, hands_subject(log_stream), direct=True)
    except (NotFoundError, nats.errors.NoRespondersError):
        return None
    headers = msg.headers or {}
    return int(headers[LOG_SEQ]), int(headers[RESUME_SEQ])


async def latest_checkpoint(js: JetStreamContext) -> str | None:
    """The latest stored checkpoint's text (None: none yet, or no such stream)."""
    try:
        msg = await js.get_last_msg(CHECKPOINT_STREAM, CHECKPOINT_SUBJECT, direct=True)
    except (NotFoundError, nats.errors.NoRespondersError):
        return None
    return (msg.data or b"").decode()
