"""Who a caller is and what it may do: the platform's JWTs, verified; the roles they carry;
the rule per gRPC method that says which roles may call it.

    verifier = Verifier.from_env(env)       # POKER_JWKS_FILE or POKER_JWKS_URL, POKER_JWT_*
    server = Server("table", tls=tls, access=Access(RULES, verifier, "table"))
    ...
    def SitDown(self, request, context):
        player = caller().subject           # the verified token's ``sub``

    channel(address, tls, "table", ...)     # a client: grpc.aio channel with
        interceptors=bearer(token)          # ``authorization: Bearer <token>`` on every call

A token is signed by the identity provider with an asymmetric key (EdDSA, ES256 or RS256;
never an HMAC algorithm, never ``none``) that this service finds in a JWKS (a file, re-read
when it changes, or an http(s) URL, cached), by the token's ``kid``. It must name this
service's issuer (``iss``) and audience (``aud``), carry an expiry (``exp``, with
``leeway_s`` of clock skew allowed, as for ``nbf`` and ``iat``) and a subject (``sub``): the
player id, or an operator's, compliance's or a service's name. Its roles are a claim
(``roles``: a list of strings, or one string); roles other than :data:`ROLES` are ignored. A
token with the ``player`` role must name a valid player id (shared/poker/players.py); the
principal holds its canonical (NFKC) form.

Failures: :class:`Unauthenticated` (no token, a bad or expired one: UNAUTHENTICATED) and
:class:`Forbidden` (a valid token without the role: PERMISSION_DENIED), each with a message a
person can act on. The token itself is never logged nor put in a message.

:class:`DevIssuer` is the embedded setup's identity provider: `pokerctl up` makes its key on
first use, gives the services its JWKS, and `pokerctl token` prints tokens from it.
"""

from __future__ import annotations

import asyncio
import base64
import contextvars
import datetime as dt
import hashlib
import inspect
import json
import math
import os
import re
import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import jwt
import structlog
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from shared.poker.players import canonical_name, name_problem, subject_problem

from .files import write_private
from .guard import guarded
from .tls import OPEN_METHODS

log = structlog.get_logger()

PLAYER = "player"
OPERATOR = "operator"
COMPLIANCE = "compliance"
SERVICE = "service"
#: a relay of views to people who do not call the table service themselves (the web pages):
#: its Watch streams are held to a cap of their own (shared/infra/limits.py), since it fans
#: one stream per table out to its visitors; it may see nothing more than any spectator
RELAY = "relay"
#: the roles a token may carry; any other role in a token is ignored
ROLES = (PLAYER, OPERATOR, COMPLIANCE, SERVICE, RELAY)

DEFAULT_AUDIENCE = "poker-tables"
DEFAULT_ALGORITHMS = ("EdDSA", "ES256", "RS256")
#: tokens longer than this are refused before anything is parsed
MAX_TOKEN_BYTES = 8192
#: verified tokens remembered (their expiry is checked again on every use)
CACHE_SIZE = 10_000
#: the longest lifetime (exp - iat) a token may have, unless told (POKER_TOKEN_MAX_TTL_S):
#: a month, for the web's own token; a player's sign-in is usually hours
DEFAULT_MAX_TTL_S = 31 * 24 * 3600
#: the claims a player's printed name is taken from, in order (else the subject)
NAME_CLAIMS = ("name", "preferred_username")
#: an unknown kid makes a JWKS URL be fetched again at most this often
URL_REFRESH_COOLDOWN_S = 30.0

#: the metadata key and scheme a caller presents its token in
AUTHORIZATION = "authorization"
_BEARER = re.compile(r"bearer[ \t]+(\S+)[ \t]*", re.IGNORECASE)
#: RFC 6750 b64token: what a bearer token may be made of (a JWT is a subset)
_B64TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")


class Unauthenticated(Exception):
    """No token, or one that does not verify (bad signature, expired, another issuer or
    audience, malformed): UNAUTHENTICATED. The message says what is wrong and what to do."""


class Forbidden(PermissionError):
    """A valid token without a role the call needs: PERMISSION_DENIED."""


