"""The action clock of RULES.md §7 through every service (gRPC servers in process, a real
nats-server), with time driven by a fake clock that every service shares: commit times and
the keeper's "now" both come from it, and the keeper ticks only when a test says so. Nothing
here waits in real time except for NATS and gRPC to deliver.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
import pytest_asyncio
from poker.betting.v1 import betting_pb2
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from services.table.requests import options_from
from shared.infra.rpc import BadRequest
from shared.poker import events as E
from shared.poker.errors import InvalidOptions
from shared.poker.events import ActionKind, Pot
from shared.poker.options import TimeoutPolicy
from tests.helpers.steps import StepStub
from tests.helpers.tables import (
    BONUS_MS,
    CLOCK_MS,
    DECISION_MS,
    T0,
    Table,
    clocked_stack,
    table_stub,
)


@pytest_asyncio.fixture
async def clocked(nats_server):
    """The stack on a fake clock; the keeper ticks only when a test calls ``tick()``."""
    async with clocked_stack(nats_server.url) as clocked:
        yield clocked


async def test_sources_policy_all_in_for_what_is_in_then_sat_out(clocked):
    """Facing a bet with chips already in, a late player is all in for what they put in:
    eligible for the pot so far, out of the side pot; the hand plays on without them and
    they are sat out from the next hand."""
    stack, clock, store = clocked
    t = await Table.open(stack, store, "src")
    await t.sit(3, post_big_blind=True)  # dealt in from hand 2
    await t.act(ActionKind.FOLD)  # hand 1 ends at once
    v = await t.view()
    assert v.hand_no == 2 and sum(s.in_hand for s in v.seats) == 3
    start_stacks = {s.seat: s.stack + s.bet for s in v.seats}
    while v.street == 0:
        v = await t.call_or_check()
    first = v.to_act
    v = await t.act(ActionKind.BET, 10)
    second = v.to_act
    v = await t.act(ActionKind.CALL)
    late = v.to_act
    assert v.legal.call == 10 and not v.legal.can_check
    put_in = start_stacks[late] - next(s.stack for s in v.seats if s.seat == late)
    assert put_in > 0
    deadline = v.deadline_unix_ms
    assert deadline == clock.ms + CLOCK_MS  # the clock started with the flop's bet, now

    clock.advance(CLOCK_MS - 1)
    await stack.keeper.tick()
    assert await t.events(E.PlayerTimedOut) == []
    clock.advance(1)
    await stack.keeper.tick()

    log = await t.log()
    timed_out = [(at, producer, e) for at, producer, e in log if isinstance(e, E.PlayerTimedOut)]
    assert timed_out == [(deadline, "betting", E.PlayerTimedOut(late, all_in=True))]
    v = await t.view()
    # the fold of the time-out sits the late player out from the next hand
    assert next(s for s in v.seats if s.seat == late).sitting_out
    assert v.to_act == 0 or v.to_act in (first, second)
    while v.hand_no == 2 and v.to_act:  # the other two check it down
        v = await t.call_or_check()

    pots = (await t.events(E.PotsFormed, hand_no=2))[-1].pots
    assert pots[0] == Pot(3 * put_in, tuple(sorted((first, second, late))))
    assert pots[1] == Pot(20, tuple(sorted((first, second))))
    awards = await t.events(E.PotAwarded, hand_no=2)
    by_pot = {i: sum(sh.amount for a in awards if a.pot_index == i for sh in a.shares)
              for i in (0, 1)}
    assert by_pot == {0: 3 * put_in, 1: 20}
    assert all(sh.seat != late for a in awards if a.pot_index == 1 for sh in a.shares)

    v = await t.view()
    assert v.hand_no == 3  # the other two play on; the late player sits out
    seat = {s.seat: s for s in v.seats}
    assert seat[late].sitting_out and not seat[late].in_hand
    assert seat[first].in_hand and seat[second].in_hand
    assert sum(s.stack for s in v.seats) + v.pot == 300  # the pot holds the bets


async def test_an_action_after_the_deadline_is_refused_and_the_keeper_times_it_out(clocked):
    """Between the deadline and the keeper's time-out, the player's action comes too late:
    refused, nothing appended; the keeper's time-out is what the log records."""
    stack, clock, store = clocked
    t = await Table.open(stack, store, "late", seats=3)
    v = await t.view()
    on_turn = v.to_act
    clock.advance(CLOCK_MS - 1)
    v = await t.act(ActionKind.CALL)  # one millisecond before the deadline: in time
    assert v.to_act != on_turn
    late = v.to_act
    clock.advance(CLOCK_MS)  # the deadline, and the keeper has not looked yet
    before = await t.log()
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await t.act(ActionKind.CALL)
    assert err.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert f"seat {late}'s time ran out" in err.value.details()
    assert await t.log() == before
    await stack.keeper.tick()
    timed_out = await t.events(E.PlayerTimedOut)
    assert [e.seat for e in timed_out] == [late]


