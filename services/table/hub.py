"""Views that fan out per table, not per watcher: one hub per table in each table-service
process, for as long as someone follows the table here (a Watch stream, the clock keeper).

A hub holds one subscription to the table's live feed (every commit the log stores,
republished with its stream sequence: shared/infra/eventstore.py ``feed``) and one to its
clock nudges (keeper.py). Each commit message is folded into the process's repository if it
chains onto the cached fold (``TableRepository.absorb``: no log read); one that does not (a
gap, a fold evicted, a log made before the live feed) has the hub read the log once, for every
watcher. Then the hub's one pump task makes the public view once per commit, and a seat's
private view once per commit for the watchers of that seat, and hands them to its watchers.

Each watcher takes views through a bounded queue of its own (:data:`QUEUE`): a watcher that
falls that far behind (a client that stopped reading) is dropped with ABORTED, saying from
which version to watch again (``after_version``); it never slows the others or the table.

What a watcher may see is checked on every view it is given, not only when it starts: a seat's
view goes only to a watcher whose seat token still holds that seat (a private view is cached
per seat *and* token digest, so it is never served to another seat, another holder of the
seat, or a spectator), and a spectator of a private table must still be allowed to spectate.
A watcher that may no longer see what it asked for is ended with PERMISSION_DENIED.

Views only go forward: a watcher gets a view of a version after the last it was given (or,
when a countdown starts, the same version again with the deadline to draw). The hub is
closed, its subscriptions given back, when nobody follows the table here any more.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable

import structlog
from poker.table.v1 import table_pb2

from shared.infra import metrics
from shared.infra.identity import COMPLIANCE, OPERATOR, Principal, Unauthenticated
from shared.infra.repository import CorruptLog, LoadedTable, TableRepository, UnknownTable
from shared.infra.rpc import Denied, FellBehind
from shared.poker.state import TableState

from .views import Public, Views

log = structlog.get_logger()

#: how many views a watcher may have waiting before it is dropped as too slow (a burst at a
#: hand's end is about a dozen commits; POKER_LIMIT_WATCH_QUEUE, shared/infra/limits.py)
QUEUE = 64
#: the clock keeper's nudges (keeper.py): a countdown started at the table
CLOCK_SUBJECT_PREFIX = "poker.clock."


def clock_subject(table_id: str) -> str:
    return CLOCK_SUBJECT_PREFIX + table_id


#: a table-service process that has just cached a table (it is busy: someone is seated or a
#: hand runs) says so to the keeper of the table's slot, whichever process holds it
#: (keeper.py); a table id has no dot, so no table's clock subject is one of these
BUSY_SUBJECT_PREFIX = CLOCK_SUBJECT_PREFIX + "busy."


def busy_subject(table_id: str) -> str:
    return BUSY_SUBJECT_PREFIX + table_id


#: how long a hub waits before reading the log again after a read failed (doubling to 5 s)
RETRY_FIRST_S = 0.2


def may_spectate(table: TableState, who: Principal) -> bool:
    """Who may watch a private table without a seat's view: operators, compliance, and the
    players seated at it."""
    return who.has(OPERATOR, COMPLIANCE) or any(s.player_id == who.subject
                                                for s in table.seats)


class Watcher:
    """One Watch stream of a hub: seat ``viewer`` (None: a spectator) held by the token whose
    digest is ``digest``, for ``principal``; ``after``: the last version the caller has."""

    __slots__ = ("viewer", "digest", "principal", "last", "delivered", "limit", "_views",
                 "_ready", "ended")

    def __init__(self, viewer: int | None, digest: str, principal: Principal, after: int,
                 limit: int = QUEUE) -> None:
        self.viewer = viewer
        self.digest = digest
        self.principal = principal
        self.last = after  # the version of the last view queued (or the caller's)
        self.delivered = after  # the version of the last view the caller took
        self.limit = limit
        self._views: deque[table_pb2.TableView] = deque()
        self._ready = asyncio.Event()
        self.ended: BaseException | None = None

    @property
    def key(self) -> tuple[int, str] | None:
        """Which view this watcher takes: the public one, or seat's for this token."""
        return None if self.viewer is None else (self.viewer, self.digest)

    def allowed(self, table: TableState) -> str | None:
        """Why this watcher may no longer have its views of ``table`` (None: it may)."""
        if self.viewer is None:
            if table.options.private and not may_spectate(table, self.principal):
                return (f"table {table.table_id} is private: spectators need an operator's or "
                        f"compliance's role, or a seat at it")
            return None
        seat = table.seat(self.viewer)
        if seat is None or seat.token_digest != self.digest or \
                seat.player_id != self.principal.subject:
            return (f"your seat token no longer holds seat {self.viewer} at table "
                    f"{table.table_id} (you left it): watch as a spectator, or sit down again")
        return None

    def offer(self, view: table_pb2.TableView) -> None:
        """Queue ``view`` (its version is past :attr:`last`, or the same with a countdown), or
        end the watcher if it is :attr:`limit` views behind."""
        if len(self._views) >= self.limit:
            self.end(FellBehind(
                f"this Watch fell {len(self._views)} views behind table {view.table_id} and "
                f"was closed: watch again with after_version={self.delivered} (the last "
                f"view you received)"))
            return
        self._views.append(view)
        self.last = view.version
        self._ready.set()

    def end(self, why: BaseException) -> None:
        if self.ended is None:
            self.ended = why
            self._views.clear()
            self._ready.set()

    def expire(self) -> None:
        """The caller's token has expired: the stream ends, saying so."""
        self.end(Unauthenticated("your token expired during this Watch: watch again with a "
                                 "new one"))

    async def next(self) -> table_pb2.TableView:
        """The next view, waiting until one comes; raises why the watcher was ended (by the
        hub, or its token's expiry)."""
        while not self._views:
            if self.ended is not None:
                raise self.ended
            self._ready.clear()
            await self._ready.wait()
        view = self._views.popleft()
        self.delivered = view.version
        return view