@dataclass(frozen=True)
class Principal:
    """The verified caller: ``subject`` (the token's ``sub``, exactly: the player's id), its
    known ``roles``, when its token expires (unix seconds: a long call, a Watch, ends then)
    and ``name``, what is printed for the player (the token's ``name`` or
    ``preferred_username`` when it is a valid name, in its normal form; "": none, the subject
    is printed if it is a valid name)."""

    subject: str
    roles: frozenset[str] = frozenset()
    expires_at: float = field(default=math.inf, compare=False)  # the same caller either way
    name: str = field(default="", compare=False)

    def has(self, *roles: str) -> bool:
        """Whether the caller has any of ``roles`` (False for none given)."""
        return any(role in self.roles for role in roles)


# --- key sources --------------------------------------------------------------------------


def _usable(keys: Iterable[jwt.PyJWK], algorithms: tuple[str, ...]) -> list[jwt.PyJWK]:
    """The signature keys of a set that verify one of ``algorithms``."""
    return [k for k in keys if k.public_key_use in ("sig", None)
            and k.algorithm_name in algorithms]


def _key_set(data: Any, algorithms: tuple[str, ...], where: str) -> list[jwt.PyJWK]:
    """The usable keys of a parsed JWKS (``{"keys": [...]}``, or one bare JWK)."""
    if isinstance(data, dict) and "kty" in data and "keys" not in data:
        data = {"keys": [data]}
    try:
        keys = _usable(jwt.PyJWKSet.from_dict(data if isinstance(data, dict) else {}).keys,
                       algorithms)
    except jwt.PyJWTError as exc:
        raise ValueError(f"{where} is not a usable JWKS (a JSON object with a 'keys' list: "
                         f"{exc})") from None
    if not keys:
        raise ValueError(f"{where} holds no signature key for {', '.join(algorithms)}")
    return keys


class _StaticKeys:
    """A JWKS given as a mapping (tests, an embedding program)."""

    remote = False

    def __init__(self, data: Mapping[str, Any], algorithms: tuple[str, ...]) -> None:
        self.describe = "the configured JWKS"
        self._keys = _key_set(dict(data), algorithms, self.describe)
        self.generation = 0

    def current(self) -> int:
        return self.generation

    def keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        return self._keys


class _FileKeys:
    """A JWKS file, read again when its mtime (or size, or inode) changes. A file that
    becomes unreadable or invalid keeps the last good keys (with a warning)."""

    remote = False

    def __init__(self, path: Path, algorithms: tuple[str, ...]) -> None:
        self.path, self.algorithms = path, algorithms
        self.describe = f"the JWKS file {path}"
        self.generation = 0
        self._lock = threading.Lock()
        self._stamp = self._stat()
        if self._stamp is None:
            raise ValueError(f"{self.describe} does not exist or cannot be read")
        self._text, self._keys = self._read()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _read(self) -> tuple[str, list[jwt.PyJWK]]:
        try:
            text = self.path.read_text()
            data = json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read {self.describe}: {exc}") from None
        return text, _key_set(data, self.algorithms, self.describe)

    def current(self) -> int:
        """The key set's generation, after reading the file again if it changed."""
        stamp = self._stat()
        if stamp is None or stamp == self._stamp:
            return self.generation
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    text, keys = self._read()
                except ValueError as exc:
                    log.warning("jwks not reloaded: keeping the last good keys",
                                reason=str(exc))
                else:
                    if text != self._text:
                        self._text, self._keys = text, keys
                        self.generation += 1
                        log.info("jwks reloaded", file=str(self.path), keys=len(keys))
        return self.generation

    def keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        self.current()
        return self._keys


class _UrlKeys:
    """A JWKS URL, fetched with :class:`jwt.PyJWKClient` (cached for ``lifespan`` seconds;
    an unknown kid fetches it again, at most every :data:`URL_REFRESH_COOLDOWN_S`)."""

    remote = True

    def __init__(self, url: str, algorithms: tuple[str, ...], lifespan: float = 300) -> None:
        self.url, self.algorithms = url, algorithms
        self.describe = f"the JWKS at {url}"
        try:
            self.client = jwt.PyJWKClient(url, cache_jwk_set=True, lifespan=lifespan,
                                          timeout=5, cooldown_duration=URL_REFRESH_COOLDOWN_S)
        except jwt.PyJWKClientError as exc:
            raise ValueError(str(exc)) from None
        self.generation = 0
        self._kids: tuple | None = None
        self._refreshed = -math.inf
        self._lock = threading.Lock()

    def current(self) -> int:
        return self.generation  # no fetch here: the fast path never blocks on the network

    def keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        with self._lock:
            if refresh:
                if time.monotonic() - self._refreshed < URL_REFRESH_COOLDOWN_S:
                    refresh = False
                else:
                    self._refreshed = time.monotonic()
            try:
                keys = _usable(self.client.get_jwk_set(refresh=refresh).keys, self.algorithms)
            except (jwt.PyJWTError, ValueError) as exc:
                log.warning("jwks not fetched", url=self.url, reason=str(exc))
                raise Unauthenticated("cannot get the identity provider's keys to check the "
                                      "token: try again shortly, or tell the operator") \
                    from None
            kids = tuple(sorted((k.key_id or "", k.algorithm_name) for k in keys))
            if kids != self._kids:
                if self._kids is not None:
                    self.generation += 1
                self._kids = kids
            return keys


