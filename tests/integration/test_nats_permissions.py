"""The NATS users on a live nats-server, for both configs: deploy/nats/accounts.conf and the
one `pokerctl up` generates (its own NATS start: TLS, users, stream and buckets).

Every denial is the server's own permissions error naming the subject (nats-py hands the
``-ERR 'Permissions Violation for Publish to ...'`` to the error callback), never "some
exception": the stream's deny-delete/deny-purge flags would refuse most of these for any user
and prove nothing about the access lists. Each denied request is also made by a user allowed
to make it (the admin, the dealer, the table service), which gets JetStream's answer: the
request is well formed and reaches JetStream, so only the user's permissions stopped it. The
expectations are written out here, not read from shared/infra/natsauth.py, so that a looser
access list there (or in accounts.conf) fails these tests.
"""

from __future__ import annotations

import json
import shutil
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import nats
import pytest
import pytest_asyncio
from nats.js import api as js_api
from nats.js.errors import NotFoundError

from services.pokerctl.up import LocalCluster
from services.wallet.ledger import (
    DEPOSIT,
    AccountId,
    LedgerStore,
    ensure_wallet_stream,
    read_ledger,
)
from shared.infra import natsconn
from shared.infra.eventstore import MIRROR_STREAM, STREAM, EventStore, StoreError, StreamSettings
from shared.infra.lease import Leases
from shared.infra.mirror import MirrorRefused, copy_new
from shared.infra.natsserver import NatsServer
from shared.infra.repository import TableRepository, build_commit, digest
from shared.infra.vault import DeckVault
from shared.infra.waiting import until
from shared.poker import table as T
from shared.poker.options import table_options

ACCOUNTS = Path(__file__).resolve().parents[2] / "deploy" / "nats" / "accounts.conf"
USERS = ("poker-admin", "poker-dealer", "poker-table", "poker-service", "poker-reader",
         "poker-mirror", "poker-wallet", "poker-compliance", "poker-web", "poker-notary", "poker-director",
         "sys")
NOT_ADMIN = ("poker-dealer", "poker-table", "poker-service", "poker-reader", "poker-mirror",
             "poker-wallet", "poker-compliance", "poker-web", "poker-notary",
             "poker-director")
NOT_DEALER = ("poker-table", "poker-service", "poker-reader", "poker-mirror", "poker-wallet",
              "poker-compliance", "poker-web", "poker-notary",
             "poker-director")
NOT_TABLE = ("poker-dealer", "poker-service", "poker-reader", "poker-mirror", "poker-wallet",
             "poker-compliance", "poker-web", "poker-notary",
             "poker-director")
NOT_WRITERS = ("poker-reader", "poker-mirror", "poker-wallet", "poker-compliance", "poker-web",
               "poker-director",
               "poker-notary")  # the notary last: a test leaves it out
NOT_WALLET = ("poker-dealer", "poker-table", "poker-service", "poker-reader", "poker-mirror",
              "poker-compliance", "poker-web", "poker-notary",
             "poker-director")
OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
DECK_KEY = "t1.1"
DEADLINE_S = 5.0


@dataclass
class Secured:
    """A NATS server with the poker users: URLs per user, the CA (None: plaintext)."""

    urls: dict[str, str]
    ca: str | None = None
    address: str = ""

    async def connect(self, user: str) -> User:
        return await User.connect(self, user)


