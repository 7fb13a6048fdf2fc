"""Clock failover with real processes: two table-service instances share the tables through
leases; kill -9 the one that holds a table while a player's clock runs, and the other takes
the lease, times that player out and the table plays on. Real time here (a 1 + 1 s clock, a
1 s lease), waited on as conditions with deadlines, never as fixed sleeps."""

from __future__ import annotations

import time

import nats
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.up import LocalCluster
from services.table.keeper import lease_name
from shared.infra import natsconn
from shared.infra.bearer import bearer_metadata
from shared.infra.codec import decode_body
from shared.infra.eventstore import EventStore
from shared.infra.identity import OPERATOR, PLAYER
from shared.infra.lease import DEFAULT_BUCKET
from shared.infra.waiting import until
from shared.poker import events as E

TABLE = "fo"


async def events(store: EventStore) -> list[tuple[str, object]]:
    out = []
    for stored in await store.read(TABLE):
        commit = ev.Commit()
        commit.ParseFromString(stored.data)
        for raw in commit.events:
            env = ev.EventEnvelope()
            env.ParseFromString(raw)
            out.append((env.producer, decode_body(env)))
    return out


async def test_kill_9_the_owner_while_a_clock_runs(tmp_path, monkeypatch):
    monkeypatch.setenv("POKER_LEASE_TTL_MS", "1000")
    monkeypatch.setenv("POKER_CLOCK_TICK_MS", "50")
    monkeypatch.setenv("POKER_INSTANCE_ID", "table")
    cluster = LocalCluster(tmp_path, base_port=None, log_level="INFO")
    nc = store = None
    channels = []
    try:
        await cluster.start()
        await cluster.add_replica("table", "table-b", env={"POKER_INSTANCE_ID": "table-b"})
        stubs = {}
        for name in ("table", "table-b"):
            channels.append(cluster.channel(name))
            stubs[name] = table_pb2_grpc.TableServiceStub(channels[-1])
        store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
        nc = await natsconn.connect(cluster.nats_url, name="test", ca=cluster.nats_ca)
        kv = await nc.jetstream().key_value(DEFAULT_BUCKET)

        stub = stubs["table"]

        def auth(subject: str, *roles: str) -> tuple:  # a token of the cluster's issuer
            token = cluster.issuer.token(subject, roles or (PLAYER,))
            return bearer_metadata(token)

        operator = auth("ops", OPERATOR)
        settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                     small_blind=1, big_blind=2, decision_seconds=1,
                                     countdown_seconds=1)
        await stub.CreateTable(tpb.CreateTableRequest(table_id=TABLE, settings=settings,
                                                      command_id="create"), metadata=operator)

        async def holder() -> str | None:
            try:
                return (await kv.get(lease_name(TABLE))).value.decode()
            except nats.js.errors.KeyNotFoundError:
                return None

        owner = await until(holder, timeout=5)  # one instance holds the new table
        survivor = "table-b" if owner == "table" else "table"
        tokens = {}
        sponsor = cluster.sponsor()  # the cashier: chips in the players' wallets
        for seat in (1, 2):
            await sponsor.fund(f"p{seat}", 100)
            reply = await stub.SitDown(tpb.SitDownRequest(
                table_id=TABLE, seat=seat, buy_in=100, command_id=f"sit-{seat}"),
                metadata=auth(f"p{seat}"))
            tokens[seat] = reply.seat_token
        view = await stub.GetState(tpb.ViewRequest(table_id=TABLE), metadata=operator)
        late = view.to_act
        assert view.hand_no == 1 and late and view.deadline_unix_ms
        cluster.kill(owner)  # kill -9, with the player on the clock
        killed_at = int(time.time() * 1000)
        assert killed_at < view.deadline_unix_ms, "the clock ran out before the kill"

        async def timed_out():
            found = [(p, e) for p, e in await events(store) if isinstance(e, E.PlayerTimedOut)]
            return found or None

        found = await until(timed_out, timeout=15)
        assert found == [("betting", E.PlayerTimedOut(late, all_in=True))]
        assert await holder() == survivor
        # The hand was carried on to its end, the late player sat out from the next one.
        await until(lambda: _has(store, E.HandEnded), timeout=10)
        view = await stubs[survivor].GetState(tpb.ViewRequest(table_id=TABLE),
                                              metadata=operator)
        assert next(s for s in view.seats if s.seat == late).sitting_out

        # The late player comes back through the survivor; the table plays on.
        await stubs[survivor].SitOut(tpb.SitOutRequest(
            seat=tpb.SeatRequest(table_id=TABLE, seat=late, seat_token=tokens[late],
                                 command_id="back"), sit_out=False), metadata=auth(f"p{late}"))

        async def hand_two():
            return any(isinstance(e, E.HandStarted) and e.hand_no == 2
                       for _, e in await events(store))

        await until(hand_two, timeout=10)
    finally:
        for ch in channels:
            await ch.close()
        if nc is not None:
            await nc.close()
        if store is not None:
            await store.close()
        await cluster.stop()


