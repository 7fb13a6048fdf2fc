"""A witness (c2sp.org/tlog-witness): it cosigns a log's checkpoint only if it extends the
last one it cosigned for that log, so that two different trees of one size (a split view:
one history shown to a regulator, another to the players) cannot both be cosigned.

``POST <prefix>/add-checkpoint`` with ``old <size>``, the consistency proof lines (base64,
at most 63), an empty line and the signed checkpoint. The checks, in the spec's words:

- the request does not parse: 400; the origin is not a log this witness knows: 404;
- no signature of a trusted key for the origin, or one that does not verify: 403;
- ``old`` greater than the checkpoint's size: 400;
- ``old`` is not the size of the last checkpoint this witness cosigned for the origin (0 if
  none): 409, the body that size and a newline, ``Content-Type: text/x.tlog.size``;
- a checkpoint of size 0 whose root is not the empty tree's, a proof with ``old`` 0, a
  consistency proof (RFC 6962 §2.1.2) that does not verify, or the same size with another
  root: 422;
- else the checkpoint is recorded (written to the state file and synced, before the answer:
  checked and recorded under one lock) and the answer is 200 with the witness's timestamped
  Ed25519 cosignature line (cosignature/v1, key type 0x04).

``GET <prefix>/<hex SHA-256 of the origin>/checkpoint``: the last checkpoint cosigned for that
log, with the log's signature and the witness's cosignature (404 if none).

The spec recommends ML-DSA-44 cosignatures for new deployments; this witness makes the
Ed25519 ones (cosignature/v1), which the spec still defines, since the rest of the project's
keys are Ed25519 and no post-quantum signature library is among its dependencies.
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from . import merkle
from .note import (
    COSIGNATURE_V1,
    Checkpoint,
    Note,
    NoteError,
    SignedCheckpoint,
    Signer,
    Verifier,
    cosign,
)

MAX_PROOF_LINES = 63
MAX_BODY = 64 * 1024
SIZE_TYPE = "text/x.tlog.size"


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"


def _text(status: int, why: str) -> Answer:
    return Answer(status, (why + "\n").encode())


def parse_request(body: bytes) -> tuple[int, list[bytes], SignedCheckpoint]:
    """(old size, proof, checkpoint) of an add-checkpoint body; NoteError if malformed."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise NoteError("the body is not UTF-8") from None
    head, sep, rest = text.partition("\n\n")
    if not sep:
        raise NoteError("no empty line before the checkpoint")
    lines = head.split("\n")
    first = lines[0]
    if not first.startswith("old "):
        raise NoteError("the first line is not `old <size>`")
    old = first[4:]
    if not old.isdigit() or not old.isascii() or (old != "0" and old.startswith("0")):
        raise NoteError(f"not a tree size: {old!r}")
    proof_lines = lines[1:]
    if len(proof_lines) > MAX_PROOF_LINES:
        raise NoteError(f"more than {MAX_PROOF_LINES} consistency proof lines")
    proof = []
    for line in proof_lines:
        try:
            h = base64.b64decode(line, validate=True)
        except binascii.Error:
            raise NoteError("a proof line is not base64") from None
        if len(h) != merkle.HASH_SIZE:
            raise NoteError("a proof line is not a 32-byte hash")
        proof.append(h)
    return int(old), proof, SignedCheckpoint.parse(rest)


def request_body(old: int, proof: Iterable[bytes], checkpoint: str) -> bytes:
    """An add-checkpoint body (what a log sends)."""
    lines = [f"old {old}", *(base64.b64encode(p).decode() for p in proof)]
    return ("".join(line + "\n" for line in lines) + "\n" + checkpoint).encode()


def origin_hash(origin: str) -> str:
    return hashlib.sha256(origin.encode()).hexdigest()


