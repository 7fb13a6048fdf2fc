"""The step the test suite adds (tests/helpers/new_step.py: a class, a decision, one entry in
shared/poker/steprules.py) is taken by the table service's driver, sent to the owner the
entry names (the showdown service, on its step stream, which decides a house step from the
map alone), and the log audits. The other consumers: tests/unit/test_a_new_step.py."""

from __future__ import annotations

import asyncio
import random

from services.pokerctl.botclient import play
from services.pokerctl.bots_cmd import create_and_seat, decode_commit, plan_tables
from shared.audit import audit_table
from shared.infra.eventstore import EventStore
from shared.poker import events as E
from tests.helpers.new_step import NOTE, new_step
from tests.system.test_faults import command_ids


async def test_the_table_service_takes_the_new_step(stack, client_stub, sponsor, nats_server):
    [plan] = plan_tables(1, game="holdem", structure="no_limit", run_id="newstep")
    with new_step() as taken:
        bots = await create_and_seat(client_stub, plan, 3, sponsor)
        await asyncio.wait_for(play(client_stub, bots, 2, random.Random(1)), timeout=60)
        store = await EventStore.connect(nats_server.url, create=False)
        try:
            stored = await store.read(plan.table_id)
        finally:
            await store.close()
        audit = audit_table(plan.table_id, stored, stack.keyring())
    assert audit.ok, audit.failure
    hands = audit.hands
    assert hands >= 2 and set(taken) >= set(range(1, hands + 1))
    ids = command_ids(stored)
    assert sum(":TakeRakeNoted:" in i for i in ids) == hands
    assert not any(":TakeRake:" in i for i in ids)
    notes = [e.reason for s in stored for e in decode_commit(s.data, stack.keyring())
             if isinstance(e, E.RakeTaken)]
    assert notes == [NOTE] * hands
