"""Reading the log: JetStream's batched direct get (``$JS.API.DIRECT.GET``), which folds a
table far faster than a ``next_msg`` loop. Any replica of a stream may answer it."""

from __future__ import annotations

import asyncio
import json

from nats.aio.client import Client

from .loglayout import SOURCE_SEQ, LogStream, Stored
from .storeerrors import StoreError

READ_BATCH = 512
#: how long a read of the log may take before the log is reported as not answering
READ_TIMEOUT_S = 5.0


async def direct_batch(nc: Client, stream: LogStream, subj: str, start: int,
                       with_subject: bool = False) -> list:
    """One batched direct get from ``stream``: up to READ_BATCH messages from ``start`` on
    ``subj``, terminated by an end-of-batch status message; each a :class:`Stored`, or
    (subject, :class:`Stored`) ``with_subject``."""
    shard = stream.shard
    inbox = nc.new_inbox()
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

    sub = await nc.subscribe(inbox, cb=on_msg)
    try:
        request = json.dumps({"seq": start, "next_by_subj": subj, "batch": READ_BATCH})
        await nc.publish(f"$JS.API.DIRECT.GET.{stream.name}", request.encode(), reply=inbox)
        await asyncio.wait_for(done, timeout=READ_TIMEOUT_S)
    except TimeoutError:
        raise StoreError(f"the event log did not answer a read of {subj} (from sequence "
                         f"{start}) within {READ_TIMEOUT_S:g} s: is NATS up?") from None
    finally:
        await sub.unsubscribe()
    return items
