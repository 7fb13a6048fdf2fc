"""`pokerctl audit --all --workers N`: tables spread over worker processes give the same
report as one process reading the stream in order, name the same first bad event, and the
stream-level checks (a deleted message) still hold. The log is a copy of a played one in a
second JetStream whose stream allows edits (the production stream denies them)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import nats
import pytest
from nats.js.api import StreamConfig
from poker.events.v1 import events_pb2 as pb

from services.pokerctl.audit_pool import balance
from services.pokerctl.bots_cmd import plan_tables, play_tables
from shared.infra.eventstore import STREAM, SUBJECT_PREFIX, EventStore
from shared.infra.natsserver import NatsServer

ROOT = Path(__file__).resolve().parents[2]


def audit(url: str, key: str, workers: int) -> tuple[int, dict]:
    run = subprocess.run(
        [sys.executable, "-m", "services.pokerctl", "audit", "--all", "--json", "--quiet",
         "--nats", url, "--key", key, "--workers", str(workers)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode in (0, 1), run.stderr
    return run.returncode, json.loads(run.stdout)


def test_balance_gives_the_largest_tables_first_to_the_least_loaded_worker():
    shares = balance({"a": 10, "b": 7, "c": 5, "d": 4, "e": 1}, 2)
    assert shares == [["a", "d"], ["b", "c", "e"]]
    assert balance({"a": 3}, 4) == [["a"]]


@pytest.mark.asyncio
async def test_workers_agree_with_one_pass_and_name_the_same_bad_event(
        stack, client_stub, sponsor, nats_server, tmp_path):
    plans = plan_tables(4)
    played = await play_tables(client_stub, plans, hands=3, seats=3, sponsor=sponsor, seed=2)
    assert all(not p.error for p in played), [p.error for p in played]
    store = await EventStore.connect(nats_server.url, create=False)
    try:
        rows = await store.read_all()
    finally:
        await store.close()

    copy = NatsServer(tmp_path / "copy").start(log_file=tmp_path / "copy.log")
    try:
        nc = await nats.connect(copy.url)
        js = nc.jetstream()
        await js.add_stream(StreamConfig(name=STREAM, subjects=[SUBJECT_PREFIX + ">"],
                                         allow_direct=True))
        edited_table = edited_seq = None
        for subject, stored in rows:
            table, data = subject[len(SUBJECT_PREFIX):], stored.data
            if edited_table is None and table == plans[1].table_id:
                commit = pb.Commit()
                commit.ParseFromString(data)
                env = pb.EventEnvelope()
                env.ParseFromString(commit.events[0])
                if env.WhichOneof("body") == "action_taken" and env.action_taken.added:
                    env.action_taken.added -= 1  # a chip taken off a bet
                    commit.events[0] = env.SerializeToString(deterministic=True)
                    data = commit.SerializeToString()
                    edited_table = table
            ack = await js.publish(SUBJECT_PREFIX + table, data)
            if edited_table == table and edited_seq is None:
                edited_seq = ack.seq
        assert edited_table is not None

        reports = {}
        for workers in (1, 2, 3):
            code, report = audit(copy.url, stack.key_file, workers)
            assert code == 1
            reports[workers] = report
            assert report["source"]["problems"] == []
        assert reports[2]["source"]["workers"] == 2 and reports[3]["source"]["workers"] == 3
        assert reports[1]["tables"] == reports[2]["tables"] == reports[3]["tables"]
        failed = [t for t in reports[2]["tables"] if not t["ok"]]
        assert [t["table_id"] for t in failed] == [edited_table]
        assert failed[0]["failure"]["seq"] == edited_seq
        assert failed[0]["failure"]["event_type"] == "ActionTaken"
        assert len(reports[2]["tables"]) == len(plans)

        # a message deleted from the copy: the stream check says so, whatever the workers
        await js.delete_msg(STREAM, len(rows) // 2)
        for workers in (1, 2):
            code, report = audit(copy.url, stack.key_file, workers)
            assert code == 1
            assert any("were deleted" in p for p in report["source"]["problems"]), report
        await nc.close()
    finally:
        copy.stop()
