"""The web's live table streams fanned out (services/web/fanout.py) and its limits per visitor
and per process (services/web/limits.py), against the in-process services (real gRPC with
mutual TLS, a real nats-server) and the app served by uvicorn on a free port of 127.0.0.1.

The server-sent events are read over raw sockets: each visitor connects from an address of its
own on the loopback network (127.0.0.2, 127.0.0.3, ...), which is what the web counts an
anonymous visitor by. The table service's side is read from its hubs: a hub's ``watchers``
are the Watch streams of its table open in that process."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import random
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
import uvicorn
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.botclient import BotTable, play
from services.pokerctl.bots_cmd import TablePlan, create_and_seat
from services.web.app import Backend, create_app
from services.web.limits import SEND_BUFFER, listen
from shared.infra.bearer import bearer_metadata
from shared.infra.identity import RELAY
from shared.infra.waiting import until
from tests.helpers.web_table import CountingStub

CARD = re.compile(r"[2-9TJQKA][cdhs]")


@contextlib.asynccontextmanager
async def web(stack, store, role: str = RELAY, send_buffer: int = SEND_BUFFER,
              counts: collections.Counter | None = None, **settings):
    """The web app on 127.0.0.1 (a port the OS chose, on a socket made as ``python -m
    services.web`` makes it), calling the table service as "web" with ``role``, and with
    ``settings`` (create_app's limits): its address and the app. ``counts``: where the
    web's calls of each table-service method and its log reads ("read") are counted."""
    chan = stack.channel("table")
    stub, read = table_pb2_grpc.TableServiceStub(chan), store.read
    if counts is not None:
        stub = CountingStub(stub)
        stub.calls = counts

        async def read(table_id: str):
            counts["read"] += 1
            return await store.read(table_id)
    app = create_app(Backend(stub, store.table_counts, read, stack.issuer.verifier().averify,
                             bearer_metadata(stack.token("web", role))), **settings)
    sock = listen("127.0.0.1", 0, send_buffer)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                           timeout_graceful_shutdown=5))
    serving = asyncio.create_task(server.serve(sockets=[sock]))

    async def started():
        return server.started or serving.done()

    await until(started, 15, "web server start")
    try:
        yield f"127.0.0.1:{sock.getsockname()[1]}", app
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 15)
        await chan.close()


@dataclass
class Stream:
    """One GET of a server-sent-events stream, read in the background: the status, headers,
    the body of a refusal, and the events (JSON) as they come."""

    status: int
    headers: dict[str, str]
    body: bytes = b""
    events: list[dict] = field(default_factory=list)
    ended: bool = False
    writer: asyncio.StreamWriter | None = None
    task: asyncio.Task | None = None

    def versions(self) -> list[int]:
        return [int(e["version"]) for e in self.events]

    def latest(self) -> dict:
        return self.events[-1]

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
        if self.writer is not None:
            self.writer.close()


def _request(address: str, path: str, cookie: str | None) -> bytes:
    lines = [f"GET {path} HTTP/1.1", f"Host: {address}", "Accept: text/event-stream",
             "Connection: close"]
    if cookie:
        lines.append(f"Cookie: {cookie}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _connect(address: str, source: str, rcvbuf: int | None = None) -> socket.socket:
    host, port = address.split(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.bind((source, 0))
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, (host, int(port)))
    return sock


async def get(address: str, path: str, source: str = "127.0.0.1",
              cookie: str | None = None) -> Stream:
    """GET ``path`` from ``source``; a 200's events are read by a task of the Stream's."""
    reader, writer = await asyncio.open_connection(sock=await _connect(address, source))
    writer.write(_request(address, path, cookie))
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    status_line, *lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (x.partition(":") for x in lines if x)}
    stream = Stream(int(status_line.split()[1]), headers, writer=writer)
    if stream.status != 200:
        stream.body = await reader.read()
        writer.close()
        return stream

    async def read() -> None:
        buffered = b""
        try:
            while size := int((await reader.readline()).strip() or b"0", 16):
                buffered += (await reader.readexactly(size + 2))[:-2]
                *whole, buffered = buffered.split(b"\n\n")
                stream.events += [json.loads(e.removeprefix(b"data: ")) for e in whole]
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            stream.ended = True
    stream.task = asyncio.create_task(read())
    return stream


