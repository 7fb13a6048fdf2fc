"""An independent copy of the log on a second JetStream server (its own store), copied
incrementally without doubles, reconciled table by table; a difference is named."""

from __future__ import annotations

import subprocess
import sys

import pytest_asyncio

from shared.infra.eventstore import EventStore
from shared.infra.mirror import copy_new, reconcile
from shared.infra.natsserver import NatsServer


@pytest_asyncio.fixture
async def mirror_server(tmp_path):
    server = NatsServer(tmp_path / "mirror", name="poker-mirror").start()
    yield server
    server.stop()


async def _fill(store: EventStore, tables: int, commits: int, start: int = 0) -> None:
    for t in range(tables):
        last = await store.last(f"t{t}")
        seq = last.seq if last else 0
        for i in range(start, start + commits):
            seq, _ = await store.append(f"t{t}", f"commit {t}/{i}".encode(), seq, f"m{t}-{i}")


async def test_the_mirror_copies_incrementally_and_reconciles(store, mirror_server):
    mirror = await EventStore.connect(mirror_server.url)
    try:
        await _fill(store, tables=3, commits=5)
        first = await copy_new(store, mirror)
        assert first.copied == 15
        assert (await reconcile(store, mirror)).ok
        # more play, then another copy: only the new commits, nothing doubled
        await _fill(store, tables=3, commits=2, start=5)
        again = await copy_new(store, mirror)
        assert again.copied == 6
        assert (await copy_new(store, mirror)).copied == 0
        result = await reconcile(store, mirror)
        assert result.ok and {d.commits for d in result.mirror.values()} == {7}
        # the mirror's commits are the primary's, byte for byte and in order
        assert [s.data for s in await mirror.read("t1")] == [s.data for s in
                                                             await store.read("t1")]
    finally:
        await mirror.close()


async def test_a_difference_between_primary_and_mirror_is_named(store, mirror_server):
    mirror = await EventStore.connect(mirror_server.url)
    try:
        await _fill(store, tables=2, commits=3)
        await copy_new(store, mirror)
        # something reaches the mirror that the primary never had
        await mirror.append("t1", b"forged", (await mirror.last("t1")).seq, "forged")
        result = await reconcile(store, mirror)
        assert not result.ok
        assert result.differences == ["table t1: 3 commits in the primary, 4 in the mirror"]
    finally:
        await mirror.close()


async def test_pokerctl_mirror_sync_then_check(store, nats_server, mirror_server):
    await _fill(store, tables=2, commits=2)
    cmd = [sys.executable, "-m", "services.pokerctl", "mirror"]
    sync = subprocess.run([*cmd, "sync", "--from", nats_server.url, "--to", mirror_server.url,
                           "--json"], capture_output=True, text=True, timeout=60)
    assert sync.returncode == 0, sync.stdout + sync.stderr
    assert '"ok": true' in sync.stdout
    check = subprocess.run([*cmd, "check", "--from", nats_server.url, "--to",
                            mirror_server.url], capture_output=True, text=True, timeout=60)
    assert check.returncode == 0 and "reconciled" in check.stdout
