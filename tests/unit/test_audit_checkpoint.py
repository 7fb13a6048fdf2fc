"""The audit against a checkpoint of the hands' Merkle log (shared/audit/checkpoint.py,
`pokerctl audit --file EXPORT --checkpoint FILE`) and the command digest in the hash chain
(shared/audit/auditor.py), on sample tables written as the services write them.

A replaced hand: the same table up to hand 5, another deal and play from there (the log is
self-consistent, so the audit alone passes it); against a checkpoint signed, and cosigned by a
witness, over the genuine hands it fails, naming the hand. A command digest changed outside
the chain fails the audit itself; an envelope that drops its digest after others carried one
fails too; a log written before envelopes carried digests audits as before."""

from __future__ import annotations

import io
import json

import pytest
from poker.events.v1 import events_pb2 as pb

from services.pokerctl.cli import main as pokerctl
from shared.audit import audit_table
from shared.audit.checkpoint import audit_checkpoint
from shared.audit.export import dump_lines, load_leaves
from shared.audit.sample import SAMPLE_KEY, chain, play_decisions, sample_keyring
from shared.infra.eventstore import Stored
from shared.poker.options import table_options
from shared.tlog import merkle
from shared.tlog.hands import HandLeaf
from shared.tlog.note import COSIGNATURE_V1, Checkpoint, Signer, sign_checkpoint
from shared.tlog.witness import Witness, request_body

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
NOTARY = Signer.generate("poker.test/hands")
WITNESS = Signer.generate("witness.test/w1", COSIGNATURE_V1)


def table(reseed: dict | None = None, hands: int = 6) -> list[Stored]:
    return list(chain("t1", play_decisions("t1", OPTIONS, hands=hands, seats=4, seed=5,
                                           reseed=reseed), options=OPTIONS))


@pytest.fixture(scope="module")
def genuine() -> list[Stored]:
    return table()


@pytest.fixture
def checkpointed(genuine, tmp_path):
    """The genuine table's leaves, a checkpoint over them signed by the notary and cosigned
    by a witness (its add-checkpoint), and the files the CLI takes."""
    leaves = audit_table("t1", genuine, sample_keyring()).hand_leaves
    tree = merkle.Tree([merkle.leaf_hash(x) for x in leaves])
    signed = sign_checkpoint(Checkpoint(NOTARY.name, tree.size, tree.root()), NOTARY)
    witness = Witness(WITNESS, [NOTARY.verifier], tmp_path / "witness.json")
    answer = witness.add_checkpoint(request_body(0, [], signed.encode()))
    witness.close()
    assert answer.status == 200, answer.body
    cp = tmp_path / "checkpoint.txt"
    cp.write_text(signed.encode() + answer.body.decode())
    private, _ = SAMPLE_KEY.write(tmp_path / "keys")
    return leaves, cp, str(private)


def export(path, commits: list[Stored], leaves: list[bytes]):
    path.write_text("".join(dump_lines((("t1", s) for s in commits), leaves)))
    return str(path)


def audit_cli(capsys, *args: str) -> tuple[int, str]:
    code = pokerctl(["audit", "--quiet", *args])
    return code, capsys.readouterr().out


def rechained(prefix: list[Stored], tail: list[Stored]) -> list[Stored]:
    """``tail``'s commits chained onto ``prefix``'s last hash (each envelope's prev_hash)."""
    import hashlib

    from shared.audit.sample import last_hash
    out, prev = list(prefix), last_hash(prefix[-1].data) if prefix else b""
    for s in tail:
        def link(commit, envs, prev=prev):
            p = prev
            for e in envs:
                e.prev_hash = p
                p = hashlib.sha256(e.SerializeToString(deterministic=True)).digest()
        s2 = _edit(s, link)
        out.append(s2)
        prev = last_hash(s2.data)
    return out


def test_the_leaves_are_the_hands(genuine):
    a = audit_table("t1", genuine, sample_keyring())
    assert a.ok and a.hands == 6 and len(a.hand_leaves) == 6
    leaves = [HandLeaf.parse(x) for x in a.hand_leaves]
    assert [x.hand_no for x in leaves] == [1, 2, 3, 4, 5, 6]
    assert all(x.first_seq < x.last_seq and len(x.decks) == 1 for x in leaves)
    assert leaves[-1].head.hex() == a.head_hash or leaves[-1].last_seq < a.last_seq
    assert len({x.result for x in leaves}) == 6


