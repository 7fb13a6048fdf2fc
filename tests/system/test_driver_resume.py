"""A table driver that dies is replaced by any other that reads the log: the next step is
derived from the fold alone."""

from __future__ import annotations

import asyncio

from poker.betting.v1 import betting_pb2
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from tests.helpers.steps import StepStub
from tests.helpers.tables import SeatStubs


async def test_a_restarted_table_service_carries_the_hand_on(stack):
    table = SeatStubs(stack, {})  # seat N as player pN, the rest as an operator
    settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                 small_blind=1, big_blind=2)
    await table.CreateTable(tpb.CreateTableRequest(table_id="r1", settings=settings,
                                                   command_id="c"))
    for seat in (1, 2):
        await stack.deposit(f"p{seat}", 100)
        await table.SitDown(tpb.SitDownRequest(table_id="r1", seat=seat, buy_in=100,
                                               command_id=f"s{seat}"))
    view = await table.GetState(tpb.ViewRequest(table_id="r1"))
    assert view.hand_no == 1 and view.to_act

    # The table service (the driver) goes away; the player's fold reaches betting directly,
    # so the hand's end (pots, award, reveal) and the next hand are left undone (the test
    # calls betting as the table service: the only caller it accepts).
    await stack.stop_service("table")
    betting = StepStub(stack.channel("betting", identity="table"))  # its step stream
    await betting.Act(betting_pb2.ActRequest(
        step=step_pb2.StepRequest(table_id="r1", hand_no=1, command_id="fold-1"),
        seat=view.to_act, action=ev.ACTION_KIND_FOLD))

    # A new table service reads the log and carries on: hand 1 settles, hand 2 starts.
    await stack.start_service("table")
    table = SeatStubs(stack, {})  # (channels to where it listens now)

    async def next_hand_waiting():
        async for v in table.Watch(tpb.ViewRequest(table_id="r1")):
            if v.hand_no == 2 and v.to_act:
                return v

    view = await asyncio.wait_for(next_hand_waiting(), timeout=15)
    assert sum(s.stack for s in view.seats) + view.pot + view.rake == 200
