"""deploy/nats/accounts.conf on a live nats-server: the services' users append and read but can
never delete, purge or edit the stream (the deny flags alone do not stop a delete), and only
the dealer's user reaches the running hands' decks."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_asyncio
from nats.js import api as js_api

from shared.infra.eventstore import EventStore, StreamSettings
from shared.infra.natsserver import NatsServer
from shared.infra.vault import BUCKET as DECKS

ACCOUNTS = Path(__file__).resolve().parents[2] / "deploy" / "nats" / "accounts.conf"
PASSWORDS = {"POKER_SERVICE_PASSWORD": "svc-pw", "POKER_DEALER_PASSWORD": "dealer-pw",
             "POKER_ADMIN_PASSWORD": "admin-pw", "NATS_SYS_PASSWORD": "sys-pw"}


@pytest.fixture
def secured_nats(tmp_path, monkeypatch):
    for k, v in PASSWORDS.items():
        monkeypatch.setenv(k, v)
    store = tmp_path / "js"
    store.mkdir()
    shutil.copy(ACCOUNTS, store / "accounts.conf")
    server = NatsServer(store, extra_config="include ./accounts.conf").start()
    yield server
    server.stop()


def url(server: NatsServer, user: str, password: str) -> str:
    return f"nats://{user}:{password}@{server.host}:{server.port}"


@pytest_asyncio.fixture
async def stores(secured_nats):
    admin = await EventStore.connect(url(secured_nats, "poker-admin", "admin-pw"),
                                     settings=StreamSettings())
    await admin.js.create_key_value(js_api.KeyValueConfig(bucket=DECKS, history=1))
    service = await EventStore.connect(url(secured_nats, "poker-service", "svc-pw"),
                                       create=False, connect_timeout=5)
    dealer = await EventStore.connect(url(secured_nats, "poker-dealer", "dealer-pw"),
                                      create=False, connect_timeout=5)
    yield admin, service, dealer
    for s in (service, dealer, admin):
        await s.close()


async def test_services_append_and_read_but_never_delete_purge_or_edit(stores):
    admin, service, _ = stores
    seq, _ = await service.append("t1", b"commit 1", 0, "m1")
    seq, _ = await service.append("t1", b"commit 2", seq, "m2")
    assert [s.data for s in await service.read("t1")] == [b"commit 1", b"commit 2"]

    jsm = service.nc.jsm(timeout=1)  # a denied request gets no answer: do not wait long
    attempts = {
        "delete the stream": lambda: jsm.delete_stream("POKER"),
        "purge the stream": lambda: jsm.purge_stream("POKER"),
        "delete a message": lambda: jsm.delete_msg("POKER", seq),
        "edit the stream": lambda: jsm.update_stream(js_api.StreamConfig(
            name="POKER", subjects=["poker.table.>"], deny_delete=False, deny_purge=False)),
    }
    for what, attempt in attempts.items():
        with pytest.raises(Exception):  # a permissions violation: no answer, or an error
            await attempt()
        info = await admin.nc.jsm().stream_info("POKER")
        assert info.state.messages == 2, what
        assert info.config.deny_delete and info.config.deny_purge, what


async def test_only_the_dealer_reaches_the_decks(stores):
    admin, service, dealer = stores
    decks = await dealer.js.key_value(DECKS)
    await decks.put("t1.1", b"the deck")
    assert (await decks.get("t1.1")).value == b"the deck"
    with pytest.raises(Exception):
        theirs = await service.nc.jetstream(timeout=1).key_value(DECKS)
        await theirs.get("t1.1")