def visitor(n: int) -> str:
    """The address of anonymous visitor ``n`` (1..250)."""
    return f"127.0.0.{n + 1}"


async def bots_at(stub, stack, table_id: str, seats: int = 3) -> BotTable:
    """A fixed-limit hold'em table with ``seats`` bots sitting (through ``stub``)."""
    plan = TablePlan(table_id, "holdem", "fixed_limit", {"small_bet": 10})
    return await create_and_seat(stub, plan, seats, stack.sponsor())


def upstreams(stack, table_id: str) -> int:
    """The Watch streams of the table open in the table service."""
    hub = stack.keeper.hubs.get(table_id)
    return 0 if hub is None else len(hub.watchers)


async def events_until(stream: Stream, version: int, timeout: float, what: str) -> dict:
    """Wait for ``stream``'s event of ``version`` or later; that event."""
    async def arrived():
        return next((e for e in reversed(stream.events) if int(e["version"]) >= version),
                    None)
    return await until(arrived, timeout, what, every=0.005)


async def eventually(check: Callable[[], object], timeout: float, what: str) -> object:
    """Wait for ``check()`` to hold (shared/infra/waiting.py's ``until``, for a plain test)."""
    async def holds():
        return check()
    return await until(holds, timeout, what)


def same_views_in_order(streams: list[Stream]) -> list[dict]:
    """Check that, from when the last of ``streams`` came to the last view all of them have
    (more may be on their way), each got the same views (the upstream's), in the order of
    their versions; those views."""
    start = max(s.versions()[0] for s in streams)
    end = min(s.versions()[-1] for s in streams)
    after = [[e for e in s.events if start < int(e["version"]) <= end] for s in streams]
    versions = [int(e["version"]) for e in after[0]]
    assert versions == sorted(versions)
    assert all(a == after[0] for a in after)
    return after[0]


async def closed_all(streams: list[Stream]) -> None:
    await asyncio.gather(*(s.close() for s in streams))


# --- the attack of issue 23 -------------------------------------------------------------------


@pytest.mark.parametrize("role", [RELAY, "player"], ids=["relay", "plain token"])
async def test_a_visitor_with_70_streams_does_not_stop_other_tables_live_views(
        stack, store, client_stub, role):
    """One anonymous visitor opens 70 streams of table T1: past 16 they are refused (429,
    Retry-After), T1 costs the table service one Watch, and a spectator of T2 gets every
    view within a second of the action that made it. With a plain token (no relay role) the
    web is held to the table service's cap of 64 streams per caller, which the old web (a
    Watch per page) let one visitor use up for every spectator of every table."""
    await bots_at(client_stub, stack, "atk-1")
    bots = await bots_at(client_stub, stack, "atk-2")
    async with web(stack, store, role) as (url, app):
        attack = await asyncio.gather(*(get(url, "/api/tables/atk-1/events")
                                        for _ in range(70)))
        served = [s for s in attack if s.status == 200]
        refused = [s for s in attack if s.status != 200]
        assert len(served) == 16 and len(refused) == 54
        for s in refused:
            assert s.status == 429 and int(s.headers["retry-after"]) > 0
            assert "at most 16" in json.loads(s.body)["error"]
        await eventually(lambda: all(s.events for s in served), 10, "the attack's views")
        assert upstreams(stack, "atk-1") == 1

        spectator = await get(url, "/api/tables/atk-2/events", visitor(1))
        assert spectator.status == 200
        await events_until(spectator, 1, 5, "T2's first view")
        acted = 0
        while acted < 12:  # each action's view reaches the spectator within a second
            view = spectator.latest()
            if not view["to_act"]:
                version = int(view["version"]) + 1  # between hands: the next deal
                await events_until(spectator, version, 15, "the next hand")
                continue
            reply = await client_stub.Act(_call_or_check(view, bots),
                                          metadata=bots.auth[view["to_act"]])
            await events_until(spectator, reply.view.version, 1.0,
                               f"the view of action {acted + 1} within 1 s")
            acted += 1
        assert upstreams(stack, "atk-2") == 1
        await closed_all([*served, spectator])


