"""The log's streams on the server: listing them, finding which log a server holds, a
stream's identity and the settings a log stream is made with.

Each log stream has an identity, which a mirror compares before it writes
(shared/infra/mirror.py): a primary stream is made with a random id in its config's
``metadata`` (``poker-log-id``); a stream made before that has none, and its identity is its
name and creation time, which JetStream keeps for the stream's life (no edit, purge or delete
changes them). A mirror's streams (``POKER_MIRROR`` over ``poker.mirror.table.>``, or
``POKER_MIRROR_S<k>`` over ``poker.mirror.s<k>.table.>`` for a sharded primary) record the id
of the primary stream each copies (``poker-mirror-of``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import nats
from nats.aio.client import Client
from nats.js import api as js_api
from nats.js.errors import APIError

from .loglayout import LOG_ID, MIRROR_STREAM, STREAM, shard_index
from .storeerrors import StoreError


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


async def stream_subjects(nc: Client, stream: str, subjects: str, timeout: float = 5.0
                          ) -> js_api.StreamInfo:
    """The stream's info with every one of its subjects matching ``subjects`` and its message
    count in ``state.subjects``, every page of them: one reply holds at most 100,000 subjects
    (nats-server's JSMaxSubjectDetails), and nats-py's ``stream_info`` returns the first page
    only, so a log of more tables than that would hide the rest from the clocks, the lobby
    and the audit. New subjects during the reading shift later pages (they come twice, never
    not at all: subjects are only ever added). NotFoundError if there is no such stream."""
    counts: dict[str, int] = {}
    offset, first = 0, None  # (the pages' length, not the subjects': a page may repeat some)
    while True:
        reply = await nc.request(f"$JS.API.STREAM.INFO.{stream}", json.dumps(
            {"subjects_filter": subjects, "offset": offset}).encode(), timeout=timeout)
        body = json.loads(reply.data or b"{}")
        if "error" in body:
            APIError.from_error(body["error"])  # raises: NotFoundError for a missing stream
        info = js_api.StreamInfo.from_response(body)
        first = first or info
        page = info.state.subjects or {}
        counts.update(page)
        offset += len(page)
        if not page or offset >= int(body.get("total") or 0):
            first.state.subjects = counts
            return first


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
