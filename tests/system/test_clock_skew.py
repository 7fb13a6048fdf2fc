"""Clock skew (threat 20): services whose clocks disagree by seconds still time out the right
player at the right moment. The table service is the table's one time source
(shared/poker/clock.py): every step it asks for carries its time, the service taking it stamps
its commit with that time (and the betting service judges a time-out late by it), so the
betting and dealer services' own clocks, skewed here, enter no decision. Real services in
process on a fake clock; the keeper ticks only when a test says so.
"""

from __future__ import annotations

import grpc
import pytest
from poker.betting.v1 import betting_pb2
from poker.engine.v1 import step_pb2

from shared.audit.auditor import audit_table
from shared.infra.commits import parse_commit
from shared.infra.protomap import ACTION_KIND
from shared.infra.repository import LoadedTable, fold_commit
from shared.poker import events as E
from shared.poker.clock import CLOCK_TOLERANCE_MS
from shared.poker.events import ActionKind
from tests.helpers.steps import StepStub
from tests.helpers.tables import CLOCK_MS, Table, clocked_stack


@pytest.mark.parametrize("skew_ms", [{"betting": 7_000, "dealer": -5_000},
                                     {"betting": -7_000, "dealer": 5_000}],
                         ids=["betting-ahead", "betting-behind"])
async def test_the_player_on_turn_is_timed_out_at_the_keepers_deadline(nats_server, skew_ms):
    async with clocked_stack(nats_server.url, skew_ms=skew_ms) as (stack, clock, store):
        t = await Table.open(stack, store, "skew")
        v = await t.view()
        assert v.to_act and v.hand_no == 1
        # every commit, whoever appended it (dealer, betting, table), is on the table's time
        assert {(at, producer) for at, producer, _ in await t.log()} >= {
            (clock.ms, "dealer"), (clock.ms, "betting")}
        assert {at for at, _, _ in await t.log()} == {clock.ms}
        deadline = v.deadline_unix_ms
        assert deadline == clock.ms + CLOCK_MS
        late = v.to_act

        clock.advance(CLOCK_MS - 1)  # not before the deadline, whatever betting's clock says
        await stack.keeper.tick()
        assert await t.events(E.PlayerTimedOut) == []
        clock.advance(1)
        await stack.keeper.tick()  # once: not refused, not retried tick after tick

        timed_out = [(at, producer, e.seat) for at, producer, e in await t.log()
                     if isinstance(e, E.PlayerTimedOut)]
        assert timed_out == [(deadline, "betting", late)]  # at the keeper's time exactly
        assert not stack.keeper.failures.waiting("skew")
        audit = audit_table("skew", await store.read("skew"), stack.keyring())
        assert audit.ok, audit


async def test_a_step_outside_the_tolerance_is_refused_and_nothing_appended(nats_server):
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "far")
        v = await t.view()
        before = await store.read("far")
        started = clock.ms  # the decision's clock started with the commits above
        # as the table service, the only caller of the betting service
        betting = StepStub(stack.channel("betting", identity="table"))  # its step stream
        for off in (CLOCK_TOLERANCE_MS + 1, -CLOCK_TOLERANCE_MS - 1):
            clock.advance(CLOCK_MS)  # the player is late by any clock but the skewed one
            step = step_pb2.StepRequest(table_id="far", hand_no=v.hand_no,
                                        command_id=f"timeout:far{off}",
                                        now_unix_ms=clock.ms + off)
            fold = ACTION_KIND.to_pb(ActionKind.FOLD)
            for call in (betting.TimeOut(betting_pb2.TimeOutRequest(
                             step=step, seat=v.to_act, clock_started_unix_ms=started)),
                         betting.Act(betting_pb2.ActRequest(step=step, seat=v.to_act,
                                                            action=fold))):
                with pytest.raises(grpc.aio.AioRpcError) as err:
                    await call
                assert err.value.code() is grpc.StatusCode.UNAVAILABLE
                assert f"{off} ms from this service's clock" in err.value.details()
                assert "tolerated" in err.value.details()
        assert await store.read("far") == before  # nothing appended


async def test_events_are_ordered_by_sequence_not_by_time(nats_server):
    """A commit stamped earlier than the one before it (the table service's time may step
    back, within the tolerance) folds in sequence order like any other."""
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "seq")
        v = await t.view()
        betting = StepStub(stack.channel("betting", identity="table"))  # its step stream
        back = clock.ms - CLOCK_TOLERANCE_MS // 2
        reply = await betting.Act(betting_pb2.ActRequest(
            step=step_pb2.StepRequest(table_id="seq", hand_no=v.hand_no, command_id="act:back",
                                      now_unix_ms=back),
            seat=v.to_act, action=ACTION_KIND.to_pb(ActionKind.FOLD)))
        assert reply.events
        commits = await store.read("seq")
        times = [parse_commit(c.data).envelope(0).occurred_at_unix_ms for c in commits]
        assert times[-1] == back < times[-2] == clock.ms  # stamped before its predecessor
        lt = LoadedTable()
        for stored in commits:  # a fresh fold, in stream order
            lt = fold_commit(lt, stored)
        assert lt.seq == commits[-1].seq == reply.version
        assert (await t.events(E.ActionTaken))[-1].seat == v.to_act
        assert lt.state is not None and lt.state.hand is not None
        assert lt.state.hand.to_act != v.to_act  # the fold of the earlier-stamped commit
        audit = audit_table("seq", commits, stack.keyring())
        assert audit.ok, audit
