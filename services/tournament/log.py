"""A tournament's log: the stream POKER_TOURNAMENTS, subject ``poker.tournament.<id>``, one
message per decision (codec.py), each appended only if the tournament's last message is still
the one the decision was made on (``Nats-Expected-Last-Subject-Sequence``, as the tables'),
with the command id as ``Nats-Msg-Id``. The state is the fold of the events
(shared/poker/tournament/state.py), kept per process and read on from where it was.

A command id seen before returns the original outcome (the fold keeps the ids it applied, with
each command's digest); seen before for another command, it is refused (CommandReused,
INVALID_ARGUMENT, as at the tables: shared/infra/repository.py ``applied``)."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field

import nats
from nats.js import api as js_api
from nats.js.errors import APIError, NotFoundError

from shared.infra.commits import link_hash
from shared.infra.eventstore import AppendConflict, EventStore, Stored, StoreError
from shared.infra.repository import CorruptLog, UnknownTable, applied, digest
from shared.infra.tablecache import TableCache
from shared.poker.errors import IllegalAction
from shared.poker.tournament import events as E
from shared.poker.tournament.state import TournamentState, apply, fold

from .codec import Commit, decode, encode

STREAM = "POKER_TOURNAMENTS"
PREFIX = "poker.tournament."
STREAM_NAME_IN_USE = 10058


class UnknownTournament(UnknownTable):
    """NOT_FOUND (as an unknown table)."""


@dataclass
class Loaded:
    state: TournamentState | None = None
    seq: int = 0  # the last commit's stream sequence (0: none)
    #: command id -> (its commit's sequence, the command's digest)
    commands: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    at_ms: int = 0  # the last commit's time
    last_hash: bytes = b""  # the last commit's link_hash: the next one's prev_hash
    chained: bool = False  # a commit so far carried a prev_hash (after it, every one must)


def read_link(stored: Stored, last_hash: bytes,
              chained: bool) -> tuple[Commit, bytes, bool]:
    """A stored commit, decoded, if it is the next link of the tournament's hash chain (its
    prev_hash the previous commit's link_hash, shared/infra/commits.py, as the tables'
    envelopes); with the chain's new last hash and whether it has begun. CorruptLog
    (DATA_LOSS) where the chain breaks: a commit changed, removed, inserted or moved.
    Commits made before the chain carry none: only before the first that does."""
    commit = decode(stored.data)
    made_before_the_chain = commit.prev_hash is None and not chained
    if not made_before_the_chain and commit.prev_hash != last_hash:
        raise CorruptLog(f"the tournament's hash chain breaks at commit {stored.seq}: a "
                         f"commit was changed, removed, inserted or reordered")
    return commit, link_hash(stored.data), not made_before_the_chain


def stream_config(replicas: int = 1) -> js_api.StreamConfig:
    return js_api.StreamConfig(
        name=STREAM, subjects=[PREFIX + ">"], storage=js_api.StorageType.FILE,
        retention=js_api.RetentionPolicy.LIMITS, num_replicas=replicas,
        duplicate_window=120.0, deny_delete=True, deny_purge=True, allow_direct=True,
        discard=js_api.DiscardPolicy.NEW, metadata={"poker-log-id": uuid.uuid4().hex})


async def ensure_stream(js, replicas: int = 1) -> None:
    """Make POKER_TOURNAMENTS if it is missing (the admin's tools do before the director
    starts; a director whose NATS user may not finds it there)."""
    try:
        await js.stream_info(STREAM)
        return
    except NotFoundError:
        pass
    try:
        await js.add_stream(stream_config(replicas))
    except APIError as exc:
        if exc.err_code != STREAM_NAME_IN_USE:
            raise StoreError(f"cannot create the stream {STREAM}: {exc.description}") from exc
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
        raise StoreError(f"the stream {STREAM} is missing and this NATS user may not create "
                         f"it") from exc


class TournamentLog:
    def __init__(self, nc, js, now_ms: Callable[[], int]) -> None:
        self.store = EventStore(nc, js, stream=STREAM, prefix=PREFIX)
        self.now_ms = now_ms
        #: the folds (shared/infra/tablecache.py: an unused one is forgotten after
        #: POKER_CACHE_IDLE_S, and the director forgets a tournament once it is over)
        self._cache: TableCache[Loaded] = TableCache("tournament folds")
        #: a tournament's lock lives while someone holds or waits for it
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = \
            weakref.WeakValueDictionary()

    def forget(self, tournament_id: str) -> None:
        """Drop the cached fold (the next load folds the tournament from its log)."""
        self._cache.pop(tournament_id, "released")

    def kept(self, tournament_id: str) -> set[str]:
        """What this process keeps of the tournament: its fold, its lock (a lock is kept
        only while someone holds or waits for it)."""
        return ({"fold"} if tournament_id in self._cache else set()) | (
            {"lock"} if tournament_id in self._locks else set())

    async def ids(self) -> list[str]:
        return await self.store.table_ids()

    async def load(self, tournament_id: str) -> Loaded:
        """The tournament caught up to the end of its log."""
        cached = self._cache.get(tournament_id) or Loaded()
        commits = await self.store.read(tournament_id, cached.seq)
        if not commits:
            return cached
        lt = dataclasses.replace(cached, commands=dict(cached.commands))
        for c in commits:
            commit, lt.last_hash, lt.chained = read_link(c, lt.last_hash, lt.chained)
            for ev in commit.events:
                lt.state = apply(lt.state, ev)
            lt.seq, lt.at_ms = c.seq, commit.at_ms
            lt.commands[commit.command_id] = (c.seq, commit.command_digest)
        newest = self._cache.peek(tournament_id)
        if newest is None or newest.seq <= lt.seq:  # (a load that finished first may be newer)
            self._cache.put(tournament_id, lt)
        return lt

    async def events(self, tournament_id: str) -> list[E.TournamentEvent]:
        """Every event of the tournament, in order (what the audit re-decides)."""
        events: list[E.TournamentEvent] = []
        last_hash, chained = b"", False
        for c in await self.store.read(tournament_id):
            commit, last_hash, chained = read_link(c, last_hash, chained)
            events += commit.events
        return events

    async def get(self, tournament_id: str) -> Loaded:
        lt = await self.load(tournament_id)
        if lt.state is None:
            raise UnknownTournament(f"there is no tournament {tournament_id!r}")
        return lt

    async def execute(self, tournament_id: str, command_id: str,
                      decide: Callable[[TournamentState | None], list[E.TournamentEvent]],
                      command_digest: bytes | None = None) -> tuple[Loaded, bool]:
        """Decide on the current fold and append; (the tournament after it, whether events
        were appended). ``command_digest``: the command's fingerprint (repository.digest of
        its kind and arguments; None: the id alone names it, as the director's own ids do).
        A command id already applied appends nothing, and CommandReused if it was applied
        for another command (repository.applied, as at the tables); a lost race decides
        once more on the new fold. The events are folded before they are appended: a
        decision the fold refuses is a bug, and never reaches the log."""
        if command_digest is None:
            command_digest = digest("system", command_id)
        lock = self._locks.get(tournament_id)
        if lock is None:
            lock = self._locks[tournament_id] = asyncio.Lock()
        async with lock:
            for _ in range(5):
                lt = await self.load(tournament_id)
                if applied(lt.commands, command_id, command_digest) is not None:
                    return lt, False
                events = decide(lt.state)
                if not events:
                    return lt, False
                fold(events, lt.state)
                data = encode(events, command_id, self.now_ms(), command_digest,
                              lt.last_hash)
                try:  # the message id names the tournament: ids repeat across tournaments
                    await self.store.append(tournament_id, data, lt.seq,
                                            f"{tournament_id}:{command_id}")
                except AppendConflict:
                    continue
                return await self.load(tournament_id), True
        raise IllegalAction(f"tournament {tournament_id} changed under every attempt: retry")