@dataclass
class User:
    """One user's connection, keeping the errors the server sends it."""

    name: str
    nc: nats.NATS
    errors: list[str] = field(default_factory=list)

    @classmethod
    async def connect(cls, secured: Secured, name: str) -> User:
        errors: list[str] = []

        async def on_error(exc: Exception) -> None:
            errors.append(str(exc))

        nc = await natsconn.connect(secured.urls[name], name=f"test-{name}", ca=secured.ca,
                                    allow_reconnect=False, error_cb=on_error)
        return cls(name, nc, errors)

    async def violation(self, subject: str, payload: bytes = b"",
                        headers: dict | None = None) -> None:
        """Publish (with a reply subject, as a request) and wait for the server's permissions
        error naming ``subject``; fail if none comes."""
        await self.nc.publish(subject, payload, reply=self.nc.new_inbox(), headers=headers)
        await self.nc.flush()
        expected = f'permissions violation for publish to "{subject.lower()}"'
        await wait_for(lambda: any(expected in e for e in self.errors),
                       f"{self.name} refused {subject}", errors=self.errors)

    async def subscribe_violation(self, subject: str) -> None:
        await self.nc.subscribe(subject)
        await self.nc.flush()
        expected = f'permissions violation for subscription to "{subject.lower()}"'
        await wait_for(lambda: any(expected in e for e in self.errors),
                       f"{self.name} refused a subscription to {subject}", errors=self.errors)

    async def answered(self, subject: str, payload: bytes = b"") -> nats.aio.msg.Msg:
        """The JetStream answer to a request (the positive control of a denial)."""
        msg = await self.nc.request(subject, payload, timeout=DEADLINE_S)
        assert not any("permissions violation" in e for e in self.errors), self.errors
        return msg

    async def close(self) -> None:
        await self.nc.close()


async def wait_for(condition, what: str, errors: list | None = None) -> None:
    """``condition()`` true within the deadline (the server's error arrives asynchronously)."""
    async def holds() -> bool:
        return condition()

    try:
        await until(holds, DEADLINE_S, what, every=0.01)
    except TimeoutError as exc:
        raise AssertionError(f"{exc} (errors: {errors})") from None


async def _make_streams(url: str, ca: str | None) -> None:
    """What deploy/init_streams.py does, as the admin."""
    store = await EventStore.connect(url, ca=ca, settings=StreamSettings())
    try:
        await DeckVault.open(store.js)
        await Leases.open(store.js)
    finally:
        await store.close()


@pytest_asyncio.fixture(params=["deploy", "up"])
async def secured(request, tmp_path, monkeypatch):
    if request.param == "deploy":
        passwords = {u: f"{u.replace('-', '')}pw" for u in USERS}
        for u, pw in passwords.items():
            var = "NATS_SYS_PASSWORD" if u == "sys" else u.upper().replace("-", "_") + \
                "_PASSWORD"
            monkeypatch.setenv(var, pw)
        store = tmp_path / "js"
        store.mkdir()
        shutil.copy(ACCOUNTS, store / "accounts.conf")
        server = NatsServer(store, extra_config="include ./accounts.conf").start()
        urls = {u: f"nats://{u}:{pw}@{server.host}:{server.port}" for u, pw in passwords.items()}
        secured = Secured(urls, None, server.url)
        await _make_streams(urls["poker-admin"], None)
        yield secured
        server.stop()
    else:
        cluster = LocalCluster(tmp_path / "up", base_port=None, log_level="WARNING")
        await cluster.start_nats()  # what `pokerctl up` runs before the services
        try:
            yield Secured({u: cluster.nats_url_for(u) for u in USERS}, cluster.nats_ca,
                          cluster.nats_address)
        finally:
            await cluster.stop()


class Users(dict):
    """User name -> :class:`User`, with the admin's store and the table service's repository."""

    repo: TableRepository
    admin: EventStore


@pytest_asyncio.fixture
async def users(secured):
    """A connection per user (and ``users.admin``, ``users.repo``: the admin's store, the
    table service's repository); the log holds one real table (created, three seated), the
    decks bucket a deck."""
    conns = Users({u: await secured.connect(u) for u in USERS if u != "sys"})
    table = conns["poker-table"].nc
    conns.repo = TableRepository(EventStore(table, table.jetstream()), producer="table")
    conns.admin = EventStore(conns["poker-admin"].nc, conns["poker-admin"].nc.jetstream())
    await conns.repo.execute("t1", "create", digest("create"),
                             lambda t: T.create_table(t, "t1", OPTIONS))
    for seat in (1, 2, 3):
        await conns.repo.execute("t1", f"sit-{seat}", digest("sit", seat),
                                 lambda t, s=seat: T.sit_down(t, s, f"p{s}", 200, "digest"))
    decks = await conns["poker-dealer"].nc.jetstream().key_value("POKER_DECKS")
    await decks.put(DECK_KEY, b"the deck")
    yield conns
    for c in conns.values():
        await c.close()


