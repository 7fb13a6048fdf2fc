"""Tables loaded from the log, and decisions appended to it.

A service method is: load the table (the fold of its commits, cached per process and caught
up by sequence), make one pure decision, append its events as one commit guarded by the
sequence it was based on. A conflict re-folds and re-decides once; a command id seen before
returns the original outcome (also after JetStream's duplicate window, because the fold keeps
every command id it has applied).

A table whose log does not check (a broken hash chain, a commit that does not parse or fold)
is stopped: it is reported once as critical (and counted, ``poker_tables_stopped_total``), and
from then on every load of it refuses (DATA_LOSS) without reading, so nothing is served or
decided on evidence that does not hold, until an operator has audited it.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import structlog
from poker.events.v1 import events_pb2 as pb

from shared.infra.randomness import entropy
from shared.poker.clock import TurnClock, clock_after
from shared.poker.errors import InvalidEvent
from shared.poker.fold import apply
from shared.poker.state import TableState

from . import metrics, tablecache
from .codec import CodecError, decode_body, encode_body
from .commits import (
    CommitParseError,
    ParsedCommit,
    link_hash,
    parse_commit,
    read_envelopes,
)
from .eventstore import AppendConflict, EventStore, Stored
from .secrecy import Keyring, Sealing
from .tablecache import TableCache


class UnknownTable(LookupError):
    pass


def on_table(table_id: str,
             decide: Callable[[TableState], list]) -> Callable[[TableState | None], list]:
    """A decide function for :meth:`TableRepository.execute` from a decision on a table that
    exists (all but the creation): UnknownTable (NOT_FOUND) on a table that does not."""
    def on(table: TableState | None) -> list:
        if table is None:
            raise UnknownTable(f"there is no table {table_id!r}")
        return decide(table)
    return on


class CommandReused(ValueError):
    """A command id already used for a different command."""


class Aborted(RuntimeError):
    """Other writers won the table twice in a row."""


class CorruptLog(RuntimeError):
    """The table's log does not fold: a broken hash chain, an undecodable or impossible event."""


@dataclass(frozen=True, slots=True)
class Outcome:
    version: int  # the table's last commit sequence after the command
    events: int  # events appended (0 for a duplicate)
    duplicate: bool = False
    commit: bytes = b""  # the commit appended


@dataclass
class LoadedTable:
    """A table's fold as of commit ``seq``. Replaced, never mutated, when it moves on; but
    for ``commands``, the index of the command ids applied (id -> (seq, digest)), which the
    folds of one table share and which grows in place: copying it per commit made folding a
    table quadratic in its commits (a third of the fold of a 4,400-commit table). An earlier
    fold of the table may so know of later commands; each is one the log holds (a fold that
    turns out not to be the log's is dropped with its index, TableRepository.load)."""

    state: TableState | None = None
    seq: int = 0
    last_hash: bytes = b""
    events: int = 0
    commands: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    clock: TurnClock | None = None  # the decision being timed, from the commits' times
    commits: int = 0  # how many commits the fold holds (the table's count in the log)


def digest(*parts: object) -> bytes:
    """A command's fingerprint: its kind and arguments."""
    return hashlib.sha256(repr(parts).encode()).digest()


def applied(commands: Mapping[str, tuple[int, bytes]], command_id: str,
            command_digest: bytes) -> int | None:
    """The sequence of the commit that applied ``command_id`` (None: not applied); a retry
    of it gets that commit's outcome. CommandReused if the id was applied for a different
    command (another digest): a client's id names one command only."""
    seen = commands.get(command_id)
    if seen is None:
        return None
    if seen[1] != command_digest:
        raise CommandReused(f"command id {command_id!r} was already used for a different "
                            f"command: use a new id for a new command")
    return seen[0]


def read_commit(stored: Stored) -> ParsedCommit:
    """A stored commit parsed (:func:`~shared.infra.commits.parse_commit`); CorruptLog if it
    does not parse."""
    try:
        return parse_commit(stored.data)
    except CommitParseError as exc:
        raise CorruptLog(f"commit {stored.seq} does not parse: {exc.cause}") from None


