"""Signed notes, checkpoints and cosignatures (shared/tlog/note.py) against the
specifications' own examples, byte for byte: c2sp.org/signed-note, tlog-checkpoint,
tlog-cosignature and tlog-witness (their examples kept in tests/data/tlog/, from C2SP/C2SP at
the commit in C2SP-COMMIT), and the signing vector of the reference implementation the
signed-note format comes from (golang.org/x/mod/sumdb/note's TestSign: a private key, a text
and the exact note; go-note-*, commit GO-MOD-COMMIT)."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from shared.tlog.note import (
    COSIGNATURE_V1,
    ED25519,
    Checkpoint,
    Note,
    NoteError,
    SignedCheckpoint,
    Signer,
    Verifier,
    cosign,
    cosignature_time,
    cosigned_message,
    key_id,
    sign,
    sign_checkpoint,
)
from shared.tlog.witness import parse_request, request_body

DATA = Path(__file__).resolve().parents[1] / "data" / "tlog"


def read(name: str) -> str:
    return (DATA / name).read_bytes().decode("utf-8")


def test_the_signed_note_example_verifies_with_its_vkey_and_encodes_back_byte_for_byte():
    text = read("signed-note-example.txt")
    vkey = Verifier.parse(read("signed-note-example.vkey"))
    assert vkey.name == "example.com/foo" and vkey.sig_type == ED25519
    # the key id is SHA-256(name || 0x0A || 0x01 || key)[:4], as the vkey says
    assert f"{vkey.id:08x}" == "530d903a"
    assert vkey.id == int.from_bytes(hashlib.sha256(
        b"example.com/foo\n\x01" + vkey.public).digest()[:4], "big")
    assert vkey.vkey + "\n" == read("signed-note-example.vkey")
    note = Note.parse(text)
    assert note.text == "This is an example message.\n"
    assert [s.name for s in note.verified_by(vkey)] == ["example.com/foo"]
    assert note.encode() == text
    # a changed byte of the text, or of the signature, does not verify
    with pytest.raises(NoteError):
        Note("This is an example message!\n", note.signatures).verified_by(vkey)
    sig = note.signatures[0]
    bad = type(sig)(sig.name, sig.id, bytes([sig.signature[0] ^ 1]) + sig.signature[1:])
    with pytest.raises(NoteError):
        Note(note.text, (bad,)).verified_by(vkey)
    # an unknown key's signature is ignored (no verification, no acceptance)
    other = Signer.generate("example.com/bar")
    assert note.verified_by(other.verifier) == []


def test_the_quasimodo_note_parses_with_its_empty_lines_and_encodes_back():
    text = read("signed-note-quasimodo.txt")
    note = Note.parse(text)
    assert note.text.endswith("ed è subito sera.\n") and "\n\n" in note.text
    assert [s.name for s in note.signatures] == ["quasimodo.example/salvatore"]
    assert note.encode() == text


def test_signing_gives_the_reference_implementations_note_byte_for_byte():
    signer = Signer.parse(read("go-note-PeterNeumann.skey"))
    assert signer.skey + "\n" == read("go-note-PeterNeumann.skey")
    assert signer.verifier.vkey + "\n" == read("go-note-PeterNeumann.vkey")
    text = ("If you think cryptography is the answer to your problem,\n"
            "then you don't know what your problem is.\n")
    assert sign(text, signer).encode() == read("go-note-signed.txt")


def test_the_checkpoint_example_is_the_checkpoint_format_byte_for_byte():
    example = read("checkpoint-example.txt")
    signed = SignedCheckpoint.parse(example)
    cp = signed.checkpoint
    assert (cp.origin, cp.size) == ("example.com/behind-the-sofa", 20852163)
    assert base64.b64encode(cp.root).decode() == "CsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I="
    # the same origin, size and root make the same text; the note encodes back exactly
    assert Checkpoint(cp.origin, cp.size, cp.root).text == example.split("\n\n")[0] + "\n"
    assert signed.encode() == example


def test_our_checkpoints_have_that_format_and_verify():
    signer = Signer.generate("poker.example/hands")
    root = hashlib.sha256(b"").digest()
    signed = sign_checkpoint(Checkpoint(signer.name, 0, root), signer)
    text = signed.encode()
    head, sigs = text.split("\n\n")
    assert head == "poker.example/hands\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
    assert sigs.startswith("\u2014 poker.example/hands ") and sigs.endswith("=\n")
    assert len(base64.b64decode(sigs.split(" ")[2])) == 4 + 64
    SignedCheckpoint.parse(text).verify(signer.verifier)
    with pytest.raises(NoteError):  # the log key is named by the origin
        SignedCheckpoint.parse(text).verify(Signer.generate("other.example/log").verifier)


@pytest.mark.parametrize("bad", ["example.com/x\n1\n", "example.com/x\n01\nAAAA\n",
                                 "example.com/x\n-1\n" + "A" * 43 + "=\n",
                                 "\n1\n" + "A" * 43 + "=\n", "example.com/x\n1\nnot base64\n"])
def test_malformed_checkpoint_texts_are_refused(bad):
    with pytest.raises(NoteError):
        Checkpoint.parse_text(bad)


def test_the_cosignature_example_parses_to_the_time_of_the_example_message():
    cosigned = SignedCheckpoint.parse(read("cosigned-checkpoint-example.txt"))
    assert cosigned.encode() == read("cosigned-checkpoint-example.txt")
    witness = cosigned.note.signatures[1]
    assert witness.name == "witness.example.com/w1"
    # u64 timestamp (big-endian) || Ed25519 signature; the example message's time
    assert cosignature_time(witness.signature) == 1679315147
    assert cosigned_message(cosigned.checkpoint.text, 1679315147).decode() == \
        read("cosignature-v1-message-example.txt")


def test_a_cosignature_is_made_and_checked_as_the_spec_says():
    witness = Signer.generate("witness.example/w1", COSIGNATURE_V1)
    assert witness.id == key_id("witness.example/w1", 0x04, witness.verifier.public)
    log = Signer.generate("poker.example/hands")
    signed = sign_checkpoint(Checkpoint(log.name, 3, b"\1" * 32), log)
    line = cosign(signed.checkpoint.text, witness, 1679315147)
    assert line.signature[:8] == (1679315147).to_bytes(8, "big")
    with_it = SignedCheckpoint(signed.checkpoint, signed.note.with_signatures([line]))
    assert with_it.cosigned_by(witness.verifier) == 1679315147
    # the message is cosignature/v1, the time and the checkpoint's text
    witness.verifier.verify(cosigned_message(signed.checkpoint.text, 1679315147),
                            line.signature[8:])
    # a note-type key of the same name does not check a cosignature
    with pytest.raises(NoteError):
        with_it.cosigned_by(Signer.generate("witness.example/w1", ED25519).verifier)


def test_the_witness_request_example_parses_and_is_made_back_byte_for_byte():
    body = (DATA / "witness-add-checkpoint-request.txt").read_bytes()
    old, proof, signed = parse_request(body)
    assert old == 20852014 and len(proof) == 4
    assert signed.checkpoint.size == 20852163 and len(signed.note.signatures) == 2
    assert request_body(old, proof, signed.encode()) == body


def test_the_witness_response_example_is_cosignature_lines():
    text = read("witness-add-checkpoint-response.txt")
    note = Note.parse("x\n\n" + text)
    assert [s.name for s in note.signatures] == ["witness.example/w1", "witness.example/w1",
                                                 "witness.example/w2"]
    assert "".join(s.line for s in note.signatures) == text


@pytest.mark.parametrize("bad", ["no blank line\n\u2014 a AAAAAAAA\n", "text\n\n",
                                 "text\n\n\u2014 a+b AAAAAAAA\n", "text\n\n- a AAAAAAAA\n",
                                 "text\n\n\u2014 a AAAAAAAA", "te\x01xt\n\n\u2014 a AAAAAAAA\n"])
def test_malformed_notes_are_refused(bad):
    with pytest.raises(NoteError):
        Note.parse(bad)