async def _has(store: EventStore, kind: type) -> bool:
    return any(isinstance(e, kind) for _, e in await events(store))


async def test_a_table_busy_in_one_process_is_kept_by_the_slot_holder_without_the_list(
        tmp_path, monkeypatch):
    """The keeper reads the log's whole table list only as a safety net (it grows with every
    table ever made): a table made busy through the instance that does not hold its clock
    slot is announced, and the holder times out its late player, with the list read once an
    hour here."""
    monkeypatch.setenv("POKER_LEASE_TTL_MS", "1000")
    monkeypatch.setenv("POKER_CLOCK_TICK_MS", "50")
    monkeypatch.setenv("POKER_CLOCK_LIST_S", "3600")
    monkeypatch.setenv("POKER_INSTANCE_ID", "table")
    cluster = LocalCluster(tmp_path, base_port=None, log_level="INFO")
    nc = store = None
    channels = []
    try:
        await cluster.start()
        await cluster.add_replica("table", "table-b", env={"POKER_INSTANCE_ID": "table-b"})
        stubs = {}
        for name in ("table", "table-b"):  # the table-service processes
            channels.append(cluster.channel(name))
            stubs[name] = table_pb2_grpc.TableServiceStub(channels[-1])
        assert len(stubs) >= 2
        store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
        nc = await natsconn.connect(cluster.nats_url, name="test", ca=cluster.nats_ca)
        kv = await nc.jetstream().key_value(DEFAULT_BUCKET)

        def auth(subject: str, *roles: str) -> tuple:
            return bearer_metadata(cluster.issuer.token(subject, roles or (PLAYER,)))

        async def holder() -> str | None:
            try:
                return (await kv.get(lease_name(TABLE))).value.decode()
            except nats.js.errors.KeyNotFoundError:
                return None

        owner = await until(holder, timeout=10)
        assert owner in stubs
        # every command through an instance without the slot
        stub = next(s for name, s in stubs.items() if name != owner)
        settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                     small_blind=1, big_blind=2, decision_seconds=1,
                                     countdown_seconds=1)
        await stub.CreateTable(tpb.CreateTableRequest(table_id=TABLE, settings=settings,
                                                      command_id="create"),
                               metadata=auth("ops", OPERATOR))
        sponsor = cluster.sponsor()
        for seat in (1, 2):
            await sponsor.fund(f"p{seat}", 100)
            await stub.SitDown(tpb.SitDownRequest(table_id=TABLE, seat=seat, buy_in=100,
                                                  command_id=f"sit-{seat}"),
                               metadata=auth(f"p{seat}"))
        view = await stub.GetState(tpb.ViewRequest(table_id=TABLE),
                                   metadata=auth("ops", OPERATOR))
        assert view.hand_no == 1 and view.to_act
        assert await holder() == owner  # the slot did not move

        async def timed_out():
            found = [(p, e) for p, e in await events(store) if isinstance(e, E.PlayerTimedOut)]
            return found or None

        found = await until(timed_out, timeout=15)
        assert found == [("betting", E.PlayerTimedOut(view.to_act, all_in=True))]
    finally:
        for ch in channels:
            await ch.close()
        if nc is not None:
            await nc.close()
        if store is not None:
            await store.close()
        await cluster.stop()
