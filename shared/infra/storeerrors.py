"""What can go wrong with the event log: its errors, each mapped to a gRPC status by
shared/infra/rpc.py."""

from __future__ import annotations

import re

from nats.js.errors import APIError

from .loglayout import SHARDS


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