def fold_commit(lt: LoadedTable, stored: Stored, keyring: Keyring | None = None,
                parsed: ParsedCommit | None = None) -> LoadedTable:
    """Fold one stored commit: check the hash chain, decode (opening what ``keyring`` can),
    apply every event. ``parsed``: the commit already parsed from ``stored.data``
    (:func:`read_commit`), so it is not parsed again; its events are decoded with
    ``keyring`` once, for the caller too."""
    try:
        if parsed is None:
            commit, envelopes = read_envelopes(stored.data)
        else:
            commit, envelopes = parsed.commit, parsed.envelopes()
    except CommitParseError as exc:
        what = "" if exc.index is None else ": an event"
        raise CorruptLog(f"commit {stored.seq}{what} does not parse: {exc.cause}") from None
    state, last_hash, count = lt.state, lt.last_hash, lt.events
    decoded: list[object] = []
    command_digest = commit.command_digest
    for raw, env in zip(commit.events, envelopes):
        if env.prev_hash != last_hash:
            raise CorruptLog(f"the hash chain breaks at commit {stored.seq} (event {count + 1})")
        if env.command_digest and env.command_digest != command_digest:
            # the chained digest (inside the envelope) is the command's; the commit's copy
            # is outside the chain and was changed
            raise CorruptLog(f"commit {stored.seq}: its command digest is not the one its "
                             f"events carry (event {count + 1})")
        try:
            event = decode_body(env, keyring)
            state = apply(state, event)
        except (CodecError, InvalidEvent) as exc:
            raise CorruptLog(f"commit {stored.seq}: {exc}") from None
        decoded.append(event)
        last_hash = link_hash(raw)
        count += 1
    if parsed is not None:
        parsed.decoded(keyring, decoded)  # for the caller: decoded once
    last = envelopes[-1] if envelopes else None
    command_id = last.command_id if last is not None else ""
    at_ms = last.occurred_at_unix_ms if last is not None else 0
    commands = lt.commands
    if command_id:
        commands[command_id] = (stored.seq, commit.command_digest)
    return LoadedTable(state, stored.seq, last_hash, count, commands,
                       clock_after(lt.clock, state, decoded, at_ms), lt.commits + 1)


def wall_clock_ms() -> int:
    """Milliseconds since the epoch: the default time source of commits."""
    return int(time.time() * 1000)


def build_commit(table_id: str, hand_no: int, command_id: str, command_digest: bytes,
                 producer: str, events: list, prev_hash: bytes,
                 now_ms: int | None = None, sealing: Sealing | None = None) -> bytes:
    """Envelope each event, chain them by hash, and pack them as one commit made at
    ``now_ms`` (default: the wall clock). Every envelope carries ``command_digest`` (as the
    commit does), so the hash chain covers the command too. Nothing is ordered by that time; the action clock
    (shared/poker/clock.py) measures decisions from it. ``sealing``: the dealer's, to seal
    secret cards (shared/infra/secrecy.py)."""
    commit = pb.Commit(command_digest=command_digest)
    if now_ms is None:
        now_ms = wall_clock_ms()
    for event in events:
        env = pb.EventEnvelope(event_id=entropy(16).hex(), table_id=table_id, hand_no=hand_no,
                               command_id=command_id, occurred_at_unix_ms=now_ms,
                               prev_hash=prev_hash, producer=producer,
                               command_digest=command_digest)
        encode_body(event, env, sealing)
        raw = env.SerializeToString(deterministic=True)
        commit.events.append(raw)
        prev_hash = link_hash(raw)
    return commit.SerializeToString(deterministic=True)