def _call_or_check(view: dict, bots: BotTable) -> tpb.ActRequest:
    seat, legal = view["to_act"], view["legal"]
    action = ev.ACTION_KIND_CHECK if legal["can_check"] else ev.ACTION_KIND_CALL
    return tpb.ActRequest(table_id=bots.table_id, seat=seat, seat_token=bots.tokens[seat],
                          hand_no=int(view["hand_no"]), action=action,
                          command_id=f"t-{view['version']}-{seat}")


# --- one upstream, many pages -----------------------------------------------------------------


async def test_thirty_spectators_share_one_watch_which_stops_after_they_leave(
        stack, store, client_stub):
    bots = await bots_at(client_stub, stack, "fan")
    async with web(stack, store, linger_s=2.0) as (url, app):
        fanout = app.state.fanout
        pages = [await get(url, "/api/tables/fan/events", visitor(n)) for n in range(1, 31)]
        assert {p.status for p in pages} == {200}
        await eventually(lambda: all(p.events for p in pages), 10, "every page's first view")
        assert upstreams(stack, "fan") == 1
        upstream = fanout.upstream("fan")
        assert len(upstream.subscribers) == 30

        await play(client_stub, bots, 2, random.Random(3))
        final = (await client_stub.GetState(tpb.ViewRequest(table_id="fan"),
                                     metadata=bots.watcher())).version
        for p in pages:
            await events_until(p, final, 10, "the last view")
        assert upstreams(stack, "fan") == 1
        assert not any(p.ended for p in pages) and len(same_views_in_order(pages)) > 10

        await closed_all(pages)
        await eventually(lambda: not upstream.subscribers, 10, "the pages gone")
        # a page (re)loaded within the linger finds the same upstream, and the latest view
        again = await get(url, "/api/tables/fan/events", visitor(1))
        await events_until(again, final, 2, "the latest view at once")
        assert fanout.upstream("fan") is upstream and upstreams(stack, "fan") == 1
        await again.close()
        await eventually(lambda: upstreams(stack, "fan") == 0, 15,
                         "the upstream stopped after the linger")
        assert len(fanout) == 0 and app.state.limits.total == 0 and not app.state.limits


async def test_a_page_that_stops_reading_is_dropped_and_the_others_keep_going(
        stack, store, client_stub):
    """A client that stops reading fills its connection's buffers (a fixed kernel send
    buffer: limits.listen), then its queue: it is dropped, its response ends, and the other
    pages get every view meanwhile."""
    bots = await bots_at(client_stub, stack, "slow")
    async with web(stack, store, stream_queue=8) as (url, app):
        fanout = app.state.fanout
        readers = [await get(url, "/api/tables/slow/events", visitor(n)) for n in (1, 2, 3)]
        # a client with a small receive buffer that never reads
        sluggard = await _connect(url, visitor(4), rcvbuf=2048)
        loop = asyncio.get_running_loop()
        playing = None
        try:
            await loop.sock_sendall(sluggard, _request(url, "/api/tables/slow/events", None))
            await eventually(lambda: len(fanout.upstream("slow").subscribers) == 4, 10,
                             "four pages")
            playing = asyncio.create_task(play(client_stub, bots, 60, random.Random(5)))
            await eventually(lambda: fanout.dropped or playing.done(), 120,
                             "the sluggard dropped")
            assert fanout.dropped == 1, "the bots finished before a page fell behind"
            assert len(fanout.upstream("slow").subscribers) == 3
            at_drop = max(readers[0].versions())
            for r in readers:  # the others go on
                await events_until(r, at_drop + 20, 30, "views after the drop")
            playing.cancel()
            # its response ended: once it reads, it gets what was sent, then the end
            received = b""
            while chunk := await asyncio.wait_for(loop.sock_recv(sluggard, 65536), 10):
                received += chunk
            assert received.startswith(b"HTTP/1.1 200") and received.endswith(b"\r\n0\r\n\r\n")
        finally:
            sluggard.close()
            if playing is not None:
                playing.cancel()
                await asyncio.gather(playing, return_exceptions=True)
        assert not any(r.ended for r in readers)
        assert len(same_views_in_order(readers)) > 20
        await closed_all(readers)


