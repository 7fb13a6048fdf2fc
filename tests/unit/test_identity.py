"""Player identity from the platform's JWTs (shared/infra/identity.py), with real keys and real
PyJWT: a good token of each accepted algorithm; expired (and inside the leeway); not yet valid;
another issuer or audience; another key; ``alg: none``; the HS256 key-confusion attack; claims
missing; roles as a list, a string, absent, unknown; an unknown kid; a JWKS file rotated on
disk; a JWKS served over HTTP by a real local server; the cache re-checking expiry."""

from __future__ import annotations

import base64
import hashlib
import hmac
import http.server
import json
import os
import threading

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from shared.infra.authz import Rule, caller
from shared.infra.bearer import bearer
from shared.infra.devissuer import DevIssuer
from shared.infra.identity import (
    COMPLIANCE,
    DIRECTOR,
    OPERATOR,
    PLAYER,
    RELAY,
    ROLES,
    SERVICE,
    Forbidden,
    Principal,
    Unauthenticated,
    Verifier,
    principal_from,
    token_from,
)
from shared.infra.rpc import status_for

ISSUER, AUDIENCE = "https://id.example", "poker-tables"
T0 = 1_800_000_000  # 2027-01-15T08:00:00Z


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def public_jwk(private, kid: str) -> dict:
    """The JWK of ``private``'s public key, named ``kid``."""
    public = private.public_key()
    if isinstance(private, Ed25519PrivateKey):
        jwk = json.loads(jwt.algorithms.OKPAlgorithm.to_jwk(public))
    elif isinstance(private, ec.EllipticCurvePrivateKey):
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(public))
    else:
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(public))
    return {**jwk, "kid": kid}


def jwks(*pairs) -> dict:
    return {"keys": [public_jwk(key, kid) for key, kid in pairs]}


def claims(**overrides) -> dict:
    base = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "roles": [PLAYER], "iat": T0,
            "nbf": T0, "exp": T0 + 600}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def sign(private, alg: str = "EdDSA", kid: str | None = "k1", **overrides) -> str:
    headers = {"kid": kid} if kid is not None else {}
    return jwt.encode(claims(**overrides), private, algorithm=alg, headers=headers)


@pytest.fixture
def ed_key():
    return Ed25519PrivateKey.generate()


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def verifier(ed_key, clock, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks((ed_key, "k1"))))
    return Verifier(path, issuer=ISSUER, audience=AUDIENCE, leeway_s=30, now=clock)


def refusal(verifier: Verifier, token: str) -> str:
    with pytest.raises(Unauthenticated) as err:
        verifier.verify(token)
    return str(err.value)


def test_the_roles_and_the_principal():
    assert ROLES == (PLAYER, OPERATOR, COMPLIANCE, SERVICE, RELAY, DIRECTOR) == \
        ("player", "operator", "compliance", "service", "relay", "director")
    p = Principal("alice", frozenset({PLAYER}))
    assert p.has(PLAYER) and p.has(OPERATOR, PLAYER) and not p.has(OPERATOR) and not p.has()
    with pytest.raises(ValueError, match="unknown roles"):
        Rule(frozenset({"admin"}))
    assert Rule(frozenset()).roles == frozenset()


def test_the_errors_map_to_their_statuses():
    assert status_for(Unauthenticated("x")) is grpc.StatusCode.UNAUTHENTICATED
    assert status_for(Forbidden("x")) is grpc.StatusCode.PERMISSION_DENIED


def test_a_good_eddsa_token(verifier, ed_key):
    token = sign(ed_key)
    principal = verifier.verify(token)
    assert principal == Principal("alice", frozenset({PLAYER}))
    # when its token expires travels with the caller (a Watch ends then)
    assert principal.expires_at == jwt.decode(token, options={"verify_signature": False})["exp"]


@pytest.mark.parametrize("alg", ["ES256", "RS256"])
def test_a_good_es256_or_rs256_token(alg, clock):
    key = ec.generate_private_key(ec.SECP256R1()) if alg == "ES256" else \
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
    v = Verifier(jwks((key, "k1")), issuer=ISSUER, audience=AUDIENCE, now=clock)
    assert v.verify(sign(key, alg, roles=[OPERATOR], sub="ops")) == \
        Principal("ops", frozenset({OPERATOR}))