async def _state(admin: EventStore) -> tuple:
    info = await admin.nc.jsm().stream_info(STREAM)
    return (info.state.messages, info.state.last_seq, info.config.deny_delete,
            info.config.deny_purge, info.config.subjects, info.config.num_replicas)


def _loosened_config(info: js_api.StreamInfo) -> bytes:
    """An edit of the stream that clears its deny flags (what an attacker would send)."""
    config = info.config.as_dict()
    config.update(deny_delete=False, deny_purge=False)
    return json.dumps(config).encode()


async def test_nobody_but_the_admin_deletes_purges_or_edits_the_stream(users):
    admin = users.admin
    info = await admin.nc.jsm().stream_info(STREAM)
    before = await _state(admin)
    attempts = {
        f"$JS.API.STREAM.DELETE.{STREAM}": b"",
        f"$JS.API.STREAM.PURGE.{STREAM}": b"{}",
        f"$JS.API.STREAM.UPDATE.{STREAM}": _loosened_config(info),
        f"$JS.API.STREAM.MSG.DELETE.{STREAM}": b'{"seq": 1, "no_erase": true}',
        "$JS.API.STREAM.CREATE.FORGED": json.dumps(
            {"name": "FORGED", "subjects": ["forged.>"]}).encode(),
    }
    for name in NOT_ADMIN:
        for subject, payload in attempts.items():
            await users[name].violation(subject, payload)
    assert await _state(admin) == before

    # the positive controls: the same subjects reach JetStream for the admin
    ctl = users["poker-admin"]
    same = json.dumps(info.config.as_dict()).encode()  # an edit that changes nothing
    assert json.loads((await ctl.answered(f"$JS.API.STREAM.UPDATE.{STREAM}", same)).data
                      ).get("config", {}).get("deny_delete") is True
    purge = json.loads((await ctl.answered(f"$JS.API.STREAM.PURGE.{STREAM}", b"{}")).data)
    assert "error" in purge  # the stream's own flag refuses it, with an answer
    erase = json.loads((await ctl.answered(f"$JS.API.STREAM.MSG.DELETE.{STREAM}",
                                            b'{"seq": 1}')).data)
    assert "error" in erase
    assert await _state(admin) == before
    created = json.loads((await ctl.answered("$JS.API.STREAM.CREATE.FORGED", attempts[
        "$JS.API.STREAM.CREATE.FORGED"])).data)
    assert created.get("config", {}).get("name") == "FORGED"
    deleted = json.loads((await ctl.answered(f"$JS.API.STREAM.DELETE.{STREAM}")).data)
    assert deleted.get("success") is True  # the admin can: that is why nobody else may


async def test_only_the_dealer_reaches_the_decks(users):
    key_subject = f"$KV.POKER_DECKS.{DECK_KEY}"
    reads = {
        f"$JS.API.DIRECT.GET.KV_POKER_DECKS.{key_subject}": b"",
        "$JS.API.DIRECT.GET.KV_POKER_DECKS": json.dumps({"last_by_subj": key_subject}).encode(),
        "$JS.API.STREAM.MSG.GET.KV_POKER_DECKS": json.dumps(
            {"last_by_subj": key_subject}).encode(),
    }
    for name in NOT_DEALER:
        for subject, payload in reads.items():
            await users[name].violation(subject, payload)
        await users[name].violation(key_subject, b"a stacked deck")
        await users[name].subscribe_violation("$KV.POKER_DECKS.>")
    dealer = users["poker-dealer"]
    got = json.loads((await dealer.answered("$JS.API.STREAM.MSG.GET.KV_POKER_DECKS",
                                            reads["$JS.API.STREAM.MSG.GET.KV_POKER_DECKS"])).data)
    assert "message" in got
    for subject, payload in reads.items():  # the direct gets pass the dealer's permissions
        try:
            await dealer.nc.request(subject, payload, timeout=DEADLINE_S)
        except nats.errors.NoRespondersError:
            pass  # JetStream's answer for a bucket that serves no direct gets
        await dealer.nc.flush()
        assert not any("permissions violation" in e for e in dealer.errors), dealer.errors
    decks = await dealer.nc.jetstream().key_value("POKER_DECKS")
    assert (await decks.get(DECK_KEY)).value == b"the deck"  # nothing stacked it


