"""The clock keeper (RULES.md §7): times out players whose decision is late and drives the
tables this instance holds the lease of.

Deadlines come from the log alone (``LoadedTable.clock``, built from commit times), so a
keeper that starts after another died finds the same deadline and times out the same player.
One instance at a time keeps a table: it holds the lease of the table's clock slot
(:func:`lease_name`: the tables are spread over :data:`CLOCK_SLOTS` slots, one lease each, so
an instance renews a few leases whatever the number of tables; shared/infra/lease.py). A
keeper that loses a slot's lease stops keeping its tables at once; if two ever act on one
table, the time-out's command id (derived from the clock) makes one commit of their two, and
appends are sequence-guarded.

The keeper follows each table it keeps live (the table's hub, hub.py: the log's commits as
they are stored, folded without reading the log) and wakes for a table only when something is
due there: the countdown to announce, the deadline, a step left pending by a driver that went
away (:attr:`ClockKeeper.stall_s` after the commit that left it), a saga to settle, or a
failure's retry. A table whose clock is not running costs nothing between its events.

A keeper learns of a busy table (someone seated, a hand running) from the process that cached
it: each process says so once per table it caches, on ``poker.clock.busy.<table_id>`` (plain
NATS), and the keeper holding the table's slot follows it. The log's table list (every table
the log ever held, with its count of commits) is read when a keeper takes a slot over and
otherwise every ``list_every_s`` only, as a safety net for a message lost (a reconnect): it
grows with every table ever made. The leases are looked after every tick.

A time-out is the betting service's decision (``BettingService.TimeOut``, which checks the
deadline on its own fold, at the keeper's time: the table service is the table's one time
source, shared/poker/clock.py); its fold also sits the player out from the next hand; then the
driver carries the hand on. When a countdown starts the keeper
publishes a nudge on ``poker.clock.<table_id>`` (plain NATS, outside the event stream) so that
every hub pushes a view a client can draw the countdown from.

``tick()`` does one whole round (the leases, the table list, and a look at every table kept,
as if each were due); production runs the loop, which sleeps until the next thing is due, or
``POKER_CLOCK_TICK_MS`` (default 200) for the leases; 0: no loop (tests inject ``now_ms`` and
call ``tick()`` themselves).

The clock does not run while the table cannot act (shared/poker/clock.py). A time-out the
log refuses for lack of space (the betting service's refusal says so, :func:`log_full`) holds
the decision's clock (``Driver.outages``; a player's action refused so holds it too): from
then on the keeper tries, each tick, to append ``ClockRestarted`` for that decision instead of
the time-out, and the table service does not refuse the player's action as late. The first
append that lands restarts the decision at its commit's time, so the player on turn gets a
whole decision time once space is back, and every fold of the log (another keeper, the
betting service, the audit) finds the same deadline.

What fails at a table is reported once (``driver.Failures``) and the table is looked at again
after a wait that grows, never in a tight loop; a table whose log does not check is stopped
(shared/infra/repository.py) and left alone.
"""

from __future__ import annotations

import asyncio
import heapq
import math
import time
from collections.abc import Callable

import grpc
import structlog
from nats.aio.subscription import Subscription
from poker.betting.v1 import betting_pb2
from poker.engine.v1 import step_pb2

from shared.infra.config import DEFAULT_CLOCK_TICK_MS
from shared.infra.eventstore import StoreFull, shard_of
from shared.infra.lease import Leases
from shared.infra.repository import LoadedTable, TableRepository, digest, on_table
from shared.infra.rpc import log_full, system_command_id
from shared.poker import table as T
from shared.poker.clock import TurnClock, is_late
from shared.poker.errors import IllegalAction
from shared.poker.steprules import table_step

from .calls import Failures, same_decision
from .driver import Driver
from .hub import BUSY_SUBJECT_PREFIX, Hubs, busy_subject, clock_subject

log = structlog.get_logger()

#: how many leases the tables' clocks are spread over (every instance must use the same)
CLOCK_SLOTS = 16


def lease_name(table_id: str) -> str:
    """The lease whose holder keeps the table's clock: its slot's."""
    return slot_lease(shard_of(table_id, CLOCK_SLOTS))