class TableHub:
    """The views of one table in this process (see the module's docstring)."""

    def __init__(self, hubs: Hubs, table_id: str) -> None:
        self.hubs = hubs
        self.table_id = table_id
        self.watchers: set[Watcher] = set()
        #: called with the fold each time it moves (the clock keeper's schedule)
        self.listeners: list[Callable[[LoadedTable], None]] = []
        self.users = 0  # watchers and listeners: the hub closes at none
        self._subs: list = []
        self._changed = asyncio.Event()
        self._stale = True  # read the log before trusting the cached fold
        self._countdown = False  # a countdown started: a view again at the same version
        self._seen = -1  # the version the listeners were last told of
        self._views: dict[tuple[int, str] | None, table_pb2.TableView] = {}
        self._views_at = -1  # the version (and countdown round) those views are of
        self._public: Public | None = None  # that version's public view, once made
        self._pump: asyncio.Task | None = None
        self._retry_s = RETRY_FIRST_S
        self.opened = asyncio.Event()

    async def open(self) -> None:
        repo = self.hubs.repo
        subject, sequenced = await repo.store.feed(self.table_id)
        nc = repo.store.nc

        async def on_commit(msg) -> None:
            seq = 0
            if sequenced:
                try:
                    seq = int((msg.headers or {}).get("Nats-Sequence", "0"))
                except ValueError:
                    seq = 0
            # a commit that chains onto the cached fold is folded here; any other has the
            # pump read the log (which alone can stop a table whose chain breaks)
            folded = repo.absorb(self.table_id, seq, msg.data) \
                if seq and not self._stale else None
            if folded is None:
                self._stale = True
                self._changed.set()
                return
            # (told even when the caches let it go at once: the commit left the table
            # vacant, and the keeper must hear of that to stop following it)
            self._tell(folded)
            if self.watchers:
                self._changed.set()

        async def on_clock(_msg) -> None:
            self._countdown = True
            self._changed.set()

        self._subs = [await nc.subscribe(subject, cb=on_commit),
                      await nc.subscribe(clock_subject(self.table_id), cb=on_clock)]
        self._changed.set()  # the first look reads the log: it may have moved before
        self._pump = asyncio.create_task(self._run(), name=f"hub {self.table_id}")
        self.opened.set()

    async def close(self) -> None:
        for sub in self._subs:
            try:
                await sub.unsubscribe()
            except Exception:  # noqa: BLE001 - a connection already closed
                pass
        self._subs = []
        if self._pump is not None:
            self._pump.cancel()
            await asyncio.gather(self._pump, return_exceptions=True)
            self._pump = None
        for w in self.watchers:
            w.end(FellBehind(f"the table service stopped following table {self.table_id}: "
                             f"watch again with after_version={w.delivered}"))

    def resync(self) -> None:
        """Read the log at the next look (messages may have been lost: a reconnect)."""
        self._stale = True
        self._changed.set()

    def add(self, watcher: Watcher) -> None:
        self.watchers.add(watcher)
        self._changed.set()  # the current view, if the watcher is behind it

    # --- the pump --------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            await self._changed.wait()
            self._changed.clear()
            await self._look()

    async def _look(self) -> None:
        """One look at the table: the listeners told, the watchers given their views. The
        fold is a local of this call, so a hub that waits holds none: a table the caches
        forget is forgotten here too."""
        try:
            lt = await self._current()
        except asyncio.CancelledError:
            raise
        except (CorruptLog, UnknownTable) as exc:
            for w in list(self.watchers):
                w.end(exc)
                self.watchers.discard(w)
            return
        except Exception as exc:  # noqa: BLE001 - the log away: look again later
            log.warning("a hub could not read its table; it tries again", exc_info=exc,
                        table_id=self.table_id, retry_s=self._retry_s)
            self._stale = True
            await asyncio.sleep(self._retry_s)
            self._retry_s = min(self._retry_s * 2, 5.0)
            self._changed.set()
            return
        self._retry_s = RETRY_FIRST_S
        self._tell(lt)
        if self.watchers:
            await self._fan_out(lt)

    def _tell(self, lt: LoadedTable) -> None:
        """The listeners learn of each version once, in order."""
        if lt.seq > self._seen:
            self._seen = lt.seq
            for listener in list(self.listeners):
                listener(lt)

    async def _current(self) -> LoadedTable:
        repo = self.hubs.repo
        cached = repo.cached(self.table_id)
        if self._stale or cached is None or cached.state is None:
            self._stale = False
            return await repo.get(self.table_id)  # to the end of the log
        return cached

    def public(self, lt: LoadedTable) -> Public:
        """``lt``'s public view, made once per version for every watcher and caller."""
        if self._public is None or self._views_at != lt.seq:
            self._views, self._views_at = {}, lt.seq
            self._public = self.hubs.views.public(lt)
            metrics.VIEWS_MADE.inc()
        return self._public

    async def _fan_out(self, lt: LoadedTable) -> None:
        """Give every watcher behind ``lt`` its view of it: each view made once (a seat's
        from the public one, with its own cards)."""
        assert lt.state is not None
        countdown, self._countdown = self._countdown, False
        if countdown:
            self._views_at = -1  # the countdown's view is made anew (the server's time)
        public = self.public(lt)
        for w in list(self.watchers):
            if w.ended is not None:
                self.watchers.discard(w)
                continue
            if not (lt.seq > w.last or countdown and lt.seq == w.last):
                continue
            why = w.allowed(lt.state)
            if why is not None:
                w.end(Denied(why))
                self.watchers.discard(w)
                continue
            key = w.key
            view = self._views.get(key)
            if view is None:
                if w.viewer is None:
                    view = public.message
                else:
                    seat = lt.state.seat(w.viewer)
                    assert seat is not None  # (allowed: the watcher's token holds it)
                    view = await self.hubs.views.seat(lt, public, w.viewer, seat.player_id)
                    metrics.VIEWS_MADE.inc()
                self._views[key] = view
            if w.ended is None:  # (it may have gone while the view was made)
                w.offer(view)
                if w.ended is not None:
                    self.watchers.discard(w)
                    metrics.WATCHERS_DROPPED.inc()


