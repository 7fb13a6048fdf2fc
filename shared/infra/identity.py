"""Who a caller is: the platform's JWTs, verified, and the roles they carry. Around it:
shared/infra/jwks.py (where the keys come from), authz.py (the rule per gRPC method that says
which roles may call it, and the interceptor that applies it), bearer.py (a client's token on
its calls), devissuer.py (the embedded setup's identity provider).

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
"""

from __future__ import annotations

import asyncio
import datetime as dt
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import jwt
import structlog

from shared.poker.players import canonical_name, name_problem, subject_problem

from .jwks import KeysUnavailable, key_source

log = structlog.get_logger()

PLAYER = "player"
OPERATOR = "operator"
COMPLIANCE = "compliance"
SERVICE = "service"
#: a relay of views to people who do not call the table service themselves (the web pages):
#: its Watch streams are held to a cap of their own (shared/infra/limits.py), since it fans
#: one stream per table out to its visitors; it may see nothing more than any spectator
RELAY = "relay"
#: a tournament's director (services/tournament): seats, moves and removes players at its
#: tables and sets their level (services/table/tournament.py)
DIRECTOR = "director"
#: the roles a token may carry; any other role in a token is ignored
ROLES = (PLAYER, OPERATOR, COMPLIANCE, SERVICE, RELAY, DIRECTOR)

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

#: the metadata key and scheme a caller presents its token in
AUTHORIZATION = "authorization"
_BEARER = re.compile(r"bearer[ \t]+(\S+)[ \t]*", re.IGNORECASE)
#: RFC 6750 b64token: what a bearer token may be made of (a JWT is a subset)
B64TOKEN = re.compile(r"[A-Za-z0-9._~+/-]+=*")


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
        self.source = key_source(keys, algorithms)
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

    def _keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        try:
            return self.source.keys(refresh=refresh)
        except KeysUnavailable as exc:
            raise Unauthenticated(str(exc)) from None

    def _key_for(self, kid: str | None) -> jwt.PyJWK:
        keys = self._keys()
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
            keys = self._keys(refresh=True)  # the provider may have rotated its keys
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
