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
from shared.infra.secrecy import ComplianceKey

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.asyncio


def pokerctl(*args: str, home: Path | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("POKER_COMPLIANCE_KEY", None)
    if home is not None:  # no `pokerctl up` key there
        env.update(HOME=str(home), XDG_DATA_HOME=str(home / "data"))
    return subprocess.run([sys.executable, "-m", "services.pokerctl", "audit", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)


def on_a_terminal(*args: str) -> str:
    """What `pokerctl audit` writes on stderr when stderr is a terminal (a pseudo-terminal)."""
    import pty
    main, terminal = pty.openpty()
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        subprocess.run([sys.executable, "-m", "services.pokerctl", "audit", *args], cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=terminal, timeout=120, env=env)
        os.close(terminal)
        out = b""
        while True:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the terminal's other end is closed and read out
                break
            if not chunk:
                break
            out += chunk
        return out.decode(errors="replace")
    finally:
        os.close(main)


async def test_audit_of_a_played_stream_passes_and_an_edited_export_fails(
        stack, client_stub, sponsor, nats_server, tmp_path):
    plans = [p for p in plan_tables() if p.game in ("holdem", "omaha_hilo", "stud")
             and p.structure in ("no_limit", "fixed_limit")][:3]
    played = await play_tables(client_stub, plans, hands=4, seats=4, sponsor=sponsor, seed=5)
    assert all(not p.error for p in played), [p.error for p in played]

    key = ("--key", stack.key_file)
    run = pokerctl("--all", "--nats", nats_server.url, home=tmp_path)
    assert run.returncode == 2 and "--key FILE" in run.stderr, run.stderr
    run = pokerctl("--all", "--nats", nats_server.url, "--key", str(tmp_path / "nope"))
    assert run.returncode == 2 and "cannot read the key file" in run.stderr, run.stderr

    run = pokerctl("--all", "--json", "--nats", nats_server.url, *key)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["ok"] and not report["source"]["problems"]
    by_table = {t["table_id"]: t for t in report["tables"]}
    assert set(by_table) == {p.table_id for p in plans}
    for t in by_table.values():
        assert t["ok"] and t["hands"] >= 4 and t["decisions"] == t["commits"] > 0, t
    assert run.stderr == "", run.stderr  # no progress line unasked: stderr is not a terminal
    one = plans[0].table_id
    shown = pokerctl("--table", one, "--progress", "--nats", nats_server.url, *key)
    assert shown.returncode == 0 and "events/s" in shown.stderr, shown.stderr
    assert any(line.startswith("audit: ") for line in shown.stderr.splitlines())
    assert not any(line.startswith("audit") for line in shown.stdout.splitlines())
    assert "audit passed" in shown.stdout
    on_terminal = on_a_terminal("--table", one, "--nats", nats_server.url, *key)
    assert "audit [" in on_terminal and "events/s" in on_terminal, on_terminal

    export = tmp_path / "log.jsonl"
    run = pokerctl("--all", "--export", str(export), "--nats", nats_server.url)
    assert run.returncode == 0, run.stderr
    assert pokerctl("--file", str(export), "--json", *key).returncode == 0
    # a compliance key the hands were not sealed to opens nothing: every table fails
    other = tmp_path / "other"
    ComplianceKey.generate().write(other)
    run = pokerctl("--file", str(export), "--json", "--key", str(other / "compliance.key"))
    assert run.returncode == 1
    failures = [t["failure"]["reason"] for t in json.loads(run.stdout)["tables"]]
    assert failures and all("no compliance key given opens this hand" in f for f in failures)

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
    run = pokerctl("--file", str(bad), "--json", *key)
    assert run.returncode == 1, run.stdout + run.stderr
    report = json.loads(run.stdout)
    failed = [t for t in report["tables"] if not t["ok"]]
    assert [t["table_id"] for t in failed] == [table]
    failure = failed[0]["failure"]
    assert (failure["seq"], failure["commit_index"], failure["event_type"]) == \
        (seq, 0, "ActionTaken"), failure

    text = pokerctl("--file", str(bad), "--quiet", *key)
    assert text.returncode == 1 and f"stream seq {seq}" in text.stdout and "FAIL" in text.stdout