def _source(keys: Any, algorithms: tuple[str, ...]):
    if isinstance(keys, Mapping):
        return _StaticKeys(keys, algorithms)
    text = os.fspath(keys)
    if re.match(r"https?://", text, re.IGNORECASE):
        return _UrlKeys(text, algorithms)
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text):
        raise ValueError(f"{text!r}: a JWKS source is a file path or an http(s) URL")
    return _FileKeys(Path(text), algorithms)


# --- verification --------------------------------------------------------------------------


def _utc(timestamp: float) -> str:
    try:
        return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime(
            "%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return repr(timestamp)


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or \
            not math.isfinite(value):
        raise Unauthenticated(f"the token's {name!r} claim is not a time (seconds since the "
                              f"epoch)")
    return float(value)


def _name(claims: Mapping[str, Any]) -> str:
    """What to print for the token's player: the first of :data:`NAME_CLAIMS` that is a valid
    name (shared/poker/players.py), in its normal form; "" for none (the subject is printed,
    if it is a valid name)."""
    for claim in NAME_CLAIMS:
        value = claims.get(claim)
        if isinstance(value, str) and name_problem(value) is None:
            return canonical_name(value)
    return ""


class Verifier:
    """Checks the platform's tokens against a JWKS, for one issuer and audience.

    ``keys``: a JWKS file path (re-read when its mtime changes), an http(s) URL (fetched
    with :class:`jwt.PyJWKClient`, cached) or a mapping holding a JWKS. The key is the one
    whose ``kid`` the token names, or the only one when the set has one and the token names
    none. Only ``algorithms`` are accepted (asymmetric ones: HS* and ``none`` are refused
    here); the key's own algorithm must be the token's. A token needs ``exp``, ``sub``,
    ``iss`` (= ``issuer``) and ``aud`` (= or containing ``audience``); ``exp``, ``nbf`` and
    ``iat`` are checked with ``leeway_s`` of clock skew against ``now()``. Verified tokens
    are cached (:data:`CACHE_SIZE`, per token string) with the expiry checked again on
    every use, and dropped when the key set changes. A file that cannot be read, or an
    argument out of range: ValueError."""

    def __init__(self, keys: str | os.PathLike | Mapping[str, Any], *, issuer: str,
                 audience: str, leeway_s: float = 30, roles_claim: str = "roles",
                 algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
                 now: Callable[[], float] = time.time,
                 max_ttl_s: float = DEFAULT_MAX_TTL_S) -> None:
        algorithms = tuple(algorithms)
        bad = [a for a in algorithms if a.upper().startswith("HS") or a.lower() == "none"]
        if bad or not algorithms:
            raise ValueError(f"algorithms {bad or '()'} refused: tokens must be signed with "
                             f"an asymmetric algorithm ({', '.join(DEFAULT_ALGORITHMS)})")
        unknown = set(algorithms) - set(jwt.algorithms.get_default_algorithms())
        if unknown:
            raise ValueError(f"unknown algorithms: {', '.join(sorted(unknown))}")
        if not issuer or not audience or not roles_claim:
            raise ValueError("a verifier needs an issuer, an audience and a roles claim name")
        leeway_s = float(leeway_s)
        if not 0 <= leeway_s <= 3600:
            raise ValueError(f"leeway_s must be 0 to 3600 seconds, not {leeway_s}")
        if not max_ttl_s > 0:
            raise ValueError(f"max_ttl_s must be a positive number of seconds, not {max_ttl_s}")
        self.issuer, self.audience, self.leeway_s = issuer, audience, leeway_s
        self.roles_claim, self.algorithms, self.now = roles_claim, algorithms, now
        self.max_ttl_s = float(max_ttl_s)
        self.source = _source(keys, algorithms)
        self._cache: dict[str, tuple[Principal, float, int]] = {}
        self._cache_lock = threading.Lock()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Verifier | None:
        """The verifier the variables of ``env`` configure (a service's: the mapping
        :meth:`shared.infra.config.Config.from_env` hands it, ``Config.identity``):
        POKER_JWKS_FILE or POKER_JWKS_URL (the keys), POKER_JWT_ISSUER (required with
        either), POKER_JWT_AUDIENCE (default ``poker-tables``), POKER_JWT_LEEWAY_S (default
        30), POKER_JWT_ROLES_CLAIM (default ``roles``). None when neither JWKS variable is
        set; ValueError naming the variable when a setting is missing or wrong."""
        file, url = env.get("POKER_JWKS_FILE", ""), env.get("POKER_JWKS_URL", "")
        if not file and not url:
            return None
        variable = "POKER_JWKS_FILE" if file else "POKER_JWKS_URL"
        if file and url:
            raise ValueError("POKER_JWKS_FILE and POKER_JWKS_URL are both set: set one")
        issuer = env.get("POKER_JWT_ISSUER", "")
        if not issuer:
            raise ValueError(f"POKER_JWT_ISSUER is not set: with {variable} set, name the "
                             "issuer whose tokens to trust (the 'iss' its tokens carry)")
        try:
            leeway = float(env.get("POKER_JWT_LEEWAY_S") or 30)
        except ValueError:
            raise ValueError("POKER_JWT_LEEWAY_S must be a number of seconds, not "
                             f"{env['POKER_JWT_LEEWAY_S']!r}") from None
        if not 0 <= leeway <= 3600:
            raise ValueError(f"POKER_JWT_LEEWAY_S must be 0 to 3600 seconds, not {leeway}")
        try:
            max_ttl = float(env.get("POKER_TOKEN_MAX_TTL_S") or DEFAULT_MAX_TTL_S)
        except ValueError:
            max_ttl = math.nan
        if not 0 < max_ttl <= 10 * 365 * 24 * 3600:
            raise ValueError(f"POKER_TOKEN_MAX_TTL_S must be a positive number of seconds "
                             f"(default {DEFAULT_MAX_TTL_S}), not "
                             f"{env.get('POKER_TOKEN_MAX_TTL_S')!r}")
        if url and url.lower().startswith("http://"):
            log.warning("jwks over plain http: anyone on the path can swap the keys",
                        url=url)
        try:
            return cls(file or url, issuer=issuer,
                       audience=env.get("POKER_JWT_AUDIENCE") or DEFAULT_AUDIENCE,
                       leeway_s=leeway, roles_claim=env.get("POKER_JWT_ROLES_CLAIM") or "roles",
                       max_ttl_s=max_ttl)
        except ValueError as exc:
            raise ValueError(f"{variable}: {exc}") from None

    # -- the cache --

    def _cached(self, token: str) -> Principal | None:
        entry = self._cache.get(token)
        if entry is None:
            return None
        principal, exp, generation = entry
        if generation != self.source.current():
            self._cache.pop(token, None)  # the keys changed: verify again
            return None
        if exp <= self.now() - self.leeway_s:
            self._cache.pop(token, None)
            raise Unauthenticated(f"the token expired at {_utc(exp)}: get a new one")
        return principal

    def _remember(self, token: str, principal: Principal, exp: float, generation: int) -> None:
        with self._cache_lock:
            if len(self._cache) >= CACHE_SIZE:
                cutoff = self.now() - self.leeway_s
                for stale in [t for t, (_, e, _) in self._cache.items() if e <= cutoff]:
                    del self._cache[stale]
                while len(self._cache) >= CACHE_SIZE:
                    del self._cache[next(iter(self._cache))]  # the oldest
            self._cache[token] = (principal, exp, generation)

    # -- verification --

    def verify(self, token: str) -> Principal:
        """The principal ``token`` proves, or :class:`Unauthenticated` saying why not."""
        token = self._checked_form(token)
        principal = self._cached(token)
        if principal is not None:
            return principal
        return self._verify(token)

    async def averify(self, token: str) -> Principal:
        """:meth:`verify` for a coroutine: a cached token at once; fetching keys from a URL
        runs in a thread, so the event loop never waits on the network."""
        token = self._checked_form(token)
        principal = self._cached(token)
        if principal is not None:
            return principal
        if self.source.remote:
            return await asyncio.to_thread(self._verify, token)
        return self._verify(token)

    @staticmethod
    def _checked_form(token: object) -> str:
        if not isinstance(token, str) or not token:
            raise Unauthenticated("the token is empty: send 'authorization: Bearer <token>'")
        if len(token) > MAX_TOKEN_BYTES:
            raise Unauthenticated(f"the token is {len(token)} characters long; at most "
                                  f"{MAX_TOKEN_BYTES} are accepted")
        return token

    def _key_for(self, kid: str | None) -> jwt.PyJWK:
        keys = self.source.keys()
        if kid is None:
            if len(keys) == 1:
                return keys[0]
            raise Unauthenticated(f"the token names no key (no 'kid' in its header) and "
                                  f"the configured key set holds {len(keys)}: the token is "
                                  f"not from the identity provider this service trusts")
        for refresh in (False, True):
            for key in keys:
                if key.key_id == kid:
                    return key
            if refresh or not self.source.remote:
                break
            keys = self.source.keys(refresh=True)  # the provider may have rotated its keys
        raise Unauthenticated(f"the token's key (kid {kid!r}) is not among the configured "
                              f"keys: the identity provider may have rotated its keys, or "
                              f"the token is not from it")

    def _verify(self, token: str) -> Principal:
        generation = self.source.current()
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"the token is not a JWT ({exc}): send "
                                  "'authorization: Bearer <token>' with the token the "
                                  "identity provider gave you") from None
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in self.algorithms:
            raise Unauthenticated(f"the token is signed with {alg!r}; this service accepts "
                                  f"{', '.join(self.algorithms)} only")
        if kid is not None and not isinstance(kid, str):
            raise Unauthenticated("the token's 'kid' header is not a string")
        key = self._key_for(kid)
        if key.algorithm_name != alg:
            raise Unauthenticated(f"the token says it is signed with {alg} but its key "
                                  f"(kid {kid!r}) is an {key.algorithm_name} key")
        try:
            claims = jwt.decode(token, key, algorithms=[alg], options={
                "verify_signature": True, "verify_exp": False, "verify_nbf": False,
                "verify_iat": False, "verify_aud": False, "verify_iss": False,
                "verify_sub": False, "verify_jti": False})
        except jwt.InvalidSignatureError:
            raise Unauthenticated(f"signature does not verify against the configured keys "
                                  f"(kid {kid or key.key_id or 'none'})") from None
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"the token does not decode ({exc})") from None
        principal, exp = self._claims(claims)
        self._remember(token, principal, exp, generation)
        return principal

    def _claims(self, claims: Mapping[str, Any]) -> tuple[Principal, float]:
        """The principal and expiry of verified ``claims``, once each check passes."""
        for name, what in (("exp", "an expiry"), ("sub", "a subject (the player id)"),
                           ("iss", "an issuer"), ("aud", "an audience")):
            if claims.get(name) is None:
                raise Unauthenticated(f"the token has no {name!r} claim ({what} is "
                                      f"required): ask the identity provider for a token "
                                      f"for {self.audience}")
        issuer = claims["iss"]
        if issuer != self.issuer:
            raise Unauthenticated(f"the token was issued by {issuer!r}; this service trusts "
                                  f"{self.issuer!r}")
        audience = claims["aud"]
        audiences = [audience] if isinstance(audience, str) else audience
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise Unauthenticated("the token's 'aud' claim is neither a string nor a list "
                                  "of strings")
        if self.audience not in audiences:
            shown = audience if isinstance(audience, str) else ", ".join(audiences)
            raise Unauthenticated(f"the token is for audience {shown!r}; this service is "
                                  f"{self.audience!r}")
        now = self.now()
        exp, nbf, iat = (_number(claims, n) for n in ("exp", "nbf", "iat"))
        assert exp is not None  # the claim's presence is checked above
        if exp <= now - self.leeway_s:
            raise Unauthenticated(f"the token expired at {_utc(exp)}: get a new one")
        if nbf is not None and nbf > now + self.leeway_s:
            raise Unauthenticated(f"the token is not valid before {_utc(nbf)} (now "
                                  f"{_utc(now)}): check this machine's and the identity "
                                  f"provider's clocks")
        if iat is not None and iat > now + self.leeway_s:
            raise Unauthenticated(f"the token was issued in the future ({_utc(iat)}, now "
                                  f"{_utc(now)}): check the clocks")
        lifetime = exp - (iat if iat is not None else now)
        if lifetime > self.max_ttl_s:
            raise Unauthenticated(f"the token lives {lifetime:.0f} s (from its "
                                  f"{'iat' if iat is not None else 'use now'} to its exp), "
                                  f"longer than the {self.max_ttl_s:.0f} s this service "
                                  f"accepts: get a token with a shorter lifetime")
        roles = self._roles(claims.get(self.roles_claim))
        subject = claims["sub"]
        problem = subject_problem(subject)
        if problem is not None:  # the player id, exactly as the provider wrote it
            raise Unauthenticated(f"the token's subject ('sub') is not usable: {problem}")
        return Principal(subject, roles, exp, _name(claims)), exp

    def _roles(self, value: Any) -> frozenset[str]:
        if value is None:
            return frozenset()
        values = [value] if isinstance(value, str) else value
        if not isinstance(values, list) or not all(isinstance(r, str) for r in values):
            raise Unauthenticated(f"the token's {self.roles_claim!r} claim is neither a "
                                  f"string nor a list of strings")
        return frozenset(r for r in values if r in ROLES)  # unknown roles: ignored