# --- limits ---------------------------------------------------------------------------------


async def test_limits_per_visitor_and_per_process_refuse_with_retry_after(
        stack, store, client_stub):
    await bots_at(client_stub, stack, "lim", 2)
    async with web(stack, store, streams_per_visitor=2, streams_per_process=6) as (url, app):
        limits = app.state.limits
        path = "/api/tables/lim/events"
        a = [await get(url, path, visitor(1)), await get(url, "/api/lobby/events", visitor(1))]
        assert [s.status for s in a] == [200, 200]
        for over in (path, "/api/lobby/events"):  # the lobby's stream counts too
            third = await get(url, over, visitor(1))
            assert third.status == 429 and third.headers["retry-after"] == "5"
            assert "at most 2" in json.loads(third.body)["error"]
        b = await get(url, path, visitor(2))  # another visitor is served
        assert b.status == 200
        # a signed-in visitor counts per session, not per address
        await stack.deposit("pat", 100)
        session = await _sign_in(url, visitor(1), stack.token("pat"))
        mine = [await get(url, path, visitor(1), session) for _ in range(2)]
        assert [s.status for s in mine] == [200, 200]
        c = await get(url, path, visitor(3))  # the sixth stream of the process
        assert c.status == 200 and limits.total == 6
        full = await get(url, path, visitor(4))
        assert full.status == 429 and full.headers["retry-after"] == "30"
        assert "try again" in json.loads(full.body)["error"]

        await a[0].close()  # a stream that ends gives its place back
        await eventually(lambda: limits.total == 5, 10, "the place given back")
        again = await get(url, path, visitor(1))
        assert again.status == 200
        await closed_all([*a, b, *mine, c, again])
        await eventually(lambda: limits.total == 0, 10, "every place given back")
        assert not limits  # no visitor is remembered


async def test_refusals_of_the_table_service_keep_their_status(stack, store):
    async with stack.as_operator() as chan:
        await table_pb2_grpc.TableServiceStub(chan).CreateTable(tpb.CreateTableRequest(
            table_id="hidden", command_id="create", settings=tpb.TableSettings(
                game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_FIXED_LIMIT, small_bet=10,
                private=True)))
    async with web(stack, store) as (url, app):
        for path, status in (("/api/tables/nope/events", 404),
                             ("/api/tables/hidden/events", 403),
                             ("/api/tables/" + "x" * 65 + "/events", 400)):
            refused = await get(url, path, visitor(1))
            assert refused.status == status, (path, refused.body)
            assert json.loads(refused.body)["error"]
        assert len(app.state.fanout) == 0 and app.state.limits.total == 0


# --- seated players ---------------------------------------------------------------------------


async def _sign_in(address: str, source: str, token: str) -> str:
    """A session's cookie ("poker_session=...")."""
    return (await _post(address, source, "/api/session", {"token": token}))[1]


async def _post(address: str, source: str, path: str, body: dict,
                cookie: str | None = None) -> tuple[int, str]:
    """POST JSON: the status and the cookie it sets (or "")."""
    reader, writer = await asyncio.open_connection(sock=await _connect(address, source))
    data = json.dumps(body).encode()
    lines = [f"POST {path} HTTP/1.1", f"Host: {address}", "Connection: close",
             "Content-Type: application/json", f"Content-Length: {len(data)}"]
    if cookie:
        lines.append(f"Cookie: {cookie}")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + data)
    reply = (await asyncio.wait_for(reader.read(), 30)).decode()
    writer.close()
    found = re.search(r"set-cookie: (poker_session=[^;]+)", reply, re.IGNORECASE)
    return int(reply.split()[1]), found.group(1) if found else ""