class Hubs:
    """Every hub of this process, by table; a hub lives while it has users."""

    def __init__(self, repo: TableRepository, views: Views) -> None:
        self.repo = repo
        self.views = views
        self._hubs: dict[str, TableHub] = {}

    def __len__(self) -> int:
        return len(self._hubs)

    def get(self, table_id: str) -> TableHub | None:
        return self._hubs.get(table_id)

    async def _take(self, table_id: str) -> TableHub:
        hub = self._hubs.get(table_id)
        if hub is None:
            hub = self._hubs[table_id] = TableHub(self, table_id)
            metrics.HUBS.inc()
            hub.users += 1
            try:
                await hub.open()
            except BaseException:
                hub.users -= 1
                self._hubs.pop(table_id, None)
                metrics.HUBS.dec()
                await hub.close()
                raise
        else:
            hub.users += 1
            await hub.opened.wait()
        return hub

    async def _give_back(self, hub: TableHub) -> None:
        hub.users -= 1
        if hub.users <= 0 and self._hubs.get(hub.table_id) is hub:
            del self._hubs[hub.table_id]
            metrics.HUBS.dec()
            await hub.close()

    async def watch(self, table_id: str, watcher: Watcher,
                    expires_at: float) -> AsyncIterator[table_pb2.TableView]:
        """The views ``watcher`` is given, until the caller goes (or its token expires at
        ``expires_at``, unix seconds, or the hub ends it)."""
        left = expires_at - time.time()
        if left <= 0:
            watcher.expire()
        expiry = None if left == math.inf else \
            asyncio.get_running_loop().call_later(max(left, 0), watcher.expire)
        hub = await self._take(table_id)
        hub.add(watcher)
        metrics.WATCHERS.inc()
        try:
            while True:
                yield await watcher.next()
        finally:
            if expiry is not None:
                expiry.cancel()
            metrics.WATCHERS.dec()
            hub.watchers.discard(watcher)
            await self._give_back(hub)

    async def follow(self, table_id: str, listener: Callable[[LoadedTable], None]) -> None:
        """Call ``listener`` with the table's fold each time it moves (the clock keeper)."""
        hub = await self._take(table_id)
        hub.listeners.append(listener)

    async def unfollow(self, table_id: str, listener: Callable[[LoadedTable], None]) -> None:
        hub = self._hubs.get(table_id)
        if hub is not None and listener in hub.listeners:
            hub.listeners.remove(listener)
            await self._give_back(hub)

    def public(self, lt: LoadedTable) -> Public:
        """``lt``'s public view: the hub's, when the table has one here (made once per
        version for its watchers and the callers of the table service alike)."""
        hub = self._hubs.get(lt.state.table_id) if lt.state is not None else None
        return hub.public(lt) if hub is not None and hub.opened.is_set() else \
            self.views.public(lt)

    def resync(self) -> None:
        """Every hub reads its table's log at its next look (after a reconnect to NATS)."""
        for hub in self._hubs.values():
            hub.resync()

    async def close(self) -> None:
        hubs, self._hubs = list(self._hubs.values()), {}
        for hub in hubs:
            metrics.HUBS.dec()
            await hub.close()
