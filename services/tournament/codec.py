"""A tournament's commits as JSON: one commit, one decision's events, each named by its class
(shared/poker/tournament/events.py) with its fields; nested values (the structure, seatings,
moves, busts) likewise. Decoding rebuilds the frozen values from their type hints, so a
field the class does not have, or a value of the wrong kind, is refused (CodecError)."""

from __future__ import annotations

import dataclasses
import enum
import json
import types
import typing
from functools import cache
from typing import Any

from shared.poker.tournament import events as E

EVENT_TYPES: dict[str, type] = {
    cls.__name__: cls for cls in typing.get_args(E.TournamentEvent)}


class CodecError(ValueError):
    """Bytes that are not a valid tournament commit."""


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    return value


@dataclasses.dataclass(frozen=True)
class Commit:
    """A stored commit: the command it carried out, when, and its events."""

    command_id: str
    at_ms: int
    events: list[E.TournamentEvent]
    #: the command's fingerprint (shared/infra/repository.py ``digest``): a retry of the
    #: id with another command is refused; b"" in commits made before it was kept
    command_digest: bytes = b""
    #: the hash chain: the previous commit's link_hash (shared/infra/commits.py; b"" for
    #: the first); None in a commit made before the chain
    prev_hash: bytes | None = None


def encode(events: list[E.TournamentEvent], command_id: str, at_ms: int,
           command_digest: bytes = b"", prev_hash: bytes = b"") -> bytes:
    return json.dumps({"command_id": command_id, "at_ms": at_ms,
                       "command_digest": command_digest.hex(), "prev_hash": prev_hash.hex(),
                       "events": [{"type": type(e).__name__, **_plain(e)} for e in events]},
                      separators=(",", ":"), sort_keys=True).encode()


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _build(tp: Any, raw: Any) -> Any:
    origin = typing.get_origin(tp)
    if origin is tuple:
        item = typing.get_args(tp)[0]
        if not isinstance(raw, list):
            raise CodecError(f"expected a list, not {raw!r}")
        return tuple(_build(item, r) for r in raw)
    if origin in (types.UnionType, typing.Union):
        raise CodecError("no unions in tournament events")
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(raw)
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _value(tp, raw)
    if tp is float and isinstance(raw, int | float) and not isinstance(raw, bool):
        return float(raw)
    if tp in (int, str, bool) and type(raw) is tp:
        return raw
    raise CodecError(f"expected {tp}, not {raw!r}")


def _value(cls: type, raw: Any) -> Any:
    if not isinstance(raw, dict):
        raise CodecError(f"{cls.__name__}: expected an object")
    hints = _hints(cls)
    unknown = set(raw) - set(hints)
    if unknown:
        raise CodecError(f"{cls.__name__} has no field {sorted(unknown)}")
    try:
        return cls(**{k: _build(hints[k], v) for k, v in raw.items()})
    except (TypeError, ValueError) as exc:
        raise CodecError(f"{cls.__name__}: {exc}") from None


def decode(data: bytes) -> Commit:
    """A stored commit."""
    try:
        raw = json.loads(data)
        out = []
        for ev in raw["events"]:
            body = dict(ev)
            cls = EVENT_TYPES[body.pop("type")]
            out.append(_value(cls, body))
        prev = raw.get("prev_hash")
        return Commit(str(raw["command_id"]), int(raw["at_ms"]), out,
                      bytes.fromhex(raw.get("command_digest", "")),
                      None if prev is None else bytes.fromhex(prev))
    except (KeyError, TypeError, ValueError, json.JSONDecodeError) as exc:
        raise CodecError(f"not a tournament commit: {exc}") from None