def token_from(metadata) -> str:
    """The bearer token of gRPC ``metadata`` (pairs, or a mapping): the one
    ``authorization`` entry (the key in any case), ``Bearer <token>`` (the scheme in any
    case). :class:`Unauthenticated` when there is none or it is not of that form."""
    pairs = metadata.items() if isinstance(metadata, Mapping) else (metadata or ())
    values = [value for key, value in pairs if str(key).lower() == AUTHORIZATION]
    if not values:
        raise Unauthenticated("no authorization metadata: send "
                              "'authorization: Bearer <token>'")
    if len(values) > 1:
        raise Unauthenticated("more than one authorization metadata entry: send one")
    value = values[0].decode("ascii", "replace") if isinstance(values[0], bytes) \
        else str(values[0])
    match = _BEARER.fullmatch(value)
    if match is None:
        raise Unauthenticated("the authorization metadata is not 'Bearer <token>' (the "
                              "scheme 'Bearer', a space, then the token)")
    return match.group(1)


def principal_from(metadata, verifier: Verifier) -> Principal:
    """The principal the ``authorization: Bearer <token>`` entry of ``metadata`` proves;
    :class:`Unauthenticated` when it is missing or does not verify."""
    return verifier.verify(token_from(metadata))


# --- the server side ---------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """Who may call a method: a token with any of ``roles``; empty: any valid token."""

    roles: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        roles = frozenset([self.roles] if isinstance(self.roles, str) else self.roles)
        unknown = roles - set(ROLES)
        if unknown:
            raise ValueError(f"unknown roles {sorted(unknown)}: the roles are "
                             f"{', '.join(ROLES)}")
        object.__setattr__(self, "roles", roles)