def slot_lease(slot: int) -> str:
    return f"clock.{slot}"


class ClockKeeper:
    def __init__(self, repo: TableRepository, driver: Driver, leases: Leases, hubs: Hubs,
                 now_ms: Callable[[], int] | None = None, tick_ms: int = DEFAULT_CLOCK_TICK_MS,
                 list_every_s: float = 1.0, stall_s: float = 1.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.repo = repo
        self.driver = driver
        self.leases = leases
        self.hubs = hubs
        self.now_ms = now_ms or repo.now_ms
        self.tick_ms = tick_ms
        self.list_every_s = list_every_s  # how often the log's table list is read
        #: how long a step may stay pending before the keeper carries it on (its driver went)
        self.stall_s = stall_s
        self.monotonic = monotonic
        self._listed: dict[str, int] = {}  # the log's tables and their commit counts
        self._listed_at: float | None = None
        self._reconciled_at = -math.inf  # the last look at the leases and the tables
        self._cached_seen = 0  # how many tables the repository had at the last look
        self._kept: set[str] = set()  # tables followed (their slot's lease is held here)
        #: vacant or closed tables: nothing to keep until the log holds another count of
        #: their commits than this (someone sat down, from this process or another)
        self._quiet: dict[str, int] = {}
        self._wake_at: dict[str, float] = {}  # table -> when (monotonic) to look at it
        self._wakes: list[tuple[float, str]] = []  # a heap of those (stale entries skipped)
        self._woken = asyncio.Event()  # an earlier wake than the loop sleeps for
        self._pending: dict[str, tuple[int, float]] = {}  # table -> (version, since) of a step
        self._nudged: dict[str, TurnClock] = {}
        self._work: dict[str, asyncio.Task] = {}
        self._loop: asyncio.Task | None = None
        #: the tables this process has said are busy (those it caches), and those others
        #: said are, to follow if their slot is held here
        self._announced: set[str] = set()
        self._told: set[str] = set()
        self._busy_sub: Subscription | None = None
        self.failures = Failures("keeping the table's clock", monotonic=monotonic)

    # --- running -------------------------------------------------------------------------

    def start(self) -> None:
        """Run the keeper in the background (``tick_ms`` 0: never; tests call :meth:`tick`)."""
        if self.tick_ms > 0 and self._loop is None:
            self._loop = asyncio.create_task(self._run())

    async def _run(self) -> None:
        period = self.tick_ms / 1000
        await self._listen()
        while True:
            try:
                lost = await self.leases.renew()
                since = self.monotonic() - self._reconciled_at
                free = len(self.leases.held()) < CLOCK_SLOTS
                if lost or since >= self.list_every_s or free and since >= self.leases.ttl_s / 3:
                    await self._housekeeping()
                await self._announce()
                await self._keep_told()
                for table_id in self._due(self.monotonic()):
                    self._start(table_id, sweep=False)
            except asyncio.CancelledError:
                raise
            except Exception:  # logged; the next round tries again
                log.exception("clock round failed")
            # sleep until the next table is due, or the leases' next look
            wait = period
            due = self.next_wake()
            if due is not None:
                wait = min(wait, max(0.0, due - self.monotonic()))
            self._woken.clear()
            try:
                await asyncio.wait_for(self._woken.wait(), timeout=wait)
            except TimeoutError:
                pass

    async def close(self) -> None:
        """Stop, finish nothing more, and hand the leases back at once."""
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
            self._loop = None
        if self._busy_sub is not None:
            try:
                await self._busy_sub.unsubscribe()
            except Exception:  # noqa: BLE001 - the connection already closed
                pass
            self._busy_sub = None
        work = list(self._work.values())
        for task in work:
            task.cancel()
        await asyncio.gather(*work, return_exceptions=True)
        for table_id in list(self._kept):
            await self._unkeep(table_id)
        await self.leases.release_all()

    # --- one round -----------------------------------------------------------------------

    async def tick(self, wait: bool = True) -> None:
        """One whole round: the leases, the log's tables, and a look at every table kept
        (a late player timed out, a countdown announced, a pending step carried on, a saga
        settled). ``wait``: return once that work is done."""
        await self._housekeeping(list_now=True)
        await self._announce()
        started = [self._start(t, sweep=True) for t in sorted(self._kept)]
        if wait:
            await asyncio.gather(*(t for t in started if t is not None))

    async def _housekeeping(self, list_now: bool = False) -> None:
        """Renew the leases due, take free slots, read the log's tables when due (or now:
        ``list_now``, or a slot taken), and follow every table of the slots held (or stop
        following those of a slot lost)."""
        self._reconciled_at = self.monotonic()
        await self.leases.renew()
        free = [slot_lease(k) for k in range(CLOCK_SLOTS)
                if not self.leases.holds(slot_lease(k))]
        taken = await asyncio.gather(*(self.leases.acquire(n) for n in free)) if free else []
        tables = await self._table_ids(force=list_now or any(taken))
        held = set(self.leases.held())
        for table_id in sorted(self._kept):
            if self._slot_of(table_id) not in held:
                await self._unkeep(table_id)
        for table_id in sorted(tables - self._kept):
            if self._slot_of(table_id) in held:
                await self._keep_table(table_id)

    # --- busy tables, told between processes ----------------------------------------------

    async def _listen(self) -> None:
        """Hear the busy tables every process announces (this one's too)."""
        async def on_busy(msg) -> None:
            table_id = msg.subject[len(BUSY_SUBJECT_PREFIX):]
            if table_id not in self._kept:
                self._told.add(table_id)
                self._woken.set()
        try:
            self._busy_sub = await self.repo.store.nc.subscribe(BUSY_SUBJECT_PREFIX + "*",
                                                                cb=on_busy)
        except Exception:  # noqa: BLE001 - the table list finds them, later
            log.exception("cannot hear busy tables: the table list alone finds them")

    async def _announce(self) -> None:
        """Say once that each table newly cached here is busy (a table the caches let go
        and take again is said again)."""
        cached = set(self.repo.cached_ids())
        new = cached - self._announced
        self._announced = (self._announced & cached) | new
        for table_id in sorted(new):
            await self.repo.store.nc.publish(busy_subject(table_id), b"")

    async def _keep_told(self) -> None:
        """Follow the busy tables others told of whose slot is held here."""
        told, self._told = self._told, set()
        held = set(self.leases.held())
        for table_id in sorted(told - self._kept):
            if self._slot_of(table_id) in held:
                await self._keep_table(table_id)

    def _slot_of(self, table_id: str) -> str:
        """The table's clock lease (its slot's)."""
        return lease_name(table_id)

    async def _table_ids(self, force: bool = False) -> set[str]:
        """The tables to keep: the log's (read at most every ``list_every_s``, or now with
        ``force``) but those still quiet (vacant or closed, no commit since), and those this
        process holds a fold of (a vacant table's fold is never held)."""
        now = self.monotonic()
        if force or self._listed_at is None or now - self._listed_at >= self.list_every_s:
            self._listed = await self.repo.store.table_counts()
            self._listed_at = now
            # a table the log no longer lists is forgotten here too
            self._quiet = {t: n for t, n in self._quiet.items() if t in self._listed}
        return {t for t, n in self._listed.items() if self._quiet.get(t) != n} | \
            set(self.repo.cached_ids())

    async def _keep_table(self, table_id: str) -> None:
        """Follow the table (its hub folds each commit as it is stored) and look at it now."""
        if self.repo.halted(table_id):
            return
        self._quiet.pop(table_id, None)
        self._kept.add(table_id)
        try:
            await self.hubs.follow(table_id, self._moved)
        except Exception as exc:  # noqa: BLE001 - the log away: the next round tries again
            self._kept.discard(table_id)
            self.failures.failed(table_id, exc)
            return
        self._wake(table_id, self.monotonic())

    async def _unkeep(self, table_id: str) -> None:
        self._kept.discard(table_id)
        self._wake_at.pop(table_id, None)
        self._pending.pop(table_id, None)
        self._nudged.pop(table_id, None)
        await self.hubs.unfollow(table_id, self._moved)

    # --- when to look at a table ---------------------------------------------------------

    def _moved(self, lt: LoadedTable) -> None:
        """The hub's news: the table's fold moved. Schedule the next look at it."""
        if lt.state is None:
            return
        self._schedule(lt.state.table_id, lt)

    def _schedule(self, table_id: str, lt: LoadedTable) -> None:
        table = lt.state
        if table is None or table_id not in self._kept:
            return
        if table.vacant:  # (closed, or nobody there): nothing to keep until it moves
            self._quiet[table_id] = lt.commits
            asyncio.get_running_loop().create_task(self._unkeep(table_id))
            return
        now_mono, now_ms = self.monotonic(), self.now_ms()
        at = math.inf
        clock = lt.clock
        if clock is not None:
            if self.driver.outages.held(table_id, clock) is not None:
                at = now_mono + self.tick_ms / 1000  # the log refused: try each tick
            else:
                due = clock.deadline_ms(table.options)
                if not same_decision(clock, self._nudged.get(table_id)):
                    due = min(due, clock.countdown_ms(table.options))
                at = now_mono + max(0, due - now_ms) / 1000
        if table_step(table) is not None or T.settleable(table):
            seen = self._pending.get(table_id)
            if seen is None or seen[0] != lt.seq:
                seen = self._pending[table_id] = (lt.seq, now_mono)
            at = min(at, seen[1] + self.stall_s)
        else:
            self._pending.pop(table_id, None)
        retry = self.failures.until(table_id)
        if retry is not None:
            at = max(at, retry) if at != math.inf else retry
        if at == math.inf:
            self._wake_at.pop(table_id, None)
        else:
            self._wake(table_id, at)

    def next_look(self, table_id: str) -> float | None:
        """When (monotonic) the keeper will next look at the table (None: only when it moves
        or the next ``tick()``)."""
        return self._wake_at.get(table_id)

    def next_wake(self) -> float | None:
        """When (monotonic) the next look at any table is due; None: none is. A table whose
        look moved (its player acted before the deadline) leaves its old time in the heap:
        those are dropped here, so they never wake the loop for nothing."""
        wakes = self._wakes
        while wakes and self._wake_at.get(wakes[0][1]) != wakes[0][0]:
            heapq.heappop(wakes)
        if len(wakes) > 2 * len(self._wake_at) + 64:  # mostly stale entries: rebuilt
            self._wakes = wakes = [(at, t) for t, at in self._wake_at.items()]
            heapq.heapify(wakes)
        return wakes[0][0] if wakes else None

    def _wake(self, table_id: str, at: float) -> None:
        if self._wake_at.get(table_id) == at:
            return
        self._wake_at[table_id] = at
        heapq.heappush(self._wakes, (at, table_id))
        if self._wakes[0][1] == table_id:
            self._woken.set()

    def _due(self, now: float) -> list[str]:
        """The tables whose look is due (each once)."""
        due = []
        while self._wakes and self._wakes[0][0] <= now:
            at, table_id = heapq.heappop(self._wakes)
            if self._wake_at.get(table_id) == at:
                del self._wake_at[table_id]
                due.append(table_id)
        return due

    def _start(self, table_id: str, sweep: bool) -> asyncio.Task | None:
        if table_id in self._work or not self.leases.holds(self._slot_of(table_id)):
            return None
        if self.repo.halted(table_id) or self.failures.waiting(table_id):
            return None
        task = asyncio.create_task(self._keep(table_id, sweep))
        self._work[table_id] = task
        task.add_done_callback(lambda _t: self._work.pop(table_id, None))
        return task

    async def _keep(self, table_id: str, sweep: bool) -> None:
        """Look at one table: time out a late player, nudge watchers when a countdown
        starts, carry on a step left pending (at once in a ``sweep``, else once it has been
        pending for ``stall_s``), settle money still with the wallet."""
        lt = None
        try:
            lt = self.repo.cached(table_id) or await self.repo.load(table_id)
            if lt.state is None:
                return
            if not self.leases.holds(self._slot_of(table_id)):
                return  # lost meanwhile
            if is_late(lt.clock, lt.state.options, self.now_ms()):
                lt = await self.repo.load(table_id)  # a time-out is decided on the log
            assert lt.state is not None  # (as read above: a table's log only grows)
            if is_late(lt.clock, lt.state.options, self.now_ms()):
                refused_at = self.driver.outages.held(table_id, lt.clock)
                if refused_at is None:
                    await self._time_out(table_id, lt)
                else:
                    await self._restart_clock(table_id, lt, refused_at)
            elif table_step(lt.state) is not None or T.settleable(lt.state):
                seen = self._pending.get(table_id)
                stalled = seen is not None and seen[0] == lt.seq and \
                    self.monotonic() >= seen[1] + self.stall_s
                if sweep or stalled:  # a driver died between steps, or money is still out
                    await self.driver.advance(table_id, lt.seq)
            lt = self.repo.cached(table_id) or lt
            await self._nudge_countdown(table_id, lt)
            self.failures.ok(table_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # reported once; a later look tries again
            self.failures.failed(table_id, exc)
        finally:
            latest = self.repo.cached(table_id) or lt
            if latest is not None:
                self._schedule(table_id, latest)

    async def _time_out(self, table_id: str, lt: LoadedTable) -> None:
        """The player on the clock is late: the betting service times them out, the table
        sits them out from the next hand, and the driver carries on."""
        clock = lt.clock
        assert clock is not None
        command_id = system_command_id("timeout", clock.hand_no, clock.seat, clock.started_ms)
        async with self.driver.lock(table_id):  # no automated step between the two commits
            try:
                # at the keeper's time: the betting service checks lateness against it and
                # stamps the time-out with it (shared/poker/clock.py)
                reply = await self.driver.call("betting", "TimeOut", betting_pb2.TimeOutRequest(
                    step=step_pb2.StepRequest(table_id=table_id, hand_no=clock.hand_no,
                                              command_id=command_id, version=lt.seq,
                                              now_unix_ms=self.now_ms()),
                    seat=clock.seat, clock_started_unix_ms=clock.started_ms))
            except grpc.aio.AioRpcError as exc:
                if log_full(exc):  # nothing landed: the decision's clock is held
                    self.driver.outages.refused(table_id, clock, self.now_ms())
                    return
                if exc.code() is grpc.StatusCode.FAILED_PRECONDITION:
                    # The player acted meanwhile: the next look decides again.
                    log.info("time-out overtaken", table_id=table_id, reason=exc.details())
                    return
                raise
            # (the fold of the time-out, kept by the call, sits the player out from the next
            # hand)
            log.info("player timed out", table_id=table_id, hand_no=clock.hand_no,
                     seat=clock.seat, duplicate=reply.duplicate)
        await self.driver.advance(table_id)

    async def _restart_clock(self, table_id: str, lt: LoadedTable, refused_at: int) -> None:
        """The log refused while this decision was on the clock: restart it with the first
        append the log takes (the table waits while it still refuses)."""
        clock = lt.clock
        assert clock is not None
        command_id = system_command_id("restart", clock.hand_no, clock.seat, clock.started_ms)
        async with self.driver.lock(table_id):
            try:
                await self.repo.execute(
                    table_id, command_id,
                    digest("restart", clock.hand_no, clock.seat, clock.started_ms, refused_at),
                    on_table(table_id, lambda t: T.restart_clock(t, clock.seat, refused_at)),
                    min_version=lt.seq)
            except StoreFull:
                return  # still out of space: the clock stays held
            except IllegalAction as exc:  # the player acted meanwhile: that decision is over
                log.info("clock restart overtaken", table_id=table_id, reason=str(exc))
            else:
                log.info("the log accepts again: the decision's clock restarts",
                         table_id=table_id, hand_no=clock.hand_no, seat=clock.seat,
                         refused_at_ms=refused_at)
        self.driver.outages.over(table_id)

    async def _nudge_countdown(self, table_id: str, lt: LoadedTable) -> None:
        clock = lt.clock
        if clock is None or lt.state is None or same_decision(clock,
                                                                self._nudged.get(table_id)):
            return
        if self.now_ms() >= clock.countdown_ms(lt.state.options):
            self._nudged[table_id] = clock
            await self.repo.store.nc.publish(clock_subject(table_id), str(clock.seat).encode())
