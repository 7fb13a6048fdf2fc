"""The embedded setup's identity provider: `pokerctl up` makes its key on first use, gives
the services its JWKS, and `pokerctl token` prints tokens from it. Not for production."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jwt
import structlog
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from shared.poker.players import subject_problem

from .files import write_private
from .identity import DEFAULT_AUDIENCE, PLAYER, ROLES, Verifier

log = structlog.get_logger()


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class DevIssuer:
    """The identity provider of `pokerctl up`'s embedded setup: an Ed25519 key in
    ``<directory>/issuer.key`` (owner-only) and its public JWKS in ``jwks.json`` (the key's
    ``kid`` is its RFC 7638 thumbprint); issuer :attr:`ISSUER`, audience :attr:`AUDIENCE`.
    Not for production: anyone who can read the key can mint any role."""

    ISSUER = "pokerctl-dev"
    AUDIENCE = DEFAULT_AUDIENCE

    def __init__(self, directory: Path, key: Ed25519PrivateKey) -> None:
        self.directory = directory
        self.key_file, self.jwks_file = directory / "issuer.key", directory / "jwks.json"
        self._key = key
        raw = key.public_key().public_bytes(serialization.Encoding.Raw,
                                            serialization.PublicFormat.Raw)
        public = {"crv": "Ed25519", "kty": "OKP", "x": _b64url(raw)}
        canonical = json.dumps(public, sort_keys=True, separators=(",", ":")).encode()
        self.kid = _b64url(hashlib.sha256(canonical).digest())
        self.jwk = {**public, "kid": self.kid, "use": "sig", "alg": "EdDSA"}

    @classmethod
    def create(cls, directory: str | os.PathLike) -> DevIssuer:
        """The issuer in ``directory``: its key made on first use (owner-only), reused
        after; ``jwks.json`` written when missing or not this key's. ValueError when the key
        file is there but not an Ed25519 private key."""
        target = Path(directory)
        target.mkdir(mode=0o700, parents=True, exist_ok=True)
        key_file = target / "issuer.key"
        if key_file.exists():
            try:
                key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
            except (OSError, ValueError, TypeError) as exc:
                raise ValueError(f"{key_file} is not a readable private key ({exc}): remove "
                                 "it to make a new issuer (tokens of the old one stop "
                                 "verifying)") from None
            if not isinstance(key, Ed25519PrivateKey):
                raise ValueError(f"{key_file} is not an Ed25519 key: remove it to make a "
                                 "new issuer")
        else:
            key = Ed25519PrivateKey.generate()
            write_private(key_file, key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption()))
        issuer = cls(target, key)
        jwks = json.dumps({"keys": [issuer.jwk]}, indent=2) + "\n"
        try:
            current = issuer.jwks_file.read_text()
        except OSError:
            current = None
        if current != jwks:  # unchanged: left alone, so verifiers do not reload it
            tmp = issuer.jwks_file.with_name(issuer.jwks_file.name + ".tmp")
            tmp.write_text(jwks)
            os.replace(tmp, issuer.jwks_file)
        return issuer

    def token(self, subject: str, roles: Iterable[str] | str = (PLAYER,), ttl_s: int = 3600,
              now: float | None = None, name: str | None = None) -> str:
        """A signed token (EdDSA, with ``kid``) for ``subject`` (a player id, as given) with
        ``roles`` (of :data:`ROLES`), valid for ``ttl_s`` seconds from ``now`` (default: the
        clock), and ``name`` (the claim a player's printed name comes from; None: none).
        ValueError for a bad subject, role or ttl."""
        problem = subject_problem(subject)
        if problem is not None:
            raise ValueError(f"not a valid subject: {problem}")
        roles = [roles] if isinstance(roles, str) else list(dict.fromkeys(roles))
        unknown = [r for r in roles if r not in ROLES]
        if unknown:
            raise ValueError(f"unknown roles {unknown}: the roles are {', '.join(ROLES)}")
        if isinstance(ttl_s, bool) or not isinstance(ttl_s, int) or ttl_s <= 0:
            raise ValueError(f"ttl_s must be a positive whole number of seconds, not {ttl_s!r}")
        issued = int(time.time() if now is None else now)
        claims: dict[str, Any] = {
            "iss": self.ISSUER, "aud": self.AUDIENCE, "sub": subject, "roles": roles,
            "iat": issued, "nbf": issued, "exp": issued + ttl_s, "jti": secrets.token_hex(8)}
        if name is not None:
            claims["name"] = name
        return jwt.encode(claims, self._key, algorithm="EdDSA", headers={"kid": self.kid})

    def env(self) -> dict[str, str]:
        """The settings that make a service trust this issuer (:meth:`Verifier.from_env`)."""
        return {"POKER_JWKS_FILE": str(self.jwks_file), "POKER_JWT_ISSUER": self.ISSUER,
                "POKER_JWT_AUDIENCE": self.AUDIENCE}

    def verifier(self, **kwargs: Any) -> Verifier:
        """A verifier of this issuer's tokens (keyword arguments go to :class:`Verifier`)."""
        return Verifier(self.jwks_file, issuer=self.ISSUER, audience=self.AUDIENCE, **kwargs)
