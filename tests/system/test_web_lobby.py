"""The lobby's rows (services/web/lobby.py) against the in-process services (real gRPC with
mutual TLS, a real nats-server): a refresh asks the table service about the tables whose
commits moved, not about every table the log ever held, and a closed table is listed no
more (its fold is read from the log again at each ask: the caches let a closed table go)."""

from __future__ import annotations

from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.web.lobby import RECHECK_S, HandRates, Known, lobby_rows
from shared.infra.eventstore import EventStore
from tests.helpers.web import backend
from tests.helpers.web_table import CountingStub


async def test_a_refresh_asks_only_about_tables_that_moved_and_lists_no_closed_table(stack):
    store = await EventStore.connect(stack.nats_url, create=False)
    chan = stack.channel("table")
    try:
        b = backend(stack, store, chan)
        b.stub = counted = CountingStub(b.stub)
        async with stack.as_operator() as ops_chan:
            ops = table_pb2_grpc.TableServiceStub(ops_chan)
            for table_id, private in (("open", False), ("shut", False), ("mine", True)):
                await ops.CreateTable(tpb.CreateTableRequest(
                    table_id=table_id, command_id="create", settings=tpb.TableSettings(
                        game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_FIXED_LIMIT, small_bet=10,
                        private=private)))
            # nobody sits there, so closing it closes it at once
            await ops.CloseTable(tpb.CloseRequest(table_id="shut", command_id="close",
                                                  reason="test"))
            known: Known = {}
            now = [1000.0]

            async def rows_at(elapsed: float) -> list[dict]:
                now[0] += elapsed
                return await lobby_rows(b, HandRates(), known, clock=lambda: now[0])

            rows = await rows_at(0)
            assert [r["table_id"] for r in rows] == ["open"]  # not the closed, not the private
            assert counted.calls == {"GetState": 3}
            for _ in range(3):  # nothing moved: nobody is asked again
                assert await rows_at(RECHECK_S / 4) == rows
            assert counted.calls == {"GetState": 3}
            # the open table's row is checked again after a while; the others never
            assert await rows_at(RECHECK_S / 4) == rows
            assert counted.calls == {"GetState": 4}

            await ops.PauseTable(tpb.PauseRequest(table_id="open", paused=True,
                                                  command_id="pause"))
            rows = await rows_at(1)
            assert counted.calls == {"GetState": 5}  # the table that moved, alone
            assert [(r["table_id"], r["paused"]) for r in rows] == [("open", True)]
            await ops.CloseTable(tpb.CloseRequest(table_id="open", command_id="close",
                                                  reason="test"))
            assert await rows_at(1) == []
            assert counted.calls == {"GetState": 6}
            assert await rows_at(RECHECK_S * 10) == []  # and a closed table is not asked
            assert counted.calls == {"GetState": 6}
    finally:
        await chan.close()
        await store.close()
