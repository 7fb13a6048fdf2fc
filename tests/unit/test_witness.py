"""The witness (shared/tlog/witness.py, `pokerctl witness serve`) over real HTTP on loopback:
c2sp.org/tlog-witness add-checkpoint as written. It cosigns a first checkpoint and every one
that its consistency proof shows extends the last it cosigned; it refuses a split view (two
different trees of one size, or a larger tree that does not extend its own) and a bad proof
with 422, a request from another size with 409 and that size, an unknown log with 404, a
checkpoint its log did not sign with 403, a malformed one with 400; it records each
checkpoint (atomically, synced) before it answers, and keeps it across restarts."""

from __future__ import annotations

import hashlib
import json
import threading
import urllib.error
import urllib.request

import pytest

from shared.tlog import merkle as M
from shared.tlog.note import COSIGNATURE_V1, Checkpoint, Note, NoteError, Signer, sign_checkpoint
from shared.tlog.witness import Witness, origin_hash, request_body, serve

LOG = Signer.generate("poker.example/hands")
WITNESS = Signer.generate("witness.example/w1", COSIGNATURE_V1)


def leaves(n: int, salt: bytes = b"") -> list[bytes]:
    return [M.leaf_hash(salt + i.to_bytes(4, "big")) for i in range(n)]


def checkpoint(hashes: list[bytes], signer: Signer = LOG) -> str:
    return sign_checkpoint(Checkpoint(signer.name, len(hashes), M.root(hashes)),
                           signer).encode()


@pytest.fixture
def witness(tmp_path):
    w = Witness(WITNESS, [LOG.verifier], tmp_path / "state.json", clock=lambda: 1_700_000_000)
    server = serve(w, "127.0.0.1", 0)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    yield w, url
    server.shutdown()
    server.server_close()
    w.close()


def post(url: str, body: bytes) -> tuple[int, str, str]:
    req = urllib.request.Request(url + "/add-checkpoint", data=body, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status, r.read().decode(), r.headers["Content-Type"]
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(), exc.headers["Content-Type"]


def add(url: str, old: int, hashes: list[bytes], proof_from: list[bytes] | None = None,
        signer: Signer = LOG) -> tuple[int, str, str]:
    proof = M.consistency_proof(proof_from or hashes, old) if 0 < old < len(
        proof_from or hashes) else []
    return post(url, request_body(old, proof, checkpoint(hashes, signer)))


def test_it_cosigns_a_first_checkpoint_and_each_extension(witness):
    w, url = witness
    tree = leaves(7)
    status, body, _ = add(url, 0, tree[:3])
    assert status == 200, body
    # the answer is the witness's cosignature line, timestamped, on the checkpoint's text
    note = Note.parse(checkpoint(tree[:3]) + body)
    (line,) = note.verified_by(WITNESS.verifier)
    assert line.signature[:8] == (1_700_000_000).to_bytes(8, "big")
    assert body == line.line
    status, body, _ = add(url, 3, tree)  # 3 -> 7 with its consistency proof
    assert status == 200, body
    assert w.size_of(LOG.name) == 7
    state = json.loads(w.state_file.read_text())  # recorded before the answer
    assert state[LOG.name]["size"] == 7
    status, body, _ = add(url, 7, tree)  # the same checkpoint again: consistent
    assert status == 200, body


def test_a_request_from_another_size_is_409_with_the_witness_size(witness):
    _, url = witness
    tree = leaves(6)
    assert add(url, 0, tree[:4])[0] == 200
    status, body, ctype = add(url, 2, tree)
    assert (status, body, ctype) == (409, "4\n", "text/x.tlog.size")
    status, body, ctype = add(url, 0, tree)  # a log that knows nothing asks from 0
    assert (status, body) == (409, "4\n")
    assert add(url, 4, tree)[0] == 200


def test_a_split_view_is_refused(witness):
    """Two trees of one size (one shown to a regulator, another to the players): the second
    is refused, and so is a larger tree that does not extend the one cosigned."""
    _, url = witness
    honest, forked = leaves(8), leaves(3) + leaves(5, b"fork")
    assert add(url, 0, honest[:5])[0] == 200
    status, body, _ = add(url, 5, forked[:5])  # the same size, another root
    assert status == 422, body
    status, body, _ = add(url, 5, forked, proof_from=forked)  # its own proof, from its own 5
    assert status == 422 and "not consistent" in body, body
    status, body, _ = add(url, 5, honest)  # the honest extension still goes through
    assert status == 200, body


def test_a_bad_proof_is_422(witness):
    _, url = witness
    tree = leaves(9)
    assert add(url, 0, tree[:3])[0] == 200
    proof = M.consistency_proof(tree, 3)
    proof[0] = bytes([proof[0][0] ^ 1]) + proof[0][1:]
    status, body, _ = post(url, request_body(3, proof, checkpoint(tree)))
    assert status == 422, body
    status, body, _ = post(url, request_body(3, proof[:-1], checkpoint(tree)))  # too short
    assert status == 422, body


def test_size_zero_rules(witness):
    _, url = witness
    empty = sign_checkpoint(Checkpoint(LOG.name, 0, M.EMPTY_ROOT), LOG).encode()
    assert post(url, request_body(0, [], empty))[0] == 200
    wrong = sign_checkpoint(Checkpoint(LOG.name, 0, b"\1" * 32), LOG).encode()
    assert post(url, request_body(0, [], wrong))[0] == 422
    # from size 0 the proof is empty
    assert post(url, request_body(0, [b"\2" * 32], checkpoint(leaves(2))))[0] == 422


def test_refusals_of_the_log_and_the_request(witness):
    _, url = witness
    tree = leaves(2)
    assert add(url, 0, tree, signer=Signer.generate("other.example/log"))[0] == 404
    impostor = Signer.generate(LOG.name)  # the log's name, not its key
    assert add(url, 0, tree, signer=impostor)[0] == 403
    good = checkpoint(tree)
    sig = good.split("\n\n")[1]
    broken = good.replace(sig, sig[:20] + ("A" if sig[20] != "A" else "B") + sig[21:])
    assert post(url, request_body(0, [], broken))[0] == 403  # the log's key, a bad signature
    assert add(url, 5, tree)[0] == 400  # old > size
    assert post(url, b"old 1\nnot base64!\n\n" + good.encode())[0] == 400
    assert post(url, b"no old line\n\n" + good.encode())[0] == 400


def test_the_state_survives_a_restart_and_is_served(witness, tmp_path):
    w, url = witness
    tree = leaves(5)
    assert add(url, 0, tree)[0] == 200
    with urllib.request.urlopen(f"{url}/{origin_hash(LOG.name)}/checkpoint") as r:
        served = r.read().decode()
    note = Note.parse(served)
    assert note.verified_by(LOG.verifier) and note.verified_by(WITNESS.verifier)
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{url}/{hashlib.sha256(b'x').hexdigest()}/checkpoint")
    assert e.value.code == 404
    with pytest.raises(NoteError):  # one witness per state file
        Witness(WITNESS, [LOG.verifier], w.state_file)
    w.close()
    again = Witness(WITNESS, [LOG.verifier], w.state_file)
    try:
        assert again.size_of(LOG.name) == 5
        answer = again.add_checkpoint(request_body(0, [], checkpoint(leaves(6))))
        assert (answer.status, answer.body) == (409, b"5\n")
    finally:
        again.close()
