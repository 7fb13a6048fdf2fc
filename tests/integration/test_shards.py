"""A log split over shard streams (POKER_STREAM_SHARDS, shared/infra/eventstore.py), on a
real nats-server: each table lands on the stream its hash names (the expected shard computed
here from the documented hash) and never spans two; every reader covers every shard (table
ids, read_all, the audit with and without workers, the histories, a mirror that keeps the
placement); a log of one POKER stream keeps its tables there when it is split; a changed
number of shards is refused at connect, saying what the log has; `pokerctl up --shards`
makes R3 shard streams on a three-node cluster and gives every NATS user its rights there."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
from nats.js.errors import NotFoundError
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.botclient import play
from services.pokerctl.bots_cmd import create_and_seat, plan_tables, play_tables
from services.pokerctl.up import LocalCluster
from services.stack import start_local
from shared.infra.eventstore import (
    LOG_ID,
    MIRROR_OF,
    READ_BATCH,
    SHARD,
    SHARD_SEQ_SPAN,
    SHARDS,
    STREAM,
    EventStore,
    ShardsChanged,
    stream_names,
)
from shared.infra.mirror import MirrorRefused, connect_mirror, copy_new, reconcile
from shared.infra.natsserver import NatsServer
from shared.infra.secrecy import ComplianceKey
from shared.infra.waiting import until

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 30.0


def expected_shard(table_id: str, shards: int) -> int:
    """The documented hash, computed here on its own: SHA-256 of the id's UTF-8 bytes, the
    first 8 bytes big-endian, modulo the number of shards."""
    digest = hashlib.sha256(table_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % shards


async def subjects_in(store: EventStore, stream: str) -> dict[str, int]:
    """Subject -> messages, of one stream on the server ({} without the stream)."""
    try:
        info = await store.nc.jsm().stream_info(stream, subjects_filter=">")
    except NotFoundError:
        return {}
    return dict(info.state.subjects or {})


async def where(store: EventStore, table_id: str, streams: list[str]) -> dict[str, int]:
    """Stream -> messages of the table there, for every stream holding any of it."""
    out = {}
    for stream in streams:
        for subject, n in (await subjects_in(store, stream)).items():
            if subject.endswith(f".table.{table_id}"):
                out[stream] = out.get(stream, 0) + n
    return out


def pokerctl(*args: str, key: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if key is not None:
        env["POKER_COMPLIANCE_KEY"] = key
    return subprocess.run([sys.executable, "-m", "services.pokerctl", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=180, env=env)


# --- the store -----------------------------------------------------------------------------


async def test_tables_land_on_the_shard_their_hash_names(nats_server):
    store = await EventStore.connect(nats_server.url, shards=3)
    try:
        tables = [f"t{i}" for i in range(12)] + ["ü-tisch", "holdem-NL-x-1"]
        for table in tables:
            await store.append(table, f"first of {table}".encode(), 0, f"{table}:1")
        streams = [f"POKER_S{k}" for k in range(3)]
        assert await stream_names(store.nc) == set(streams)  # no POKER: a new sharded log
        for table in tables:
            k = expected_shard(table, 3)
            assert await where(store, table, [STREAM, *streams]) == {f"POKER_S{k}": 1}, table
            assert f"poker.s{k}.table.{table}" in await subjects_in(store, f"POKER_S{k}")
            assert store.subject(table) == f"poker.s{k}.table.{table}"
            assert [s.shard for s in await store.read(table)] == [k]
        assert {expected_shard(t, 3) for t in tables} == {0, 1, 2}
        # each shard stream: its own log id, and which shard of how many it is
        ids = set()
        for k, stream in enumerate(streams):
            info = await store.info(stream)
            meta = info.config.metadata
            assert (meta[SHARDS], meta[SHARD]) == ("3", str(k))
            assert info.config.subjects == [f"poker.s{k}.table.>"]
            assert info.config.deny_delete and info.config.deny_purge
            ids.add(meta[LOG_ID])
        assert len(ids) == 3
        # every table of every shard
        assert await store.table_ids() == sorted(tables)
        rows = await store.read_all()
        layout = await store.layout()
        assert sorted(layout.table_of(s) for s, _ in rows) == sorted(tables)
        assert [s for s, _ in rows] == sorted((s for s, _ in rows),
                                              key=lambda s: int(s.split(".")[1][1:]))
        only = await store.read_all(stream="POKER_S1")
        assert {layout.table_of(s) for s, _ in only} == \
            {t for t in tables if expected_shard(t, 3) == 1}
        with pytest.raises(ValueError, match="sequence of one stream"):
            await store.read_all(after_seq=1)
    finally:
        await store.close()


async def test_a_table_never_spans_two_streams(nats_server):
    """Many appends of one table (more than a read batch), guarded by its last sequence:
    all in its shard stream, read back in order; the sequence guard works there."""
    store = await EventStore.connect(nats_server.url, shards=4)
    try:
        table, seq = "busy-table", 0
        count = READ_BATCH + 88
        for i in range(count):
            seq, duplicate = await store.append(table, b"%d" % i, seq, f"busy:{i}")
            assert not duplicate
            if i % 50 == 0:  # others write to their own shards meanwhile
                await store.append(f"other-{i}", b"x", 0, f"other-{i}")
        k = expected_shard(table, 4)
        assert await where(store, table, [f"POKER_S{j}" for j in range(4)]) == \
            {f"POKER_S{k}": count}
        read = await store.read(table)
        assert [s.data for s in read] == [b"%d" % i for i in range(count)]
        assert (await store.last(table)).seq == seq == read[-1].seq
        # the guard is the stream's: a stale expected sequence loses, a retry is a duplicate
        with pytest.raises(Exception, match="moved past"):
            await store.append(table, b"stale", seq - 1, "busy:stale")
        assert await store.append(table, b"%d" % (count - 1), seq - 1,
                                  f"busy:{count - 1}") == (seq, True)
    finally:
        await store.close()


async def test_a_legacy_stream_keeps_its_tables_when_the_log_is_sharded(nats_server):
    old = await EventStore.connect(nats_server.url)  # a log of one stream, as before shards
    for table in ("old-a", "old-b"):
        seq = 0
        for i in range(3):
            seq, _ = await old.append(table, f"{table} {i}".encode(), seq, f"{table}:{i}")
    before = await old.identity()
    await old.close()

    new = await EventStore.connect(nats_server.url, shards=2)
    other = await EventStore.connect(nats_server.url, shards=2, create=False)
    try:
        layout = await new.layout()
        assert (layout.shards, layout.legacy) == (2, True)
        assert await stream_names(new.nc) == {"POKER", "POKER_S0", "POKER_S1"}
        # old tables: read and written where they are
        assert [s.data for s in await new.read("old-a")] == [b"old-a 0", b"old-a 1", b"old-a 2"]
        assert new.subject("old-a") == "poker.table.old-a"
        last = await new.last("old-a")
        seq, _ = await new.append("old-a", b"old-a 3", last.seq, "old-a:3")
        assert await where(new, "old-a", ["POKER", "POKER_S0", "POKER_S1"]) == {"POKER": 4}
        # new tables: on their shard, never in the legacy stream
        for table in ("new-x", "new-y", "new-z"):
            await new.append(table, b"new", 0, f"{table}:0")
            assert await where(new, table, ["POKER", "POKER_S0", "POKER_S1"]) == \
                {f"POKER_S{expected_shard(table, 2)}": 1}
        # another process finds the same: the old tables in POKER, once looked up
        assert len(await other.read("old-b")) == 3
        await other.append("old-b", b"old-b 3", (await other.last("old-b")).seq, "old-b:3")
        assert await where(other, "old-b", ["POKER", "POKER_S0", "POKER_S1"]) == {"POKER": 4}
        assert [s.data for s in await other.read("new-y")] == [b"new"]
        assert await other.table_ids() == ["new-x", "new-y", "new-z", "old-a", "old-b"]
        rows = await other.read_all()
        assert [layout.table_of(s) for s, _ in rows[:8]] == \
            ["old-a"] * 3 + ["old-b"] * 3 + ["old-a", "old-b"]  # the legacy stream first
        assert len(rows) == 11
        assert (await other.identity()).startswith(before + ",")  # the old id stays first
        # a process of one stream is refused now: the log is split
        with pytest.raises(ShardsChanged, match="split over 2 shard streams"):
            await EventStore.connect(nats_server.url, shards=1)
    finally:
        await other.close()
        await new.close()


async def test_a_split_legacy_log_is_audited_and_mirrored_stream_by_stream(nats_server,
                                                                             tmp_path):
    """The legacy stream and the shards, read by the audit's workers (each table from the
    stream it is in: every message held is read) and by a mirror that copied the log before
    the split: it goes on, stream for stream, copying only what is new."""
    old = await EventStore.connect(nats_server.url)
    for table in ("old-a", "old-b"):
        await old.append(table, b"before", 0, f"{table}:0")
    mirror_server = NatsServer(tmp_path / "mirror", name="poker-mirror").start()
    mirror = await connect_mirror(mirror_server.url)
    new = None
    try:
        assert (await copy_new(old, mirror)).copied == 2
        await old.close()
        new = await EventStore.connect(nats_server.url, shards=2)
        await new.append("old-a", b"after", (await new.last("old-a")).seq, "old-a:1")
        for table in ("new-x", "new-y", "new-z"):
            await new.append(table, b"new", 0, f"{table}:0")
        report = await copy_new(new, mirror)
        assert report.copied == 4 and set(report.positions) == {"POKER", "POKER_S0",
                                                                "POKER_S1"}
        assert await stream_names(mirror.nc) == {"POKER_MIRROR", "POKER_MIRROR_S0",
                                                 "POKER_MIRROR_S1"}
        assert await where(mirror, "old-a", ["POKER_MIRROR", "POKER_MIRROR_S0",
                                              "POKER_MIRROR_S1"]) == {"POKER_MIRROR": 2}
        assert (await reconcile(new, mirror)).ok
        assert (await copy_new(new, mirror)).copied == 0
    finally:
        await mirror.close()
        mirror_server.stop()
        if new is not None:
            await new.close()
    key_dir = tmp_path / "keys"
    ComplianceKey.generate().write(key_dir)
    for workers in ("1", "2"):  # the bytes are no commits: every table fails, and says so
        run = pokerctl("audit", "--all", "--json", "--quiet", "--nats", nats_server.url,
                       "--key", str(key_dir / "compliance.key"), "--workers", workers)
        assert run.returncode == 1, run.stderr
        report = json.loads(run.stdout)
        assert [t["table_id"] for t in report["tables"]] == \
            ["new-x", "new-y", "new-z", "old-a", "old-b"]
        assert [s["stream"] for s in report["source"]["streams"]] == \
            ["POKER", "POKER_S0", "POKER_S1"]
        assert report["source"]["messages"] == 6 and report["source"]["problems"] == []


async def test_a_changed_number_of_shards_is_refused_at_connect(nats_server):
    store = await EventStore.connect(nats_server.url, shards=3)
    await store.append("t1", b"x", 0, "t1:0")
    await store.close()
    for asked in (2, 4, 1):
        with pytest.raises(ShardsChanged) as refused:
            await EventStore.connect(nats_server.url, shards=asked)
        message = str(refused.value)
        assert "the log is split over 3 shard streams (POKER_S0..POKER_S2, poker-shards: 3)" \
            in message, message
        assert f"POKER_STREAM_SHARDS={asked}" in message and "moving tables between shards " \
            "is not supported" in message and "POKER_STREAM_SHARDS=3 " in message + " "
    reader = await EventStore.connect(nats_server.url, create=False)  # no number: the log's
    try:
        assert await stream_names(reader.nc) == {"POKER_S0", "POKER_S1", "POKER_S2"}
        assert (await reader.layout()).shards == 3
        assert [s.data for s in await reader.read("t1")] == [b"x"]
    finally:
        await reader.close()
    # a service process configured otherwise says so and exits 2 before serving
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POKER_NATS_URL": nats_server.url,
           "POKER_INSECURE": "1", "POKER_PORT": "0", "POKER_STREAM_SHARDS": "2"}
    done = subprocess.run([sys.executable, "-m", "services.betting"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "betting: the log is split over 3 shard streams" in done.stderr
    assert "Traceback" not in done.stderr


# --- the stack, the audit, the histories, a mirror -----------------------------------------


async def test_a_sharded_log_is_played_audited_rendered_and_mirrored(nats_server, tmp_path):
    stack = await start_local(nats_server.url, env={"POKER_STREAM_SHARDS": "3"})
    channel = stack.channel("table")
    try:
        stub = table_pb2_grpc.TableServiceStub(channel)
        plans = plan_tables(4, run_id="sharded")
        shards = {p.table_id: expected_shard(p.table_id, 3) for p in plans}
        assert set(shards.values()) == {0, 1, 2}, shards  # the test covers every shard
        played = await play_tables(stub, plans, hands=2, seats=3, sponsor=stack.sponsor(),
                                   seed=4)
        assert all(not p.error for p in played), [p.error for p in played]
        await watched_live_on_a_shard(stack, stub)

        store = await EventStore.connect(nats_server.url, create=False)
        try:
            streams = [f"POKER_S{k}" for k in range(3)]
            for table, k in shards.items():
                assert set(await where(store, table, [STREAM, *streams])) == {f"POKER_S{k}"}
            held = {s: (await store.info(s)).state.messages for s in streams}
            tables = await store.table_ids()
        finally:
            await store.close()
        assert set(shards) <= set(tables)

        key = stack.key_file
        for workers in ("1", "2"):
            run = pokerctl("audit", "--all", "--json", "--quiet", "--nats", nats_server.url,
                           "--key", key, "--workers", workers)
            assert run.returncode == 0, run.stdout + run.stderr
            report = json.loads(run.stdout)
            assert report["ok"] and report["source"]["problems"] == []
            assert sorted(t["table_id"] for t in report["tables"]) == tables
            assert report["source"]["messages"] == sum(held.values())
            assert {s["stream"]: s["messages"] for s in report["source"]["streams"]} == held
            assert sum(t["commits"] for t in report["tables"]) == sum(held.values())
            assert report["source"]["money"]["ok"] if "money" in report["source"] else True

        # a hand of a table on a shard that is not the first: its history, its hand id
        table = next(t for t, k in shards.items() if k == 2)
        hist = pokerctl("history", "--table", table, "--nats", nats_server.url, key=key)
        assert hist.returncode == 0, hist.stderr
        ids = [int(i) for i in re.findall(r"PokerStars Hand #(\d+):", hist.stdout)]
        assert ids and all(3 * SHARD_SEQ_SPAN < i < 4 * SHARD_SEQ_SPAN for i in ids), ids
        as_json = pokerctl("history", "--table", table, "--format", "json", "--nats",
                           nats_server.url, key=key)
        assert as_json.returncode == 0 and len(as_json.stdout.splitlines()) == len(ids)

        # a mirror: every shard copied into its own mirror stream, the placement kept
        mirror_server = NatsServer(tmp_path / "mirror", name="poker-mirror").start()
        try:
            sync = pokerctl("mirror", "sync", "--from", nats_server.url, "--to",
                            mirror_server.url, "--json")
            assert sync.returncode == 0, sync.stdout + sync.stderr
            out = json.loads(sync.stdout)
            assert out["ok"] and out["copied"] == sum(held.values())
            assert out["tables"] == out["mirror_tables"] == len(tables)
            assert set(out["positions"]) == set(streams)
            again = pokerctl("mirror", "sync", "--from", nats_server.url, "--to",
                             mirror_server.url, "--json")
            assert json.loads(again.stdout)["copied"] == 0
            await check_mirror(nats_server.url, mirror_server.url, shards, held)
            # the mirror audits as the primary does, and renders the same hands
            run = pokerctl("audit", "--all", "--json", "--quiet", "--nats", mirror_server.url,
                           "--key", key)
            assert run.returncode == 0, run.stdout + run.stderr
            assert sorted(t["table_id"] for t in json.loads(run.stdout)["tables"]) == tables
            copy = pokerctl("history", "--table", table, "--nats", mirror_server.url, key=key)
            assert copy.returncode == 0 and copy.stdout == hist.stdout
        finally:
            mirror_server.stop()
    finally:
        await channel.close()
        await stack.stop()


async def watched_live_on_a_shard(stack, stub) -> None:
    """A spectator's Watch of a table on a shard that is not the first gets the views of the
    commits made while it watches (it follows the table's subject on its shard)."""
    table = next(f"watched-{i}" for i in range(100) if expected_shard(f"watched-{i}", 3) == 1)
    plan = dataclasses.replace(plan_tables(1, "holdem", "no_limit")[0], table_id=table)
    bots = await create_and_seat(stub, plan, 2, stack.sponsor())
    views: list[tpb.TableView] = []
    call = stub.Watch(tpb.ViewRequest(table_id=table, seat=0), metadata=bots.watcher())

    async def follow() -> None:
        async for view in call:
            views.append(view)

    follower = asyncio.create_task(follow())
    try:
        async def first_view():
            return views

        await until(first_view, DEADLINE_S, "a first view")
        first = views[0].version
        await play(stub, bots, 1, random.Random(1))
        last = await _last_version(stack, table)
        assert last > first

        async def caught_up():
            return views and views[-1].version == last

        await until(caught_up, DEADLINE_S, f"a view of version {last}")
    finally:
        call.cancel()
        await asyncio.gather(follower, return_exceptions=True)


async def _last_version(stack, table: str) -> int:
    store = await EventStore.connect(stack.nats_url, create=False)
    try:
        return (await store.last(table)).seq
    finally:
        await store.close()


async def check_mirror(primary_url: str, mirror_url: str, shards: dict[str, int],
                       held: dict[str, int]) -> None:
    primary = await EventStore.connect(primary_url, create=False)
    mirror = await connect_mirror(mirror_url)
    try:
        assert await stream_names(mirror.nc) == {f"POKER_MIRROR_S{k}" for k in range(3)}
        for k in range(3):
            info = await mirror.info(f"POKER_MIRROR_S{k}")
            source = await primary.info(f"POKER_S{k}")
            meta = info.config.metadata
            assert meta[MIRROR_OF] == source.config.metadata[LOG_ID]  # per stream
            assert (meta[SHARDS], meta[SHARD]) == ("3", str(k))
            assert info.config.subjects == [f"poker.mirror.s{k}.table.>"]
            assert info.state.messages == held[f"POKER_S{k}"]
        for table, k in shards.items():
            assert set(await where(mirror, table, [f"POKER_MIRROR_S{j}" for j in range(3)])) \
                == {f"POKER_MIRROR_S{k}"}
        assert (await reconcile(primary, mirror)).ok
    finally:
        await mirror.close()
        await primary.close()


# --- pokerctl up --shards -------------------------------------------------------------------


async def test_up_makes_r3_shard_streams_and_every_user_has_its_rights_there(tmp_path):
    cluster = LocalCluster(tmp_path / "up", base_port=None, log_level="WARNING", nats_nodes=3,
                           shards=2)
    await cluster.start_nats()  # what `pokerctl up --cluster 3 --shards 2` runs first
    try:
        # every process it starts is told
        assert {cluster.env(name)["POKER_STREAM_SHARDS"] for name in cluster.ports} == {"2"}
        admin = await EventStore.connect(cluster.nats_url, ca=cluster.nats_ca, create=False)
        try:
            assert await stream_names(admin.nc) >= {"POKER_S0", "POKER_S1"}
            assert STREAM not in await stream_names(admin.nc)
            for k in range(2):
                info = await admin.info(f"POKER_S{k}")
                assert info.config.num_replicas == 3
                assert info.config.metadata[SHARDS] == "2"
            # and every other stream and bucket, the notary's too: two notaries that raced
            # to make its lease bucket as they started found it "not found" on a cluster
            for made in ("POKER_WALLET", "POKER_HANDS", "POKER_CHECKPOINTS", "KV_POKER_NOTARY",
                         "KV_POKER_LEASES", "KV_POKER_TOURNAMENT_LEASES"):
                info = await admin.nc.jsm().stream_info(made)
                assert info.config.num_replicas == 3, made
        finally:
            await admin.close()
        # the services' users append to and read every shard stream
        table = await EventStore.connect(cluster.nats_url_for("poker-table"), shards=2,
                                         ca=cluster.nats_ca)
        service = await EventStore.connect(cluster.nats_url_for("poker-service"), shards=2,
                                           ca=cluster.nats_ca)
        reader = await EventStore.connect(cluster.nats_url_for("poker-reader"),
                                          ca=cluster.nats_ca, create=False)
        mirror = await EventStore.connect(cluster.nats_url_for("poker-mirror"),
                                          stream="POKER_MIRROR", ca=cluster.nats_ca,
                                          create=False)
        try:
            ids = {k: next(f"t{i}" for i in range(100) if expected_shard(f"t{i}", 2) == k)
                   for k in range(2)}
            for k, tid in ids.items():
                seq, _ = await table.append(tid, b"one", 0, f"{tid}:1")
                await service.append(tid, b"two", seq, f"{tid}:2")
                assert [s.data for s in await reader.read(tid)] == [b"one", b"two"]
                assert table.subject(tid) == f"poker.s{k}.table.{tid}"
            assert await reader.table_ids() == sorted(ids.values())
            # the mirror's user sees the primary's shard streams: its own server is refused
            with pytest.raises(MirrorRefused, match="holds the primary log itself"):
                await copy_new(reader, mirror)
            with pytest.raises(ShardsChanged, match="split over 2 shard streams"):
                await EventStore.connect(cluster.nats_url_for("poker-dealer"), shards=3,
                                         ca=cluster.nats_ca)
        finally:
            for s in (mirror, reader, service, table):
                await s.close()
    finally:
        await cluster.stop()