def test_expired_refused_with_the_time_and_inside_the_leeway_accepted(verifier, ed_key, clock):
    token = sign(ed_key, exp=T0 - 10)  # expired 10 s ago: inside the 30 s leeway
    assert verifier.verify(token).subject == "alice"
    clock.t = T0 + 1000
    late = sign(ed_key, exp=T0 + 600, iat=T0 + 900, nbf=T0 + 900)
    assert "the token expired at 2027-01-15T08:10:00Z" in refusal(verifier, late)


def test_not_yet_valid(verifier, ed_key):
    assert "not valid before 2027-01-15T08:05:00Z" in \
        refusal(verifier, sign(ed_key, nbf=T0 + 300, exp=T0 + 900))
    assert verifier.verify(sign(ed_key, nbf=T0 + 20)).subject == "alice"  # clock skew
    assert "issued in the future" in refusal(verifier, sign(ed_key, iat=T0 + 300))


def test_an_expiry_that_is_not_a_time_is_refused(verifier, ed_key):
    assert "not a time" in refusal(verifier, sign(ed_key, exp=float("nan")))
    assert "not a time" in refusal(verifier, sign(ed_key, exp="tomorrow"))


def test_another_issuer_or_audience(verifier, ed_key):
    assert refusal(verifier, sign(ed_key, iss="https://evil.example")) == (
        "the token was issued by 'https://evil.example'; this service trusts "
        "'https://id.example'")
    assert refusal(verifier, sign(ed_key, aud="wallet")) == (
        "the token is for audience 'wallet'; this service is 'poker-tables'")
    assert verifier.verify(sign(ed_key, aud=["wallet", AUDIENCE])).subject == "alice"


def test_signed_by_another_key(verifier):
    forged = sign(Ed25519PrivateKey.generate())  # kid k1, but not k1's key
    assert refusal(verifier, forged) == \
        "signature does not verify against the configured keys (kid k1)"


def test_alg_none_is_refused(verifier):
    header = base64.urlsafe_b64encode(b'{"alg":"none","kid":"k1"}').rstrip(b"=")
    body = base64.urlsafe_b64encode(json.dumps(claims()).encode()).rstrip(b"=")
    for token in (f"{header.decode()}.{body.decode()}.", jwt.encode(claims(), None, "none")):
        assert "signed with 'none'; this service accepts EdDSA, ES256, RS256 only" in \
            refusal(verifier, token)


def hs256_with_secret(secret: bytes, kid: str) -> str:
    """The classic key confusion: an HMAC token whose secret is the server's public key."""
    def part(obj) -> bytes:
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=")
    signing_input = part({"alg": "HS256", "typ": "JWT", "kid": kid}) + b"." + part(claims())
    mac = hmac.new(secret, signing_input, hashlib.sha256).digest()
    return (signing_input + b"." + base64.urlsafe_b64encode(mac).rstrip(b"=")).decode()


@pytest.mark.parametrize("kind", ["ed25519", "rsa"])
def test_hs256_signed_with_the_public_key_is_refused(kind, clock):
    key = Ed25519PrivateKey.generate() if kind == "ed25519" else \
        rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.public_key().public_bytes(serialization.Encoding.PEM,
                                        serialization.PublicFormat.SubjectPublicKeyInfo)
    v = Verifier(jwks((key, "k1")), issuer=ISSUER, audience=AUDIENCE, now=clock)
    assert "signed with 'HS256'" in refusal(v, hs256_with_secret(pem, "k1"))
    with pytest.raises(ValueError, match="asymmetric"):
        Verifier(jwks((key, "k1")), issuer=ISSUER, audience=AUDIENCE,
                 algorithms=("RS256", "HS256"))


@pytest.mark.parametrize("claim", ["sub", "exp", "iss", "aud"])
def test_a_required_claim_missing(verifier, ed_key, claim):
    assert f"the token has no '{claim}' claim" in refusal(verifier, sign(ed_key, **{claim: None}))


