"""Mutual TLS between the services (shared/infra/tls.py), on the in-process stack's real gRPC
servers: an internal service answers only the table service. A plaintext caller, a caller
with another CA's certificate and a caller with no certificate do not get through the
handshake; a certificate of the right CA but the wrong identity is PERMISSION_DENIED with a
message naming who may call; the table identity is served (positive control). The health
check stays open to any certificate of the CA; a client checks the server's identity; the
client-facing table service takes players without certificates; a service without TLS
settings does not start."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from poker.betting.v1 import betting_pb2
from poker.dealer.v1 import dealer_pb2, dealer_pb2_grpc
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.stack import START_ORDER
from shared.infra.services import SERVICES
from shared.infra.tls import METHOD_CALLERS, TlsConfig, channel, generate
from tests.helpers.steps import one_step

TABLE = "m1"


async def seated(stack, table_stub) -> tpb.TableView:
    """Two players (p1, p2) seated at a new table: hand 1 is dealt, a seat is to act."""
    settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                 small_blind=1, big_blind=2)
    await table_stub.CreateTable(tpb.CreateTableRequest(table_id=TABLE, settings=settings,
                                                        command_id="create"))
    for seat in (1, 2):
        await stack.deposit(f"p{seat}", 100)
        await table_stub.SitDown(tpb.SitDownRequest(table_id=TABLE, seat=seat, buy_in=100,
                                                    command_id=f"sit-{seat}"))
    view = await table_stub.GetState(tpb.ViewRequest(table_id=TABLE))
    assert view.hand_no == 1 and view.to_act
    return view


async def refused(call, code: grpc.StatusCode) -> str:
    """Run ``call``; it must fail with ``code``; returns the details."""
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call()
    assert err.value.code() is code, err.value.details()
    return err.value.details() or ""


def foreign(stack, tmp_path) -> TlsConfig:
    """A 'table' certificate of another CA (trusting the stack's CA, so that only the
    server's check of the client certificate can refuse it)."""
    other = generate(tmp_path / "other-ca", identities=("table",))
    return TlsConfig(stack.tls_dir / "ca.pem", other / "table.pem", other / "table.key")


async def test_the_dealer_hands_out_a_seats_cards_to_the_table_service_only(stack, table_stub,
                                                                             tmp_path):
    view = await seated(stack, table_stub)
    # as the table service asks for seat 1's cards: for p1, the player it authenticated
    request = dealer_pb2.SeatCardsRequest(table_id=TABLE, hand_no=view.hand_no, seat=1,
                                          player_id="p1")
    address = stack.addresses["dealer"]

    def seat_cards(chan):
        return lambda: dealer_pb2_grpc.DealerServiceStub(chan).SeatCards(request, timeout=10)

    # no TLS, another CA's certificate (even one named 'table'), no certificate: no handshake
    for chan in (grpc.aio.insecure_channel(address),
                 channel(address, foreign(stack, tmp_path), service="dealer"),
                 stack.channel("dealer", identity=None)):
        async with chan:
            await refused(seat_cards(chan), grpc.StatusCode.UNAVAILABLE)
    # the CA's certificates of other identities: refused with who may call
    for identity in ("betting", "client"):
        async with stack.channel("dealer", identity=identity) as chan:
            details = await refused(seat_cards(chan), grpc.StatusCode.PERMISSION_DENIED)
            assert details == ("the dealer accepts calls from the table service only; "
                               f"this certificate is '{identity}'")
    # positive control: the table service's certificate gets the seat's two cards
    async with stack.channel("dealer", identity="table") as chan:
        reply = await dealer_pb2_grpc.DealerServiceStub(chan).SeatCards(request, timeout=10)
        assert len(reply.cards) == 2 and "??" not in reply.cards


async def test_betting_acts_for_a_seat_for_the_table_service_only(stack, table_stub, tmp_path):
    view = await seated(stack, table_stub)

    def fold(chan, command_id: str):
        return lambda: one_step(chan, "Act", betting_pb2.ActRequest(  # on its step stream
            step=step_pb2.StepRequest(table_id=TABLE, hand_no=view.hand_no,
                                      command_id=command_id, version=view.version),
            seat=view.to_act, action=ev.ACTION_KIND_FOLD), timeout=10)

    address = stack.addresses["betting"]
    for chan in (grpc.aio.insecure_channel(address),
                 channel(address, foreign(stack, tmp_path), service="betting")):
        async with chan:
            await refused(fold(chan, "fold-a"), grpc.StatusCode.UNAVAILABLE)
    for identity in ("dealer", "client"):
        async with stack.channel("betting", identity=identity) as chan:
            details = await refused(fold(chan, f"fold-{identity}"),
                                    grpc.StatusCode.PERMISSION_DENIED)
            assert details == ("the betting accepts calls from the table service only; "
                               f"this certificate is '{identity}'")
    after = await table_stub.GetState(tpb.ViewRequest(table_id=TABLE))
    assert (after.version, after.to_act) == (view.version, view.to_act)  # nobody folded

    async with stack.channel("betting", identity="table") as chan:  # positive control
        reply = await fold(chan, "fold-table")()
    assert reply.version > view.version


async def test_health_is_open_to_the_cas_certificates_and_clients_check_the_server(stack):
    for name in START_ORDER:  # every service the stack runs (shared/infra/services.py)
        async with stack.channel(name, identity="client") as chan:
            reply = await health_pb2_grpc.HealthStub(chan).Check(
                health_pb2.HealthCheckRequest(), timeout=10)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
    # a client that means to reach the table service refuses the dealer's certificate
    async with channel(stack.addresses["dealer"], stack.tls("client"), service="table") as chan:
        await refused(lambda: health_pb2_grpc.HealthStub(chan).Check(
            health_pb2.HealthCheckRequest(), timeout=10), grpc.StatusCode.UNAVAILABLE)


async def test_the_containers_probe_checks_health_over_tls(stack, monkeypatch):
    """deploy/'s probe (``python -m shared.infra.probe SERVICE``) with the service's own
    environment; the kubelet's gRPC probe, plaintext, would not get an answer."""
    from shared.infra.probe import probe
    for name in ("dealer", "table"):
        monkeypatch.setenv("POKER_PORT", str(stack.servers[name].port))
        monkeypatch.setenv("POKER_TLS_DIR", str(stack.tls_dir))
        assert await asyncio.to_thread(probe, name) is None
    monkeypatch.delenv("POKER_TLS_DIR")
    monkeypatch.setenv("POKER_INSECURE", "1")  # a plaintext probe of a TLS port fails
    assert (await asyncio.to_thread(probe, "table")).startswith("UNAVAILABLE")


async def test_players_reach_the_table_service_with_the_ca_alone(stack):
    """No client certificate: the CA and a token (an operator's, a player's) are enough."""
    async with stack.channel("table", identity=None,
                             token=stack.token("ops", "operator")) as chan:
        await table_pb2_grpc.TableServiceStub(chan).CreateTable(tpb.CreateTableRequest(
            table_id="anon", command_id="c",
            settings=tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                       small_blind=1, big_blind=2)), timeout=10)
    async with stack.channel("table", identity=None, token=stack.token("alice")) as chan:
        view = await table_pb2_grpc.TableServiceStub(chan).GetState(
            tpb.ViewRequest(table_id="anon"), timeout=10)
        assert view.table_id == "anon"


