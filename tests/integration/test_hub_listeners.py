"""A table hub's listeners (services/table/hub.py; the clock keeper is one), over a real
nats-server, with the commits appended by another process (a second table service, or a step
service whose reply comes after the log's message):

- the listeners learn of every version the hub folds, the one that leaves the table vacant
  too, although the caches let that fold go at once: the keeper stops following a table only
  when it hears of its vacancy, so a missed one kept the table's hub, subscriptions and fold
  for the life of the process (found by a soak: the table service grew by about 220 bytes an
  action, every fold of the tables whose last commit the hub folded first);
- a hub holds no fold of its table between looks: what the caches forget is freed."""

from __future__ import annotations

import asyncio
import gc

from services.table.hub import Hubs
from shared.infra import tablecache
from shared.infra.repository import LoadedTable, digest
from shared.poker import table as T
from tests.integration.test_stale_caches import TID, create, two_services

DEADLINE_S = 10.0


class Listener:
    """What a listener was told: each version, and an event per version awaited."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.vacant_at: int | None = None
        self._moved = asyncio.Condition()

    def __call__(self, lt: LoadedTable) -> None:
        assert lt.state is not None
        self.seqs.append(lt.seq)
        if lt.state.vacant:
            self.vacant_at = lt.seq
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._moved:
            self._moved.notify_all()

    async def told(self, seq: int) -> None:
        async with self._moved:
            await asyncio.wait_for(self._moved.wait_for(lambda: seq in self.seqs), DEADLINE_S)


async def test_the_fold_that_leaves_a_table_vacant_is_told_to_the_listeners(nats_server):
    a_store, a, b_store, b = await two_services(nats_server.url)
    hubs = Hubs(a, views=None)  # type: ignore[arg-type] - no watchers: no views are made
    try:
        await create(b, seats=1)
        at = (await a.get(TID)).seq  # this process holds the table's fold
        listener = Listener()
        await hubs.follow(TID, listener)
        await listener.told(at)  # the hub's first look

        # another process: the last player leaves, and the table is vacant
        left = await b.execute(TID, "leave-1", digest("leave", 1), lambda t: T.leave(t, 1))
        await listener.told(left.version)
        assert listener.vacant_at == left.version
        assert listener.seqs == sorted(set(listener.seqs))  # each version once, in order
        assert a.cached(TID) is None  # the caches let the vacant table go at once
    finally:
        await hubs.close()
        await a_store.close()
        await b_store.close()


async def test_a_hub_holds_no_fold_between_its_looks(nats_server):
    a_store, a, b_store, b = await two_services(nats_server.url)
    hubs = Hubs(a, views=None)  # type: ignore[arg-type]
    try:
        await create(b, seats=2)
        listener = Listener()
        await hubs.follow(TID, listener)
        await listener.told((await a.get(TID)).seq)  # the hub has looked at the table
        tablecache.release(TID, reason="idle")  # every cache of the process forgets it
        gc.collect()
        held = [o for o in gc.get_objects() if isinstance(o, LoadedTable)
                and o.state is not None and o.state.table_id == TID]
        assert held == [], [[type(r).__name__ for r in gc.get_referrers(o)] for o in held]
        assert hubs.get(TID) is not None  # still followed: the next look folds it again
        sat = await b.execute(TID, "sit-3", digest("sit", 3, "carol"),
                              lambda t: T.sit_down(t, 3, "carol", 200, "digest"))
        await listener.told(sat.version)
    finally:
        await hubs.close()
        await a_store.close()
        await b_store.close()
