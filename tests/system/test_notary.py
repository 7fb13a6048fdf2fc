"""The notary (services/notary) against the real stack: it appends one leaf per finished hand
to POKER_HANDS, each hand once, whether it runs along the bots, is stopped and started again
while they play, or is stopped after any number of commits and a new one reads on from its
stream; two notaries never interleave leaves; its checkpoints are cosigned by a real witness
over HTTP; `pokerctl checkpoint`, `pokerctl witness verify` and `pokerctl audit --checkpoint`
(--all and --file of a whole-log export) pass on the log, and the audit against the
checkpoint fails a truncated log, a changed last event and a changed command digest that pass
without it."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from poker.events.v1 import events_pb2 as pb

from services.notary.server import Notary
from services.pokerctl.bots_cmd import plan_tables, play_tables
from shared.infra.commits import read_envelopes
from shared.infra.waiting import until
from shared.tlog import merkle
from shared.tlog.hands import HandLeaf, HandLeaves
from shared.tlog.note import COSIGNATURE_V1, Signer
from shared.tlog.store import ensure_streams, latest_checkpoint, read_leaves
from shared.tlog.witness import Witness, serve

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.asyncio


def pokerctl(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for var in ("POKER_COMPLIANCE_KEY", "POKER_NOTARY_VKEY", "POKER_NATS_URL"):
        env.pop(var, None)
    return subprocess.run([sys.executable, "-m", "services.pokerctl", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, env=env)


async def play(client_stub, sponsor, tables: int = 2, hands: int = 3, seed: int = 7,
               leave: bool = True):
    plans = [p for p in plan_tables() if p.game == "holdem"][:tables]
    played = await play_tables(client_stub, plans, hands=hands, seats=3, sponsor=sponsor,
                               seed=seed, leave=leave)
    assert all(not p.error for p in played), [p.error for p in played]
    return plans


async def leaves_of_the_log(store) -> list[bytes]:
    """Every finished hand's leaf, from the log itself, in stream order."""
    layout = await store.layout()
    tables: dict[str, HandLeaves] = {}
    out: list[bytes] = []
    for subject, stored in await store.read_all():
        table = layout.table_of(subject)
        hands = tables.setdefault(table, HandLeaves(table, keep=False))
        commit, envelopes = read_envelopes(stored.data)
        out += [leaf.encode() for leaf in hands.feed(stored, commit.events, envelopes)]
    return out


def assert_each_hand_once(got: list[bytes], want: list[bytes]) -> None:
    assert sorted(got) == sorted(want), "a hand missing or appended twice"
    assert len({HandLeaf.parse(x).key for x in got}) == len(got)
    for table in {HandLeaf.parse(x).table_id for x in want}:  # each table's hands in order
        mine = [HandLeaf.parse(x).hand_no for x in got if HandLeaf.parse(x).table_id == table]
        assert mine == sorted(mine)


