"""Deciding on a cached fold (issue 13's optimistic appends), over a real nats-server: a
service decides on the fold it holds and appends guarded by that fold's sequence; the log
refuses a stale fold, and the service catches up and decides again. A caller's commits
(``StepRequest.tail``) are folded only where they chain onto the cached fold, and a commit
the log does not hold (forged, or from a bug) costs one refused append, never a decision on
it: the service folds the table afresh from the log."""

from __future__ import annotations

from shared.infra import metrics
from shared.infra.eventstore import EventStore
from shared.infra.repository import LoadedTable, TableRepository, build_commit, digest, fold_commit
from shared.poker import table as T
from shared.poker.options import table_options

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
TID = "t1"


async def create(repo: TableRepository, seats: int) -> None:
    await repo.execute(TID, "create", digest("create", OPTIONS),
                       lambda t: T.create_table(t, TID, OPTIONS))
    for seat in range(1, seats + 1):
        await sit(repo, seat, f"p{seat}", command_id=f"sit-{seat}")


async def sit(repo: TableRepository, seat: int, player: str, command_id: str):
    return await repo.execute(TID, command_id, digest("sit", seat, player),
                              lambda t: T.sit_down(t, seat, player, 200, "digest"))


async def two_services(url: str) -> tuple[EventStore, TableRepository, EventStore,
                                           TableRepository]:
    a = await EventStore.connect(url)
    b = await EventStore.connect(url)
    return a, TableRepository(a, "table-a", recent=32), b, TableRepository(b, "table-b")


async def log_fold(store: EventStore) -> LoadedTable:
    lt = LoadedTable()
    for stored in await store.read(TID):
        lt = fold_commit(lt, stored)
    return lt


def conflicts() -> float:
    return metrics.APPEND_CONFLICTS._value.get()


async def test_a_stale_cache_is_refused_by_the_log_and_recovered(nats_server):
    """Two table services race on one table: each decides on its own cached fold without
    reading; the one whose fold is stale is refused by the log (its append is guarded by the
    sequence it decided on), reads what it missed, decides again, and lands."""
    a_store, a, b_store, b = await two_services(nats_server.url)
    try:
        await create(a, seats=2)
        seen = (await b.get(TID)).seq  # both at the same version
        await sit(a, 3, "alice", command_id="a3")  # b's fold is now stale
        before, b_store.reads = conflicts(), 0
        out = await b.execute(TID, "b4", digest("sit", 4, "bob"),
                              lambda t: T.sit_down(t, 4, "bob", 200, "digest"),
                              min_version=seen)
        assert conflicts() == before + 1  # decided on the stale fold: refused by the log
        assert b_store.reads >= 1  # ... then it read what it missed
        assert out.events == 1 and not out.duplicate
        log = await log_fold(a_store)
        assert [(s.seat, s.player_id) for s in log.state.seats] == [
            (1, "p1"), (2, "p2"), (3, "alice"), (4, "bob")]
        assert (await b.get(TID, out.version)).state == log.state
        assert (await a.get(TID)).state == log.state
    finally:
        await a_store.close()
        await b_store.close()


async def test_a_callers_tail_is_folded_without_reading_the_log(nats_server):
    a_store, a, b_store, b = await two_services(nats_server.url)
    try:
        await create(a, seats=2)
        seen = (await b.get(TID)).seq
        landed = await sit(a, 3, "alice", command_id="a3")
        tail = a.tail(TID, seen, landed.version)
        assert [c.seq for c in tail] == [landed.version]
        b.absorb_tail(TID, ((c.seq, c.data) for c in tail))
        b_store.reads, before = 0, conflicts()
        out = await b.execute(TID, "b4", digest("sit", 4, "bob"),
                              lambda t: T.sit_down(t, 4, "bob", 200, "digest"),
                              min_version=landed.version)
        assert b_store.reads == 0 and conflicts() == before  # no read, no refusal
        assert out.events == 1
        assert (await b.get(TID)).state == (await log_fold(a_store)).state
    finally:
        await a_store.close()
        await b_store.close()