def test_roles_missing_a_string_unknown_or_of_another_claim(verifier, ed_key, clock, tmp_path):
    none = verifier.verify(sign(ed_key, roles=None, sub="ops"))
    assert none == Principal("ops", frozenset()) and not none.has(PLAYER)
    assert verifier.verify(sign(ed_key, roles=OPERATOR, sub="ops")).roles == {OPERATOR}
    assert verifier.verify(sign(ed_key, roles=["admin", PLAYER, "root"])).roles == {PLAYER}
    assert "neither a string nor a list" in refusal(verifier, sign(ed_key, roles={"a": 1}))
    custom = Verifier(tmp_path / "jwks.json", issuer=ISSUER, audience=AUDIENCE, now=clock,
                      roles_claim="https://poker.example/roles")
    token = sign(ed_key, roles=None, **{"https://poker.example/roles": [COMPLIANCE]})
    assert custom.verify(token).roles == {COMPLIANCE}


def test_the_subject_is_the_player_id_exactly_and_the_name_is_printed(verifier, ed_key):
    """OpenID Connect's ``sub`` is case-sensitive: the player id is it byte for byte (never
    normalised or folded); what is printed is the ``name`` or ``preferred_username`` claim
    that is a valid name, in normal form, else nothing (the subject is printed)."""
    assert verifier.verify(sign(ed_key, sub="RTCASEX")).subject == "RTCASEX"
    assert verifier.verify(sign(ed_key, sub="rtcasex")).subject == "rtcasex"
    assert verifier.verify(sign(ed_key, sub="ａｌｉｃｅ")).subject == "ａｌｉｃｅ"
    assert verifier.verify(sign(ed_key, sub="auth0|5f7c")).subject == "auth0|5f7c"
    named = verifier.verify(sign(ed_key, sub="u-1", name="Ｍａｒｙ", preferred_username="m"))
    assert (named.subject, named.name) == ("u-1", "Mary")
    assert verifier.verify(sign(ed_key, sub="u-1", preferred_username="mj")).name == "mj"
    # a name that could forge a line or hide is ignored: the next claim, else none
    assert verifier.verify(sign(ed_key, sub="u-1", name="a\nSeat 1",
                                preferred_username="mj")).name == "mj"
    assert verifier.verify(sign(ed_key, sub="u-1", name="\u202eecila")).name == ""
    assert "control character" in refusal(verifier, sign(ed_key, sub="alice\nbob"))
    assert "1 to 255" in refusal(verifier, sign(ed_key, sub="x" * 256))
    assert "1 to 255" in refusal(verifier, sign(ed_key, sub=""))


def test_a_token_that_lives_too_long_is_refused(ed_key, clock):
    """POKER_TOKEN_MAX_TTL_S: exp - iat (or exp - now without an iat) at most; a token that
    never expires in practice (exp = 1e300) is refused."""
    short = Verifier(jwks((ed_key, "k1")), issuer=ISSUER, audience=AUDIENCE, now=clock,
                     max_ttl_s=3600)
    assert short.verify(sign(ed_key, exp=T0 + 3600)).subject == "alice"
    assert "longer than the 3600 s" in refusal(short, sign(ed_key, exp=T0 + 3601))
    assert "longer than" in refusal(short, sign(ed_key, exp=1e300))
    no_iat = claims(exp=T0 + 7200)
    del no_iat["iat"]
    token = jwt.encode(no_iat, ed_key, algorithm="EdDSA", headers={"kid": "k1"})
    assert "use now" in refusal(short, token)
    default = Verifier(jwks((ed_key, "k1")), issuer=ISSUER, audience=AUDIENCE, now=clock)
    assert "longer than" in refusal(default, sign(ed_key, exp=1e300))
    assert default.verify(sign(ed_key, exp=T0 + 30 * 24 * 3600)).subject == "alice"
    with pytest.raises(ValueError, match="POKER_TOKEN_MAX_TTL_S"):
        Verifier.from_env({"POKER_JWKS_FILE": "/x", "POKER_JWT_ISSUER": "i",
                           "POKER_TOKEN_MAX_TTL_S": "forever"})


