"""An independent copy of the log on a second JetStream server (its own store), copied
incrementally without doubles into its own stream, reconciled table by table; a difference is
named. A mirror aimed at the primary itself (by the same URL or another address of the same
server), or at a mirror of another log, is refused: nothing is appended and the primary's
audit still passes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import pytest_asyncio
from nats.js import api as js_api
from nats.js.errors import NotFoundError

from shared.audit import audit_table
from shared.infra.eventstore import (
    LOG_ID,
    MIRROR_OF,
    MIRROR_STREAM,
    STREAM,
    SUBJECT_PREFIX,
    EventStore,
)
from shared.infra.mirror import MirrorRefused, connect_mirror, copy_new, reconcile
from shared.infra.natsserver import NatsServer
from shared.infra.repository import TableRepository, digest
from shared.poker import table as T
from shared.poker.options import table_options

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
MIRROR = [sys.executable, "-m", "services.pokerctl", "mirror"]


@pytest_asyncio.fixture
async def mirror_server(tmp_path):
    server = NatsServer(tmp_path / "mirror", name="poker-mirror").start()
    yield server
    server.stop()


@pytest_asyncio.fixture
async def mirror(mirror_server):
    store = await connect_mirror(mirror_server.url)
    yield store
    await store.close()


async def _fill(store: EventStore, tables: int, commits: int, start: int = 0) -> None:
    for t in range(tables):
        last = await store.last(f"t{t}")
        seq = last.seq if last else 0
        for i in range(start, start + commits):
            seq, _ = await store.append(f"t{t}", f"commit {t}/{i}".encode(), seq, f"m{t}-{i}")


async def _real_tables(store: EventStore, tables: int = 2) -> list[str]:
    """Tables made by the engine (created, three players seated): a log the audit passes."""
    repo = TableRepository(store, producer="test")
    ids = [f"real-{i}" for i in range(tables)]
    for tid in ids:
        await repo.execute(tid, "create", digest("create", OPTIONS),
                           lambda t, tid=tid: T.create_table(t, tid, OPTIONS))
        for seat in (1, 2, 3):
            await repo.execute(tid, f"sit-{seat}", digest("sit", seat),
                               lambda t, s=seat: T.sit_down(t, s, f"p{s}", 200, "digest"))
    return ids


async def _messages(store: EventStore, stream: str = STREAM) -> int:
    return (await store.nc.jsm().stream_info(stream)).state.messages


def _mirror_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*MIRROR, *args], capture_output=True, text=True, timeout=60)


async def test_the_mirror_copies_incrementally_and_reconciles(store, mirror):
    await _fill(store, tables=3, commits=5)
    first = await copy_new(store, mirror)
    assert first.copied == 15
    assert first.primary == await store.identity()
    assert (await reconcile(store, mirror)).ok
    # more play, then another copy: only the new commits, nothing doubled
    await _fill(store, tables=3, commits=2, start=5)
    again = await copy_new(store, mirror)
    assert again.copied == 6
    assert (await copy_new(store, mirror)).copied == 0
    result = await reconcile(store, mirror)
    assert result.ok and {d.commits for d in result.mirror.values()} == {7}
    # the mirror's commits are the primary's, byte for byte and in order, in its own stream
    assert [s.data for s in await mirror.read("t1")] == [s.data for s in await store.read("t1")]
    info = await mirror.info()
    assert info.config.name == MIRROR_STREAM and info.config.subjects == ["poker.mirror.table.>"]
    assert info.config.metadata[MIRROR_OF] == await store.identity()
    assert info.config.deny_delete and info.config.deny_purge


async def test_a_difference_between_primary_and_mirror_is_named(store, mirror):
    await _fill(store, tables=2, commits=3)
    await copy_new(store, mirror)
    # something reaches the mirror that the primary never had
    await mirror.append("t1", b"forged", (await mirror.last("t1")).seq, "forged")
    result = await reconcile(store, mirror)
    assert not result.ok
    assert result.differences == ["table t1: 3 commits in the primary, 4 in the mirror"]


async def test_pokerctl_mirror_sync_then_check(store, nats_server, mirror_server):
    await _fill(store, tables=2, commits=2)
    sync = _mirror_cli("sync", "--from", nats_server.url, "--to", mirror_server.url, "--json")
    assert sync.returncode == 0, sync.stdout + sync.stderr
    report = json.loads(sync.stdout)  # the whole output is one JSON object
    assert report == {"copied": 4, "last_source_seq": 4, "ok": True, "tables": 2,
                      "mirror_tables": 2, "differences": []}
    check = _mirror_cli("check", "--from", nats_server.url, "--to", mirror_server.url)
    assert check.returncode == 0 and "reconciled" in check.stdout, check.stdout + check.stderr


async def test_pokerctl_mirror_with_a_mirror_that_does_not_answer(store, nats_server):
    """The primary answers, the mirror does not: after a few seconds, one line on stderr
    naming the mirror's URL and what to check, no traceback, exit 4 (unreachable); --json: one JSON object
    on stdout and nothing else there."""
    await _fill(store, tables=1, commits=1)
    done = subprocess.run([*MIRROR, "sync", "--from", nats_server.url, "--to",
                           "nats://127.0.0.1:1", "--json"], capture_output=True, text=True,
                          timeout=15)
    assert done.returncode == 4, done.stdout + done.stderr
    assert json.loads(done.stdout) == {
        "ok": False, "unreachable": "nats://127.0.0.1:1",
        "error": json.loads(done.stdout)["error"]}
    assert len(done.stdout.splitlines()) == 1
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
    assert "cannot reach NATS at nats://127.0.0.1:1" in done.stderr
    assert "--to, or POKER_MIRROR_URL" in done.stderr and "pokerctl up" in done.stderr


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
@pytest.mark.parametrize("action", ["sync", "check"])
async def test_a_mirror_aimed_at_its_own_primary_is_refused(store, nats_server, host, action):
    """The same server by the same URL or another address: refused by the stream's identity,
    nothing appended, the log audits as before."""
    tables = await _real_tables(store)
    before = await _messages(store)
    for t in tables:
        assert audit_table(t, await store.read(t), None).ok
    target = f"nats://{host}:{nats_server.port}"
    done = _mirror_cli(action, "--from", nats_server.url, "--to", target, "--json")
    assert done.returncode == 1, done.stdout + done.stderr  # refused (failures.py)
    report = json.loads(done.stdout)
    assert report["ok"] is False
    assert "holds the primary log itself" in report["refused"]
    assert await _messages(store) == before
    with pytest.raises(NotFoundError):  # and no mirror stream was made on the primary's server
        await store.nc.jsm().stream_info(MIRROR_STREAM)
    for t in tables:
        audit = audit_table(t, await store.read(t), None)
        assert audit.ok, audit.failure
    text = _mirror_cli(action, "--from", nats_server.url, "--to", target)
    assert text.returncode == 1 and text.stdout == ""
    assert "pokerctl mirror: refused: the mirror's server holds the primary log" in text.stderr


async def test_the_library_refuses_the_primary_as_its_own_mirror(store, nats_server):
    """Whatever the caller names the target's stream: the primary's own, or a mirror's stream
    on the primary's server."""
    await _fill(store, tables=1, commits=2)
    for stream in (STREAM, MIRROR_STREAM):
        same = await EventStore.connect(nats_server.url.replace("127.0.0.1", "localhost"),
                                        stream=stream, create=False)
        try:
            with pytest.raises(MirrorRefused, match="holds the primary log itself"):
                await copy_new(store, same)
            with pytest.raises(MirrorRefused):
                await reconcile(store, same)
        finally:
            await same.close()
    assert await _messages(store) == 2