async def test_a_forged_tail_costs_one_refusal_and_is_forgotten(nats_server):
    """A commit that chains onto the service's fold but is not in the log (a caller's bug
    or forgery) is folded, and the decision made on it is refused by the log; the service
    then folds the table afresh and decides on what the log holds: nothing of the forged
    commit reaches the log or stays in the cache."""
    a_store, a, b_store, b = await two_services(nats_server.url)
    try:
        await create(a, seats=2)
        for ahead in (1, 50):  # it claims the next sequence, or one far ahead
            b.forget(TID)
            cached = await b.get(TID)
            forged = build_commit(TID, 0, "forged", digest("forged"), "mallory",
                                  T.sit_down(cached.state, 5, "mallory", 200, "digest"),
                                  cached.last_hash)
            claimed = cached.seq + ahead
            b.absorb_tail(TID, [(claimed, forged)])
            assert b.cached(TID).state.seat(5) is not None  # folded: it chains
            before = conflicts()
            seat = 6 if ahead == 1 else 7
            out = await b.execute(TID, f"b{seat}", digest("sit", seat, "bob"),
                                  lambda t, seat=seat: T.sit_down(t, seat, f"bob{seat}", 200,
                                                                  "digest"),
                                  min_version=claimed)
            assert conflicts() == before + 1
            log = await log_fold(a_store)
            assert log.state.seat(5) is None  # the forged sit-down is nowhere in the log
            assert log.state.seat(seat) is not None and log.seq == (await b.get(TID)).seq
            assert b.cached(TID).state == log.state and out.version <= log.seq
    finally:
        await a_store.close()
        await b_store.close()


async def test_a_tail_that_does_not_chain_or_parse_is_ignored(nats_server):
    a_store, a, b_store, b = await two_services(nats_server.url)
    try:
        await create(a, seats=2)
        cached = await b.get(TID)
        landed = await sit(a, 3, "alice", command_id="a3")
        later = await sit(a, 4, "carol", command_id="a4")
        missing_one = a.tail(TID, landed.version, later.version)  # skips alice's commit
        b.absorb_tail(TID, [(c.seq, c.data) for c in missing_one])
        b.absorb_tail(TID, [(later.version + 1, b"not a commit")])
        assert b.cached(TID) == cached  # nothing folded
        b_store.reads = 0
        assert (await b.get(TID, later.version)).state == (await log_fold(a_store)).state
        assert b_store.reads == 1  # what did not chain is read from the log
    finally:
        await a_store.close()
        await b_store.close()


class BehindStore(EventStore):
    """The real store whose direct reads come from a replica a few commits behind (what a
    follower of a replicated stream may answer): its reads drop the last ``behind``."""

    behind = 0

    async def read(self, table_id: str, after_seq: int = 0):
        out = await super().read(table_id, after_seq)
        return out[:len(out) - self.behind] if self.behind else out


async def test_a_read_a_decision_hangs_on_is_completed_from_the_streams_leader(nats_server):
    """read_current: what a behind replica's read misses is read from the stream's leader,
    so a balance or a catch-up after a refused append sees every commit written."""
    store = await BehindStore.connect(nats_server.url)
    try:
        seq, sent = 0, []
        for i in range(5):
            seq, _ = await store.append(TID, f"commit {i}".encode(), seq, f"m{i}")
            sent.append((seq, f"commit {i}".encode()))
        store.behind = 2
        assert len(await store.read(TID)) == 3  # the replica is behind
        current = await store.read_current(TID)  # what the wallet and a catch-up use
        assert [(s.seq, s.data) for s in current] == sent
        assert [s.msg_id for s in current] == [f"m{i}" for i in range(5)]
        assert [(s.seq, s.data) for s in await store.read_current(TID, sent[1][0])] == sent[2:]
        assert await store.read_current("no-such-table") == []
    finally:
        await store.close()
