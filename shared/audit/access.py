"""The compliance access log: every read of the log that opens its sealed cards (the
compliance key: `pokerctl history --key`, `pokerctl audit --key`, the bots' audit) is first
recorded in its own JetStream stream, ``POKER_ACCESS``, which nobody may edit, purge or
delete. Fail closed: a read whose record cannot be written opens nothing.

A record (JSON): when, who (the operating-system user and host running the command), what
for (``audit``, ``history``, ...), which tables (``*``: every table) and hands, and the ids of
the compliance keys offered. ``pokerctl access`` is not needed to read it: it is a plain
stream (``nats stream view POKER_ACCESS``, or :func:`read_access`).
"""

from __future__ import annotations

import getpass
import json
import socket
import time
from collections.abc import Sequence

import nats.errors
import nats.js.api as js_api
import nats.js.errors
from nats.js import JetStreamContext

ACCESS_STREAM = "POKER_ACCESS"
ACCESS_PREFIX = "poker.access."


class AccessNotRecorded(RuntimeError):
    """The access log did not take the record: the cards stay sealed."""


def access_stream_config(replicas: int = 1) -> js_api.StreamConfig:
    return js_api.StreamConfig(
        name=ACCESS_STREAM, subjects=[ACCESS_PREFIX + ">"], storage=js_api.StorageType.FILE,
        retention=js_api.RetentionPolicy.LIMITS, num_replicas=replicas, deny_delete=True,
        deny_purge=True, allow_rollup_hdrs=False, allow_direct=True,
        discard=js_api.DiscardPolicy.NEW)


async def ensure_access_stream(js: JetStreamContext, replicas: int = 1) -> None:
    """Make the stream if it is missing (the admin does, before anyone reads)."""
    try:
        await js.stream_info(ACCESS_STREAM)
    except nats.js.errors.NotFoundError:
        try:
            await js.add_stream(access_stream_config(replicas))
        except nats.js.errors.BadRequestError:
            pass  # made meanwhile


def who() -> str:
    """The person running this command, as the operating system names them."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "?"
    return f"{user}@{socket.gethostname()}"


async def record_opened(js: JetStreamContext, purpose: str, tables: Sequence[str] | None,
                        key_ids: Sequence[str], hands: Sequence[int] = (),
                        person: str | None = None) -> int:
    """Record that the sealed cards of ``tables`` (None: every table) are about to be opened
    for ``purpose`` with the keys ``key_ids``; the record's stream sequence. ``person``: who
    asked (the web pages' signed-in compliance user), else the one running this command.
    AccessNotRecorded when the log does not take it (the caller must then open nothing)."""
    record = {"at_unix_ms": int(time.time() * 1000), "who": person or who(),
              "purpose": purpose,
              "tables": list(tables) if tables is not None else ["*"],
              "hands": list(hands), "key_ids": sorted(key_ids)}
    data = json.dumps(record, sort_keys=True).encode()
    subject = ACCESS_PREFIX + purpose
    for attempt in (1, 2):
        try:
            return (await js.publish(subject, data, timeout=5)).seq
        except nats.js.errors.NoStreamResponseError:
            if attempt == 2:
                break
            try:  # a server set up without it (a test's): make it if this user may
                await ensure_access_stream(js)
            except (nats.errors.Error, nats.js.errors.Error):
                break
        except (nats.errors.Error, nats.js.errors.Error, OSError) as exc:
            raise AccessNotRecorded(f"the compliance access log ({ACCESS_STREAM}) did not take "
                                    f"the record of this read ({exc or type(exc).__name__}): "
                                    f"the cards stay sealed") from None
    raise AccessNotRecorded(f"there is no compliance access log ({ACCESS_STREAM}) on this "
                            f"server: the cards stay sealed (the admin makes it: `pokerctl "
                            f"up` and deploy/init_streams.py do)")


async def read_access(js: JetStreamContext) -> list[dict]:
    """Every record of the access log, oldest first."""
    info = await js.stream_info(ACCESS_STREAM)
    out = []
    for seq in range(info.state.first_seq, info.state.last_seq + 1):
        if not info.state.messages:
            break
        msg = await js.get_msg(ACCESS_STREAM, seq, direct=True)
        assert msg.data is not None  # a direct get always carries the message's data
        out.append({"seq": seq, **json.loads(msg.data)})
    return out