class Witness:
    """The witness's logic and state: ``signer`` (type 0x04) cosigns; ``logs``: the log keys
    it trusts (type 0x01), by origin (the key's name); ``state``: the file of the last
    checkpoint cosigned per origin (JSON), replaced atomically and synced before a
    cosignature leaves. ``clock``: seconds since the epoch (tests pass their own)."""

    def __init__(self, signer: Signer, logs: Iterable[Verifier], state: Path,
                 clock: Callable[[], float] = time.time) -> None:
        if signer.sig_type != COSIGNATURE_V1:
            raise NoteError("a witness's key is a cosignature key (type 0x04)")
        self.signer = signer
        self.logs: dict[str, list[Verifier]] = {}
        for v in logs:
            self.logs.setdefault(v.name, []).append(v)
        self.state_file = Path(state)
        self.clock = clock
        self._lock = threading.Lock()
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        # one process per state file: a second witness on it would race the first
        self._flock = os.open(self.state_file.with_name(self.state_file.name + ".lock"),
                              os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self._flock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(self._flock)
            raise NoteError(f"{self.state_file} is in use by another witness") from None
        self.state: dict[str, dict] = (json.loads(self.state_file.read_text())
                                       if self.state_file.exists() else {})

    def close(self) -> None:
        if self._flock >= 0:
            os.close(self._flock)
            self._flock = -1

    def size_of(self, origin: str) -> int:
        return int(self.state.get(origin, {}).get("size", 0))

    def add_checkpoint(self, body: bytes) -> Answer:
        try:
            old, proof, signed = parse_request(body)
        except NoteError as exc:
            return _text(400, f"malformed request: {exc}")
        cp = signed.checkpoint
        keys = self.logs.get(cp.origin)
        if not keys:
            return _text(404, f"unknown log {cp.origin!r}")
        try:
            if not any(signed.note.verified_by(k) for k in keys):
                return _text(403, "no signature of the log's key")
        except NoteError as exc:
            return _text(403, str(exc))
        if old > cp.size:
            return _text(400, f"old size {old} is greater than the checkpoint's {cp.size}")
        with self._lock:
            known = self.state.get(cp.origin, {})
            size = int(known.get("size", 0))
            if old != size:
                return Answer(409, f"{size}\n".encode(), SIZE_TYPE)
            if cp.size == 0 and cp.root != merkle.EMPTY_ROOT:
                return _text(422, "a tree of size 0 has the empty tree's root")
            if old == 0:
                if proof:
                    return _text(422, "from size 0 the consistency proof is empty")
            else:
                root = base64.b64decode(known["root"])
                try:
                    merkle.verify_consistency(old, cp.size, root, cp.root, proof)
                except merkle.ProofError as exc:
                    return _text(422, f"the checkpoint is not consistent with the one of "
                                      f"size {old} cosigned before: {exc}")
            timestamp = int(self.clock())
            cosignature = cosign(cp.text, self.signer, timestamp)
            record = {"size": cp.size, "root": base64.b64encode(cp.root).decode(),
                      "checkpoint": signed.note.with_signatures([cosignature]).encode(),
                      "time": timestamp}
            self._persist({**self.state, cp.origin: record})
            self.state[cp.origin] = record
        return Answer(200, cosignature.line.encode())

    def checkpoint_of(self, hashed_origin: str) -> Answer:
        for origin, record in self.state.items():
            if origin_hash(origin) == hashed_origin:
                return Answer(200, record["checkpoint"].encode())
        return _text(404, "no checkpoint cosigned for that log")

    def _persist(self, state: dict) -> None:
        """Write the state to a new file, sync it, rename it over the old, sync the
        directory: a crash leaves the old state or the new, never a part."""
        tmp = self.state_file.with_name(self.state_file.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, json.dumps(state, indent=1, sort_keys=True).encode())
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.state_file)
        dfd = os.open(self.state_file.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def serve(witness: Witness, host: str, port: int, prefix: str = "") -> ThreadingHTTPServer:
    """An HTTP server for ``witness`` (not started: call ``serve_forever``, or run it in a
    thread), at ``prefix`` (the submission and monitoring prefixes are the same)."""
    prefix = prefix.rstrip("/")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the spec recommends
        #: a connection idle or sending slowly this long is closed (its thread freed)
        timeout = 10

        def _send(self, answer: Answer) -> None:
            self.send_response(answer.status)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            if self.path != f"{prefix}/add-checkpoint":
                return self._send(_text(404, "not found"))
            try:
                length = int(self.headers.get("Content-Length") or "")
            except ValueError:
                return self._send(_text(411, "a body with its Content-Length"))
            if not 0 <= length <= MAX_BODY:
                return self._send(_text(413, "the body is too large"))
            self._send(witness.add_checkpoint(self.rfile.read(length)))

        def do_GET(self) -> None:  # noqa: N802
            parts = self.path[len(prefix):].strip("/").split("/")
            if self.path.startswith(prefix + "/") and len(parts) == 2 and \
                    parts[1] == "checkpoint":
                return self._send(witness.checkpoint_of(parts[0]))
            self._send(_text(404, "not found"))

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # quiet: the caller logs what it needs

    return ThreadingHTTPServer((host, port), Handler)


__all__ = ["Answer", "Checkpoint", "Note", "Witness", "origin_hash", "parse_request",
           "request_body", "serve"]
