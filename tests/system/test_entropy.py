"""The entropy source failing (threat 21, issue 15): every secret the tables rely on comes from
one CSPRNG source (shared/infra/randomness.entropy); when it fails or returns short, the dealer
refuses to commit a deck (UNAVAILABLE, saying so), nothing is stored or appended, and the hand
goes on once the source is healthy. Real services (in process, mutual TLS) and nats-server."""

from __future__ import annotations

import grpc
import pytest
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from services.table.server import CARRY_ON_S
from shared.infra import randomness
from shared.infra.eventstore import EventStore
from shared.infra.waiting import until
from tests.helpers.steps import StepStub

TABLE = "entropy"


async def events_of(store: EventStore) -> list[str]:
    from shared.infra.commits import read_envelopes
    out = []
    for stored in await store.read(TABLE):
        out += [env.WhichOneof("body") for env in read_envelopes(stored.data)[1]]
    return out


@pytest.mark.parametrize("failure", ["raises", "short"])
async def test_no_deck_is_committed_without_entropy_and_the_hand_resumes(
        stack, table_stub, monkeypatch, failure):
    await table_stub.CreateTable(tpb.CreateTableRequest(
        table_id=TABLE, command_id="create", settings=tpb.TableSettings(
            game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1, big_blind=2)))
    await stack.deposit("p1", 100)
    await stack.deposit("p2", 100)
    await table_stub.SitDown(tpb.SitDownRequest(table_id=TABLE, seat=1, buy_in=100,
                                                command_id="sit-1"))
    real = randomness._source

    def broken(n: int) -> bytes:  # the hand key's 32 bytes fail; event ids still work
        if n == 32:
            if failure == "raises":
                raise OSError("getrandom failed")
            return real(n)[:5]
        return real(n)

    monkeypatch.setattr(randomness, "_source", broken)
    # The sit-down that starts the hand is in the log: it answers OK (with the table waiting
    # for its deck) within its deadline, shorter than the driver's retries of the dealer,
    # instead of DEADLINE_EXCEEDED for a command that was written.
    sat = await table_stub.SitDown(tpb.SitDownRequest(table_id=TABLE, seat=2, buy_in=100,
                                                      command_id="sit-2"),
                                   timeout=CARRY_ON_S + 5)
    assert sat.seat_token and sat.version > 0
    store = await EventStore.connect(stack.nats_url, create=False)
    try:
        view = await table_stub.GetState(tpb.ViewRequest(table_id=TABLE))
        assert view.hand_no == 1 and view.phase == "commit"  # waiting for a deck
        assert "deck_committed" not in await events_of(store)
        async with stack.channel("dealer", identity="table") as chan:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await StepStub(chan).CommitDeck(  # the dealer's step stream
                    
                    step_pb2.StepRequest(table_id=TABLE, hand_no=1, command_id="drv:try",
                                         version=view.version), timeout=10)
        assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
        assert "random source" in refused.value.details()
        assert "deck_committed" not in await events_of(store)  # nothing appended

        monkeypatch.setattr(randomness, "_source", real)  # healthy again: the hand goes on

        async def dealt():  # the deck committed, the blinds posted, the cards dealt
            v = await table_stub.GetState(tpb.ViewRequest(table_id=TABLE))
            return v.to_act and v
        resumed = await until(dealt, 20, "the hand dealt once entropy is back")
        assert resumed.hand_no == 1 and resumed.to_act
        assert (await events_of(store)).count("deck_committed") == 1
    finally:
        await store.close()