async def test_a_notary_stopped_after_any_commit_reads_on_and_appends_every_hand_once(
        stack, client_stub, sponsor, store):
    await play(client_stub, sponsor, tables=2, hands=3, leave=False)
    want = await leaves_of_the_log(store)
    commits = len(await store.read_all())
    assert len(want) == 6
    await ensure_streams(store.js)
    await restarted_notaries(store, commits // 4, len(want))
    assert_each_hand_once(await read_leaves(store), want)
    again = Notary(store, signer=Signer.generate("poker.test/hands"))
    assert await again.follow_once() == 0  # nothing new: nothing appended


async def restarted_notaries(store, step: int, hands: int) -> None:
    """Notaries, each stopped after ``step`` commits (a new one, knowing nothing, takes its
    place from POKER_HANDS: the last leaf of each stream and where the hands running then
    began), until every hand has its leaf; then one more reading to the end."""
    signer = Signer.generate("poker.test/hands")
    stopped = 0
    while len(await read_leaves(store)) < hands and stopped < 200:
        await Notary(store, signer).follow_once(limit=step)
        stopped += 1
    assert stopped > 2, "the notaries were not stopped mid-stream"
    await Notary(store, signer).follow_once()


async def interleaved(store, tables: int = 3, hands: int = 4) -> None:
    """Sample tables (written as the services write them) appended to the log interleaved,
    one commit of each in turn: every hand of a table spans hands of the others."""
    from shared.audit.sample import chain, play_decisions
    from shared.poker.options import table_options
    options = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
    logs = {f"t{i}": list(chain(f"t{i}", play_decisions(f"t{i}", options, hands=hands,
                                                        seats=3 + i, seed=i),
                                options=options)) for i in range(tables)}
    last = dict.fromkeys(logs, 0)
    while any(logs.values()):
        for table, commits in logs.items():
            for _ in range(1 + len(table) % 2):
                if commits:
                    stored = commits.pop(0)
                    last[table], _ = await store.append(table, stored.data, last[table],
                                                        stored.msg_id)


@pytest.mark.parametrize("step", [61, 97])
async def test_restarts_over_interleaved_hands_append_each_hand_once(store, step):
    await interleaved(store)
    want = await leaves_of_the_log(store)
    await ensure_streams(store.js)
    await restarted_notaries(store, step, len(want))
    assert_each_hand_once(await read_leaves(store), want)


async def test_the_notary_holds_only_the_tables_with_a_hand_running(store):
    """Its state is the hands running, not every table it has seen: read in steps over five
    interleaved tables it holds some, and none once every hand has ended (issue 29's review:
    it kept each table for ever and went through all of them for every leaf)."""
    await interleaved(store, tables=5)
    want = await leaves_of_the_log(store)
    commits = len(await store.read_all())
    await ensure_streams(store.js)
    notary = Notary(store, Signer.generate("poker.test/hands"))
    held = []
    for _ in range(commits // 7 + 2):
        await notary.follow_once(limit=7)
        held.append(notary.tables_held)
    assert_each_hand_once(await read_leaves(store), want)
    assert max(held) >= 3  # interleaved: several hands at once
    assert held[-1] == 0  # every hand ended: nothing held


async def test_two_notaries_never_interleave_leaves(stack, client_stub, sponsor, store):
    await play(client_stub, sponsor, tables=2, hands=2, leave=False)
    want = await leaves_of_the_log(store)
    await ensure_streams(store.js)
    signer = Signer.generate("poker.test/hands")
    a, b = Notary(store, signer), Notary(store, signer)
    await a.load()
    await b.load()
    await a.follow_once()  # every hand, while b's view stays at the empty tree
    from services.notary.server import LostRace
    follow = next(iter(b._follows.values()))
    with pytest.raises(LostRace):  # b's guarded append (expects size 0) is refused
        await b._append(follow, 10**9, b"a leaf b decided on its stale view\n")
    assert await b.follow_once() == 0  # b read the stream again: nothing left for it
    assert_each_hand_once(await read_leaves(store), want)


async def test_the_notary_service_restarted_while_bots_play_appends_every_hand_once(
        stack, client_stub, sponsor, store):
    await stack.start_service("notary")
    playing = asyncio.create_task(play(client_stub, sponsor, tables=2, hands=4, seed=11))

    async def some_leaves():
        return len(await read_leaves(store)) >= 1

    await until(some_leaves, 120, "a first leaf")
    await stack.stop_service("notary")
    await stack.start_service("notary")
    await playing
    want = await leaves_of_the_log(store)

    async def all_leaves():
        return len(await read_leaves(store)) >= len(want)

    await until(all_leaves, 60, "every hand's leaf")
    assert_each_hand_once(await read_leaves(store), want)


@pytest.fixture
def witness(tmp_path):
    signer = Signer.generate("witness.test/w1", COSIGNATURE_V1)
    made: dict = {}

    def start(log_vkey):
        w = Witness(signer, [log_vkey], tmp_path / "witness-state.json")
        server = serve(w, "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        made.update(w=w, server=server)
        return f"http://127.0.0.1:{server.server_address[1]}", signer

    yield start
    if made:
        made["server"].shutdown()
        made["server"].server_close()
        made["w"].close()


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _edit_last_envelope(row: dict, change) -> dict:
    commit = pb.Commit()
    commit.ParseFromString(base64.b64decode(row["data"]))
    env = pb.EventEnvelope()
    env.ParseFromString(commit.events[-1])
    change(commit, env)
    commit.events[-1] = env.SerializeToString(deterministic=True)
    return {**row, "data": base64.b64encode(commit.SerializeToString()).decode()}


async def test_the_audit_against_a_cosigned_checkpoint(stack, client_stub, sponsor,
                                                       nats_server, tmp_path, witness, store):
    url, wsigner = witness(stack.notary_signer.verifier)
    stack.env = {**stack.env, "POKER_CHECKPOINT_S": "3600",
                 "POKER_WITNESSES": f"{url}={wsigner.verifier.vkey}"}
    await stack.start_service("notary")
    await play(client_stub, sponsor, tables=2, hands=3, leave=False)
    want = await leaves_of_the_log(store)

    async def all_leaves():
        return len(await read_leaves(store)) >= len(want)

    await until(all_leaves, 60, "every hand's leaf")
    signed = await stack.notary.checkpoint()
    assert signed is not None and signed.checkpoint.size == len(want)
    assert signed.cosigned_by(wsigner.verifier)  # the witness cosigned it, over HTTP
    assert await latest_checkpoint(store.js) == signed.encode()
    assert await stack.notary.checkpoint() is None  # the tree did not grow

    cp, nats = tmp_path / "checkpoint.txt", nats_server.url
    run = pokerctl("checkpoint", "--out", str(cp), "--nats", nats)
    assert run.returncode == 0, run.stderr
    assert cp.read_text() == signed.encode()
    trust = ("--log-key", stack.notary_signer.verifier.vkey, "--witness",
             wsigner.verifier.vkey)
    run = pokerctl("witness", "verify", str(cp), *trust)
    assert run.returncode == 0 and "checkpoint verified" in run.stdout, run.stdout
    run = pokerctl("witness", "verify", str(cp), "--log-key",
                   Signer.generate(stack.notary_signer.name).verifier.vkey)
    assert run.returncode == 1, run.stdout  # another key of that name did not sign it

    key = ("--key", stack.key_file)
    run = pokerctl("audit", "--all", "--json", "--checkpoint", str(cp), *trust,
                   "--nats", nats, *key)
    assert run.returncode == 0, run.stdout + run.stderr
    checked = json.loads(run.stdout)["source"]["checkpoint"]
    assert checked["ok"] and checked["hands"] == len(want), checked
    export = tmp_path / "log.jsonl"
    run = pokerctl("audit", "--all", "--export", str(export), "--nats", nats)
    assert run.returncode == 0 and f"{len(want)} leaves" in run.stderr, run.stderr
    run = pokerctl("audit", "--file", str(export), "--checkpoint", str(cp), *trust, *key)
    assert run.returncode == 0 and "the log holds its tree" in run.stdout, run.stdout

    rows = _rows(export)
    commits = [r for r in rows if "table" in r]
    leaf_rows = [r for r in rows if "leaf" in r]
    table = commits[-1]["table"]
    # the table's log up to its last hand in the tree: a prefix that audits on its own
    last_leaf = [HandLeaf.parse(base64.b64decode(r["data"])) for r in leaf_rows]
    last = max((x for x in last_leaf if x.table_id == table), key=lambda x: x.hand_no)
    keep = [r for r in commits if r["table"] != table or r["seq"] <= last.last_seq]
    cut_row = max(i for i, r in enumerate(keep) if r["table"] == table)

    def verdicts(name: str, tampered: list[dict]) -> tuple[int, int, str]:
        path = _write(tmp_path / name, [rows[0], *tampered, *leaf_rows])
        alone = pokerctl("audit", "--file", str(path), *key, "--quiet")
        against = pokerctl("audit", "--file", str(path), "--checkpoint", str(cp), *trust,
                           *key, "--quiet")
        return alone.returncode, against.returncode, against.stdout

    base = verdicts("prefix.jsonl", keep)
    assert base[:2] == (0, 0), base[2]  # the prefix holds every hand of the tree
    # a truncated log: the table's last hand dropped
    first_of_last = [r for r in keep if not (r["table"] == table and r["seq"] >= last.first_seq)]
    alone, against, out = verdicts("truncated.jsonl", first_of_last)
    assert (alone, against) == (0, 1), out
    assert f"holds hand {last.hand_no}" in out and "tail was dropped" in out, out
    # the last event changed (its event id: nothing but the chain sees it, and nothing
    # chains after it)
    changed = list(keep)
    changed[cut_row] = _edit_last_envelope(keep[cut_row], lambda c, e: setattr(
        e, "event_id", "0" * 32))
    alone, against, out = verdicts("last-event.jsonl", changed)
    assert (alone, against) == (0, 1), out
    assert f"hand {last.hand_no}: its last event (the chain head) is not the tree's" in out

    # the command digest changed, with the envelope that carries it in the chain
    def new_digest(commit, env):
        commit.command_digest = env.command_digest = b"\x42" * 32

    digest = list(keep)
    digest[cut_row] = _edit_last_envelope(keep[cut_row], new_digest)
    alone, against, out = verdicts("digest.jsonl", digest)
    assert (alone, against) == (0, 1), out
    # ... and in the commit alone (outside the chain): the audit itself fails it now
    outside = list(keep)
    outside[cut_row] = _edit_last_envelope(keep[cut_row], lambda c, e: setattr(
        c, "command_digest", b"\x42" * 32))
    alone, against, out = verdicts("digest-outside.jsonl", outside)
    assert alone == 1 and against == 1
    # a leaf removed from the export's tree: the tree no longer has the checkpoint's root
    path = _write(tmp_path / "leaves.jsonl", [rows[0], *keep, *leaf_rows[:-1]])
    run = pokerctl("audit", "--file", str(path), "--checkpoint", str(cp), *trust, *key)
    assert run.returncode == 1 and "leaves were removed" in run.stdout, run.stdout
    # --checkpoint needs the whole log
    run = pokerctl("audit", "--table", table, "--checkpoint", str(cp), "--nats", nats, *key)
    assert run.returncode == 2
    assert merkle.Tree([merkle.leaf_hash(base64.b64decode(r["data"]))
                        for r in leaf_rows]).root() == signed.checkpoint.root