def test_unknown_kid_and_no_kid(verifier, ed_key, clock):
    assert "kid 'k9'" in refusal(verifier, sign(ed_key, kid="k9"))
    assert "rotated" in refusal(verifier, sign(ed_key, kid="k9"))
    assert verifier.verify(sign(ed_key, kid=None)).subject == "alice"  # the only key
    other = Ed25519PrivateKey.generate()
    two = Verifier(jwks((ed_key, "k1"), (other, "k2")), issuer=ISSUER, audience=AUDIENCE,
                   now=clock)
    assert "names no key" in refusal(two, sign(ed_key, kid=None))
    assert two.verify(sign(other, kid="k2")).subject == "alice"


def test_a_rotated_jwks_file_is_read_again(verifier, ed_key, tmp_path):
    path = tmp_path / "jwks.json"
    old = sign(ed_key)
    assert verifier.verify(old).subject == "alice"
    new_key = Ed25519PrivateKey.generate()
    assert "kid 'k2'" in refusal(verifier, sign(new_key, kid="k2"))
    path.write_text(json.dumps(jwks((new_key, "k2"))))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert verifier.verify(sign(new_key, kid="k2", sub="bob")).subject == "bob"
    assert "kid 'k1'" in refusal(verifier, old)  # k1 left the set: its cached token too


def test_a_jwks_file_that_breaks_keeps_the_last_good_keys(verifier, ed_key, tmp_path):
    path = tmp_path / "jwks.json"
    path.write_text("{not json")
    os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
    assert verifier.verify(sign(ed_key)).subject == "alice"
    with pytest.raises(ValueError, match="JWKS"):
        Verifier(path, issuer=ISSUER, audience=AUDIENCE)
    with pytest.raises(ValueError, match="does not exist"):
        Verifier(tmp_path / "missing.json", issuer=ISSUER, audience=AUDIENCE)


@pytest.fixture
def jwks_url(ed_key):
    """A JWKS served by a real http.server on 127.0.0.1 (port 0), in a thread; ``hits``
    counts the fetches; ``serve`` replaces what it serves."""
    state = {"body": json.dumps(jwks((ed_key, "k1"))).encode(), "hits": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            state["hits"] += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(state["body"])))
            self.end_headers()
            self.wfile.write(state["body"])

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state["url"] = f"http://127.0.0.1:{server.server_address[1]}/.well-known/jwks.json"
    yield state
    server.shutdown()
    server.server_close()
    thread.join()


async def test_a_jwks_url_served_over_http(jwks_url, ed_key, clock):
    v = Verifier(jwks_url["url"], issuer=ISSUER, audience=AUDIENCE, now=clock)
    assert jwks_url["hits"] == 0  # fetched when first needed
    assert v.verify(sign(ed_key)).subject == "alice"
    assert (await v.averify(sign(ed_key, sub="bob"))).subject == "bob"
    assert jwks_url["hits"] == 1  # the key set is cached
    new_key = Ed25519PrivateKey.generate()  # the provider rotates: an unknown kid refetches
    jwks_url["body"] = json.dumps(jwks((ed_key, "k1"), (new_key, "k2"))).encode()
    assert v.verify(sign(new_key, kid="k2", sub="carol")).subject == "carol"
    assert jwks_url["hits"] == 2
    assert "kid 'k3'" in refusal(v, sign(new_key, kid="k3"))  # within the cooldown: no fetch
    assert jwks_url["hits"] == 2


def test_an_unreachable_jwks_url_is_unauthenticated_with_a_reason(ed_key, clock):
    v = Verifier("http://127.0.0.1:9/jwks.json", issuer=ISSUER, audience=AUDIENCE, now=clock)
    assert "cannot get the identity provider's keys" in refusal(v, sign(ed_key))


def test_a_cached_token_is_refused_once_it_expires(verifier, ed_key, clock, tmp_path):
    token = sign(ed_key)
    assert verifier.verify(token).subject == "alice"
    assert token in verifier._cache
    clock.t = T0 + 600 + 31  # past exp and the leeway
    assert "the token expired at 2027-01-15T08:10:00Z" in refusal(verifier, token)
    assert token not in verifier._cache


def test_the_cache_is_bounded(verifier, ed_key, monkeypatch):
    from shared.infra import identity
    monkeypatch.setattr(identity, "CACHE_SIZE", 2)
    tokens = [sign(ed_key, sub=f"p{i}") for i in range(3)]
    assert [verifier.verify(t).subject for t in tokens] == ["p0", "p1", "p2"]
    assert list(verifier._cache) == tokens[1:]  # the oldest went first
    assert verifier.verify(tokens[0]).subject == "p0"  # verified again


