"""Clock failover with real processes: two table-service instances share the tables through
leases; kill -9 the one that holds a table while a player's clock runs, and the other takes
the lease, times that player out and the table plays on. Real time here (a 1 + 1 s clock, a
1 s lease), waited on as conditions with deadlines, never as fixed sleeps."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

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


@dataclass
class TwoInstances:
    """A cluster of two table-service instances ("table" and "table-b"), a client stub of
    each, the log, and the lease bucket."""

    cluster: LocalCluster
    stubs: dict[str, table_pb2_grpc.TableServiceStub]
    store: EventStore
    kv: object

    def auth(self, subject: str, *roles: str) -> tuple:  # a token of the cluster's issuer
        return bearer_metadata(self.cluster.issuer.token(subject, roles or (PLAYER,)))

    async def holder(self) -> str | None:
        """The instance holding the table's clock slot (None: nobody yet)."""
        try:
            return (await self.kv.get(lease_name(TABLE))).value.decode()
        except nats.js.errors.KeyNotFoundError:
            return None

    async def open_table(self, stub) -> None:
        """The table (a 1 + 1 s clock), with p1 and p2 seated through ``stub``: hand 1 runs."""
        settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                     small_blind=1, big_blind=2, decision_seconds=1,
                                     countdown_seconds=1)
        await stub.CreateTable(tpb.CreateTableRequest(table_id=TABLE, settings=settings,
                                                      command_id="create"),
                               metadata=self.auth("ops", OPERATOR))


@asynccontextmanager
async def two_instances(tmp_path, monkeypatch, **env: str) -> AsyncIterator[TwoInstances]:
    """A 1 s lease and a 50 ms tick (and ``env``) for both instances."""
    monkeypatch.setenv("POKER_LEASE_TTL_MS", "1000")
    monkeypatch.setenv("POKER_CLOCK_TICK_MS", "50")
    monkeypatch.setenv("POKER_INSTANCE_ID", "table")
    for name, value in env.items():
        monkeypatch.setenv(name, value)
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
        yield TwoInstances(cluster, stubs, store, await nc.jetstream().key_value(DEFAULT_BUCKET))
    finally:
        for ch in channels:
            await ch.close()
        if nc is not None:
            await nc.close()
        if store is not None:
            await store.close()
        await cluster.stop()


async def timed_out(store: EventStore) -> list | None:
    """The log's time-outs, by producer (None: none yet)."""
    found = [(p, e) for p, e in await events(store) if isinstance(e, E.PlayerTimedOut)]
    return found or None


async def test_kill_9_the_owner_while_a_clock_runs(tmp_path, monkeypatch):
    async with two_instances(tmp_path, monkeypatch) as two:
        cluster, stubs, store, auth = two.cluster, two.stubs, two.store, two.auth
        stub = stubs["table"]
        operator = auth("ops", OPERATOR)
        await two.open_table(stub)
        owner = await until(two.holder, timeout=5)  # one instance holds the new table
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

        found = await until(lambda: timed_out(store), timeout=15)
        assert found == [("betting", E.PlayerTimedOut(late, all_in=True))]
        assert await two.holder() == survivor
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


async def _has(store: EventStore, kind: type) -> bool:
    return any(isinstance(e, kind) for _, e in await events(store))



async def test_a_table_busy_in_one_process_is_kept_by_the_slot_holder_without_the_list(
        tmp_path, monkeypatch):
    """The keeper reads the log's whole table list only as a safety net (it grows with every
    table ever made): a table made busy through the instance that does not hold its clock
    slot is announced, and the holder times out its late player, with the list read once an
    hour here."""
    async with two_instances(tmp_path, monkeypatch, POKER_CLOCK_LIST_S="3600") as two:
        owner = await until(two.holder, timeout=10)
        assert owner in two.stubs
        # every command through an instance without the slot
        stub = next(s for name, s in two.stubs.items() if name != owner)
        await two.open_table(stub)
        sponsor = two.cluster.sponsor()
        for seat in (1, 2):
            await sponsor.fund(f"p{seat}", 100)
            await stub.SitDown(tpb.SitDownRequest(table_id=TABLE, seat=seat, buy_in=100,
                                                  command_id=f"sit-{seat}"),
                               metadata=two.auth(f"p{seat}"))
        view = await stub.GetState(tpb.ViewRequest(table_id=TABLE),
                                   metadata=two.auth("ops", OPERATOR))
        assert view.hand_no == 1 and view.to_act
        assert await two.holder() == owner  # the slot did not move

        found = await until(lambda: timed_out(two.store), timeout=15)
        assert found == [("betting", E.PlayerTimedOut(view.to_act, all_in=True))]
