"""The Access interceptor (shared/infra/identity.py) on a real grpc.aio server (the project's
rpc.Server, plaintext on 127.0.0.1 port 0: this tests the interceptor, not TLS) with the
standard health service and a tiny generic ``test.Echo`` service: no token is
UNAUTHENTICATED, the wrong role or a method without a rule PERMISSION_DENIED, the right role
reaches the handler, which sees the caller; health stays open; the streaming method is
guarded too; the client's ``bearer()`` interceptors put the header on."""

from __future__ import annotations

import asyncio

import grpc
import jwt
import pytest
import pytest_asyncio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.infra.authz import Access, Rule, caller
from shared.infra.bearer import bearer
from shared.infra.devissuer import DevIssuer
from shared.infra.identity import COMPLIANCE, OPERATOR, PLAYER
from shared.infra.rpc import Server

RULES = {
    "Whoami": Rule(frozenset()),  # any valid token
    "Close": Rule(frozenset({OPERATOR})),
    "Audit": Rule(frozenset({OPERATOR, COMPLIANCE})),
    "Watch": Rule(frozenset({PLAYER})),
    "/test.Echo/Header": Rule(frozenset()),
}


#: armed by a test: every call waits inside the handler until all of them are in, so the
#: calls overlap for certain, and each must still see its own caller
OVERLAP: list[asyncio.Barrier] = []


async def whoami(request: bytes, context) -> bytes:
    if OVERLAP:
        await asyncio.wait_for(OVERLAP[0].wait(), timeout=10)
    return caller().subject.encode()


async def header(request: bytes, context) -> bytes:
    values = [v for k, v in context.invocation_metadata() if k == "authorization"]
    return "|".join(values).encode()


async def watch(request: bytes, context):
    for i in range(3):
        yield f"{caller().subject}:{i}".encode()


def echo_handler() -> grpc.GenericRpcHandler:
    unary = grpc.unary_unary_rpc_method_handler
    return grpc.method_handlers_generic_handler("test.Echo", {
        "Whoami": unary(whoami), "Close": unary(whoami), "Audit": unary(whoami),
        "Unruled": unary(whoami), "Header": unary(header),
        "Watch": grpc.unary_stream_rpc_method_handler(watch),
    })


@pytest.fixture
def issuer(tmp_path):
    return DevIssuer.create(tmp_path / "identity")


@pytest_asyncio.fixture
async def address(issuer):
    server = Server("echo", tls=None, access=Access(RULES, issuer.verifier(), "echo"))
    server.server.add_generic_rpc_handlers((echo_handler(),))
    await server.start()
    yield server.address
    await server.stop(0)


def call(channel: grpc.aio.Channel, method: str):
    return channel.unary_unary(f"/test.Echo/{method}")


async def refused(awaitable, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await awaitable
    assert err.value.code() is code, err.value.details()
    return err.value.details() or ""


async def test_no_token_is_unauthenticated_and_health_stays_open(address):
    async with grpc.aio.insecure_channel(address) as channel:
        details = await refused(call(channel, "Whoami")(b""), grpc.StatusCode.UNAUTHENTICATED)
        assert details == "no authorization metadata: send 'authorization: Bearer <token>'"
        stream = channel.unary_stream("/test.Echo/Watch")(b"")
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for _ in stream:
                pass
        assert err.value.code() is grpc.StatusCode.UNAUTHENTICATED
        health = health_pb2_grpc.HealthStub(channel)
        reply = await health.Check(health_pb2.HealthCheckRequest())
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_a_bad_token_is_unauthenticated(address, issuer, tmp_path):
    other = DevIssuer.create(tmp_path / "other")  # same issuer name, another key
    body = jwt.decode(issuer.token("alice"), options={"verify_signature": False})
    forged = jwt.encode(body, Ed25519PrivateKey.generate(), algorithm="EdDSA",
                        headers={"kid": issuer.kid})  # the right kid, not its key
    for token, reason in ((other.token("alice"), "is not among the configured keys"),
                          (forged, "signature does not verify against the configured keys"),
                          (issuer.token("alice", ttl_s=1, now=1_000_000), "expired at")):
        async with grpc.aio.insecure_channel(address, interceptors=bearer(token)) as channel:
            details = await refused(call(channel, "Whoami")(b""),
                                    grpc.StatusCode.UNAUTHENTICATED)
            assert reason in details
            assert token not in details


async def test_the_right_role_reaches_the_handler_which_sees_the_caller(address, issuer):
    async with grpc.aio.insecure_channel(
            address, interceptors=bearer(issuer.token("alice"))) as alice, \
            grpc.aio.insecure_channel(
                address, interceptors=bearer(issuer.token("ops", roles=[OPERATOR]))) as ops:
        OVERLAP.append(asyncio.Barrier(5))
        try:
            replies = await asyncio.gather(
                call(alice, "Whoami")(b""), call(ops, "Whoami")(b""),
                call(alice, "Whoami")(b""), call(ops, "Close")(b""), call(ops, "Audit")(b""))
        finally:
            OVERLAP.clear()
        assert replies == [b"alice", b"ops", b"alice", b"ops", b"ops"]
        watched = [r async for r in alice.unary_stream("/test.Echo/Watch")(b"")]
        assert watched == [b"alice:0", b"alice:1", b"alice:2"]


async def test_the_wrong_role_and_a_method_without_a_rule_are_permission_denied(address,
                                                                                 issuer):
    async with grpc.aio.insecure_channel(
            address, interceptors=bearer(issuer.token("alice"))) as alice:
        details = await refused(call(alice, "Close")(b""), grpc.StatusCode.PERMISSION_DENIED)
        assert details == ("/test.Echo/Close of the echo service may be called with the "
                           "operator role only; the token of 'alice' has player")
        details = await refused(call(alice, "Audit")(b""), grpc.StatusCode.PERMISSION_DENIED)
        assert "compliance or operator role" in details
        details = await refused(call(alice, "Unruled")(b""), grpc.StatusCode.PERMISSION_DENIED)
        assert details == "no access rule for /test.Echo/Unruled: refused"
    no_roles = issuer.token("ops", roles=())  # a valid token without roles
    async with grpc.aio.insecure_channel(address, interceptors=bearer(no_roles)) as nobody:
        assert await call(nobody, "Whoami")(b"") == b"ops"
        details = await refused(call(nobody, "Close")(b""), grpc.StatusCode.PERMISSION_DENIED)
        assert "has no role" in details
        with pytest.raises(grpc.aio.AioRpcError) as err:
            async for _ in nobody.unary_stream("/test.Echo/Watch")(b""):
                pass
        assert err.value.code() is grpc.StatusCode.PERMISSION_DENIED


async def test_bearer_puts_the_header_on_and_a_supplier_is_asked_each_call(address, issuer):
    token = issuer.token("alice")
    async with grpc.aio.insecure_channel(address, interceptors=bearer(token)) as channel:
        # a header the caller set itself is replaced, not doubled
        reply = await call(channel, "Header")(b"", metadata=(("authorization", "Bearer x"),))
        assert reply == f"Bearer {token}".encode()
    asked = []

    async def supplier() -> str:
        asked.append(1)
        return issuer.token("bob" if len(asked) > 1 else "alice")

    async with grpc.aio.insecure_channel(address, interceptors=bearer(supplier)) as channel:
        assert await call(channel, "Whoami")(b"") == b"alice"
        assert await call(channel, "Whoami")(b"") == b"bob"
        watched = [r async for r in channel.unary_stream("/test.Echo/Watch")(b"")]
        assert watched == [b"bob:0", b"bob:1", b"bob:2"]
        assert len(asked) == 3