_CALLER: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "poker_caller", default=None)


def caller() -> Principal:
    """The verified caller of the gRPC call being handled (set by :class:`Access` before
    the handler runs). Outside such a call: :class:`Unauthenticated` (fail closed)."""
    principal = _CALLER.get()
    if principal is None:
        raise Unauthenticated("no verified caller for this call (the server has no access "
                              "rules for it)")
    return principal


def _roles_text(roles: Iterable[str]) -> str:
    return " or ".join(sorted(roles))


class Access(grpc.aio.ServerInterceptor):
    """Each call's token verified and its role checked against ``rules`` (method name, e.g.
    ``SitDown``, or the full ``/pkg.Service/Method`` -> :class:`Rule`), before the
    handler runs; the handler then reads the caller with :func:`caller`.

    Health and reflection (:data:`shared.infra.tls.OPEN_METHODS`) are open. A method
    without a rule is refused (PERMISSION_DENIED: fail closed), whatever the token; a
    missing or bad token is UNAUTHENTICATED; a valid token without a role the rule names is
    PERMISSION_DENIED, naming the roles that may call. Refusals are logged at info with
    their reason (never the token)."""

    def __init__(self, rules: Mapping[str, Rule], verifier: Verifier, service: str) -> None:
        self._guarded = guarded
        for name, rule in rules.items():
            if not isinstance(rule, Rule):
                raise TypeError(f"the rule for {name} is not a Rule: {rule!r}")
        self.rules, self.verifier, self.service = dict(rules), verifier, service

    def rule_for(self, method: str) -> Rule | None:
        rule = self.rules.get(method)
        return rule if rule is not None else self.rules.get(method.rsplit("/", 1)[-1])

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        method = details.method
        if handler is None or method.startswith(OPEN_METHODS):
            return handler
        rule = self.rule_for(method)

        async def refuse(context, code: grpc.StatusCode, reason: str, **extra) -> None:
            log.info("call refused", service=self.service, method=method, code=code.name,
                     reason=reason, **extra)
            await context.abort(code, reason)
            raise RuntimeError("context.abort returned")  # never reached: fail closed

        async def allowed(_request, context) -> None:
            if rule is None:
                await refuse(context, grpc.StatusCode.PERMISSION_DENIED,
                             f"no access rule for {method}: refused")
            try:
                principal = await self.verifier.averify(
                    token_from(context.invocation_metadata()))
            except Unauthenticated as exc:
                await refuse(context, grpc.StatusCode.UNAUTHENTICATED, str(exc))
            if rule.roles and not principal.has(*rule.roles):
                held = _roles_text(principal.roles) or "no role"
                await refuse(context, grpc.StatusCode.PERMISSION_DENIED,
                             f"{method} of the {self.service} service may be called with "
                             f"the {_roles_text(rule.roles)} role only; the token of "
                             f"{principal.subject!r} has {held}", subject=principal.subject)
            _CALLER.set(principal)  # this call's task: seen by the handler, no other call

        return self._guarded(handler, allowed)


