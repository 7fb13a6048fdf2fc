"""The compliance replay a regulator can file (services/web/compliance.py,
shared/audit/evidence.py), over HTTP against the app served on a socket, a client of the
in-process stack (real gRPC, a real nats-server) with a table bots played.

Issue 26: the replay of hand 1 left out the hand's own ``HandStarted`` commit and took in the
next hand's; it showed event names only, nothing to download, and no page linked to it. Now
it lists exactly the hand's commits (from its ``HandStarted`` to its ``DeckRevealed``), each
with its time, who decided it, its events with their amounts, its hash and the previous one;
the hand page links to it for the compliance role only; and its evidence file verifies
offline with `pokerctl audit --evidence` (a subprocess, no server) and fails, with exit 1
naming the field, when one byte of it is changed: in a commit, a link, the reveal, the
verdict."""

from __future__ import annotations

import base64
import datetime
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shared.audit.access import ensure_access_stream, read_access
from shared.infra.commits import read_envelopes
from tests.helpers.web import Http, sign_in, web_app
from tests.system.test_web_hand_cache import bots_play

ROOT = Path(__file__).resolve().parents[2]
TABLE = "filed"


def pokerctl(*args: str) -> subprocess.CompletedProcess:
    """The CLI as a user runs it, offline: the NATS it would use answers nowhere."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "POKER_NATS_URL": "nats://127.0.0.1:1"}
    return subprocess.run([sys.executable, "-m", "services.pokerctl", *args], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=60)


def hand_ranges(stored) -> dict[int, list[int]]:
    """Each hand's commits as the log holds them, found here without the code under test:
    from the commit whose HandStarted names the hand to the one with its DeckRevealed."""
    ranges: dict[int, list[int]] = {}
    current = None
    for s in stored:
        _, envelopes = read_envelopes(s.data)
        bodies = [env.WhichOneof("body") for env in envelopes]
        if "hand_started" in bodies:
            current = envelopes[bodies.index("hand_started")].hand_started.hand_no
            ranges[current] = []
        if current is not None:
            ranges[current].append(s.seq)
            if "deck_revealed" in bodies:
                current = None
    return ranges


@pytest.fixture
async def filed(stack, store):
    """A table of three hands, the web over it, a compliance clerk and a player signed in."""
    await bots_play(stack, TABLE, 3)
    await ensure_access_stream(store.js)  # (the admin's: `pokerctl up` makes it)
    async with web_app(stack, store) as (address, _):
        clerk = await sign_in(address, stack.token("cathy", "compliance"))
        player = await sign_in(address, stack.token("pat"), source="127.0.0.9")
        yield address, clerk, player
        await clerk.close()
        await player.close()


async def test_the_replay_lists_exactly_each_hands_commits_as_stored(filed, store):
    _, clerk, _ = filed
    stored = {s.seq: s for s in await store.read(TABLE)}
    ranges = hand_ranges(stored.values())
    for hand in (1, 2):
        reply = await clerk.request("GET", f"/api/compliance/tables/{TABLE}/hands/{hand}")
        assert reply.status == 200, reply.body
        view = reply.json()
        assert view["audit"]["ok"] and view["hand_audit"]["ok"], view["audit"]
        seqs = [row["seq"] for row in view["commits"]]
        assert seqs == ranges[hand]  # its HandStarted first, its DeckRevealed last
        other = ranges[2 if hand == 1 else 1]
        assert not set(seqs) & set(other)
        assert view["commits"][0]["events"][0] == {**view["commits"][0]["events"][0],
                                                   "type": "hand_started", "hand_no": hand}
        assert view["commits"][-1]["events"][-1]["type"] == "deck_revealed"
        for row in view["commits"]:
            raws = read_envelopes(stored[row["seq"]].data)[0].events
            envelopes = read_envelopes(stored[row["seq"]].data)[1]
            head = envelopes[0]
            assert row["hash"] == hashlib.sha256(raws[-1]).hexdigest()
            assert row["prev_hash"] == head.prev_hash.hex()
            assert row["links"] is True
            at = datetime.datetime.fromtimestamp(head.occurred_at_unix_ms / 1000,
                                                 datetime.UTC)
            assert datetime.datetime.fromisoformat(row["time"]) == at
            assert row["command_id"] == head.command_id
            assert [e["type"] for e in row["events"]] == \
                [env.WhichOneof("body") for env in envelopes]
            actor = row["actor"]
            if head.command_id.startswith("c.s"):  # a seated player's command
                assert actor["kind"] == "player" and actor["name"].startswith(f"bot-{TABLE}")
            else:  # the table's own steps: the service that appended them
                assert actor == {**actor, "kind": "service", "name": head.producer}
            for e, env in zip(row["events"], envelopes):  # the amounts, as the log holds them
                body = getattr(env, env.WhichOneof("body"))
                for field in ("amount", "added", "to", "seat"):
                    if body.DESCRIPTOR.fields_by_name.get(field) is not None:
                        assert e[field] == getattr(body, field), (e, field)
        # each hand's rows chain on: the first row's prev_hash is the last hash before it
        before = stored[ranges[hand][0] - 1]
        assert view["link_before"] == view["commits"][0]["prev_hash"] == \
            hashlib.sha256(read_envelopes(before.data)[0].events[-1]).hexdigest()
        assert view["decks"] and all(d["verified"] for d in view["decks"])
        assert all(len(d["deck"]) == 52 and d["salt"] for d in view["decks"])


async def test_the_hand_page_links_the_replay_for_the_compliance_role_only(filed):
    address, clerk, player = filed
    link = f'href="/compliance/tables/{TABLE}/hands/1"'
    page = await clerk.request("GET", f"/table/{TABLE}/hands/1")
    assert page.status == 200 and link in page.body.decode()
    for who in (player, Http(address, "127.0.0.7")):
        page = await who.request("GET", f"/table/{TABLE}/hands/1")
        assert page.status == 200 and "/compliance/" not in page.body.decode()
    replay = await clerk.request("GET", f"/compliance/tables/{TABLE}/hands/1")
    assert f'href="/api/compliance/tables/{TABLE}/hands/1/evidence.json"' in \
        replay.body.decode() and "Download evidence" in replay.body.decode()


def flip(data: bytes, within: bytes, after: bytes, index: int = 0) -> bytes:
    """``data`` with one byte changed: the ``index``-th character of the value that follows
    ``after`` in the part of the file from ``within`` on (to another character of its
    alphabet, so the file still reads as JSON)."""
    at = data.index(after, data.index(within)) + len(after) + index
    old = data[at:at + 1]
    new = {b"0": b"1", b"9": b"8", b"A": b"B", b"a": b"b", b"f": b"e", b"t": b"f"}.get(
        old, b"1" if old != b"1" else b"2")
    changed = data[:at] + new + data[at + 1:]
    assert len(changed) == len(data) and changed != data
    return changed


async def test_the_evidence_verifies_offline_and_one_changed_byte_fails(filed, store,
                                                                       tmp_path):
    _, clerk, player = filed
    path = f"/api/compliance/tables/{TABLE}/hands/2/evidence.json"
    records_before = len(await read_access(store.js))
    denied = await player.request("GET", path)
    assert denied.status == 403
    assert len(await read_access(store.js)) == records_before  # nothing opened, nothing noted
    reply = await clerk.request("GET", path)
    assert reply.status == 200, reply.body
    assert "attachment" in (reply.header("content-disposition") or "")
    record = (await read_access(store.js))[-1]  # recorded as the replay's views are
    assert record["purpose"] == "web-evidence" and record["who"] == "cathy (web)"
    assert record["tables"] == [TABLE] and record["hands"] == [2] and record["key_ids"]
    data = reply.body
    doc = json.loads(data)
    assert doc["format"] == "poker-hand-evidence/v1" and doc["hand_no"] == 2
    stored = await store.read(TABLE)
    in_hand = [s for s in stored if s.seq in hand_ranges(stored)[2]]
    assert [base64.b64decode(c["data"]) for c in doc["commits"]] == [s.data for s in in_hand]
    assert [base64.b64decode(c["data"]) for c in doc["context"]] == \
        [s.data for s in stored if s.seq < in_hand[0].seq]
    assert doc["verdict"]["ok"] and doc["reveal"][0]["verified"]

    good = tmp_path / "hand-2.json"
    good.write_bytes(data)
    done = pokerctl("audit", "--evidence", str(good))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "evidence verifies" in done.stdout

    cases = {  # what is changed: (the file with one byte changed, the field named)
        "a commit": (flip(data, b'"commits": [', b'"data": "', 120), "commits."),
        "a link": (flip(data, b'"hand_no"', b'"link_before": "', 10), "link_before"),
        "the reveal": (flip(data, b'"reveal": [', b'"salt": "', 3), "reveal.0.salt"),
        "the verdict": (flip(data, b'"verdict": {', b'"cards": '), "verdict.cards"),
        "a sequence": (flip(data, b'"hand_no"', b'"last_seq": '), "last_seq"),
        # a hand's commit out of order: the audit of the hand
        "a commit's sequence": (flip(data, b'"commits": [', b'"seq": ', 1), "verdict."),
        # an earlier commit's stream sequence is outside the hash chain and read by nothing:
        # the checksum covers it
        "an earlier sequence": (flip(data, b'"context": [', b'"seq": '), "checksum"),
    }
    for what, (bad, named) in cases.items():
        assert sum(a != b for a, b in zip(bad, data)) == 1, what
        path_ = tmp_path / "changed.json"
        path_.write_bytes(bad)
        done = pokerctl("audit", "--evidence", str(path_))
        assert done.returncode == 1, (what, done.stdout, done.stderr)
        assert named in done.stdout and "does NOT verify" in done.stdout, (what, done.stdout)
    truncated = tmp_path / "cut.json"
    truncated.write_bytes(data[:-40])
    done = pokerctl("audit", "--evidence", str(truncated))
    assert done.returncode == 1 and "does not verify" in done.stderr, done.stderr
    missing = pokerctl("audit", "--evidence", str(tmp_path / "nothing.json"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
