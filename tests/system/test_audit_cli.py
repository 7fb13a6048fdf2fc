"""`pokerctl audit` against the real stack: bots play hands of several games through the
services; the audit of the whole stream passes table by table; an export of the log with one
event changed fails with exit 1, naming that event."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from poker.events.v1 import events_pb2 as pb

from services.pokerctl.bots_cmd import plan_tables, play_tables

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.asyncio


def pokerctl(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "services.pokerctl", "audit", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


async def test_audit_of_a_played_stream_passes_and_an_edited_export_fails(
        stack, table_stub, nats_server, tmp_path):
    plans = [p for p in plan_tables() if p.game in ("holdem", "omaha_hilo", "stud")
             and p.structure in ("no_limit", "fixed_limit")][:3]
    played = await play_tables(table_stub, plans, hands=4, seats=4, seed=5)
    assert all(not p.error for p in played), [p.error for p in played]

    run = pokerctl("--all", "--json", "--nats", nats_server.url)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["ok"] and not report["source"]["problems"]
    by_table = {t["table_id"]: t for t in report["tables"]}
    assert set(by_table) == {p.table_id for p in plans}
    for t in by_table.values():
        assert t["ok"] and t["hands"] >= 4 and t["decisions"] == t["commits"] > 0, t
    assert "events/s" in run.stderr  # the progress line (plain: not a terminal)

    export = tmp_path / "log.jsonl"
    run = pokerctl("--all", "--export", str(export), "--nats", nats_server.url)
    assert run.returncode == 0, run.stderr
    assert pokerctl("--file", str(export), "--json").returncode == 0

    # change one bet in the export: the amount a player called
    lines = export.read_text().splitlines()
    for n, line in enumerate(lines):
        row = json.loads(line)
        if "data" not in row:
            continue
        commit = pb.Commit()
        commit.ParseFromString(base64.b64decode(row["data"]))
        env = pb.EventEnvelope()
        env.ParseFromString(commit.events[0])
        if env.WhichOneof("body") == "action_taken" and \
                env.action_taken.action == pb.ACTION_KIND_CALL:
            env.action_taken.to += 1
            env.action_taken.added += 1
            commit.events[0] = env.SerializeToString(deterministic=True)
            row["data"] = base64.b64encode(commit.SerializeToString()).decode()
            lines[n] = json.dumps(row)
            table, seq = row["table"], row["seq"]
            break
    else:
        pytest.fail("no call in the log")
    bad = tmp_path / "edited.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    run = pokerctl("--file", str(bad), "--json")
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    failed = [t for t in report["tables"] if not t["ok"]]
    assert [t["table_id"] for t in failed] == [table]
    failure = failed[0]["failure"]
    assert (failure["seq"], failure["commit_index"], failure["event_type"]) == \
        (seq, 0, "ActionTaken"), failure

    text = pokerctl("--file", str(bad), "--quiet")
    assert text.returncode == 1 and f"stream seq {seq}" in text.stdout and "FAIL" in text.stdout
