"""Threat 22: the NATS disk fills up. Appends fail loudly (UNAVAILABLE, "the event log is out
of space", marked ``poker-log-full``), nothing is half-appended, the table waits, the same
command lands once when space is back, and the action clock does not time a player out for
the outage (shared/poker/clock.py, services/table/keeper.py).

A full store is modelled the real way JetStream refuses for lack of room: the stream's
``max_bytes`` is set to its current size (discard policy "new"), so the server refuses the
next append ("maximum bytes exceeded"); setting it back is space coming back. Every service
runs on a fake clock the keeper ticks by (tests/helpers/tables.py).
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
import pytest_asyncio
from poker.table.v1 import table_pb2 as tpb

from shared.audit.auditor import audit_table
from shared.infra.eventstore import STREAM, StoreFull
from shared.infra.protomap import ACTION_KIND
from shared.infra.rpc import LOG_FULL_HEADER, log_full
from shared.poker import events as E
from shared.poker.events import ActionKind
from tests.helpers.tables import CLOCK_MS, Table, clocked_stack


@pytest_asyncio.fixture
async def clocked(nats_server):
    async with clocked_stack(nats_server.url) as clocked:
        yield clocked


async def _stream(store):
    return await store.nc.jsm().stream_info(STREAM)


async def _fill(store) -> int:
    """No room for one more commit; returns the stream's message count."""
    info = await _stream(store)
    config = info.config
    config.max_bytes = info.state.bytes
    await store.nc.jsm().update_stream(config)
    return info.state.messages


async def _free(store) -> None:
    config = (await _stream(store)).config
    config.max_bytes = -1
    await store.nc.jsm().update_stream(config)


def _act(t: Table, v: tpb.TableView, kind: ActionKind, command_id: str) -> tpb.ActRequest:
    return tpb.ActRequest(table_id=t.table_id, seat=v.to_act, seat_token=t.tokens[v.to_act],
                          hand_no=v.hand_no, action=ACTION_KIND.to_pb(kind),
                          command_id=command_id)


def _chips(v: tpb.TableView) -> dict[int, tuple[int, int]]:
    return {s.seat: (s.stack, s.bet) for s in v.seats}


async def test_the_store_refuses_with_a_clear_error_naming_no_half_commit(store):
    """The event store maps JetStream's refusal for lack of room to StoreFull, once."""
    await store.append("t", b"one", 0, msg_id="t:1")
    await _fill(store)
    with pytest.raises(StoreFull) as err:
        await store.append("t", b"two", 1, msg_id="t:2")
    assert "the event log is out of space" in str(err.value)
    assert "maximum bytes exceeded" in str(err.value)
    assert log_full(err.value)
    assert [s.data for s in await store.read("t")] == [b"one"]
    await _free(store)
    assert await store.append("t", b"two", 1, msg_id="t:2") == (2, False)


async def test_an_act_on_a_full_log_is_refused_clearly_and_lands_once_when_space_is_back(
        clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "full")
    v = await t.view()
    before_log, before_chips = await t.log(), _chips(v)
    messages = await _fill(store)

    request = _act(t, v, ActionKind.CALL, "call-1")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await t.stub.Act(request)
    assert err.value.code() is grpc.StatusCode.UNAVAILABLE  # what clients retry
    assert "the event log is out of space" in err.value.details()
    assert "retry with the same command id" in err.value.details()
    assert (LOG_FULL_HEADER, "1") in tuple(err.value.trailing_metadata())
    # nothing half-appended: no message, no event, no chip moved
    assert (await _stream(store)).state.messages == messages
    assert await t.log() == before_log
    assert _chips(await t.view()) == before_chips

    await _free(store)
    after = (await t.stub.Act(request)).view
    assert after.to_act != v.to_act
    again = (await t.stub.Act(request)).view  # the same command id: its outcome, once
    assert again.version == after.version
    acts = [e for e in await t.events(E.ActionTaken) if e.seat == v.to_act]
    assert [(e.action, e.added) for e in acts] == [(ActionKind.CALL, 1)]
    final = await t.view()
    assert sum(s.stack for s in final.seats) + final.pot == 200  # chips conserved (pot: bets too)