async def test_a_mirror_of_another_log_is_refused(store, mirror, tmp_path):
    await _fill(store, tables=1, commits=2)
    await copy_new(store, mirror)
    other_server = NatsServer(tmp_path / "other", name="other-primary").start()
    other = await EventStore.connect(other_server.url)
    try:
        await _fill(other, tables=1, commits=3)
        with pytest.raises(MirrorRefused, match=f"a mirror of log {await store.identity()}"):
            await copy_new(other, mirror)
        assert await _messages(mirror, MIRROR_STREAM) == 2
    finally:
        await other.close()
        other_server.stop()


async def test_a_target_stream_that_is_not_a_mirror_is_refused(store, mirror_server):
    """The mirror's server runs its own primary log under the mirror's stream name (say,
    made by hand): copies never go into it."""
    await _fill(store, tables=1, commits=1)
    squatter = await EventStore.connect(mirror_server.url, stream=MIRROR_STREAM)
    try:
        with pytest.raises(MirrorRefused, match="not a mirror"):
            await copy_new(store, squatter)
        assert await _messages(squatter, MIRROR_STREAM) == 0
    finally:
        await squatter.close()


async def test_a_primary_made_before_log_ids_is_known_by_name_and_creation_time(
        nats_server, mirror):
    """A stream with no ``poker-log-id`` (made by an older version): its identity is its name
    and creation time, so the primary's server is still refused and a real mirror works."""
    legacy = await EventStore.connect(nats_server.url, create=False)
    try:
        await legacy.nc.jsm().add_stream(js_api.StreamConfig(
            name=STREAM, subjects=[SUBJECT_PREFIX + ">"], deny_delete=True, deny_purge=True,
            allow_direct=True))
        await _fill(legacy, tables=1, commits=2)
        identity = await legacy.identity()
        assert identity.startswith(f"{STREAM}@")
        assert LOG_ID not in ((await legacy.info()).config.metadata or {})
        itself = await EventStore.connect(nats_server.url.replace("127.0.0.1", "localhost"),
                                          stream=MIRROR_STREAM, create=False)
        try:
            with pytest.raises(MirrorRefused, match="holds the primary log itself"):
                await copy_new(legacy, itself)
        finally:
            await itself.close()
        assert (await copy_new(legacy, mirror)).copied == 2
        assert (await mirror.info()).config.metadata[MIRROR_OF] == identity
        assert (await reconcile(legacy, mirror)).ok
    finally:
        await legacy.close()