def test_a_replaced_hand_passes_alone_and_fails_against_the_checkpoint(
        genuine, checkpointed, tmp_path, capsys):
    leaves, cp, key = checkpointed
    # the genuine log up to hand 5, then another deal and play, chained onto it
    k = HandLeaf.parse(leaves[4]).first_seq - 1
    forged = rechained(genuine[:k], table(reseed={5: "another deal"})[k:])
    assert [s.data for s in forged[:k]] == [s.data for s in genuine[:k]]
    assert audit_table("t1", forged, sample_keyring()).ok  # self-consistent
    trust = ("--checkpoint", str(cp), "--log-key", NOTARY.verifier.vkey,
             "--witness", WITNESS.verifier.vkey, "--key", key)
    good = export(tmp_path / "good.jsonl", genuine, leaves)
    assert audit_cli(capsys, "--file", good, *trust)[0] == 0
    bad = export(tmp_path / "forged.jsonl", forged, leaves)
    assert audit_cli(capsys, "--file", bad, "--key", key)[0] == 0
    code, out = audit_cli(capsys, "--file", bad, *trust)
    assert code == 1 and "table t1, hand 5:" in out and "replaced" in out, out
    # another key of the notary's name did not sign it; a witness that did not cosign
    code, out = audit_cli(capsys, "--file", good, *trust, "--log-key",
                          Signer.generate(NOTARY.name).verifier.vkey)
    assert code == 1 and "signature" in out, out
    code, out = audit_cli(capsys, "--file", good, *trust, "--witness",
                          Signer.generate("w2.test/x", COSIGNATURE_V1).verifier.vkey)
    assert code == 1 and "no cosignature of witness w2.test/x" in out, out


def test_reordered_or_swapped_leaves_do_not_hash_to_the_root(genuine, checkpointed):
    leaves, cp, _ = checkpointed
    from shared.tlog.note import SignedCheckpoint
    signed = SignedCheckpoint.parse(cp.read_text())
    tables = {"t1": leaves}
    assert audit_checkpoint(signed, leaves, tables, NOTARY.verifier).ok
    swapped = [leaves[1], leaves[0], *leaves[2:]]
    result = audit_checkpoint(signed, swapped, tables, NOTARY.verifier)
    assert not result.ok and "do not hash to the checkpoint's root" in result.problems[0]
    result = audit_checkpoint(signed, leaves, {}, NOTARY.verifier)
    assert "none in the log" in result.problems[0]


def test_the_export_holds_the_leaves_after_the_commits(genuine, checkpointed):
    leaves, _, _ = checkpointed
    text = "".join(dump_lines((("t1", s) for s in genuine), leaves))
    assert load_leaves(io.StringIO(text)) == leaves
    rows = [json.loads(x) for x in text.splitlines()]
    assert [r["leaf"] for r in rows if "leaf" in r] == list(range(len(leaves)))


def _edit(stored: Stored, change) -> Stored:
    commit = pb.Commit()
    commit.ParseFromString(stored.data)
    envs = []
    for raw in commit.events:
        env = pb.EventEnvelope()
        env.ParseFromString(raw)
        envs.append(env)
    change(commit, envs)
    del commit.events[:]
    commit.events.extend(e.SerializeToString(deterministic=True) for e in envs)
    return Stored(stored.seq, commit.SerializeToString(deterministic=True), stored.msg_id)


def test_every_envelope_carries_its_commands_digest(genuine):
    for s in genuine:
        commit = pb.Commit()
        commit.ParseFromString(s.data)
        for raw in commit.events:
            env = pb.EventEnvelope()
            env.ParseFromString(raw)
            assert env.command_digest == commit.command_digest and len(env.command_digest) == 32


def test_a_digest_changed_outside_the_chain_fails_the_audit(genuine):
    def outside(commit, envs):
        commit.command_digest = b"\x42" * 32

    for i in (3, len(genuine) - 1):  # in the middle, and the last commit
        a = audit_table("t1", [*genuine[:i], _edit(genuine[i], outside), *genuine[i + 1:]],
                        sample_keyring())
        assert not a.ok and a.failure.seq == genuine[i].seq, a.failure
        assert "command digest is not the one its events carry" in a.failure.reason


def test_an_envelope_without_its_digest_after_others_carried_one_fails(genuine):
    def drop(commit, envs):
        for e in envs:
            e.command_digest = b""

    i = len(genuine) - 1  # the last commit: nothing chains after it
    a = audit_table("t1", [*genuine[:i], _edit(genuine[i], drop)], sample_keyring())
    assert not a.ok and "carries no command digest" in a.failure.reason, a.failure


def test_a_log_written_before_digests_audits_as_before(genuine):
    """Envelopes without a digest (re-chained, as a log of earlier code): the audit passes,
    and a commit digest changed there passes as it did (the checkpoint is what covers it)."""
    def drop(commit, envs):
        for e in envs:
            e.command_digest = b""

    old = rechained([], [_edit(s, drop) for s in genuine])
    assert audit_table("t1", old, sample_keyring()).ok

    def outside(commit, envs):
        commit.command_digest = b"\x42" * 32

    assert audit_table("t1", [*old[:3], _edit(old[3], outside), *old[4:]],
                       sample_keyring()).ok


def test_the_services_fold_refuses_a_digest_changed_outside_the_chain(genuine):
    """The repository's fold (what every service folds a table with) stops a table whose
    commit's digest is not the one its envelopes carry, as it does a broken chain."""
    from shared.infra.repository import CorruptLog, LoadedTable, fold_commit

    def outside(commit, envs):
        commit.command_digest = b"\x42" * 32

    lt = LoadedTable()
    for s in genuine[:3]:
        lt = fold_commit(lt, s)
    with pytest.raises(CorruptLog, match="command digest"):
        fold_commit(lt, _edit(genuine[3], outside))