async def test_only_the_table_service_reaches_the_leases_and_the_clock(users):
    for name in NOT_TABLE:
        await users[name].violation("$KV.POKER_LEASES.table.t1", b"mine")
        await users[name].violation("$JS.API.DIRECT.GET.KV_POKER_LEASES.$KV.POKER_LEASES.x")
        await users[name].violation("poker.clock.t1", b"3")
    table = users["poker-table"]
    leases = await table.nc.jetstream().key_value("POKER_LEASES")
    await leases.put("table.t1", b"me")
    assert (await leases.get("table.t1")).value == b"me"
    nudges = await table.nc.subscribe("poker.clock.t1")
    await table.nc.publish("poker.clock.t1", b"3")
    assert (await nudges.next_msg(timeout=DEADLINE_S)).data == b"3"


async def test_a_forged_commit_from_a_non_service_connection_is_refused(users, secured):
    """A commit chained to the table's last (a valid next commit, as far as the log can
    tell) published by the reader, the mirror or nobody: refused, the stream unchanged; the
    table service's user appends the very same bytes (the positive control)."""
    repo, admin = users.repo, users.admin
    lt = await repo.load("t1")
    forged = build_commit("t1", 0, "forged", digest("forged"), "table",
                          T.sit_down(lt.state, 4, "forger", 200, "digest"), lt.last_hash)
    headers = {"Nats-Expected-Last-Subject-Sequence": str(lt.seq), "Nats-Msg-Id": "t1:forged"}
    before = await _state(admin)
    for name in NOT_WRITERS:
        await users[name].violation("poker.table.t1", forged, headers=headers)
    for url in (secured.address,  # nobody, and a user nobody knows
                natsconn.with_user(secured.address, "poker-service", "not-its-password"),
                natsconn.with_user(secured.address, "mallory", "x")):
        with pytest.raises(nats.errors.Error, match="Authorization Violation"):
            await natsconn.connect(url, name="nobody", ca=secured.ca, allow_reconnect=False,
                                   max_reconnect_attempts=0, connect_timeout=DEADLINE_S)
    assert await _state(admin) == before
    # the service's user appends it: only the permissions stood in the way
    ack = await users["poker-service"].nc.jetstream().publish("poker.table.t1", forged,
                                                               headers=headers, stream=STREAM)
    assert ack.seq == before[1] + 1


async def test_the_reader_reads_and_the_mirror_writes_its_own_stream_only(users, secured):
    reader = users["poker-reader"]
    logs = EventStore(reader.nc, reader.nc.jetstream())
    assert [len(await logs.read("t1"))] == [4]
    await reader.violation("poker.mirror.table.t1", b"x")
    mirror_user = users["poker-mirror"]
    # the mirror user may make and write the mirror's stream, and nothing else
    for name in ("poker-dealer", "poker-table", "poker-service", "poker-reader"):
        await users[name].violation("poker.mirror.table.t1", b"x")
    mirror = EventStore(mirror_user.nc, mirror_user.nc.jetstream(), MIRROR_STREAM)
    # aimed at the primary's own server, by the log's identity: refused, nothing made
    with pytest.raises(MirrorRefused, match="holds the primary log itself"):
        await copy_new(logs, mirror)
    assert await mirror.info() is None
    await mirror.ensure_stream(StreamSettings(), metadata={})
    seq, _ = await mirror.append("t1", b"a copy", 0, "copy-1")
    assert [s.data for s in await mirror.read("t1")] == [b"a copy"]
    await mirror_user.violation(f"$JS.API.STREAM.DELETE.{MIRROR_STREAM}")
    await mirror_user.violation(f"$JS.API.STREAM.PURGE.{MIRROR_STREAM}", b"{}")