async def test_a_command_on_a_full_log_is_answered_at_once_not_held_for_the_retry_window(
        clocked):
    """The table service does not retry its peer's log-full refusal (PEER_RETRY's
    ``while_log_full`` False): the client hears UNAVAILABLE (log full) at once, not after the
    15 s its peers' calls are otherwise retried for, so that it is the client who retries."""
    stack, clock, store = clocked
    t = await Table.open(stack, store, "prompt")
    v = await t.view()
    await _fill(store)
    for n, kind in enumerate((ActionKind.CALL, ActionKind.FOLD)):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            # the answer's deadline: well under the table service's 15 s retry window
            await asyncio.wait_for(t.stub.Act(_act(t, v, kind, f"prompt-{n}")), timeout=3)
        assert err.value.code() is grpc.StatusCode.UNAVAILABLE
        assert log_full(err.value)
        assert "the event log is out of space" in err.value.details()
    await _free(store)
    assert (await t.stub.Act(_act(t, v, ActionKind.CALL, "prompt-0"))).view.to_act != v.to_act


async def test_a_player_on_turn_is_not_timed_out_for_an_outage(clocked):
    """An outage longer than the whole clock: the keeper's time-out is refused (nothing
    lands), and once space is back the decision starts again at the first commit the log
    takes (ClockRestarted), so the player gets a whole decision time from then, as every
    fold of the log agrees (the audit checks the time-out against it)."""
    stack, clock, store = clocked
    t = await Table.open(stack, store, "outage")
    v = await t.view()
    on_turn, deadline = v.to_act, v.deadline_unix_ms
    assert deadline == clock.ms + CLOCK_MS
    messages = await _fill(store)

    clock.advance(CLOCK_MS + 60_000)  # the outage outlasts the decision
    await stack.keeper.tick()
    await stack.keeper.tick()
    assert (await _stream(store)).state.messages == messages  # the time-out did not land
    assert await t.events(E.PlayerTimedOut) == []

    await _free(store)
    resumed_at = clock.ms
    await stack.keeper.tick()  # the first append once space is back restarts the clock
    assert await t.events(E.PlayerTimedOut) == []
    assert await t.events(E.ClockRestarted) == [E.ClockRestarted(on_turn, resumed_at)]
    v = await t.view()
    assert v.to_act == on_turn and v.deadline_unix_ms == resumed_at + CLOCK_MS

    clock.advance(CLOCK_MS - 1)
    await stack.keeper.tick()
    assert await t.events(E.PlayerTimedOut) == []
    clock.advance(1)
    await stack.keeper.tick()
    assert [e.seat for e in await t.events(E.PlayerTimedOut)] == [on_turn]
    audit = audit_table(t.table_id, await store.read(t.table_id), stack.keyring())
    assert audit.ok, audit


async def test_a_refused_action_retried_after_the_outage_is_not_late(clocked):
    """The player acted in time but the log was full; the outage ran past their deadline.
    Their client's retry (the same command id) once space is back lands, even before the
    keeper has looked: the clock was held, not run out."""
    stack, clock, store = clocked
    t = await Table.open(stack, store, "retry")
    v = await t.view()
    await _fill(store)
    request = _act(t, v, ActionKind.CALL, "call-in-time")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await t.stub.Act(request)
    assert err.value.code() is grpc.StatusCode.UNAVAILABLE

    clock.advance(CLOCK_MS + 5_000)
    await _free(store)
    after = (await t.stub.Act(request)).view
    assert after.to_act != v.to_act
    await stack.keeper.tick()  # nothing of that decision is left to time out
    assert await t.events(E.PlayerTimedOut) == []
    assert await t.events(E.ClockRestarted) == []
    assert [e.seat for e in await t.events(E.ActionTaken)] == [v.to_act]
