"""The web pages (issue 14, first part): the lobby and a table to watch, served by an ASGI app
(Starlette) that is a client of the table service and of the log, never a second source of
truth.

- ``/``: the lobby, the log's tables (their public views: game, structure, seats taken, the
  hand), followed live over server-sent events (``/api/lobby/events``).
- ``/table/{id}``: the felt of one table as a spectator sees it (seats, stacks, bets, pots,
  board, the button, the player on turn and the action clock), followed live: the page's
  ``/api/tables/{id}/events`` stream is the table service's Watch (one for all the table's
  spectators here: fanout.py), one view per commit. A spectator's view has no hole card
  before the showdown: the table service never puts one in it, and a spectator's stream is
  made with no seat token.
- ``/table/{id}/hands/{n}``: a hand that is over, step by step (``hand.js`` replays it from the
  JSON of ``/api/tables/{id}/hands/{n}``), with its PokerStars text and PHH to download
  (``.../pokerstars.txt``, ``.../hand.phh``). Read from the log without a key, so the cards
  nobody saw read ``??`` (the compliance replay, with the key, is for the compliance role);
  a private table's hands are not shown.
- ``/compliance/tables/{id}/hands/{n}``: the compliance replay, for the compliance role only
  (a signed-in session whose token has it): every card opened with the compliance key, each
  of the hand's commits with its hash-chain link checked, each deck commitment checked
  against the deck and salt revealed after the hand, and the audit verdict of the table. Every
  such view is first recorded in the access log (shared/audit/access.py: who, when, which
  table and hand, which key); no record, no view.
- ``/cards/{card}.svg``: the cards, drawn here; every asset is served by the app itself (no
  CDN), under a Content-Security-Policy that allows this origin only.

The app calls the table service as itself (``token``: a token of its own whose only role is
``relay``: it sees what any spectator sees, so a private table is neither listed nor
watchable here, and its Watch streams are held to a relay's cap rather than a caller's). Its
live streams come from fanout.py: one Watch of the table service per table for all its
spectators, one per seated player for their pages, each fanned out to any number of pages.
Visitors are held to limits of the web's own (limits.py): live streams per visitor (a
signed-in session, else an address) and per process, over which a stream is refused with
429 and a Retry-After.

Players sign in with the platform's token (``POST /api/session``; checked by the identity
provider's keys, ``Backend.verify``); the session (an HttpOnly, SameSite=Strict cookie naming
a random id) keeps the token and, per table, the seat and its seat token, which the web makes
and never sends to the page. A signed-in player sits down (``/api/tables/{id}/sit``), follows
the table with their own cards and legal actions (the seated Watch), and acts
(``/api/tables/{id}/act``): every call goes to the table service with the player's token, so
the table service's own rules decide, and its refusal comes back as the matching HTTP status.
POSTs must be JSON from this origin (no other site can send them) and small (``MAX_BODY``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import html
import json
import re
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import grpc
from google.protobuf.json_format import MessageToDict
from poker.table.v1 import table_pb2, table_pb2_grpc
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from shared.audit import audit_table
from shared.audit.access import AccessNotRecorded
from shared.history import phh, pokerstars, to_json
from shared.history.log import table_hands
from shared.history.record import HandRecord
from shared.infra.commits import read_envelopes
from shared.infra.eventstore import Stored
from shared.infra.identity import COMPLIANCE, Principal, Unauthenticated, bearer_metadata
from shared.infra.protomap import ACTION_KIND, GAME, STRUCTURE, UnknownEnumValue
from shared.infra.repository import CorruptLog
from shared.infra.retry import retrying
from shared.infra.seattokens import new_seat_token
from shared.infra.secrecy import ComplianceKeyring
from shared.poker import events as E
from shared.poker.deck import commitment as deck_commitment
from shared.poker.table import TABLE_ID

from .fanout import LINGER_S, QUEUE, Fanout, Subscriber
from .limits import STREAMS_PER_PROCESS, STREAMS_PER_VISITOR, StreamLimits, TooManyStreams

STATIC = Path(__file__).parent / "static"
#: how often the lobby looks at the log's tables again
LOBBY_EVERY_S = 2.0
#: a card as the views write it ("Ah", "Td"); "??" is a card nobody may see
CARD = re.compile(r"(?:[2-9TJQKA][cdhs]|\?\?)")
SUITS = {"c": ("♣", "#1b5e20"), "d": ("♦", "#0d47a1"), "h": ("♥", "#b71c1c"),
         "s": ("♠", "#212121")}
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; style-src 'self'; "
                               "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass
class Backend:
    """What the pages read: the table service (as the web service's own caller) and the
    log's table ids."""

    stub: table_pb2_grpc.TableServiceStub
    table_ids: Callable[[], Awaitable[list[str]]]
    read: Callable[[str], Awaitable[list[Stored]]]  # a table's commits
    #: a player's token checked (Unauthenticated if it is not the platform's, or expired)
    verify: Callable[[str], Awaitable[Principal]] | None = None
    #: the web service's own call metadata (its token, no role): what a spectator's calls
    #: carry; a signed-in player's carry theirs
    own: tuple = ()
    #: the compliance role's keyring (POKER_COMPLIANCE_KEY), and the access log's record of
    #: a view (purpose, table, key ids, hands, who): None, no compliance replay here
    keyring: ComplianceKeyring | None = None
    record_access: Callable[..., Awaitable[int]] | None = None


#: the most bytes a POST may carry, and the sessions kept (the oldest go first)
MAX_BODY = 4096
MAX_SESSIONS = 10_000
COOKIE = "poker_session"
#: a refusal of the table service as the page's HTTP status
HTTP_STATUS = {grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.UNAUTHENTICATED: 401,
               grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.NOT_FOUND: 404,
               grpc.StatusCode.FAILED_PRECONDITION: 409, grpc.StatusCode.ALREADY_EXISTS: 409,
               grpc.StatusCode.RESOURCE_EXHAUSTED: 429, grpc.StatusCode.UNAVAILABLE: 503,
               grpc.StatusCode.DEADLINE_EXCEEDED: 504}


@dataclass
class Session:
    """A signed-in player: their token and, per table, the seat they hold with its token."""

    token: str
    principal: Principal
    seats: dict[str, tuple[int, str]]  # table -> (seat, seat token)

    @property
    def metadata(self) -> tuple:
        return bearer_metadata(self.token)


class Refused(Exception):
    """A request the pages refuse: the HTTP status and a message a person can act on."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


class NotShown(Exception):
    """A hand the pages do not show: the HTTP status and why."""

    def __init__(self, status: int, why: str) -> None:
        super().__init__(why)
        self.status = status


async def hand_record(backend: Backend, table_id: str, hand_no: int) -> HandRecord:
    """Hand ``hand_no`` of the table, over, from the log (its hidden cards sealed)."""
    stored = await backend.read(table_id)
    if not stored:
        raise NotShown(404, f"there is no table {table_id!r}")
    try:
        records = table_hands(stored)
    except CorruptLog as exc:
        raise NotShown(503, f"table {table_id}'s log does not check: {exc}") from None
    record = next((r for r in records if r.hand_no == hand_no), None)
    if record is None:
        raise NotShown(404, f"table {table_id} has no hand {hand_no}")
    if record.options.private:
        raise NotShown(403, f"table {table_id} is private: its hands are not shown here")
    if not record.complete:
        raise NotShown(409, f"hand {hand_no} of table {table_id} is still running")
    return record


def view_json(view: table_pb2.TableView) -> dict:
    """A table view for the page: the protobuf's fields (zero values included), the game and
    structure by name."""
    out = MessageToDict(view, preserving_proto_field_name=True,
                        always_print_fields_with_no_presence=True)
    out["game"] = GAME.from_pb(view.game).value if view.game else ""
    out["structure"] = STRUCTURE.from_pb(view.structure).value if view.structure else ""
    return out


def lobby_row(view: table_pb2.TableView) -> dict:
    return {"table_id": view.table_id,
            "game": GAME.from_pb(view.game).value if view.game else "",
            "structure": STRUCTURE.from_pb(view.structure).value if view.structure else "",
            "stakes": view.stakes, "seats_taken": len(view.seats),
            "max_seats": view.max_seats, "hand_no": view.hand_no, "phase": view.phase,
            "paused": view.paused, "closing": view.closing}


#: the lobby's hands per hour are measured over at least this long
RATE_AFTER_S = 60.0


class HandRates:
    """Hands per hour of each table, as this process has seen its hand numbers move (from the
    first time it looked: None until it has looked for RATE_AFTER_S)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._first: dict[str, tuple[float, int]] = {}

    def rate(self, table_id: str, hand_no: int) -> float | None:
        now = self.clock()
        at, first = self._first.setdefault(table_id, (now, hand_no))
        if now - at < RATE_AFTER_S:
            return None
        return round((hand_no - first) * 3600 / (now - at), 1)


async def lobby_rows(backend: Backend, rates: HandRates | None = None) -> list[dict]:
    """The public tables of the log, as the table service shows them to a spectator (with
    their hands per hour, given ``rates``)."""
    rows = []
    for table_id in await backend.table_ids():
        try:
            view = await backend.stub.GetState(table_pb2.ViewRequest(table_id=table_id),
                                               metadata=backend.own, timeout=5)
        except grpc.aio.AioRpcError:
            continue  # private (refused to a spectator), stopped, or away: not listed
        row = lobby_row(view)
        if rates is not None:
            row["hands_per_hour"] = rates.rate(view.table_id, view.hand_no)
        rows.append(row)
    return rows


def _page(title: str, body: str, script: str) -> HTMLResponse:
    """A page: ``body``, then cards.js (the cards, shared by the pages) and ``script``."""
    scripts = "".join(f'<script src="/static/{name}"></script>'
                      for name in ("cards.js", script))
    return HTMLResponse(
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title>"
        '<link rel=stylesheet href="/static/style.css"></head>'
        f"<body>{body}{scripts}</body></html>", headers=HEADERS)


def _sse(data: dict) -> bytes:
    return f"data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def table_event(view: table_pb2.TableView, you: int) -> bytes:
    """A table view as the page's server-sent event, seen from seat ``you`` (0: a
    spectator)."""
    return _sse({**view_json(view), "you": you})


class EventStream(StreamingResponse):
    """Server-sent events that give back what they hold (a place under the stream limits, a
    subscription) when the response is over, however it ends: finished, the client gone, or
    the server stopping."""

    def __init__(self, events: AsyncIterator[bytes],
                 release: Iterable[Callable[[], None]]) -> None:
        super().__init__(events, media_type="text/event-stream",
                         headers={**HEADERS, "Cache-Control": "no-store"})
        self.release = list(release)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            for release in self.release:
                release()


def create_app(backend: Backend, *, streams_per_visitor: int = STREAMS_PER_VISITOR,
               streams_per_process: int = STREAMS_PER_PROCESS, stream_queue: int = QUEUE,
               linger_s: float = LINGER_S) -> Starlette:
    """The pages over ``backend``. The live streams' limits (limits.py) and the fan-out's
    queue per page and linger (fanout.py) have sane defaults; tests set small ones. The app's
    ``state`` holds ``fanout`` and ``limits``."""
    sessions: dict[str, Session] = {}
    fanout = Fanout(backend.stub.Watch, table_event, stream_queue, linger_s)
    limits = StreamLimits(streams_per_visitor, streams_per_process)
    rates = HandRates()
    lobby_cache: list = [0.0, []]  # when, rows: one refresh every LOBBY_EVERY_S for all
    lobby_lock = asyncio.Lock()

    async def current_lobby() -> list[dict]:
        """The lobby's rows, read at most every LOBBY_EVERY_S whatever the number of pages
        open (each read asks the table service for every table: a stranger opening many
        lobbies must not multiply that)."""
        async with lobby_lock:
            if time.monotonic() - lobby_cache[0] >= LOBBY_EVERY_S:
                lobby_cache[1] = await lobby_rows(backend, rates)
                lobby_cache[0] = time.monotonic()
            return lobby_cache[1]

    def session_of(request: Request) -> Session | None:
        session = sessions.get(request.cookies.get(COOKIE, ""))
        if session is not None and session.principal.expires_at <= time.time():
            sessions.pop(request.cookies.get(COOKIE, ""), None)
            return None
        return session

    def visitor_of(request: Request) -> str:
        """Whom the stream limits count against: a signed-in session, else an address."""
        if session_of(request) is not None:
            return "session:" + request.cookies[COOKIE]
        return "address:" + (request.client.host if request.client else "")

    def too_many(exc: TooManyStreams) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=429, headers={
            **HEADERS, "Retry-After": str(exc.retry_after_s)})

    def left_seat(session: Session | None, table_id: str, held: tuple[int, str],
                  error: grpc.aio.AioRpcError | None) -> bool:
        """Whether ``error`` is the table service saying the session's seat token no longer
        holds its seat (they left it); if so the session forgets the seat."""
        if session is None or error is None or \
                error.code() is not grpc.StatusCode.PERMISSION_DENIED:
            return False
        if session.seats.get(table_id) == held:
            del session.seats[table_id]
        return True

    async def follow(table_id: str, session: Session | None) -> Subscriber:
        """The table's live view for this page: the seat's own when the session holds one at
        the table, else a spectator's (also when the seat turns out to be left)."""
        held = session.seats.get(table_id) if session is not None else None
        if held is not None and session is not None:
            try:
                return await fanout.subscribe(table_id, session.metadata, *held)
            except grpc.aio.AioRpcError as exc:
                if not left_seat(session, table_id, held, exc):
                    raise
        return await fanout.subscribe(table_id, backend.own)

    async def events_of(subscriber: Subscriber, session: Session | None,
                        table_id: str) -> AsyncIterator[bytes]:
        """A page's table events; a seat's view that ends refused (the seat was left) has the
        session forget the seat, so that the page's EventSource, which connects again by
        itself, follows the table as a spectator."""
        async for event in subscriber:
            yield event
        _, seat, seat_token = subscriber.upstream.key
        left_seat(session, table_id, (seat, seat_token), subscriber.error)

    async def body_of(request: Request) -> dict:
        """A POST's JSON object: from this origin, at most MAX_BODY bytes."""
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
            raise Refused(403, "requests come from this site's own pages only")
        if request.headers.get("content-type", "").split(";")[0].strip() != \
                "application/json":
            raise Refused(415, "send JSON (Content-Type: application/json)")
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > MAX_BODY):
            raise Refused(413, f"a request body is at most {MAX_BODY} bytes")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise Refused(413, f"a request body is at most {MAX_BODY} bytes")
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            raise Refused(400, "the body is not JSON") from None
        if not isinstance(body, dict):
            raise Refused(400, "the body is a JSON object")
        return body

    def refused(exc: Exception) -> Response:
        if isinstance(exc, Refused):
            return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=HEADERS)
        assert isinstance(exc, grpc.aio.AioRpcError)
        return JSONResponse({"error": exc.details() or exc.code().name},
                            status_code=HTTP_STATUS.get(exc.code(), 502), headers=HEADERS)

    def _int(body: dict, key: str, least: int = 1) -> int:
        value = body.get(key)
        if type(value) is not int or not least <= value <= 10**12:
            raise Refused(400, f"{key} is a whole number from {least}")
        return value

    async def sign_in(request: Request) -> Response:
        try:
            body = await body_of(request)
            token = body.get("token")
            if not isinstance(token, str) or not 0 < len(token) <= 3000:
                raise Refused(400, "give your token (the JWT your platform signed you in with)")
            if backend.verify is None:
                raise Refused(503, "signing in is not set up here (no identity provider)")
            try:
                principal = await backend.verify(token)
            except Unauthenticated as exc:
                raise Refused(401, f"that token is not accepted: {exc}") from None
        except Refused as exc:
            return refused(exc)
        if len(sessions) >= MAX_SESSIONS:
            sessions.pop(next(iter(sessions)))
        sid = secrets.token_urlsafe(32)
        sessions[sid] = Session(token, principal, {})
        reply = JSONResponse({"subject": principal.subject}, headers=HEADERS)
        reply.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/")
        return reply

    async def whoami(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return JSONResponse({"subject": None}, headers=HEADERS)
        return JSONResponse({"subject": session.principal.subject,
                             "seats": {t: s for t, (s, _) in session.seats.items()}},
                            headers=HEADERS)

    async def sit(request: Request) -> Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        session = session_of(request)
        try:
            if session is None:
                raise Refused(401, "sign in first")
            body = await body_of(request)
            seat, buy_in = _int(body, "seat"), _int(body, "buy_in")
            token, digest = new_seat_token()
            await retrying(backend.stub.SitDown, table_pb2.SitDownRequest(
                table_id=table_id, seat=seat, buy_in=buy_in, seat_token_sha256=digest,
                command_id=f"web-{secrets.token_hex(8)}"), session.metadata)
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        session.seats[table_id] = (seat, token)
        return JSONResponse({"seat": seat}, headers=HEADERS)

    async def act(request: Request) -> Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        session = session_of(request)
        try:
            if session is None or table_id not in session.seats:
                raise Refused(403, "you hold no seat at this table: sit down first")
            body = await body_of(request)
            seat, seat_token = session.seats[table_id]  # the session's own seat only
            try:
                action = ACTION_KIND.to_pb(ACTION_KIND.from_pb_name(
                    "ACTION_KIND_" + str(body.get("action", "")).upper()))
            except UnknownEnumValue:
                raise Refused(400, f"{body.get('action')!r} is not an action") from None
            act_request = table_pb2.ActRequest(
                table_id=table_id, seat=seat, seat_token=seat_token,
                hand_no=_int(body, "hand_no"), action=action,
                command_id=f"web-{secrets.token_hex(8)}")
            if body.get("amount") is not None:
                act_request.amount = _int(body, "amount")
            reply = await retrying(backend.stub.Act, act_request, session.metadata)
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return JSONResponse(view_json(reply.view), headers=HEADERS)

    async def lobby(request: Request) -> Response:
        return _page("Poker tables", "<h1>Tables</h1><form id=signin><label>token "
                     "<input id=token name=token autocomplete=off></label> "
                     "<button type=submit>sign in</button> <span id=who></span></form>"
                     "<table id=lobby><thead><tr>"
                     "<th>table</th><th>game</th><th>structure</th><th>stakes</th>"
                     "<th>seats</th><th>hand</th><th>hands/hour</th><th>phase</th></tr>"
                     "</thead><tbody></tbody></table>",
                     "lobby.js")

    async def tables(request: Request) -> Response:
        return JSONResponse(await current_lobby(), headers=HEADERS)

    async def lobby_events(request: Request) -> Response:
        try:
            release = limits.take(visitor_of(request))
        except TooManyStreams as exc:
            return too_many(exc)

        async def stream() -> AsyncIterator[bytes]:
            last = None
            while True:
                rows = await current_lobby()
                if rows != last:
                    last = rows
                    yield _sse({"tables": rows})
                await asyncio.sleep(LOBBY_EVERY_S)  # the lobby's refresh period
        return EventStream(stream(), [release])

    def _table_id(request: Request) -> str | Response:
        table_id = request.path_params["table_id"]
        if not TABLE_ID.fullmatch(table_id):
            return JSONResponse({"error": "a table id is 1 to 64 letters, digits, '_' or "
                                          "'-'"}, status_code=400, headers=HEADERS)
        return table_id

    async def table_page(request: Request) -> Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        body = (f'<h1>Table <span id=table-id>{html.escape(table_id)}</span></h1>'
                f'<div id=felt data-table="{html.escape(table_id)}"><div id=board></div>'
                '<div id=pot></div><div id=seats></div></div><p id=status></p>'
                '<form id=sit hidden><label>seat <input id=sit-seat type=number min=1>'
                '</label> <label>buy-in <input id=sit-buy-in type=number min=1></label> '
                '<button type=submit>sit down</button></form>'
                '<div id=actions></div><p id=error role=alert></p>'
                '<h2>Last actions</h2><ul id=recent></ul>'
                '<p><a id=last-hand></a></p><p><a href="/">lobby</a></p>')
        return _page(f"Table {table_id}", body, "table.js")

    async def table_events(request: Request) -> Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        session = session_of(request)
        try:
            release = limits.take(visitor_of(request))
        except TooManyStreams as exc:
            return too_many(exc)
        try:
            subscriber = await follow(table_id, session)
        except BaseException as exc:
            release()
            if isinstance(exc, grpc.aio.AioRpcError):
                return refused(exc)
            raise
        return EventStream(events_of(subscriber, session, table_id),
                           [subscriber.close, release])

    async def hand_of(request: Request) -> HandRecord | Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        hand_no = request.path_params["hand_no"]
        if not 1 <= hand_no <= 10**12:
            return JSONResponse({"error": "a hand number is a whole number from 1"},
                                status_code=400, headers=HEADERS)
        try:
            return await hand_record(backend, table_id, hand_no)
        except NotShown as exc:
            return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=HEADERS)

    async def hand_page(request: Request) -> Response:
        record = await hand_of(request)
        if isinstance(record, Response):
            return record
        tid, n = html.escape(record.table_id), record.hand_no
        base = f"/api/tables/{tid}/hands/{n}"
        body = (f'<h1>Table <a href="/table/{tid}">{tid}</a>, hand {n}</h1>'
                f'<div id=felt data-hand="{base}"><div id=board></div><div id=pot></div>'
                '<div id=seats></div></div><p id=step></p>'
                '<p><button id=prev type=button>previous</button> '
                '<button id=next type=button>next</button> <span id=where></span></p>'
                f'<p>download: <a id=pokerstars href="{base}/pokerstars.txt">PokerStars '
                f'text</a> · <a id=phh href="{base}/hand.phh">PHH</a></p>'
                f'<pre id=text>{html.escape(pokerstars(record))}</pre>')
        return _page(f"Table {record.table_id}, hand {n}", body, "hand.js")

    async def hand_json(request: Request) -> Response:
        record = await hand_of(request)
        if isinstance(record, Response):
            return record
        return JSONResponse(to_json(record), headers=HEADERS)

    def _download(text: str, name: str, media: str) -> Response:
        return Response(text, media_type=media, headers={
            **HEADERS, "Content-Disposition": f'attachment; filename="{name}"'})

    async def hand_text(request: Request) -> Response:
        record = await hand_of(request)
        if isinstance(record, Response):
            return record
        return _download(pokerstars(record) + "\n",
                         f"{record.table_id}-{record.hand_no}.txt", "text/plain")

    async def hand_phh(request: Request) -> Response:
        record = await hand_of(request)
        if isinstance(record, Response):
            return record
        return _download(phh(record), f"{record.table_id}-{record.hand_no}.phh",
                         "application/toml")

    async def compliance_json(request: Request) -> Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        session = session_of(request)
        hand_no = request.path_params["hand_no"]
        try:
            if session is None or not session.principal.has(COMPLIANCE):
                raise Refused(403, "the compliance replay is for the compliance role: sign in "
                                   "with a token that has it")
            if backend.keyring is None or backend.record_access is None:
                raise Refused(503, "no compliance key is configured here "
                                   "(POKER_COMPLIANCE_KEY)")
            await backend.record_access("web-replay", [table_id], backend.keyring.key_ids,
                                        [hand_no], f"{session.principal.subject} (web)")
            return JSONResponse(await compliance_view(backend, table_id, hand_no),
                                headers=HEADERS)
        except Refused as exc:
            return refused(exc)
        except AccessNotRecorded as exc:
            return refused(Refused(503, str(exc)))

    async def compliance_page(request: Request) -> Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        n = request.path_params["hand_no"]
        tid = html.escape(table_id)
        body = (f"<h1>Compliance replay: table {tid}, hand {n}</h1>"
                f'<div id=felt data-hand="/api/compliance/tables/{tid}/hands/{n}">'
                "<div id=board></div><div id=pot></div><div id=seats></div></div>"
                "<p id=step></p><p><button id=prev type=button>previous</button> "
                "<button id=next type=button>next</button> <span id=where></span></p>"
                "<h2>The proof</h2><p id=verdict></p><ul id=decks></ul>"
                "<table id=chain><thead><tr><th>commit</th><th>events</th>"
                "<th>hash-chain link</th></tr></thead><tbody></tbody></table>"
                "<p id=error role=alert></p>")
        return _page(f"Compliance replay {table_id} {n}", body, "hand.js")

    async def card_svg(request: Request) -> Response:
        code = request.path_params["card"]
        if not CARD.fullmatch(code):
            return Response("no such card", status_code=404, headers=HEADERS)
        return Response(card_svg_text(code), media_type="image/svg+xml",
                        headers={**HEADERS, "Cache-Control": "public, max-age=86400"})

    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True}, headers=HEADERS)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await fanout.close()

    app = Starlette(lifespan=lifespan, routes=[
        Route("/", lobby),
        Route("/healthz", healthz),
        Route("/api/tables", tables),
        Route("/api/session", sign_in, methods=["POST"]),
        Route("/api/session", whoami, methods=["GET"]),
        Route("/api/tables/{table_id}/sit", sit, methods=["POST"]),
        Route("/api/tables/{table_id}/act", act, methods=["POST"]),
        Route("/api/lobby/events", lobby_events),
        Route("/table/{table_id}", table_page),
        Route("/api/tables/{table_id}/events", table_events),
        Route("/table/{table_id}/hands/{hand_no:int}", hand_page),
        Route("/api/tables/{table_id}/hands/{hand_no:int}", hand_json),
        Route("/api/tables/{table_id}/hands/{hand_no:int}/pokerstars.txt", hand_text),
        Route("/api/tables/{table_id}/hands/{hand_no:int}/hand.phh", hand_phh),
        Route("/compliance/tables/{table_id}/hands/{hand_no:int}", compliance_page),
        Route("/api/compliance/tables/{table_id}/hands/{hand_no:int}", compliance_json),
        Route("/cards/{card}.svg", card_svg),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])
    app.state.fanout, app.state.limits = fanout, limits
    return app


