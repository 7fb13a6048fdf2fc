"""A stored commit, parsed once: the one place the log's bytes become protobuf.

A commit (``pb.Commit``) holds its events as the exact bytes of each ``EventEnvelope`` (the
hash chain is over those bytes: shared/infra/repository.py). :func:`parse_commit` parses the
commit and its envelopes; its events are decoded when first asked for (with the reader's
keyring, shared/infra/secrecy.py) and kept for that keyring, so every reader (the fold, the
auditor, the history, the CLI) takes what it needs from one parse::

    parsed = parse_commit(stored.data)
    parsed.commit.command_digest
    for k, raw in enumerate(parsed.raws):  # the envelopes' bytes, as hashed
        env = parsed.envelope(k)  # CommitParseError(index=k) if they do not parse
        event = parsed.event(k, keyring)  # CodecError if it does not decode

The repository's fold, which takes each commit once, in order, and stops at the first bad
envelope, reads :func:`read_envelopes` instead (the same parse, without the keeping).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from poker.events.v1 import events_pb2 as pb

from .codec import CodecError, decode_body
from .secrecy import Keyring

_UNSET = object()
_ENVELOPE = pb.EventEnvelope.FromString
_COMMIT = pb.Commit.FromString


def link_hash(raw: bytes) -> bytes:
    """What the next link of a log's hash chain carries as its ``prev_hash``: the SHA-256 of
    this link's exact bytes (a table's event envelope, a tournament's commit); the first
    link carries b"". A link changed, removed, inserted or moved breaks the chain there."""
    return hashlib.sha256(raw).digest()


class CommitParseError(CodecError):
    """Bytes that do not parse as protobuf: the commit (``index`` None) or its event
    ``index``; ``cause`` is protobuf's reason."""

    def __init__(self, index: int | None, cause: str) -> None:
        self.index = index
        self.cause = cause
        what = "the commit" if index is None else f"event {index} of the commit"
        super().__init__(f"{what} does not parse: {cause}")


class ParsedCommit:
    """One commit's message, its envelopes (each parsed once) and its events (decoded on
    demand, kept for the last keyring asked with)."""

    __slots__ = ("commit", "raws", "_envelopes", "_bad", "_events", "_keyring")

    def __init__(self, commit: pb.Commit) -> None:
        self.commit = commit
        #: the envelopes' exact bytes (what the hash chain hashes)
        self.raws: Sequence[bytes] = commit.events
        self._bad: int | None = None  # the first envelope that does not parse
        try:  # every reader takes them all: parsed here, in one pass
            self._envelopes: list[Any] = _envelopes(self.raws)
        except CommitParseError:
            self._envelopes = [self._parsed_or_why(k, raw) for k, raw in enumerate(self.raws)]
        self._events: list[Any] = []
        self._keyring: object = _UNSET

    def _parsed_or_why(self, k: int, raw: bytes) -> Any:
        """Envelope ``k``, or why it does not parse (raised by :meth:`envelope`)."""
        try:
            return _ENVELOPE(raw)
        except Exception as exc:  # protobuf's DecodeError
            if self._bad is None:
                self._bad = k
            return str(exc)

    def __len__(self) -> int:
        return len(self._envelopes)

    def envelope(self, k: int) -> pb.EventEnvelope:
        """Envelope ``k`` (CommitParseError if its bytes do not parse)."""
        env = self._envelopes[k]
        if type(env) is str:
            raise CommitParseError(k, env)
        return env

    def envelopes(self) -> list[pb.EventEnvelope]:
        """Every envelope, in order (CommitParseError at the first that does not parse).
        The list is the commit's own: read it, do not change it."""
        if self._bad is not None:
            raise CommitParseError(self._bad, self._envelopes[self._bad])
        return self._envelopes

    def event(self, k: int, keyring: Keyring | None = None) -> object:
        """Event ``k`` decoded, opening what ``keyring`` can (CodecError if it does not parse or
        decode). Kept for this keyring: asking with another one decodes again."""
        if keyring is not self._keyring:
            self._keyring = keyring
            self._events = [None] * len(self._envelopes)
        event = self._events[k]
        if event is None:
            event = self._events[k] = decode_body(self.envelope(k), keyring)
        return event

    def decoded(self, keyring: Keyring | None, events: list[Any]) -> None:
        """Keep ``events``, every event of the commit decoded with ``keyring`` by a reader
        that decoded them in its own pass (the fold), for :meth:`events` to return."""
        self._keyring, self._events = keyring, events

    def events(self, keyring: Keyring | None = None) -> list[object]:
        """Every event, in order (see :meth:`event`): CommitParseError or CodecError at the
        first that does not parse or decode. The list is the commit's own: do not change
        it."""
        if keyring is self._keyring and None not in self._events:
            return self._events
        events = [decode_body(env, keyring) for env in self.envelopes()]
        self._keyring, self._events = keyring, events
        return events


def parse_commit(data: bytes) -> ParsedCommit:
    """A stored commit's bytes parsed (CommitParseError if they do not parse)."""
    return ParsedCommit(_commit(data))


def read_envelopes(data: bytes) -> tuple[pb.Commit, list[pb.EventEnvelope]]:
    """A stored commit's message and its envelopes, parsed in one pass, for a reader that
    takes them in order and stops at the first that does not parse (CommitParseError): the
    fold of the repository, on its hot path, without :class:`ParsedCommit`'s keeping."""
    commit = _commit(data)
    return commit, _envelopes(commit.events)


def _commit(data: bytes) -> pb.Commit:
    try:
        return _COMMIT(data)
    except Exception as exc:  # protobuf's DecodeError
        raise CommitParseError(None, str(exc)) from None


def _envelopes(raws: Sequence[bytes]) -> list[pb.EventEnvelope]:
    try:
        return [_ENVELOPE(raw) for raw in raws]
    except Exception:  # protobuf's DecodeError: find which, and why
        for k, raw in enumerate(raws):
            try:
                _ENVELOPE(raw)
            except Exception as exc:
                raise CommitParseError(k, str(exc)) from None
        raise
