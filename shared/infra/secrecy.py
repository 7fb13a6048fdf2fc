"""Secrecy at rest: the cards nobody has seen are sealed in the log.

The log is evidence kept for years and read by many: every service folds it, projections and
mirrors copy it, operators export it. Hole cards that were never shown, burned cards and the
revealed decks must not be readable there by anyone but the dealer and the compliance role.

- **The hand key**: 32 random bytes made by the dealer when it shuffles a hand's first deck. It
  is kept in the dealer's vault with the deck (a bucket only the dealer's account reads).
- **Sealed fields** (written by the codec, :mod:`shared.infra.codec`): in ``CardsDealt`` the
  burned cards and every face-down hole card, in ``DeckRevealed`` the decks and salts. Each is
  AES-256-GCM under the hand key, with a fresh 96-bit nonce, and the associated data names the
  table, the hand, the event and the place (street, seat), so a sealed blob copied to another
  place, hand or table does not open. The plain fields carry the unknown card ``??`` in place
  of each sealed card, so every reader can still fold the hand: how many cards each seat holds,
  the face-up stud cards, the board.
- **The compliance wrap**: every ``DeckCommitted`` carries the hand key sealed to the compliance
  role's X25519 public key (an ephemeral key pair per hand, HKDF-SHA256, AES-256-GCM), and
  that key's id. The dealer holds only the public key; the private key stays with compliance
  (``pokerctl keys generate``), who opens every hand in an audit or a full hand history.
- **Readers**: the dealer opens the running hand with the vault's key; the compliance role with
  its private key (:class:`ComplianceKeyring`); every other service, projection and mirror sees
  ``??`` for cards that were not shown. Shown hands are public: ``HandShown`` is plain.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from shared.infra.randomness import entropy

from .tablecache import TableCache

KEY_BYTES = 32
NONCE_BYTES = 12
_PUBLIC_HEADER = "poker-compliance-public-key-v1"
_PRIVATE_HEADER = "poker-compliance-private-key-v1"
_WRAP_INFO = b"poker hand key wrap v1"


class SecrecyError(ValueError):
    """A sealed field that does not open (tampered, moved, or sealed under another key) or a
    key file that is not a key."""


def _aad(table_id: str, hand_no: int, place: str) -> bytes:
    return f"poker/v1|{table_id}|{hand_no}|{place}".encode()


@lru_cache(maxsize=64)
def _aead(key: bytes) -> AESGCM:
    """The AES-GCM cipher of a hand key. A hand's cards are sealed and opened piece by piece
    (the burns and each seat's face-down cards of every street, the reveal): making the
    cipher once per hand rather than per piece halves the cost of opening one."""
    return AESGCM(key)


@dataclass(frozen=True, slots=True)
class HandKey:
    """One hand's data key."""

    table_id: str
    hand_no: int
    key: bytes

    @classmethod
    def generate(cls, table_id: str, hand_no: int) -> HandKey:
        return cls(table_id, hand_no, entropy(KEY_BYTES))

    def seal(self, data: bytes, place: str) -> bytes:
        nonce = entropy(NONCE_BYTES)
        return nonce + _aead(self.key).encrypt(nonce, data, _aad(self.table_id, self.hand_no,
                                                                  place))

    def open(self, blob: bytes, place: str) -> bytes:
        try:
            return _aead(self.key).decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:],
                                           _aad(self.table_id, self.hand_no, place))
        except (InvalidTag, ValueError):
            raise SecrecyError(f"the sealed {place} of table {self.table_id!r} hand "
                               f"{self.hand_no} does not open with the hand's key: it was "
                               f"changed, moved or sealed under another key") from None


def _wrap_key(shared: bytes, epk: bytes, recipient: bytes) -> bytes:
    return HKDF(hashes.SHA256(), KEY_BYTES, salt=epk + recipient, info=_WRAP_INFO).derive(shared)


def _raw_public(key: X25519PublicKey) -> bytes:
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def _read_key_file(path: str | Path, header: str) -> bytes:
    try:
        text = Path(path).read_text().split()
    except OSError as exc:
        raise SecrecyError(f"cannot read the key file {path}: {exc.strerror}") from None
    if len(text) != 2 or text[0] != header:
        raise SecrecyError(f"{path} is not a {header} file (make one with "
                           f"`pokerctl keys generate`)")
    try:
        raw = base64.b64decode(text[1], validate=True)
    except ValueError:
        raise SecrecyError(f"{path}: the key is not base64") from None
    if len(raw) != KEY_BYTES:
        raise SecrecyError(f"{path}: a key is {KEY_BYTES} bytes, not {len(raw)}")
    return raw


@dataclass(frozen=True, slots=True)
class CompliancePublicKey:
    """What the dealer holds: it seals each hand key to compliance and cannot open it again."""

    raw: bytes

    @property
    def key_id(self) -> str:
        return hashlib.sha256(self.raw).hexdigest()[:16]

    @classmethod
    def from_file(cls, path: str | Path) -> CompliancePublicKey:
        return cls(_read_key_file(path, _PUBLIC_HEADER))

    def to_text(self) -> str:
        return f"{_PUBLIC_HEADER}\n{base64.b64encode(self.raw).decode()}\n"

    def wrap(self, hand: HandKey) -> bytes:
        """ephemeral public key (32) + nonce (12) + the sealed hand key (48)."""
        ephemeral = X25519PrivateKey.from_private_bytes(entropy(KEY_BYTES))
        epk = _raw_public(ephemeral.public_key())
        shared = ephemeral.exchange(X25519PublicKey.from_public_bytes(self.raw))
        nonce = entropy(NONCE_BYTES)
        sealed = AESGCM(_wrap_key(shared, epk, self.raw)).encrypt(
            nonce, hand.key, _aad(hand.table_id, hand.hand_no, "hand key"))
        return epk + nonce + sealed


