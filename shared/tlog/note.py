"""C2SP signed notes (c2sp.org/signed-note), checkpoints (c2sp.org/tlog-checkpoint) and
timestamped Ed25519 cosignatures (c2sp.org/tlog-cosignature, cosignature/v1).

A note is a text ending in a newline, a blank line, then signature lines
``— <key name> base64(4-byte key id || signature)``. Keys are Ed25519:

    key id (a note signature, type 0x01) = SHA-256(name || 0x0A || 0x01 || public key)[:4]
    key id (a cosignature, type 0x04)    = SHA-256(name || 0x0A || 0x04 || public key)[:4]

A verifier key (vkey) is ``<name>+<hex key id>+base64(type || public key)``; a signing key
is kept as Go's golang.org/x/mod/sumdb/note writes it,
``PRIVATE+KEY+<name>+<hex key id>+base64(type || 32-byte seed)`` (the spec defines no private
encoding; this one is the reference implementation's, so keys move between the two).

A checkpoint's text is ``<origin>\\n<tree size>\\n<base64 root hash>\\n`` (and optional
extension lines); the log signs it with its key (type 0x01), whose name is the origin. A
witness's cosignature (type 0x04) signs ``cosignature/v1\\ntime <t>\\n`` + the checkpoint's
text, and its signature is ``u64 timestamp (big-endian) || Ed25519 signature``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ED25519 = 0x01
COSIGNATURE_V1 = 0x04
EM_DASH = "\u2014"
#: the most signature lines a note may carry here (the spec: at least 16 must be accepted)
MAX_SIGNATURES = 64


class NoteError(ValueError):
    """A note, key or checkpoint that is malformed, or whose signature does not verify."""


def key_id(name: str, sig_type: int, public: bytes) -> int:
    """SHA-256(name || 0x0A || type || public key)[:4], big-endian."""
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([sig_type]) + public).digest()
    return int.from_bytes(digest[:4], "big")


def _check_name(name: str) -> None:
    if not name or any(c.isspace() for c in name) or "+" in name or \
            any(ord(c) < 0x20 for c in name):
        raise NoteError(f"not a key name: {name!r} (non-empty, no spaces, no '+')")


def _raw_public(key: Ed25519PublicKey) -> bytes:
    return key.public_bytes(Encoding.Raw, PublicFormat.Raw)


@dataclass(frozen=True)
class Verifier:
    """A public key that checks the signatures of one name and key id."""

    name: str
    sig_type: int
    public: bytes

    @property
    def id(self) -> int:
        return key_id(self.name, self.sig_type, self.public)

    @property
    def vkey(self) -> str:
        return (f"{self.name}+{self.id:08x}+"
                f"{base64.b64encode(bytes([self.sig_type]) + self.public).decode()}")

    @classmethod
    def parse(cls, vkey: str) -> Verifier:
        """A vkey ``name+hex id+base64(type || key)`` (of type 0x01 or 0x04)."""
        parts = vkey.strip().split("+", 2)  # base64 may hold "+"
        if len(parts) != 3:
            raise NoteError(f"not a verifier key: {vkey!r}")
        name, hex_id, b64 = parts
        _check_name(name)
        try:
            raw = base64.b64decode(b64, validate=True)
            wanted = int(hex_id, 16)
        except (binascii.Error, ValueError):
            raise NoteError(f"not a verifier key: {vkey!r}") from None
        if len(hex_id) != 8 or len(raw) != 33 or raw[0] not in (ED25519, COSIGNATURE_V1):
            raise NoteError(f"not an Ed25519 verifier key: {vkey!r}")
        v = cls(name, raw[0], raw[1:])
        if v.id != wanted:
            raise NoteError(f"the key id of {vkey!r} is not its key's")
        return v

    def verify(self, message: bytes, signature: bytes) -> bool:
        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except (InvalidSignature, ValueError):
            return False
        return True


@dataclass(frozen=True)
class Signer:
    """An Ed25519 private key with its name and signature type."""

    name: str
    sig_type: int
    seed: bytes

    @property
    def key(self) -> Ed25519PrivateKey:
        return Ed25519PrivateKey.from_private_bytes(self.seed)

    @property
    def verifier(self) -> Verifier:
        return Verifier(self.name, self.sig_type, _raw_public(self.key.public_key()))

    @property
    def id(self) -> int:
        return self.verifier.id

    @classmethod
    def generate(cls, name: str, sig_type: int = ED25519) -> Signer:
        _check_name(name)
        from cryptography.hazmat.primitives.serialization import NoEncryption, PrivateFormat
        seed = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw,
                                                          NoEncryption())
        return cls(name, sig_type, seed)

    @property
    def skey(self) -> str:
        """``PRIVATE+KEY+name+hex id+base64(type || seed)``."""
        return (f"PRIVATE+KEY+{self.name}+{self.id:08x}+"
                f"{base64.b64encode(bytes([self.sig_type]) + self.seed).decode()}")

    @classmethod
    def parse(cls, skey: str) -> Signer:
        parts = skey.strip().split("+", 4)  # base64 may hold "+"
        if len(parts) != 5 or parts[:2] != ["PRIVATE", "KEY"]:
            raise NoteError("not a signing key (PRIVATE+KEY+name+id+key)")
        name, hex_id, b64 = parts[2:]
        _check_name(name)
        try:
            raw = base64.b64decode(b64, validate=True)
            wanted = int(hex_id, 16)
        except (binascii.Error, ValueError):
            raise NoteError("not a signing key (PRIVATE+KEY+name+id+key)") from None
        if len(hex_id) != 8 or len(raw) != 33 or raw[0] not in (ED25519, COSIGNATURE_V1):
            raise NoteError("not an Ed25519 signing key")
        s = cls(name, raw[0], raw[1:])
        if s.id != wanted:
            raise NoteError(f"the key id of signing key {name} is not its key's")
        return s

    def sign(self, message: bytes) -> bytes:
        return self.key.sign(message)


# --- notes ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Signature:
    name: str
    id: int
    signature: bytes  # after the 4-byte key id

    @property
    def line(self) -> str:
        blob = self.id.to_bytes(4, "big") + self.signature
        return f"{EM_DASH} {self.name} {base64.b64encode(blob).decode()}\n"

    @classmethod
    def parse_line(cls, line: str) -> Signature:
        """``— name base64`` (without its newline)."""
        prefix = EM_DASH + " "
        if not line.startswith(prefix):
            raise NoteError(f"not a signature line: {line!r}")
        rest = line[len(prefix):]
        name, sep, b64 = rest.partition(" ")
        if not sep or " " in b64:
            raise NoteError(f"not a signature line: {line!r}")
        _check_name(name)
        try:
            blob = base64.b64decode(b64, validate=True)
        except binascii.Error:
            raise NoteError(f"the signature of {name} is not base64") from None
        if len(blob) < 5:
            raise NoteError(f"the signature of {name} is too short")
        return cls(name, int.from_bytes(blob[:4], "big"), blob[4:])


@dataclass(frozen=True)
class Note:
    text: str  # ends with a newline
    signatures: tuple[Signature, ...] = field(default=())

    def encode(self) -> str:
        return self.text + "\n" + "".join(s.line for s in self.signatures)

    @classmethod
    def parse(cls, data: str | bytes) -> Note:
        """A signed note; NoteError if it is not one (the format's rules: UTF-8, no control
        characters but newlines, a text ending in a newline, a blank line, one or more
        signature lines, each ending in a newline)."""
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8")
            except UnicodeDecodeError:
                raise NoteError("a note is UTF-8") from None
        if any(ord(c) < 0x20 and c != "\n" for c in data):
            raise NoteError("a note holds no control characters but newlines")
        at = data.rfind("\n\n")
        if at < 0 or not data.endswith("\n"):
            raise NoteError("a note is a text, a blank line and signature lines")
        text, sigs = data[:at + 1], data[at + 2:]
        lines = sigs[:-1].split("\n") if sigs else []
        if not lines:
            raise NoteError("the note has no signature")
        if len(lines) > MAX_SIGNATURES:
            raise NoteError(f"more than {MAX_SIGNATURES} signatures")
        return cls(text, tuple(Signature.parse_line(line) for line in lines))

    def verified_by(self, verifier: Verifier) -> list[Signature]:
        """The signatures of ``verifier``'s name and key id that verify over the text;
        NoteError if one of them does not (a note signed by a known key with a bad
        signature is rejected whole)."""
        good = []
        for s in self.signatures:
            if s.name != verifier.name or s.id != verifier.id:
                continue
            if verifier.sig_type == COSIGNATURE_V1:
                ok = _verify_cosignature(verifier, self.text, s.signature)
            else:
                ok = verifier.verify(self.text.encode(), s.signature)
            if not ok:
                raise NoteError(f"the signature of {verifier.name} ({verifier.id:08x}) does "
                                f"not verify")
            good.append(s)
        return good

    def with_signatures(self, more: list[Signature]) -> Note:
        """The note with ``more`` added (a signature of the same name and id replaced)."""
        keys = {(s.name, s.id) for s in more}
        kept = [s for s in self.signatures if (s.name, s.id) not in keys]
        return Note(self.text, tuple(kept + list(more)))


def sign(text: str, signer: Signer) -> Note:
    """The note ``text`` signed by ``signer`` (type 0x01: Ed25519 over the text)."""
    if not text.endswith("\n"):
        raise NoteError("a note's text ends with a newline")
    return Note(text, (Signature(signer.name, signer.id, signer.sign(text.encode())),))


# --- checkpoints ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    extensions: tuple[str, ...] = ()

    @property
    def text(self) -> str:
        lines = [self.origin, str(self.size), base64.b64encode(self.root).decode(),
                 *self.extensions]
        return "".join(line + "\n" for line in lines)

    @classmethod
    def parse_text(cls, text: str) -> Checkpoint:
        lines = text.split("\n")
        if len(lines) < 4 or lines[-1] != "" or any(not line for line in lines[:-1]):
            raise NoteError("a checkpoint's text is at least three non-empty lines")
        origin, size, root = lines[0], lines[1], lines[2]
        if not size.isdigit() or (size != "0" and size.startswith("0")) or not size.isascii():
            raise NoteError(f"not a tree size: {size!r}")
        try:
            raw = base64.b64decode(root, validate=True)
        except binascii.Error:
            raise NoteError("the root hash is not base64") from None
        if len(raw) != 32:
            raise NoteError("the root hash is not 32 bytes")
        return cls(origin, int(size), raw, tuple(lines[3:-1]))


@dataclass(frozen=True)
class SignedCheckpoint:
    checkpoint: Checkpoint
    note: Note

    @classmethod
    def parse(cls, data: str | bytes) -> SignedCheckpoint:
        note = Note.parse(data)
        return cls(Checkpoint.parse_text(note.text), note)

    def verify(self, log_key: Verifier) -> None:
        """The log's signature (its key, named by the origin) is there and verifies."""
        if log_key.name != self.checkpoint.origin:
            raise NoteError(f"the checkpoint's origin is {self.checkpoint.origin!r}, the "
                            f"log key's name {log_key.name!r}")
        if not self.note.verified_by(log_key):
            raise NoteError(f"the checkpoint is not signed by the log key {log_key.vkey}")

    def cosigned_by(self, witness: Verifier) -> int:
        """The time of ``witness``'s cosignature (a verified one); NoteError if none."""
        for s in self.note.verified_by(witness):
            return cosignature_time(s.signature)
        raise NoteError(f"no cosignature of witness {witness.name} ({witness.vkey})")

    def encode(self) -> str:
        return self.note.encode()