async def compliance_view(backend: Backend, table_id: str, hand_no: int) -> dict:
    """The compliance replay of a hand: the table's audit verdict, the hand opened with the
    key (shared/history's JSON), each of its commits with its hash-chain link checked, and
    each deck commitment against the deck and salt revealed after the hand."""
    stored = await backend.read(table_id)
    if not stored:
        raise Refused(404, f"there is no table {table_id!r}")
    audit = audit_table(table_id, stored, backend.keyring)
    steps, last_hash = [], b""
    for s in stored:
        try:
            commit, envelopes = read_envelopes(s.data)
        except Exception:  # noqa: BLE001 - a commit that does not parse: the audit names it
            steps.append({"seq": s.seq, "hand_no": None, "events": [], "link_ok": False})
            continue
        links = []
        for raw, env in zip(commit.events, envelopes):
            links.append(env.prev_hash == last_hash)
            last_hash = hashlib.sha256(raw).digest()
        if envelopes and envelopes[0].hand_no == hand_no:
            steps.append({"seq": s.seq, "hand_no": hand_no,
                          "events": [env.WhichOneof("body") or "" for env in envelopes],
                          "link_ok": all(links), "hash": last_hash.hex()})
    out: dict = {"table_id": table_id, "hand_no": hand_no,
                 "audit": {"ok": audit.ok, "failure": str(audit.failure or "")},
                 "commits": steps, "decks": [], "hand": None}
    try:
        records = [r for r in table_hands(stored, backend.keyring) if r.hand_no == hand_no]
    except CorruptLog as exc:
        out["audit"] = {"ok": False, "failure": str(exc)}
        return out
    if not records:
        raise Refused(404, f"table {table_id} has no hand {hand_no}")
    record = records[0]
    out["hand"] = to_json(record)
    committed = [e.commitment for e in record.events if isinstance(e, E.DeckCommitted)]
    revealed = next((e for e in record.events if isinstance(e, E.DeckRevealed)), None)
    for i, c in enumerate(committed):
        ok = revealed is not None and i < len(revealed.decks) and \
            deck_commitment(revealed.decks[i], revealed.salts[i]) == c
        out["decks"].append({"commitment": c, "verified": ok,
                             "revealed": revealed is not None})
    return out


def card_svg_text(code: str) -> str:
    """A card as SVG: the back for "??", else its rank and suit."""
    if code == "??":
        return ('<svg xmlns="http://www.w3.org/2000/svg" width="50" height="70" '
                'viewBox="0 0 50 70"><rect x="1" y="1" width="48" height="68" rx="5" '
                'fill="#283593" stroke="#fff" stroke-width="2"/><path d="M8 8h34v54H8z" '
                'fill="none" stroke="#9fa8da" stroke-width="2"/></svg>')
    rank = "10" if code[0] == "T" else code[0]
    symbol, colour = SUITS[code[1]]
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="50" height="70" '
            'viewBox="0 0 50 70"><rect x="1" y="1" width="48" height="68" rx="5" '
            'fill="#fff" stroke="#333" stroke-width="2"/>'
            f'<text x="6" y="22" font-size="18" font-family="sans-serif" fill="{colour}">'
            f'{rank}</text><text x="25" y="55" font-size="28" text-anchor="middle" '
            f'fill="{colour}">{symbol}</text></svg>')