async def test_only_the_wallet_writes_the_money_ledger_and_the_reader_reads_it(
        users, secured):
    """The wallet's user appends to POKER_WALLET and reads it, and reaches no other stream
    (not even the table log); it edits, purges or deletes nothing; nobody else but the admin
    writes the ledger, and of the others only the reader reads it."""
    wallet = users["poker-wallet"]
    try:
        await users["poker-admin"].nc.jsm().stream_info("POKER_WALLET")
    except NotFoundError:  # not made yet: the wallet's user may not make it
        with pytest.raises(StoreError, match="the admin makes it"):
            await ensure_wallet_stream(wallet.nc.jetstream(timeout=0.5))
        await wallet.violation("$JS.API.STREAM.CREATE.POKER_WALLET", b"{}")
    await ensure_wallet_stream(users["poker-admin"].nc.jetstream())
    await ensure_wallet_stream(wallet.nc.jetstream())  # there: its info is all it needs
    ledger = LedgerStore(wallet.nc, wallet.nc.jetstream())
    entry, _ = await ledger.transfer(AccountId.player("alice"), DEPOSIT, 100, "d1")
    assert await ledger.balance(AccountId.player("alice")) == 100
    read = await read_ledger(users["poker-reader"].nc.jetstream())
    assert [(seq, e.amount) for seq, e in read] == [(entry.seq, 100)]

    house = "poker.wallet.house"
    direct = json.dumps({"last_by_subj": house}).encode()
    for name in NOT_WALLET:
        await users[name].violation(house, b"forged")
        await users[name].violation("poker.wallet.p.0123", b"forged")
    for name in ("poker-dealer", "poker-table", "poker-service", "poker-mirror"):
        await users[name].violation("$JS.API.DIRECT.GET.POKER_WALLET", direct)
        await users[name].violation("$JS.API.STREAM.INFO.POKER_WALLET")
    info = await users["poker-admin"].nc.jsm().stream_info("POKER_WALLET")
    for subject, payload in {
        "$JS.API.STREAM.DELETE.POKER_WALLET": b"",
        "$JS.API.STREAM.PURGE.POKER_WALLET": b"{}",
        "$JS.API.STREAM.UPDATE.POKER_WALLET": _loosened_config(info),
        "$JS.API.STREAM.MSG.DELETE.POKER_WALLET": b'{"seq": 1, "no_erase": true}',
        "$JS.API.STREAM.CREATE.FORGED": b'{"name": "FORGED", "subjects": ["forged.>"]}',
        "$JS.API.CONSUMER.CREATE.POKER_WALLET": b"{}",
        "poker.table.t1": b"forged",
        f"$JS.API.STREAM.INFO.{STREAM}": b"",
        f"$JS.API.DIRECT.GET.{STREAM}": b'{"last_by_subj": "poker.table.t1"}',
    }.items():
        await wallet.violation(subject, payload)
    after = await users["poker-admin"].nc.jsm().stream_info("POKER_WALLET")
    assert (after.state.messages, after.config.deny_delete, after.config.deny_purge) == \
        (1, True, True)

    # the wallet service starts as its user (it never asks for the table log) and serves
    from poker.wallet.v1 import wallet_pb2 as wpb
    from poker.wallet.v1 import wallet_pb2_grpc

    from services.wallet.server import setup
    from shared.infra.boot import start
    from shared.infra.config import Config
    config = Config(nats_url=secured.urls["poker-wallet"], host="127.0.0.1", port=0,
                    addresses={}, log_level="WARNING", stream_replicas=1, tls=None,
                    nats_ca=secured.ca or "")
    server, cleanup = await start("wallet", setup, config)
    await server.start()
    try:
        async with grpc.aio.insecure_channel(server.address) as ch:
            reply = await wallet_pb2_grpc.WalletServiceStub(ch).Balance(
                wpb.BalanceRequest(account=wpb.Account(player_id="alice")), timeout=DEADLINE_S)
        assert reply.balance == 100
    finally:
        await server.stop(0)
        await cleanup()