# --- the client side -----------------------------------------------------------------------


class _Bearer:
    def __init__(self, supply: Callable[[], Any]) -> None:
        self._supply = supply

    async def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        token = self._supply()
        if inspect.isawaitable(token):
            token = await token
        kept = [(k, v) for k, v in (details.metadata or ()) if k.lower() != AUTHORIZATION]
        metadata = grpc.aio.Metadata(*kept, *bearer_metadata(token))
        return details._replace(metadata=metadata)


class _BearerUnaryUnary(_Bearer, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(await self._details(client_call_details), request)


class _BearerUnaryStream(_Bearer, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await continuation(await self._details(client_call_details), request)


class _BearerStreamUnary(_Bearer, grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation, client_call_details,
                                     request_iterator):
        return await continuation(await self._details(client_call_details), request_iterator)


class _BearerStreamStream(_Bearer, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation, client_call_details,
                                      request_iterator):
        return await continuation(await self._details(client_call_details), request_iterator)


def _checked(token: object) -> str:
    if not isinstance(token, str) or not _B64TOKEN.fullmatch(token):
        raise ValueError("a bearer token is a non-empty string of letters, digits and "
                         "'-._~+/' (a JWT)")
    return token


def bearer_metadata(token: object) -> tuple[tuple[str, str]]:
    """One call's metadata entry carrying ``token``: ``authorization: Bearer <token>`` (for a
    call made without :func:`bearer`'s interceptors on the channel). ValueError for a value
    that is not a token."""
    return ((AUTHORIZATION, f"Bearer {_checked(token)}"),)


def bearer(token_or_supplier: str | Callable[[], Any]) -> list[grpc.aio.ClientInterceptor]:
    """Client interceptors (every kind of call: unary and streaming) that put
    ``authorization: Bearer <token>`` in each call's metadata, replacing one already there.
    ``token_or_supplier``: the token, or a function (plain or async) called before each call
    that returns the current one (so a client can refresh a token before it expires). Pass
    them as ``interceptors=`` when making the channel."""
    if callable(token_or_supplier):
        supply = token_or_supplier
    else:
        fixed = _checked(token_or_supplier)

        def supply() -> str:
            return fixed
    return [_BearerUnaryUnary(supply), _BearerUnaryStream(supply),
            _BearerStreamUnary(supply), _BearerStreamStream(supply)]


# --- the embedded setup's issuer ---------------------------------------------------------


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
