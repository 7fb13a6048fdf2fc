"""The clock keeper (RULES.md §7): times out players whose decision is late and drives the
tables this instance holds the lease of.

Deadlines come from the log alone (``LoadedTable.clock``, built from commit times), so a
keeper that starts after another died finds the same deadline and times out the same player.
One instance at a time keeps a table: it holds the table's lease (shared/infra/lease.py). A
keeper that loses its lease stops at once; if two ever act on one table, the time-out's command
id (derived from the clock) makes one commit of their two, and appends are sequence-guarded.

A time-out is the betting service's decision (``BettingService.TimeOut``, which checks the
deadline on its own fold, at the keeper's time: the table service is the table's one time
source, shared/poker/clock.py); its fold also sits the player out from the next hand; then the
driver carries the hand on. When a countdown starts the keeper
publishes a nudge on ``poker.clock.<table_id>`` (plain NATS, outside the event stream) so that
every Watch pushes a view a client can draw the countdown from.

``tick()`` does one round over the tables; production runs it every ``POKER_CLOCK_TICK_MS``
(default 200; 0: never on its own). Tests inject ``now_ms`` and call ``tick()`` themselves.

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
import time
from collections.abc import Callable
from dataclasses import dataclass

import grpc
import structlog
from poker.betting.v1 import betting_pb2
from poker.engine.v1 import step_pb2

from shared.infra.config import DEFAULT_CLOCK_TICK_MS
from shared.infra.eventstore import StoreFull
from shared.infra.lease import Leases
from shared.infra.repository import LoadedTable, TableRepository, digest
from shared.infra.rpc import log_full, system_command_id
from shared.poker import table as T
from shared.poker.clock import TurnClock, is_late
from shared.poker.errors import IllegalAction
from shared.poker.options import TableOptions

from .calls import Failures, same_decision
from .driver import Driver

log = structlog.get_logger()

CLOCK_SUBJECT_PREFIX = "poker.clock."


def clock_subject(table_id: str) -> str:
    return CLOCK_SUBJECT_PREFIX + table_id


def lease_name(table_id: str) -> str:
    return f"table.{table_id}"


@dataclass(frozen=True, slots=True)
class _Seen:
    """What the keeper last read of a table: enough to know when to read it again."""

    seq: int
    clock: TurnClock | None
    options: TableOptions | None
    read_at: float  # monotonic: when the keeper last read the table from the log



class ClockKeeper:
    def __init__(self, repo: TableRepository, driver: Driver, leases: Leases,
                 now_ms: Callable[[], int] | None = None, tick_ms: int = DEFAULT_CLOCK_TICK_MS,
                 list_every_s: float = 1.0, refresh_s: float = 1.0,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.repo = repo
        self.driver = driver
        self.leases = leases
        self.now_ms = now_ms or repo.now_ms
        self.tick_ms = tick_ms
        self.list_every_s = list_every_s  # how often the log's table list is read
        self.refresh_s = refresh_s  # a kept table is read at least this often
        self.monotonic = monotonic
        self._listed: list[str] = []
        self._listed_at: float | None = None
        self._seen: dict[str, _Seen] = {}
        self._nudged: dict[str, TurnClock] = {}
        self._work: dict[str, asyncio.Task] = {}
        self._loop: asyncio.Task | None = None
        self.failures = Failures("keeping the table's clock", monotonic=monotonic)

    # --- running -------------------------------------------------------------------------

    def start(self) -> None:
        """Tick every ``tick_ms`` in the background (0: never; tests call :meth:`tick`)."""
        if self.tick_ms > 0 and self._loop is None:
            self._loop = asyncio.create_task(self._run())

    async def _run(self) -> None:
        period = self.tick_ms / 1000
        while True:
            try:
                await self.tick(wait=False)
            except asyncio.CancelledError:
                raise
            except Exception:  # logged; the next tick tries again
                log.exception("clock tick failed")
            await asyncio.sleep(period)

    async def close(self) -> None:
        """Stop ticking, finish nothing more, and hand the leases back at once."""
        if self._loop is not None:
            self._loop.cancel()
            await asyncio.gather(self._loop, return_exceptions=True)
            self._loop = None
        work = list(self._work.values())
        for task in work:
            task.cancel()
        await asyncio.gather(*work, return_exceptions=True)
        await self.leases.release_all()

    # --- one round -----------------------------------------------------------------------

    async def tick(self, wait: bool = True) -> None:
        """Renew the leases due, take the free ones of known tables, and look at every table
        held that may need it: time out a late player, nudge watchers when a countdown
        starts, run a pending automated step. ``wait``: return once that work is done (the
        background loop does not wait: a slow table must not hold the others up)."""
        for name in await self.leases.renew():
            self._seen.pop(name[len("table."):], None)
        tables = await self._table_ids()
        free = [t for t in tables if not self.leases.holds(lease_name(t))]
        if free:
            taken = await asyncio.gather(*(self.leases.acquire(lease_name(t)) for t in free))
            for table_id, ok in zip(free, taken):
                if ok:  # new to this keeper: look at it now
                    self._seen.pop(table_id, None)
        started = []
        for table_id in tables:
            if table_id in self._work or not self.leases.holds(lease_name(table_id)):
                continue
            if self.repo.halted(table_id) or self.failures.waiting(table_id):
                continue
            if not self._due(table_id):
                continue
            task = asyncio.create_task(self._keep(table_id))
            self._work[table_id] = task
            task.add_done_callback(lambda _t, tid=table_id: self._work.pop(tid, None))
            started.append(task)
        if wait and started:
            await asyncio.gather(*started)

    async def _table_ids(self) -> list[str]:
        """The log's tables (read at most every ``list_every_s``) and those cached here."""
        now = self.monotonic()
        if self._listed_at is None or now - self._listed_at >= self.list_every_s:
            self._listed = await self.repo.store.table_ids()
            self._listed_at = now
        return sorted(set(self._listed) | set(self.repo.cached_ids()))

    def _due(self, table_id: str) -> bool:
        """Whether the table may need something: never read, moved on here since, not read
        for ``refresh_s`` (moved on by another instance), or a countdown or deadline of the
        decision last seen has come."""
        seen = self._seen.get(table_id)
        if seen is None or self.monotonic() - seen.read_at >= self.refresh_s:
            return True
        cached = self.repo.cached(table_id)
        if cached is not None and cached.seq != seen.seq:
            return True
        clock = seen.clock
        if clock is None or seen.options is None:
            return False
        now = self.now_ms()
        if now >= clock.deadline_ms(seen.options):
            return True
        return now >= clock.countdown_ms(seen.options) and not same_decision(
            clock, self._nudged.get(table_id))

    async def _keep(self, table_id: str) -> None:
        try:
            seen, cached = self._seen.get(table_id), self.repo.cached(table_id)
            now = self.monotonic()
            if seen is not None and cached is not None and now - seen.read_at < self.refresh_s:
                # read a moment ago and moved on here since: this fold is current but for
                # what other instances did meanwhile, which the next refresh reads
                lt, read_at = cached, seen.read_at
            else:
                lt, read_at = await self.repo.load(table_id), now
            if lt.state is None:
                return
            if not self.leases.holds(lease_name(table_id)):
                return  # lost while reading
            if is_late(lt.clock, lt.state.options, self.now_ms()):
                lt = await self.repo.load(table_id)  # a time-out is decided on the log
                read_at = now
            if is_late(lt.clock, lt.state.options, self.now_ms()):
                refused_at = self.driver.outages.held(table_id, lt.clock)
                if refused_at is None:
                    await self._time_out(table_id, lt)
                else:
                    await self._restart_clock(table_id, lt, refused_at)
            elif T.table_step(lt.state) is not None or T.settleable(lt.state):
                # a driver died between steps, or money is still with the wallet
                await self.driver.advance(table_id, lt.seq)
            lt = self.repo.cached(table_id) or lt
            await self._nudge_countdown(table_id, lt)
            self._seen[table_id] = _Seen(lt.seq, lt.clock,
                                         lt.state.options if lt.state else None, read_at)
            self.failures.ok(table_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # reported once; a later tick tries again
            self.failures.failed(table_id, exc)

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
                    self._seen.pop(table_id, None)
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
                    lambda t: T.restart_clock(t, clock.seat, refused_at), min_version=lt.seq)
            except StoreFull:
                return  # still out of space: the clock stays held
            except IllegalAction as exc:  # the player acted meanwhile: that decision is over
                log.info("clock restart overtaken", table_id=table_id, reason=str(exc))
                self._seen.pop(table_id, None)
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