async def test_a_plaintext_connection_to_ups_nats_is_refused(tmp_path):
    cluster = LocalCluster(tmp_path / "up", base_port=None, log_level="WARNING")
    await cluster.start_nats()
    try:
        host, port = "127.0.0.1", cluster.nats.port
        password = cluster.nats_passwords["poker-reader"]
        # a client that speaks plaintext, with good credentials: the server wants TLS first,
        # says nothing before it, and hangs up
        with socket.create_connection((host, port), timeout=DEADLINE_S) as s:
            s.sendall(b'CONNECT {"user":"poker-reader","pass":"%s","verbose":false}\r\nPING\r\n'
                      % password.encode())
            reply = b""
            while chunk := s.recv(4096):  # until the server hangs up
                reply += chunk
        assert b"INFO" not in reply and b"PONG" not in reply and b"+OK" not in reply
        # nats-py without the CA (the system's trust store): the certificate is not trusted
        with pytest.raises((ssl.SSLError, OSError, nats.errors.Error)):
            await nats.connect(cluster.nats_url_for("poker-reader"), allow_reconnect=False,
                               max_reconnect_attempts=0, connect_timeout=DEADLINE_S)
        # and with it, it works
        store = await EventStore.connect(cluster.nats_url_for("poker-reader"), create=False,
                                         ca=cluster.nats_ca)
        assert await store.info() is not None
        await store.close()
    finally:
        await cluster.stop()