class ComplianceKey:
    """The compliance role's private key: it opens every hand sealed to its public key."""

    def __init__(self, raw: bytes) -> None:
        self._private = X25519PrivateKey.from_private_bytes(raw)
        self._raw = raw
        self.public = CompliancePublicKey(_raw_public(self._private.public_key()))

    @classmethod
    def generate(cls) -> ComplianceKey:
        return cls(entropy(KEY_BYTES))

    @classmethod
    def from_file(cls, path: str | Path) -> ComplianceKey:
        return cls(_read_key_file(path, _PRIVATE_HEADER))

    def to_text(self) -> str:
        return f"{_PRIVATE_HEADER}\n{base64.b64encode(self._raw).decode()}\n"

    def write(self, directory: str | Path) -> tuple[Path, Path]:
        """``compliance.key`` (owner-only) and ``compliance.pub`` in ``directory``."""
        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        private, public = d / "compliance.key", d / "compliance.pub"
        fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(self.to_text())
        public.write_text(self.public.to_text())
        return private, public

    def unwrap(self, wrapped: bytes, table_id: str, hand_no: int) -> HandKey:
        if len(wrapped) != 32 + NONCE_BYTES + KEY_BYTES + 16:
            raise SecrecyError(f"the wrapped key of table {table_id!r} hand {hand_no} is "
                               f"{len(wrapped)} bytes, not a wrapped key")
        epk, nonce, sealed = wrapped[:32], wrapped[32:44], wrapped[44:]
        shared = self._private.exchange(X25519PublicKey.from_public_bytes(epk))
        try:
            key = AESGCM(_wrap_key(shared, epk, self.public.raw)).decrypt(
                nonce, sealed, _aad(table_id, hand_no, "hand key"))
        except InvalidTag:
            raise SecrecyError(f"the hand key of table {table_id!r} hand {hand_no} does not "
                               f"open with the compliance key: it was changed or moved") from None
        return HandKey(table_id, hand_no, key)


class Keyring(Protocol):
    """What a reader can open. The codec asks it while decoding."""

    def hand_key(self, table_id: str, hand_no: int) -> HandKey | None: ...

    def learn(self, table_id: str, hand_no: int, key_id: str, wrapped: bytes) -> None: ...


class _Bounded:
    def __init__(self, size: int) -> None:
        self._keys: OrderedDict[tuple[str, int], HandKey] = OrderedDict()
        self._size = size

    def add(self, hand: HandKey) -> None:
        self._keys[(hand.table_id, hand.hand_no)] = hand
        self._keys.move_to_end((hand.table_id, hand.hand_no))
        while len(self._keys) > self._size:
            self._keys.popitem(last=False)

    def hand_key(self, table_id: str, hand_no: int) -> HandKey | None:
        return self._keys.get((table_id, hand_no))


class DealerKeyring:
    """The dealer's: the running hands' keys, put here from the vault before a table is read.
    A table's last two hands' keys are kept, in a cache that forgets the table with its fold
    (shared/infra/tablecache.py): a forgotten key is put back from the vault before the next
    step's read."""

    def __init__(self, tables: int | None = None) -> None:
        """``tables``: how many tables' keys at most (None: POKER_CACHE_TABLES)."""
        self._keys: TableCache[tuple[HandKey, ...]] = TableCache("hand keys", limit=tables)

    def add(self, hand: HandKey) -> None:
        kept = self._keys.get(hand.table_id) or ()
        others = tuple(k for k in kept if k.hand_no != hand.hand_no)
        self._keys.put(hand.table_id, (*others[-1:], hand))

    def hand_key(self, table_id: str, hand_no: int) -> HandKey | None:
        return next((k for k in self._keys.peek(table_id) or () if k.hand_no == hand_no), None)

    def learn(self, table_id: str, hand_no: int, key_id: str, wrapped: bytes) -> None:
        return None  # the dealer cannot open the compliance wrap, and has the key anyway


class ComplianceKeyring(_Bounded):
    """The compliance role's: opens each hand's key from its ``DeckCommitted`` as the log is
    read. Several keys may be given (a key rotated over the years); a hand sealed to a key
    not given stays unopened (its cards read ``??``), and :attr:`missing` names the key ids."""

    def __init__(self, keys: list[ComplianceKey] | tuple[ComplianceKey, ...],
                 size: int = 100_000) -> None:
        super().__init__(size)
        self._by_id = {k.public.key_id: k for k in keys}
        self.missing: set[str] = set()

    @property
    def key_ids(self) -> list[str]:
        """The ids of the keys this keyring holds (what the access log records)."""
        return sorted(self._by_id)

    @classmethod
    def from_files(cls, paths: list[str] | tuple[str, ...]) -> ComplianceKeyring:
        return cls([ComplianceKey.from_file(p) for p in paths])

    def learn(self, table_id: str, hand_no: int, key_id: str, wrapped: bytes) -> None:
        if self.hand_key(table_id, hand_no) is not None:
            return
        key = self._by_id.get(key_id)
        if key is None:
            self.missing.add(key_id)
            return
        self.add(key.unwrap(wrapped, table_id, hand_no))


@dataclass(frozen=True, slots=True)
class Sealing:
    """What the dealer seals one commit with: the hand's key, and compliance's public key."""

    hand: HandKey
    compliance: CompliancePublicKey