class TableRepository:
    """Per-process cache of folded tables over an :class:`EventStore`.

    ``now_ms``: the time source of the commits it appends (tests inject a fake clock).
    ``keyring``: what this process may open of sealed cards (the dealer's running hands);
    without one, secret cards fold as unknown.
    ``recent``: how many of each table's last commits to keep (the table service's: it sends
    the services it calls the commits they have not folded yet, :meth:`tail`); 0: none.

    The folds (with their command index) and the recent commits are kept in
    :class:`~shared.infra.tablecache.TableCache`s: a table whose fold turns vacant or closed
    leaves every cache of the process at once (:meth:`_cache`), an idle one after
    ``POKER_CACHE_IDLE_S``, and at most ``POKER_CACHE_TABLES`` stay, least recently used out
    first; the next load folds it again from the log.
    """

    def __init__(self, store: EventStore, producer: str,
                 now_ms: Callable[[], int] | None = None,
                 keyring: Keyring | None = None, recent: int = 0) -> None:
        self.store = store
        self.keyring = keyring
        self.producer = producer
        self.now_ms: Callable[[], int] = now_ms or wall_clock_ms
        self._tables: TableCache[LoadedTable] = TableCache("folds")
        #: a table's lock lives while someone holds or waits for it
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = \
            weakref.WeakValueDictionary()
        self._stopped: dict[str, str] = {}  # table -> why its log does not check
        self._recent_max = recent
        self._recent: TableCache[deque[Stored]] = TableCache("recent commits")

    def keep_recent(self, commits: int) -> None:
        """Keep each table's last ``commits`` commits from now on (see ``recent``)."""
        self._recent_max = commits
        for t in self._recent:
            kept = self._recent.peek(t)
            if kept is not None:
                self._recent.put(t, deque(kept, maxlen=commits))

    def lock(self, table_id: str) -> asyncio.Lock:
        lock = self._locks.get(table_id)
        if lock is None:
            lock = self._locks[table_id] = asyncio.Lock()
        return lock

    def _cache(self, table_id: str, lt: LoadedTable) -> None:
        """Keep ``lt`` as the table's fold; but a vacant or closed table (nobody seated, no
        hand running, no money with the wallet) leaves every cache of the process at once."""
        if lt.state is not None and lt.state.vacant:
            tablecache.release(table_id)
        else:
            self._tables.put(table_id, lt)

    async def load(self, table_id: str, min_version: int | None = None,
                   leader: bool = False) -> LoadedTable:
        """The table caught up to the end of its log; or, given ``min_version``, the cached
        fold if it is at least that version (no read: a decision on it that turns out stale
        loses its guarded append and is made again on a fresh read). ``leader``: to the end
        as the stream's leader has it (EventStore.read_current), after a refused append."""
        stopped = self._stopped.get(table_id)
        if stopped is not None:
            raise CorruptLog(stopped)
        cached = self._tables.get(table_id) or LoadedTable()
        if min_version is not None and cached.state is not None and cached.seq >= min_version:
            return cached
        try:
            lt = await self._read_on(table_id, cached, leader)
        except CorruptLog as exc:
            if not cached.seq:
                raise CorruptLog(self._stop(table_id, exc)) from None
            # The cache may hold a commit folded from a reply or a caller's tail that the log
            # does not have (they are checked against the cached chain only): the log alone
            # decides, from its first commit.
            try:
                lt = await self._read_on(table_id, LoadedTable(), leader)
            except CorruptLog as again:
                raise CorruptLog(self._stop(table_id, again)) from None
            self._cache(table_id, lt)
            return lt
        return self._keep(table_id, lt)

    def _keep(self, table_id: str, lt: LoadedTable) -> LoadedTable:
        """Cache ``lt`` unless the cache moved past it meanwhile (a commit folded from the
        live feed while a read or an append was under way): the cache only goes forward.
        Returns the table as cached."""
        cached = self._tables.get(table_id)
        if cached is not None and cached.seq > lt.seq:
            return cached
        self._cache(table_id, lt)
        return lt

    async def _read_on(self, table_id: str, lt: LoadedTable,
                       leader: bool = False) -> LoadedTable:
        """``lt`` with the commits the log has after it folded (CorruptLog if one does not)."""
        read = self.store.read_current if leader else self.store.read
        for stored in await read(table_id, after_seq=lt.seq):
            lt = fold_commit(lt, stored, self.keyring)
            self._remember(table_id, stored)
        return lt

    def _remember(self, table_id: str, stored: Stored) -> None:
        if self._recent_max:
            recent = self._recent.get(table_id)
            if recent is None:
                recent = deque(maxlen=self._recent_max)
                self._recent.put(table_id, recent)
            if not recent or recent[-1].seq < stored.seq:
                recent.append(stored)

    def drop_recent(self, table_id: str, upto: int) -> None:
        """Forget the table's kept commits up to ``upto`` (every service it calls has them)."""
        recent = self._recent.peek(table_id)
        while recent and recent[0].seq <= upto:
            recent.popleft()

    def tail(self, table_id: str, after_seq: int, upto: int) -> list[Stored]:
        """The table's commits after ``after_seq`` up to ``upto`` that this process keeps,
        in order: what a service whose fold is at ``after_seq`` lacks (0: not known; then
        all kept, of which the service skips what it has). The service folds those that
        chain onto its fold (:meth:`absorb_tail`) and reads the log for anything else."""
        recent = self._recent.peek(table_id)
        if not recent:
            return []
        return [c for c in recent if after_seq < c.seq <= upto]

    async def _after_conflict(self, table_id: str, refused: LoadedTable) -> None:
        """The log refused an append based on ``refused``: catch up with it, as the stream's
        leader has it (a follower's read may not hold the commit that won). If it has
        nothing after that fold's sequence, the fold is not the log's (it folded a commit
        from a reply or a caller's tail that the log does not hold): fold it afresh."""
        if (await self.load(table_id, leader=True)).seq == refused.seq:
            self.forget(table_id)
            await self.load(table_id, leader=True)

    def _stop(self, table_id: str, exc: CorruptLog) -> str:
        why = (f"table {table_id} is stopped: {exc}. Nothing is served or played there until "
               f"an operator has audited its log (pokerctl audit --table {table_id})")
        self._stopped[table_id] = why
        self._tables.pop(table_id, "stopped")
        metrics.TABLES_STOPPED.inc()
        structlog.get_logger().critical("table stopped: its log does not check",
                                        table_id=table_id, reason=str(exc),
                                        producer=self.producer)
        return why

    def halted(self, table_id: str) -> str | None:
        """Why the table is stopped (its log does not check), or None."""
        return self._stopped.get(table_id)

    def forget(self, table_id: str) -> None:
        """Drop the cached fold: the next load folds the table from its first commit."""
        self._tables.pop(table_id, "forgotten")

    def absorb(self, table_id: str, seq: int, data: bytes) -> LoadedTable | None:
        """Fold a commit another service just appended (from its reply, or a caller's tail)
        if it is the next one of the cached table: its first event chains on the cached last
        hash (the chain is per table, so nothing of this table came between). Otherwise, or
        if it does not fold, the next load reads the log (which alone can stop the table).
        Returns the fold at ``seq`` or later (None: not absorbed); the caches may have let it
        go at once (it left the table vacant), so a caller that must learn of each version
        (a hub's listeners) takes it from here, not from :meth:`cached`."""
        lt = self._tables.get(table_id)
        if lt is None or not data:
            return None
        if seq <= lt.seq:
            return lt
        try:
            parsed = parse_commit(data)
            first = parsed.envelope(0) if len(parsed) else None
        except CommitParseError:
            return None
        if first is None or first.prev_hash != lt.last_hash:
            return None
        stored = Stored(seq, data)
        try:
            folded = fold_commit(lt, stored, self.keyring, parsed)
        except CorruptLog:
            return None
        self._remember(table_id, stored)
        self._cache(table_id, folded)
        return folded

    def absorb_tail(self, table_id: str, tail: Iterable[tuple[int, bytes]]) -> None:
        """Fold a caller's commits (:meth:`tail` of its process) in order, while they chain
        onto the cached fold."""
        for seq, data in tail:
            if self.absorb(table_id, seq, data) is None:
                return

    def cached(self, table_id: str) -> LoadedTable | None:
        """The cached fold of the table, without reading the log (None: never loaded, or
        forgotten)."""
        return self._tables.get(table_id)

    def cached_ids(self) -> list[str]:
        """The tables whose fold this process holds."""
        return list(self._tables)

    async def get(self, table_id: str, min_version: int | None = None) -> LoadedTable:
        lt = await self.load(table_id, min_version)
        if lt.state is None:
            raise UnknownTable(f"there is no table {table_id!r}")
        return lt

    async def execute(self, table_id: str, command_id: str, command_digest: bytes,
                      decide: Callable[[TableState | None], list], hand_no: int = 0,
                      min_version: int | None = None,
                      guard: Callable[[LoadedTable], None] | None = None,
                      sealing: Sealing | None = None, at_ms: int | None = None) -> Outcome:
        """Decide on the current fold and append the events; idempotent by command id.

        ``min_version``: the table version the caller saw; a cached fold at least that recent
        is decided on without a read. A lost race re-reads and decides once more, and so does
        a refusal if the leader's log has moved on (the command may be there already).
        ``guard``: a precondition on the loaded table that ``decide`` cannot see (its clock,
        say), checked on the fold decided on, after the duplicate check; it raises to refuse.
        ``sealing``: seal the commit's secret cards (the dealer's decisions).
        ``at_ms``: the time to stamp the commit with (a step's: the table service's time,
        shared/poker/clock.py); None: this repository's ``now_ms``.
        """
        started = time.perf_counter()
        async with self.lock(table_id):
            for attempt in range(2):
                lt = await self.load(table_id, min_version if attempt == 0 else None)
                seen = applied(lt.commands, command_id, command_digest)
                if seen is not None:
                    return Outcome(seen, 0, duplicate=True)
                try:
                    if guard is not None:
                        guard(lt)
                    events = decide(lt.state)
                except Exception:
                    # A refusal on a fold that may be behind (this replica's cache, or a read
                    # a follower served) is checked on the leader's log first: a retry of a
                    # command another replica applied gets its outcome, not a refusal.
                    if attempt == 0 and (await self.load(table_id, leader=True)).seq != lt.seq:
                        continue
                    raise
                if not events:
                    return Outcome(lt.seq, 0)
                hand = lt.state.hand if lt.state is not None else None
                hand_no = hand_no or (hand.hand_no if hand is not None else 0)
                data = build_commit(table_id, hand_no, command_id, command_digest,
                                    self.producer, events, lt.last_hash,
                                    self.now_ms() if at_ms is None else at_ms, sealing)
                try:
                    seq, duplicate = await self.store.append(
                        table_id, data, lt.seq, msg_id=f"{table_id}:{command_id}")
                except AppendConflict:
                    metrics.APPEND_CONFLICTS.inc()
                    await self._after_conflict(table_id, lt)
                    continue
                if not duplicate:
                    metrics.record_commit(lt.state.options if lt.state is not None else None,
                                          events, time.perf_counter() - started)
                    self._landed(table_id, lt, Stored(seq, data))
                    return Outcome(seq, len(events), commit=data)
                return Outcome((await self.load(table_id)).seq, 0, duplicate=True)
            raise Aborted(f"table {table_id} changed under this command twice; "
                          f"retry with the same command id")

    def _landed(self, table_id: str, lt: LoadedTable, stored: Stored) -> None:
        """A commit this repository appended: remembered, and its fold cached unless the live
        feed has brought it (or a later one) already."""
        self._remember(table_id, stored)
        cached = self._tables.get(table_id)
        if cached is None or cached.seq < stored.seq:
            self._cache(table_id, fold_commit(lt, stored, self.keyring))