async def test_a_service_without_tls_settings_does_not_start():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("POKER_TLS") and k != "POKER_INSECURE"}
    proc = subprocess.run([sys.executable, "-m", "services.dealer"], env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    for text in ("POKER_TLS_DIR", "POKER_TLS_CA", "POKER_TLS_CERT", "POKER_TLS_KEY",
                 "POKER_INSECURE=1", "pokerctl certs generate DIR"):
        assert text in proc.stderr


async def test_each_service_that_names_its_callers_refuses_every_other_identity(stack):
    """For every service of the registry (shared/infra/services.py) that names its callers:
    an identity it does not name is refused its first unary method (of those only
    its callers may call), or its step stream for a service whose steps are its only calls
    (PERMISSION_DENIED, before the request is looked at); one it names gets past the check
    (positive control)."""
    from google.protobuf import descriptor_pool
    checked = [s for s in SERVICES if s.callers is not None and s.name in stack.servers]
    assert checked
    for s in checked:
        try:
            methods = descriptor_pool.Default().FindServiceByName(s.grpc_service).methods
        except KeyError:  # a service with no method of its own: its steps come on the stream
            methods = []
        path = next((f"/{s.grpc_service}/{m.name}" for m in methods
                     if not (m.client_streaming or m.server_streaming)
                     and f"/{s.grpc_service}/{m.name}" not in METHOD_CALLERS), None)
        strangers = [i for i in ("client", "dealer", "web", "table", "admin")
                     if i not in s.callers]
        assert strangers, s.name
        for identity in [*strangers, min(s.callers)]:
            async with stack.channel(s.name, identity=identity) as chan:
                code = await (_unary_code(chan, path) if path else _steps_code(chan))
            denied = code == grpc.StatusCode.PERMISSION_DENIED
            assert denied == (identity not in s.callers), (s.name, identity, code)


async def test_a_refused_caller_that_never_writes_on_a_stream_is_refused_all_the_same(stack):
    """The check of a client stream waits for the caller's first message only so long
    (guard.FIRST_MESSAGE_S): a caller the service does not name, holding a step stream open
    without a word, hears PERMISSION_DENIED instead of holding the stream."""
    async with stack.channel("betting", identity="client") as chan:
        call = chan.stream_stream("/poker.engine.v1.StepService/Steps",
                                  request_serializer=bytes, response_deserializer=bytes)(
            timeout=20)
        code = await call.code()
    assert code == grpc.StatusCode.PERMISSION_DENIED, code


async def _unary_code(chan: grpc.aio.Channel, path: str) -> grpc.StatusCode:
    call = chan.unary_unary(path, request_serializer=bytes, response_deserializer=bytes)
    try:
        await call(b"", timeout=10)
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


async def _steps_code(chan: grpc.aio.Channel) -> grpc.StatusCode:
    """The status of the service's step stream for an empty step (answered in the stream:
    OK for a caller let in)."""
    call = chan.stream_stream("/poker.engine.v1.StepService/Steps", request_serializer=bytes,
                              response_deserializer=bytes)(timeout=10)
    try:
        await call.write(b"")
        await call.read()
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK
