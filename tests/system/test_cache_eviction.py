"""Caches that forget (shared/infra/tablecache.py), every service on real gRPC servers in one
process: a table forgotten by every cache between two actions plays on unchanged (the next
call folds it again from the log) and its log audits; a table nobody sits at, or closed,
leaves every cache at once; with more tables than POKER_CACHE_TABLES, no cache holds more
than that while they all play, and every table's log audits."""

from __future__ import annotations

from poker.table.v1 import table_pb2 as tpb

from shared.audit import audit_table
from shared.infra import metrics, tablecache
from shared.infra.tablecache import CacheSettings
from tests.helpers.tables import Table, clocked_stack


def reloads() -> float:
    return metrics.CACHE_RELOADS.labels("folds")._value.get()


async def assert_audits(t: Table) -> None:
    audit = audit_table(t.table_id, await t.store.read(t.table_id), t.stack.keyring())
    assert audit.ok, audit.failure


async def play_hand_out(t: Table, forget: bool) -> None:
    """Actions until the table's hand is over (``forget``: every cache drops the table
    before each one, and its view is the same after)."""
    hand = (await t.view()).hand_no
    while True:
        v = await t.view()
        if v.hand_no != hand or not v.to_act:
            return
        if forget:
            tablecache.release(t.table_id, reason="idle")
            assert tablecache.holding(t.table_id) == []
            assert await t.view() == v  # folded again from the log: the same table
        await t.call_or_check()


async def test_a_table_forgotten_between_two_actions_plays_on_unchanged(nats_server):
    async with clocked_stack(nats_server.url) as (stack, _clock, store):
        t = await Table.open(stack, store, "forgotten")
        before = reloads()
        for hand in (1, 2):
            await play_hand_out(t, forget=True)
            v = await t.view()
            assert v.hand_no == hand + 1 and v.to_act  # the next hand runs
        assert reloads() > before  # the services did fold it again
        await assert_audits(t)


async def test_a_table_nobody_sits_at_and_a_closed_one_leave_every_cache_at_once(nats_server):
    async with clocked_stack(nats_server.url) as (stack, _clock, store):
        left = await Table.open(stack, store, "left")
        closed = await Table.open(stack, store, "closed")
        await stack.keeper.tick()  # the keeper follows both
        assert stack.keeper.hubs.get("left") is not None

        await closed.stub.CloseTable(tpb.CloseRequest(table_id="closed",
                                                           command_id="close"))
        await play_hand_out(closed, forget=False)
        for seat in (1, 2):  # between hands at the other table: both players leave
            await left.stub.Leave(left.seat_request(seat))
        await play_hand_out(left, forget=False)
        for t in (left, closed):
            await stack.keeper.tick()  # (settles whatever money is still out)
            v = await t.view()  # a read of the table folds it, and forgets it again
            assert not v.seats or all(not s.player_id for s in v.seats)
            assert tablecache.holding(t.table_id) == []
            assert stack.keeper.hubs.get(t.table_id) is None  # nothing followed there
            await assert_audits(t)


async def test_the_bound_holds_with_more_tables_than_it(nats_server):
    bound = 2
    try:
        async with clocked_stack(nats_server.url, env={"POKER_CACHE_TABLES": str(bound)}) \
                as (stack, _clock, store):
            tables = [await Table.open(stack, store, f"bound-{i}") for i in range(5)]
            hands = {t.table_id: (await t.view()).hand_no for t in tables}
            playing = list(tables)
            while playing:  # one action at each table in turn: each evicts another
                for t in list(playing):
                    v = await t.view()
                    if v.hand_no != hands[t.table_id]:
                        playing.remove(t)
                        continue
                    await t.call_or_check()
                    assert max(n for _, n in tablecache.sizes()) <= bound, \
                        tablecache.sizes()
            for t in tables:
                assert (await t.view()).hand_no == hands[t.table_id] + 1
                await assert_audits(t)
    finally:
        tablecache.configure(CacheSettings())