async def test_check_fold_policy_checks_when_free_and_folds_facing_a_bet(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "cf", timeout_policy=ev.TIMEOUT_POLICY_CHECK_FOLD)
    v = await t.view()
    small, big = v.to_act, next(s.seat for s in v.seats if s.seat != v.to_act)
    v = await t.act(ActionKind.CALL)  # the big blind has nothing to call
    assert v.to_act == big and v.legal.can_check

    clock.advance(CLOCK_MS)
    await stack.keeper.tick()
    v = await t.view()
    assert v.street == 1 and v.to_act == big  # checked; the flop is dealt; big acts first
    assert v.deadline_unix_ms == clock.ms + CLOCK_MS  # a new decision, a new clock
    clock.advance(CLOCK_MS)
    await stack.keeper.tick()  # checks again (already sitting out: no second sit-out)
    v = await t.view()
    assert v.to_act == small
    await t.act(ActionKind.BET, 10)
    clock.advance(CLOCK_MS)
    await stack.keeper.tick()  # facing a bet: folds, chips in or not

    log = [e for _, _, e in await t.log()]
    outs = [i for i, e in enumerate(log) if isinstance(e, E.PlayerTimedOut)]
    assert [log[i] for i in outs] == [E.PlayerTimedOut(big)] * 3
    assert [log[i + 1].action for i in outs] == [ActionKind.CHECK, ActionKind.CHECK,
                                                  ActionKind.FOLD]
    assert [log[i + 1].seat for i in outs] == [big] * 3
    v = await t.view()
    assert v.hand_no == 1 and v.phase != "bet"  # nobody else to play with
    assert next(s for s in v.seats if s.seat == big).sitting_out

    # Back from sitting out: the next hand starts.
    await t.stub.SitOut(tpb.SitOutRequest(seat=t.seat_request(big), sit_out=False))
    assert (await t.view()).hand_no == 2


async def test_reconnect_on_the_clock_adds_the_bonus_once_per_decision(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "rc")
    v = await t.view()
    seat = v.to_act
    assert (v.countdown_unix_ms, v.deadline_unix_ms) == (T0 + DECISION_MS, T0 + CLOCK_MS)
    assert not v.clock_bonus

    clock.advance(25_000)  # in the countdown
    v = (await t.stub.Disconnect(t.seat_request(seat))).view
    assert v.deadline_unix_ms == T0 + CLOCK_MS
    assert not next(s for s in v.seats if s.seat == seat).connected
    v = (await t.stub.Reconnect(t.seat_request(seat))).view
    assert v.deadline_unix_ms == T0 + CLOCK_MS + BONUS_MS and v.clock_bonus
    assert next(s for s in v.seats if s.seat == seat).connected
    await t.stub.Disconnect(t.seat_request(seat))
    v = (await t.stub.Reconnect(t.seat_request(seat))).view  # once per decision
    assert v.deadline_unix_ms == T0 + CLOCK_MS + BONUS_MS

    with pytest.raises(grpc.aio.AioRpcError) as err:  # reconnecting while connected
        await t.stub.Reconnect(t.seat_request(seat))
    assert err.value.code() is grpc.StatusCode.FAILED_PRECONDITION

    clock.ms = T0 + CLOCK_MS  # the deadline without the bonus: still on the clock
    await stack.keeper.tick()
    assert await t.events(E.PlayerTimedOut) == []

    # The player acts; at their next decision the bonus is theirs again, once.
    await t.act(ActionKind.CALL)
    await t.act(ActionKind.CHECK)  # the big blind: the flop comes
    await t.act(ActionKind.CHECK)  # the big blind acts first after the flop
    v = await t.view()
    start = clock.ms
    assert v.to_act == seat and not v.clock_bonus
    assert v.deadline_unix_ms == start + CLOCK_MS
    await t.stub.Disconnect(t.seat_request(seat))
    v = (await t.stub.Reconnect(t.seat_request(seat))).view
    assert v.deadline_unix_ms == start + CLOCK_MS + BONUS_MS and v.clock_bonus

    clock.ms = start + CLOCK_MS + BONUS_MS - 1
    await stack.keeper.tick()
    assert await t.events(E.PlayerTimedOut) == []
    clock.ms = start + CLOCK_MS + BONUS_MS
    await stack.keeper.tick()
    assert await t.events(E.PlayerTimedOut) == [E.PlayerTimedOut(seat)]  # checked
    assert (await t.view()).to_act != seat


