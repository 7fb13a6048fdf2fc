"""`python -m services.pokerctl history` as a subprocess against the real stack: bots play a
few hands through the TableService API, then the table's histories are read from JetStream in
each format: exit 0, one history per hand, totals consistent with the log."""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest
from poker.table.v1 import table_pb2_grpc
from pokerkit import HandHistory

from services.pokerctl.botclient import play
from services.pokerctl.bots_cmd import create_and_seat, plan_tables
from services.pokerctl.failures import NOT_FOUND, UNREACHABLE
from shared.infra.eventstore import EventStore
from shared.infra.mirror import connect_mirror, copy_new, ensure_mirror
from shared.infra.natsserver import NatsServer

ROOT = Path(__file__).resolve().parents[2]
HANDS = 4


@pytest.fixture(autouse=True)
def compliance_key(stack, monkeypatch):
    """The histories are the compliance role's: its key opens the cards nobody saw."""
    monkeypatch.setenv("POKER_COMPLIANCE_KEY", stack.key_file)


async def pokerctl(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "services.pokerctl", "history", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


async def played_table(stack, game: str, structure: str, **stakes) -> tuple[str, int]:
    (plan,) = plan_tables(1, game, structure)
    plan.stakes.update(stakes)
    async with stack.channel("table") as channel:
        stub = table_pb2_grpc.TableServiceStub(channel)
        bots = await create_and_seat(stub, plan, 3, stack.sponsor())
        bots = await play(stub, bots, HANDS, random.Random(1))
    return plan.table_id, bots.hands_seen


async def test_history_of_played_hands(stack, table_stub, nats_server):
    table, played = await played_table(stack, "holdem", "no_limit")
    assert played >= 2

    done = await pokerctl("--table", table, "--format", "json", "--nats", nats_server.url)
    assert done.returncode == 0, done.stderr
    objs = [json.loads(line) for line in done.stdout.splitlines()]
    assert [o["hand_no"] for o in objs] == list(range(1, len(objs) + 1))
    assert len(objs) == played
    for o in objs:
        awarded = sum(s["amount"] for a in o["awards"] for s in a["shares"])
        assert o["total_pot"] == sum(p["amount"] for p in o["pots"]) == awarded + o["rake"]
        assert sum(p["stack"] for p in o["players"]) == \
            sum(p["stack"] for p in o["final_stacks"]) + o["rake"]
        assert o["started_at_unix_ms"] and o["table_id"] == table
        assert all(p["name"].startswith("bot-") for p in o["players"])
    for before, after in zip(objs, objs[1:]):  # stacks carry over (bots only buy in when broke)
        carried = {p["seat"]: p["stack"] for p in before["final_stacks"]}
        for p in after["players"]:
            if p["seat"] in carried:  # a seat dealt in both hands
                assert p["stack"] == carried[p["seat"]] or carried[p["seat"]] == 0

    done = await pokerctl("--table", table, "--format", "pokerstars", "--nats", nats_server.url)
    assert done.returncode == 0, done.stderr
    texts = done.stdout.strip().split("\n\n\n")
    assert len(texts) == played
    for text, o in zip(texts, objs):
        assert text.startswith(f"PokerStars Hand #{o['hand_id']}:  Hold'em No Limit (1/2) - ")
        assert re.search(r" \d{4}/\d\d/\d\d \d{1,2}:\d\d:\d\d ET\n", text)
        total = re.search(r"^Total pot (\d+)(.*)\| Rake (\d+)$", text, re.M)
        assert int(total[1]) == o["total_pot"] and int(total[3]) == o["rake"]
        collected = sum(int(x) for x in re.findall(r"^.* collected (\d+) from", text, re.M))
        assert collected + o["rake"] == o["total_pot"]
        assert text.count("*** SUMMARY ***") == 1

    done = await pokerctl("--table", table, "--hand", "1", "--format", "phh",
                          "--nats", nats_server.url)
    assert done.returncode == 0, done.stderr
    assert "hand = 1\n" in done.stdout and "variant = 'NT'" in done.stdout

    one = await pokerctl("--table", table, "--hand", "2", "--seat", "1", "--nats",
                         nats_server.url)
    assert one.returncode == 0, one.stderr
    dealt = [line for line in one.stdout.splitlines() if line.startswith("Dealt to")]
    assert len(dealt) == 1 and dealt[0].startswith(f"Dealt to bot-{table}-1 ")


async def test_hand_ids_are_unique_across_tables_and_stable(stack, table_stub, nats_server):
    """Two tables played at once both number their hands from 1; the PokerStars ids (stream
    sequences) never collide, grow hand by hand and are the same when exported again."""
    (a, _), (b, _) = await asyncio.gather(played_table(stack, "holdem", "no_limit"),
                                          played_table(stack, "omaha", "pot_limit"))

    async def ids(table: str) -> dict[int, int]:
        """hand number -> PokerStars id, from the text (checked against the JSON)."""
        text = await pokerctl("--table", table, "--nats", nats_server.url)
        js = await pokerctl("--table", table, "--format", "json", "--nats", nats_server.url)
        assert text.returncode == js.returncode == 0, text.stderr + js.stderr
        objs = [json.loads(line) for line in js.stdout.splitlines()]
        found = [int(x) for x in re.findall(r"^PokerStars Hand #(\d+):", text.stdout, re.M)]
        assert found == [o["hand_id"] for o in objs]
        return {o["hand_no"]: o["hand_id"] for o in objs}

    ids_a, ids_b = await ids(a), await ids(b)
    assert 1 in ids_a and 1 in ids_b  # the tables' own hand numbers collide
    assert not set(ids_a.values()) & set(ids_b.values())
    for table_ids in (ids_a, ids_b):
        assert list(table_ids.values()) == sorted(set(table_ids.values()))
    assert await ids(a) == ids_a and await ids(b) == ids_b


async def test_a_mirror_gives_the_same_histories_and_hand_ids(stack, table_stub, nats_server,
                                                               tmp_path):
    """The mirror numbers its stream its own way (here it held a commit before the copy); the
    hand ids come from the primary's sequence each copy carries, so the text is the same."""
    (other, _), (table, _) = await asyncio.gather(
        played_table(stack, "holdem", "fixed_limit"),
        played_table(stack, "stud", "fixed_limit"))
    mirror_server = NatsServer(tmp_path / "mirror", name="poker-mirror").start()
    try:
        src = await EventStore.connect(nats_server.url, create=False)
        dst = await connect_mirror(mirror_server.url)
        try:
            await ensure_mirror(src, dst)  # the mirror's stream, then a commit of its own in it
            await dst.append("unrelated", b"x", 0, "shifts-the-mirror")  # mirror seq != primary
            await copy_new(src, dst)
        finally:
            await src.close()
            await dst.close()
        for fmt in ("pokerstars", "json"):
            primary = await pokerctl("--table", table, "--format", fmt, "--nats", nats_server.url)
            copy = await pokerctl("--table", table, "--format", fmt, "--nats", mirror_server.url)
            assert primary.returncode == copy.returncode == 0, primary.stderr + copy.stderr
            assert copy.stdout == primary.stdout and primary.stdout
        # and from an export of the mirror, offline
        export = tmp_path / "mirror.jsonl"
        run = await asyncio.to_thread(subprocess.run, [
            sys.executable, "-m", "services.pokerctl", "audit", "--all", "--export", str(export),
            "--nats", mirror_server.url], cwd=ROOT, capture_output=True, text=True, timeout=60,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert run.returncode == 0, run.stderr
        offline = await pokerctl("--table", table, "--format", "json", "--file", str(export))
        assert offline.returncode == 0, offline.stderr
        assert offline.stdout == primary.stdout  # (the json of the loop above)
    finally:
        mirror_server.stop()


async def test_phh_of_every_logged_hand_replays_in_pokerkit(stack, table_stub, nats_server):
    """PHH has no rake: the table takes none, so every hand's stacks can be compared (split
    pots aside, where pokerkit's odd-chip rule differs)."""
    table, played = await played_table(stack, "holdem", "no_limit", rake_basis_points=0)
    done = await pokerctl("--table", table, "--format", "json", "--nats", nats_server.url)
    objs = [json.loads(line) for line in done.stdout.splitlines()]
    compared = 0
    for o in objs:
        if o["rake"] or len({s["amount"] for a in o["awards"] for s in a["shares"]}) > 1:
            continue
        out = await pokerctl("--table", table, "--hand", str(o["hand_no"]), "--format", "phh",
                             "--nats", nats_server.url)
        assert out.returncode == 0, out.stderr
        state = deque(HandHistory.loads(out.stdout), maxlen=1).pop()
        seats = json.loads(next(x for x in out.stdout.splitlines()
                                if x.startswith("seats = ")).split("=", 1)[1])
        final = {p["seat"]: p["stack"] for p in o["final_stacks"]}
        assert list(state.stacks) == [final[s] for s in seats], out.stdout
        compared += 1
    assert played == len(objs) and compared >= 1


async def test_errors(stack, table_stub, nats_server):
    done = await pokerctl("--table", "no-such-table", "--nats", nats_server.url)
    assert done.returncode == NOT_FOUND and "no table" in done.stderr
    table, _ = await played_table(stack, "stud", "fixed_limit")
    done = await pokerctl("--table", table, "--hand", "99", "--nats", nats_server.url)
    assert done.returncode == NOT_FOUND and "not in the log" in done.stderr
    # PHH as seat 1 saw it: the others' down cards unknown (``??``) unless shown
    full = await pokerctl("--table", table, "--format", "phh", "--nats", nats_server.url)
    seen = await pokerctl("--table", table, "--format", "phh", "--seat", "1",
                          "--nats", nats_server.url)
    assert full.returncode == 0 and seen.returncode == 0, full.stderr + seen.stderr
    assert "??" not in full.stdout and "??" in seen.stdout
    full_lines, seen_lines = full.stdout.splitlines(), seen.stdout.splitlines()
    assert len(full_lines) == len(seen_lines)
    changed = [(f, v) for f, v in zip(full_lines, seen_lines, strict=True) if f != v]
    assert changed and all("d dh" in f and "??" in v for f, v in changed), changed
    done = await pokerctl("--table", table, "--hand", "1", "--nats", nats_server.url)
    assert done.returncode == 0, done.stderr
    assert "7 Card Stud Limit (10/20)" in done.stdout and "*** 3rd STREET ***" in done.stdout
    done = await pokerctl("--table", table, "--nats", "nats://127.0.0.1:1")
    assert done.returncode == UNREACHABLE and "cannot reach NATS at nats://127.0.0.1:1" in \
        done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) <= 2, done.stderr


async def test_without_the_compliance_key_unseen_cards_read_unknown(stack, table_stub,
                                                                    nats_server, monkeypatch):
    """The log seals the cards nobody saw: a history made without the compliance key shows
    only the board and the hands shown; with the key every hole card is there."""
    table, played = await played_table(stack, "holdem", "no_limit")
    full = await pokerctl("--table", table, "--format", "json", "--nats", nats_server.url)
    assert full.returncode == 0, full.stderr
    monkeypatch.delenv("POKER_COMPLIANCE_KEY")
    monkeypatch.setenv("XDG_DATA_HOME", str(ROOT / "no-such-dir"))  # no `pokerctl up` key
    blind = await pokerctl("--table", table, "--format", "json", "--nats", nats_server.url)
    assert blind.returncode == 0, blind.stderr
    assert "no compliance key" in blind.stderr
    hands = list(zip(map(json.loads, blind.stdout.splitlines()),
                     map(json.loads, full.stdout.splitlines())))
    assert len(hands) == played
    for seen, known in hands:
        assert seen["shows"] == known["shows"] and seen["board"] == known["board"]
        for a, b in zip(seen["streets"], known["streets"]):
            for x, y in zip(a["hole"], b["hole"]):
                assert "??" not in y["cards"], y
                assert set(x["cards"]) == {"??"}, (x, y)
