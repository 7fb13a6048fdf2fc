"""The web app against the in-process stack, for the system tests of services/web: the app
served by uvicorn on a socket of its own (as ``python -m services.web`` serves it), what `pokerctl
up` gives it (``backend``), and a small HTTP/1.1 client over raw sockets, keep-alive, from a
loopback address of its choosing (the web counts an anonymous visitor by it)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import uvicorn
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.web.app import Backend, create_app
from services.web.limits import listen
from services.web.sessions import SessionStore, ensure_bucket
from shared.audit.access import record_opened
from shared.infra.bearer import bearer_metadata
from shared.infra.identity import RELAY
from shared.infra.natsserver import free_port
from shared.infra.waiting import until

ROOT = Path(__file__).resolve().parents[2]


def backend(stack, store, chan, sessions: SessionStore | None = None, keyring=None,
            read=None) -> Backend:
    """What `pokerctl up` gives the web: the table service, the log (also read from a
    sequence on), the identity provider, its own token, the compliance key, the access log,
    and the sessions."""
    async def record(purpose, tables, key_ids, hands, person):
        return await record_opened(store.js, purpose, tables, key_ids, hands, person)
    return Backend(table_pb2_grpc.TableServiceStub(chan), store.table_counts, read or store.read,
                   stack.issuer.verifier().averify, bearer_metadata(stack.token("web", RELAY)),
                   keyring if keyring is not None else stack.keyring(), record, sessions,
                   None if read else store.read)


async def bucket_store(store) -> SessionStore:
    """The sessions bucket, made as the admin makes it, and a store over it."""
    return SessionStore(await ensure_bucket(store.js))


@contextlib.asynccontextmanager
async def served(app):
    """``app`` on 127.0.0.1, a port the OS chose: its address (host:port)."""
    sock = listen("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=5))
    serving = asyncio.create_task(server.serve(sockets=[sock]))

    async def started():
        return server.started or serving.done()

    await until(started, 15, "web server start")
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 15)


@contextlib.asynccontextmanager
async def web_app(stack, store, sessions: SessionStore | None = None, **settings):
    """The app over the stack (``settings``: create_app's), served: (address, app)."""
    chan = stack.channel("table")
    app = create_app(backend(stack, store, chan, sessions), **settings)
    try:
        async with served(app) as address:
            yield address, app
    finally:
        await chan.close()


@dataclass
class Reply:
    status: int
    headers: dict[str, list[str]]
    body: bytes
    seconds: float = 0.0

    def header(self, name: str) -> str | None:
        values = self.headers.get(name.lower())
        return values[-1] if values else None

    def json(self):
        return json.loads(self.body)

    def cookie(self, name: str) -> str | None:
        """The value a Set-Cookie of ``name`` sets ("" when it clears it)."""
        for line in self.headers.get("set-cookie", []):
            key, _, rest = line.partition("=")
            if key.strip() == name:
                return rest.split(";", 1)[0]
        return None

    def cookie_attributes(self, name: str) -> set[str]:
        for line in self.headers.get("set-cookie", []):
            if line.partition("=")[0].strip() == name:
                return {p.strip().split("=")[0].lower() for p in line.split(";")[1:]}
        return set()


@dataclass
class Http:
    """One keep-alive HTTP/1.1 connection to ``address`` from ``source`` (reconnected when the
    server closes it); ``cookie``: the session cookie's value, sent with every request."""

    address: str
    source: str = "127.0.0.1"
    cookie: str | None = None
    host: str | None = None  # the Host header (default: the address)
    _reader: asyncio.StreamReader | None = field(default=None, repr=False)
    _writer: asyncio.StreamWriter | None = field(default=None, repr=False)

    async def _connect(self) -> None:
        host, port = self.address.split(":")
        self._reader, self._writer = await asyncio.open_connection(
            host, int(port), local_addr=(self.source, 0))

    async def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(Exception):
                await self._writer.wait_closed()
        self._reader = self._writer = None

    async def request(self, method: str, path: str, body: object = None,
                      headers: dict[str, str] | None = None, raw: bytes | None = None,
                      timeout: float = 30) -> Reply:
        """``method path`` with ``body`` as JSON (or ``raw`` bytes as they are)."""
        data = raw if raw is not None else \
            (json.dumps(body).encode() if body is not None else b"")
        lines = [f"{method} {path} HTTP/1.1", f"Host: {self.host or self.address}"]
        sent = {k.lower() for k in (headers or {})}
        if body is not None and "content-type" not in sent:
            lines.append("Content-Type: application/json")
        if data or method in ("POST", "DELETE"):
            lines.append(f"Content-Length: {len(data)}")
        if self.cookie is not None and "cookie" not in sent:
            lines.append(f"Cookie: poker_session={self.cookie}")
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        wire = ("\r\n".join(lines) + "\r\n\r\n").encode() + data
        for attempt in (1, 2):
            if self._writer is None:
                await self._connect()
            assert self._reader is not None and self._writer is not None
            start = time.monotonic()
            try:
                self._writer.write(wire)
                reply = await asyncio.wait_for(self._read(), timeout)
            except (ConnectionError, asyncio.IncompleteReadError):
                await self.close()
                if attempt == 2:
                    raise
                continue
            reply.seconds = time.monotonic() - start
            if (reply.header("connection") or "").lower() == "close":
                await self.close()
            return reply
        raise AssertionError("not reached")

    async def _read(self) -> Reply:
        assert self._reader is not None
        head = await self._reader.readuntil(b"\r\n\r\n")
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers: dict[str, list[str]] = {}
        for line in lines:
            if line:
                k, _, v = line.partition(":")
                headers.setdefault(k.strip().lower(), []).append(v.strip())
        size = int(headers.get("content-length", ["0"])[-1])
        body = await self._reader.readexactly(size) if size else b""
        return Reply(int(status_line.split()[1]), headers, body)


async def sign_in(address: str, token: str, source: str = "127.0.0.1") -> Http:
    """A client signed in with ``token``: its cookie set."""
    client = Http(address, source)
    reply = await client.request("POST", "/api/session", {"token": token})
    assert reply.status == 200, reply.body
    client.cookie = reply.cookie("poker_session")
    assert client.cookie
    return client


async def create_table(stack, table_id: str, **settings) -> None:
    """A fixed-limit hold'em table (small bet 10) made by an operator."""
    from poker.events.v1 import events_pb2 as ev
    async with stack.as_operator() as chan:
        await table_pb2_grpc.TableServiceStub(chan).CreateTable(tpb.CreateTableRequest(
            table_id=table_id, command_id="create", settings=tpb.TableSettings(
                game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_FIXED_LIMIT, small_bet=10,
                **settings)))


@contextlib.asynccontextmanager
async def web_process(stack, store, log_dir: Path) -> AsyncIterator[tuple[str, Http]]:
    """``python -m services.web`` as `pokerctl up` runs it (the stack's certificates and
    addresses, a relay token, 127.0.0.1 only), on a free port, once it answers /healthz: its
    address and a client of it (its output in ``log_dir``/web.log, shown if it dies)."""
    await ensure_bucket(store.js)  # (the admin's: `pokerctl up` makes it)
    port = free_port()
    env = {**os.environ, **stack.service_env("web"), "POKER_WEB_PORT": str(port),
           "POKER_WEB_TOKEN": stack.token("web", RELAY), "POKER_WEB_HOSTS": "127.0.0.1"}
    address = f"127.0.0.1:{port}"
    log = log_dir / "web.log"
    with open(log, "wb") as out:
        web = subprocess.Popen([sys.executable, "-m", "services.web"], cwd=ROOT, env=env,
                               stdout=out, stderr=subprocess.STDOUT)
    probe = Http(address)
    try:
        async def healthy() -> bool:
            assert web.poll() is None, log.read_text()
            try:
                return (await probe.request("GET", "/healthz", timeout=2)).status == 200
            except OSError:
                await probe.close()
                return False
        await until(healthy, 20, "the web answering /healthz")
        yield address, probe
    finally:
        await probe.close()
        web.terminate()
        web.wait(15)