def test_from_env(ed_key, tmp_path):
    assert Verifier.from_env({}) is None
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(jwks((ed_key, "k1"))))
    with pytest.raises(ValueError, match="POKER_JWT_ISSUER"):
        Verifier.from_env({"POKER_JWKS_FILE": str(path)})
    with pytest.raises(ValueError, match="POKER_JWT_ISSUER"):
        Verifier.from_env({"POKER_JWKS_URL": "https://id.example/jwks"})
    with pytest.raises(ValueError, match="POKER_JWT_LEEWAY_S"):
        Verifier.from_env({"POKER_JWKS_FILE": str(path), "POKER_JWT_ISSUER": ISSUER,
                           "POKER_JWT_LEEWAY_S": "soon"})
    with pytest.raises(ValueError, match="POKER_JWKS_FILE"):
        Verifier.from_env({"POKER_JWKS_FILE": str(tmp_path / "none.json"),
                           "POKER_JWT_ISSUER": ISSUER})
    v = Verifier.from_env({"POKER_JWKS_FILE": str(path), "POKER_JWT_ISSUER": ISSUER,
                           "POKER_JWT_LEEWAY_S": "5", "POKER_JWT_ROLES_CLAIM": "groups"})
    assert (v.issuer, v.audience, v.leeway_s, v.roles_claim) == \
        (ISSUER, "poker-tables", 5.0, "groups")


def test_principal_from_metadata(verifier, ed_key):
    token = sign(ed_key)
    for scheme in ("Bearer", "bearer", "BEARER"):
        assert principal_from((("authorization", f"{scheme} {token}"),), verifier).subject == \
            "alice"
    assert principal_from({"Authorization": f"Bearer {token}"}, verifier).subject == "alice"
    with pytest.raises(Unauthenticated) as err:
        principal_from((("x-trace-id", "t1"),), verifier)
    assert str(err.value) == \
        "no authorization metadata: send 'authorization: Bearer <token>'"
    with pytest.raises(Unauthenticated, match="not 'Bearer <token>'"):
        token_from((("authorization", f"Basic {token}"),))
    with pytest.raises(Unauthenticated, match="more than one"):
        token_from((("authorization", f"Bearer {token}"),) * 2)
    assert "not a JWT" in refusal(verifier, "not-a-jwt")
    assert "at most 8192" in refusal(verifier, "x" * 9000)


def test_no_caller_outside_a_guarded_call():
    with pytest.raises(Unauthenticated, match="no verified caller"):
        caller()


def test_bearer_refuses_what_is_not_a_token():
    with pytest.raises(ValueError, match="bearer token"):
        bearer("two words")
    assert len(bearer("abc.def.ghi")) == 4  # unary and streaming, both ways


def test_the_dev_issuer(tmp_path, clock):
    issuer = DevIssuer.create(tmp_path / "identity")
    assert (tmp_path / "identity" / "issuer.key").stat().st_mode & 0o777 == 0o600
    published = json.loads((tmp_path / "identity" / "jwks.json").read_text())["keys"]
    assert [k["kid"] for k in published] == [issuer.kid] and "d" not in published[0]
    token = issuer.token("alice", now=T0)
    assert jwt.get_unverified_header(token) == {"alg": "EdDSA", "kid": issuer.kid,
                                                "typ": "JWT"}
    body = jwt.decode(token, options={"verify_signature": False})
    assert {"iss", "aud", "sub", "roles", "iat", "nbf", "exp"} <= set(body)
    assert body["exp"] - body["iat"] == 3600
    assert issuer.verifier(now=clock).verify(token) == Principal("alice", frozenset({PLAYER}))
    assert Verifier.from_env(issuer.env()).verify(issuer.token("bob")).subject == "bob"
    assert DevIssuer.create(tmp_path / "identity").kid == issuer.kid  # reused
    with pytest.raises(ValueError, match="unknown roles"):
        issuer.token("alice", roles=("admin",))
    with pytest.raises(ValueError, match="not a valid subject"):
        issuer.token("alice\n")
    with pytest.raises(ValueError, match="ttl_s"):
        issuer.token("alice", ttl_s=0)
