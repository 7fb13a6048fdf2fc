"""A step's tail (StepRequest.tail: the commits the table service sends a service that has
not folded them) at the internal API, with the services on real gRPC servers: a tail that is
too long or names no sequence is refused (INVALID_ARGUMENT) and changes nothing; a junk tail
is ignored and the step is decided on the log."""

from __future__ import annotations

import grpc
import pytest
from poker.betting.v1 import betting_pb2
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from shared.infra.eventstore import EventStore
from shared.infra.rpc import MAX_TAIL
from tests.helpers.steps import StepStub

TABLE = "tails"


async def seated(stack, table_stub) -> tpb.TableView:
    settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                 small_blind=1, big_blind=2)
    await table_stub.CreateTable(tpb.CreateTableRequest(table_id=TABLE, settings=settings,
                                                        command_id="create"))
    for seat in (1, 2):
        await stack.deposit(f"p{seat}", 100)
        await table_stub.SitDown(tpb.SitDownRequest(table_id=TABLE, seat=seat, buy_in=100,
                                                    command_id=f"sit-{seat}"))
    view = await table_stub.GetState(tpb.ViewRequest(table_id=TABLE))
    assert view.hand_no == 1 and view.to_act
    return view


def act(view: tpb.TableView, command_id: str, tail=()) -> betting_pb2.ActRequest:
    step = step_pb2.StepRequest(table_id=TABLE, hand_no=view.hand_no, command_id=command_id,
                                version=view.version)
    for seq, data in tail:
        step.tail.add(seq=seq, data=data)
    return betting_pb2.ActRequest(step=step, seat=view.to_act, action=ev.ACTION_KIND_CALL)


@pytest.mark.parametrize("tail, says", [
    ([(i + 1, b"x") for i in range(MAX_TAIL + 1)], f"at most {MAX_TAIL} commits"),
    ([(0, b"x")], "stream sequence"),
])
async def test_a_bad_tail_is_refused_and_changes_nothing(stack, table_stub, tail, says):
    view = await seated(stack, table_stub)
    store = await EventStore.connect(stack.nats_url, create=False)
    try:
        before = (await store.last(TABLE)).seq
        async with stack.channel("betting", identity="table") as chan:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await StepStub(chan).Act(
                    act(view, "drv:bad-tail", tail), timeout=10)
        assert err.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert says in err.value.details()
        assert (await store.last(TABLE)).seq == before  # nothing appended
    finally:
        await store.close()


async def test_a_junk_tail_is_ignored_and_the_step_decided_on_the_log(stack, table_stub):
    view = await seated(stack, table_stub)
    junk = [(view.version + 1, b"\x00junk"), (view.version + 2, b"")]
    async with stack.channel("betting", identity="table") as chan:
        reply = await StepStub(chan).Act(
            act(view, "drv:junk-tail", junk), timeout=10)
    assert reply.events >= 1 and reply.version > view.version
    after = await table_stub.GetState(tpb.ViewRequest(table_id=TABLE))
    assert after.version >= reply.version and after.to_act != view.to_act
