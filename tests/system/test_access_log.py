"""The compliance access log (shared/audit/access.py): `pokerctl history` and `pokerctl audit`
with the compliance key record the read in POKER_ACCESS before they open a sealed card; a read
without the key records nothing; a log that does not take the record opens nothing; and the
records cannot be deleted. The commands run as subprocesses against the real stack."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import nats.js.api as js_api
import nats.js.errors
import pytest

from services.pokerctl.failures import FAILED
from shared.audit.access import ACCESS_PREFIX, ACCESS_STREAM, read_access
from tests.helpers.tables import Table

pytestmark = pytest.mark.asyncio
ROOT = Path(__file__).resolve().parents[2]


async def pokerctl(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("POKER_COMPLIANCE_KEY", None)
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "services.pokerctl", *args], cwd=ROOT, env=env,
        capture_output=True, text=True, timeout=120)


async def played(stack, store, table_id: str) -> Table:
    t = await Table.open(stack, store, table_id, seats=2)
    while (await t.view()).hand_no == 1:
        await t.call_or_check()
    return t


async def records(store) -> list[dict]:
    try:
        return await read_access(store.js)
    except nats.js.errors.NotFoundError:
        return []


async def test_reads_with_the_compliance_key_are_recorded_first(stack, store, nats_server):
    await played(stack, store, "acc1")
    key_id = stack.keyring().key_ids
    done = await pokerctl("history", "--table", "acc1", "--hand", "1", "--nats",
                          nats_server.url, "--key", stack.key_file)
    assert done.returncode == 0, done.stderr
    assert done.stdout and "??" not in done.stdout  # every card opened
    (record,) = await records(store)
    assert record["purpose"] == "history" and record["tables"] == ["acc1"]
    assert record["hands"] == [1] and record["key_ids"] == key_id
    assert "@" in record["who"] and record["at_unix_ms"] > 0

    audit = await pokerctl("audit", "--table", "acc1", "--nats", nats_server.url, "--key",
                           stack.key_file, "--quiet")
    assert audit.returncode == 0, audit.stdout + audit.stderr
    assert [r["purpose"] for r in await records(store)] == ["history", "audit"]


async def test_a_read_without_the_key_records_nothing(stack, store, nats_server):
    await played(stack, store, "acc2")
    done = await pokerctl("history", "--table", "acc2", "--nats", nats_server.url)
    assert done.returncode == 0, done.stderr
    assert "??" in done.stdout and await records(store) == []


async def test_an_access_log_that_takes_no_record_opens_nothing(stack, store, nats_server):
    await played(stack, store, "acc3")
    # a full log that refuses new records (discard new, one message at most)
    await store.js.add_stream(js_api.StreamConfig(
        name=ACCESS_STREAM, subjects=[ACCESS_PREFIX + ">"], max_msgs=1,
        discard=js_api.DiscardPolicy.NEW, deny_delete=True, deny_purge=True))
    await store.js.publish(ACCESS_PREFIX + "history", b"{}")
    done = await pokerctl("history", "--table", "acc3", "--nats", nats_server.url, "--key",
                          stack.key_file)
    assert done.returncode == FAILED and done.stdout == ""  # refused: the same exit as audit's
    assert "access log" in done.stderr and "sealed" in done.stderr
    audit = await pokerctl("audit", "--table", "acc3", "--nats", nats_server.url, "--key",
                           stack.key_file, "--quiet")
    assert audit.returncode == FAILED and "access log" in audit.stderr


async def test_the_records_cannot_be_deleted(stack, store, nats_server):
    await played(stack, store, "acc4")
    done = await pokerctl("history", "--table", "acc4", "--nats", nats_server.url, "--key",
                          stack.key_file)
    assert done.returncode == 0, done.stderr
    (record,) = await records(store)
    with pytest.raises(nats.js.errors.Error):
        await store.js.delete_msg(ACCESS_STREAM, record["seq"])
    with pytest.raises(nats.js.errors.Error):
        await store.js.purge_stream(ACCESS_STREAM)
    assert len(await records(store)) == 1