async def test_a_restarted_table_service_times_out_from_the_log_alone(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "rs")
    seat = (await t.view()).to_act
    await stack.stop_service("table")
    clock.ms = T0 + CLOCK_MS - 1
    await stack.start_service("table")  # a new process's worth of state: the log only
    t.stub = table_stub(stack)
    await stack.keeper.tick()
    assert await t.events(E.PlayerTimedOut) == []
    assert (await t.view()).deadline_unix_ms == T0 + CLOCK_MS

    clock.ms = T0 + CLOCK_MS
    await stack.keeper.tick()
    timed_out = [(at, e) for at, _, e in await t.log() if isinstance(e, E.PlayerTimedOut)]
    assert timed_out == [(T0 + CLOCK_MS, E.PlayerTimedOut(seat, all_in=True))]


async def test_watch_pushes_a_view_when_the_countdown_starts(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "wt")
    call = t.stub.Watch(tpb.ViewRequest(table_id="wt"))
    views = call.__aiter__()
    first = await asyncio.wait_for(views.__anext__(), 5)
    assert first.deadline_unix_ms == T0 + CLOCK_MS and first.server_unix_ms == T0

    clock.advance(DECISION_MS - 1)
    await stack.keeper.tick()  # not yet
    clock.advance(1)
    await stack.keeper.tick()  # the countdown starts: watchers get a view
    pushed = await asyncio.wait_for(views.__anext__(), 5)
    assert pushed.version == first.version and pushed.server_unix_ms == T0 + DECISION_MS
    assert pushed.countdown_unix_ms == pushed.server_unix_ms
    call.cancel()


async def test_betting_refuses_an_early_or_stale_time_out_and_racing_ones_make_one(clocked):
    stack, clock, store = clocked
    t = await Table.open(stack, store, "bt")
    v = await t.view()
    # as the table service (its clock keeper is the caller of TimeOut)
    betting = StepStub(stack.channel("betting", identity="table"))  # its step stream

    def request(started: int, command_id: str = "timeout:x") -> betting_pb2.TimeOutRequest:
        return betting_pb2.TimeOutRequest(
            step=step_pb2.StepRequest(table_id="bt", hand_no=v.hand_no, command_id=command_id),
            seat=v.to_act, clock_started_unix_ms=started)

    for started, now in ((T0, T0 + CLOCK_MS - 1), (T0 - 1, T0 + CLOCK_MS)):
        clock.ms = now
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await betting.TimeOut(request(started))
        assert err.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    replies = await asyncio.gather(*(betting.TimeOut(request(T0)) for _ in range(3)))
    assert sorted(r.duplicate for r in replies) == [False, True, True]
    assert len({r.version for r in replies}) == 1
    assert len(await t.events(E.PlayerTimedOut)) == 1


def test_clock_settings_map_to_table_options():
    base = dict(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, big_blind=2)
    default = options_from(tpb.TableSettings(**base))
    assert (default.decision_seconds, default.countdown_seconds,
            default.reconnect_bonus_seconds, default.timeout_policy) == (
        10, 20, 20, TimeoutPolicy.SOURCES)
    set_ = options_from(tpb.TableSettings(
        **base, decision_seconds=3, countdown_seconds=4, reconnect_bonus_seconds=0,
        timeout_policy=ev.TIMEOUT_POLICY_CHECK_FOLD))
    assert (set_.decision_seconds, set_.countdown_seconds, set_.reconnect_bonus_seconds,
            set_.timeout_policy) == (3, 4, 0, TimeoutPolicy.CHECK_FOLD)
    with pytest.raises(InvalidOptions):
        options_from(tpb.TableSettings(**base, countdown_seconds=-1))
    with pytest.raises(BadRequest):
        options_from(tpb.TableSettings(**base, timeout_policy=9))