async def test_a_seated_player_sees_their_cards_a_spectator_never(stack, store, client_stub):
    await bots_at(client_stub, stack, "seen", 1)
    await stack.deposit("pat", 500)
    async with web(stack, store) as (url, app):
        cookie = await _sign_in(url, visitor(1), stack.token("pat"))
        sat = await _post(url, visitor(1), "/api/tables/seen/sit", {"seat": 4, "buy_in": 200},
                          cookie)
        assert sat[0] == 200  # hand 1 starts: the bot and pat
        mine = await get(url, "/api/tables/seen/events", visitor(1), cookie)
        again = await get(url, "/api/tables/seen/events", visitor(1), cookie)
        watcher = await get(url, "/api/tables/seen/events", visitor(2))

        async def dealt(stream: Stream):
            view = stream.events and stream.latest()
            return view and any(s["cards"] for s in view["seats"]) and view
        view = await until(lambda: dealt(mine), 15, "pat's cards")
        own = next(s for s in view["seats"] if s["seat"] == 4)
        assert view["you"] == 4 and len(own["cards"]) == 2 and all(
            CARD.fullmatch(c) for c in own["cards"])
        seen = await until(lambda: dealt(watcher), 15, "the spectator's view of the deal")
        assert seen["you"] == 0
        # one Watch for pat's two pages (as pat, with the seat token), one for spectators
        assert upstreams(stack, "seen") == 2 and len(app.state.fanout) == 2
        await events_until(again, int(view["version"]), 5, "pat's other page")
        assert again.events[-1]["you"] == 4
        for v in watcher.events:
            for s in v["seats"]:
                assert set(s["cards"]) <= {"??"} or s["shown"], (v["version"], s)
        await closed_all([mine, again, watcher])


async def test_a_player_whose_seat_is_gone_follows_as_a_spectator(stack, store):
    async with stack.as_operator() as chan:
        operator = table_pb2_grpc.TableServiceStub(chan)
        await operator.CreateTable(tpb.CreateTableRequest(
            table_id="gone", command_id="create", settings=tpb.TableSettings(
                game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_FIXED_LIMIT, small_bet=10)))
        await stack.deposit("pat", 500)
        async with web(stack, store) as (url, app):
            cookie = await _sign_in(url, visitor(1), stack.token("pat"))
            assert (await _post(url, visitor(1), "/api/tables/gone/sit",
                                {"seat": 2, "buy_in": 200}, cookie))[0] == 200
            mine = await get(url, "/api/tables/gone/events", visitor(1), cookie)
            await eventually(lambda: bool(mine.events), 10, "pat's view")
            assert mine.latest()["you"] == 2
            # the table closes: nobody plays, so pat's seat frees at once
            await operator.CloseTable(tpb.CloseRequest(table_id="gone", command_id="close",
                                                       reason="test"))
            await eventually(lambda: mine.ended, 15, "pat's seated stream ended")
            assert len(app.state.fanout) == 0  # pat's upstream ended with the refusal
            later = await get(url, "/api/tables/gone/events", visitor(1), cookie)
            assert later.status == 200
            await eventually(lambda: bool(later.events), 10, "pat's view again")
            assert later.latest()["you"] == 0
            assert all(s["player_id"] != "pat" for s in later.latest()["seats"])
            await closed_all([mine, later])


async def test_a_reconnect_storm_of_spectators_costs_no_upstream_call(stack, store,
                                                                       client_stub):
    """A spectator's stream connecting again (a browser's EventSource does by itself; a
    proxy restarting makes a storm of them) is served from the fan-out's latest view: no
    GetState, no log read, no Watch more, whether the spectator is signed in or not."""
    await bots_at(client_stub, stack, "storm", 1)
    counts: collections.Counter = collections.Counter()
    async with web(stack, store, counts=counts) as (url, app):
        first = await get(url, "/api/tables/storm/events", visitor(1))
        await eventually(lambda: bool(first.events), 10, "the first spectator's view")
        cookie = await _sign_in(url, visitor(2), stack.token("sam"))  # seated nowhere
        before = dict(counts)
        for source, signed in ((visitor(3), None), (visitor(2), cookie)) * 10:
            again = await get(url, "/api/tables/storm/events", source, signed)
            assert again.status == 200, again.body
            await eventually(lambda again=again: bool(again.events), 10, "the view again")
            assert again.latest()["you"] == 0
            await again.close()
        assert dict(counts) == before, (before, dict(counts))
        assert upstreams(stack, "storm") == 1
        await first.close()