def sign_checkpoint(checkpoint: Checkpoint, signer: Signer) -> SignedCheckpoint:
    if signer.name != checkpoint.origin:
        raise NoteError("the log's key name is its origin")
    return SignedCheckpoint(checkpoint, sign(checkpoint.text, signer))


# --- cosignatures (cosignature/v1) ------------------------------------------------------------


def cosigned_message(text: str, timestamp: int) -> bytes:
    return f"cosignature/v1\ntime {timestamp}\n".encode() + text.encode()


def cosign(text: str, signer: Signer, timestamp: int) -> Signature:
    """A witness's timestamped cosignature (type 0x04) over a checkpoint's text."""
    if signer.sig_type != COSIGNATURE_V1:
        raise NoteError("a cosigner's key is of type 0x04")
    if not 0 < timestamp < 2**63:
        raise NoteError("a cosignature's timestamp is from 1 to 2^63 - 1")
    sig = signer.sign(cosigned_message(text, timestamp))
    return Signature(signer.name, signer.id, struct.pack(">Q", timestamp) + sig)


def cosignature_time(signature: bytes) -> int:
    if len(signature) != 8 + 64:
        raise NoteError("a cosignature is a timestamp and an Ed25519 signature")
    return struct.unpack(">Q", signature[:8])[0]


def _verify_cosignature(verifier: Verifier, text: str, signature: bytes) -> bool:
    if len(signature) != 8 + 64:
        return False
    timestamp = struct.unpack(">Q", signature[:8])[0]
    if timestamp >= 2**63:
        return False
    return verifier.verify(cosigned_message(text, timestamp), signature[8:])