async def test_a_client_never_sends_its_password_to_a_server_that_skips_tls():
    """An impostor on the NATS port that offers plaintext (no tls_required): a tls:// client
    speaks TLS first (shared/infra/natsconn.py), so the password never crosses in the clear."""
    import asyncio

    from shared.infra import natsconn
    received = bytearray()
    got = asyncio.Event()

    async def impostor(reader, writer):
        writer.write(b'INFO {"server_id":"x","version":"2.10.0","auth_required":true,'
                     b'"max_payload":1048576}\r\n')
        await writer.drain()
        received.extend(await reader.read(4096))
        got.set()
        writer.close()

    server = await asyncio.start_server(impostor, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        # any failure will do (TLS, nats-py or time-out errors): what counts is what was sent
        with pytest.raises(Exception):  # noqa: B017
            await natsconn.connect(f"tls://poker-reader:s3cret-pw@127.0.0.1:{port}",
                                   name="victim", allow_reconnect=False,
                                   max_reconnect_attempts=0, connect_timeout=DEADLINE_S)
        await asyncio.wait_for(got.wait(), DEADLINE_S)
    finally:
        server.close()
        await server.wait_closed()
    assert received[:1] == b"\x16"  # a TLS ClientHello, first
    assert b"s3cret-pw" not in received and b"CONNECT" not in received


async def test_compliance_alone_appends_to_the_access_log_and_nobody_edits_it(users):
    """Every read that opens sealed cards is recorded (shared/audit/access.py) as compliance,
    the user held only where the compliance key is: the reader reads the access log but may not
    append a record (none can be made up), compliance writes nothing else, and nobody but the
    admin may make, edit, purge or delete the access log (its stream also denies deletes and
    purges to the admin)."""
    from shared.audit.access import (
        ACCESS_STREAM,
        AccessNotRecorded,
        ensure_access_stream,
        read_access,
        record_opened,
    )
    compliance = users["poker-compliance"].nc.jetstream(timeout=2)
    try:
        await users["poker-admin"].nc.jsm().stream_info(ACCESS_STREAM)
    except NotFoundError:  # not made yet: compliance may not make it, and opens nothing
        with pytest.raises(AccessNotRecorded):
            await record_opened(compliance, "history", ["t1"], ["k1"])
    await ensure_access_stream(users["poker-admin"].nc.jetstream())
    seq = await record_opened(compliance, "history", ["t1"], ["k1"], hands=[1])
    reader = users["poker-reader"].nc.jetstream(timeout=2)
    assert [(r["seq"], r["tables"], r["purpose"]) for r in await read_access(reader)] == [
        (seq, ["t1"], "history")]
    with pytest.raises(AccessNotRecorded):  # the reader's forged record is refused
        await record_opened(reader, "history", ["t1"], ["k1"], hands=[2])
    for subject, payload in {
        f"$JS.API.STREAM.DELETE.{ACCESS_STREAM}": b"",
        f"$JS.API.STREAM.PURGE.{ACCESS_STREAM}": b"{}",
        f"$JS.API.STREAM.MSG.DELETE.{ACCESS_STREAM}": b'{"seq": 1, "no_erase": true}',
        "poker.table.t1": b"forged",
    }.items():
        await users["poker-compliance"].violation(subject, payload)
    for name in ("poker-dealer", "poker-table", "poker-service", "poker-wallet", "poker-reader",
                 "poker-web", "poker-mirror"):
        await users[name].violation("poker.access.history", b"{}")
    info = await users["poker-admin"].nc.jsm().stream_info(ACCESS_STREAM)
    assert (info.state.messages, info.config.deny_delete, info.config.deny_purge) == \
        (1, True, True)


async def test_the_notary_alone_writes_the_hands_log_and_its_checkpoints(users):
    """The notary's user makes POKER_HANDS and POKER_CHECKPOINTS and appends to them, reads
    the log and keeps its lease bucket; it edits, purges or deletes nothing and writes no
    commit; the reader and compliance read its streams; nobody else writes them."""
    from shared.infra.lease import Leases
    from shared.tlog import store as tstore
    notary = users["poker-notary"]
    js = notary.nc.jetstream()
    await tstore.ensure_streams(js)
    leaf = b"poker-hand/v1\n"
    ack = await js.publish(tstore.hands_subject(STREAM), leaf, stream=tstore.HANDS_STREAM,
                           headers={"Nats-Expected-Last-Sequence": "0",
                                    tstore.LOG_SEQ: "9", tstore.RESUME_SEQ: "3"})
    assert ack.seq == 1
    await js.publish(tstore.CHECKPOINT_SUBJECT, b"a checkpoint",
                     stream=tstore.CHECKPOINT_STREAM)
    leases = await Leases.open(js, bucket=tstore.NOTARY_BUCKET, instance_id="n1")
    assert await leases.acquire("notary")
    assert [len(await EventStore(notary.nc, js).read("t1"))] == [4]  # it reads the log
    for verb, payload in (("DELETE", b""), ("PURGE", b"{}")):
        await notary.violation(f"$JS.API.STREAM.{verb}.{tstore.HANDS_STREAM}", payload)
    await notary.violation("$JS.API.STREAM.CREATE.FORGED", b"{}")
    for name in ("poker-reader", "poker-compliance"):
        reader = users[name]
        assert await tstore.read_leaves(EventStore(reader.nc, reader.nc.jetstream())) == [leaf]
        assert await tstore.latest_checkpoint(reader.nc.jetstream()) == "a checkpoint"
    for name in NOT_WRITERS[:-1] + ("poker-dealer", "poker-table", "poker-service"):
        await users[name].violation(tstore.hands_subject(STREAM), b"a forged leaf")
        await users[name].violation(tstore.CHECKPOINT_SUBJECT, b"a forged checkpoint")
    assert await tstore.read_leaves(users.admin) == [leaf]
