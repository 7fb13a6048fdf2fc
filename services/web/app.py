"""The web pages (issue 14, first part; issue 24): the lobby and a table to watch, served by
an ASGI app (Starlette) that is a client of the table service and of the log, never a second
source of truth.

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
  a private table's hands are not shown. Served from caches (hands.py: each table folded
  once, incrementally; a final hand rendered once), limited per visitor.
- ``/compliance/tables/{id}/hands/{n}``: the compliance replay, for the compliance role only
  (a signed-in session whose token has it; the hand page links to it for that role alone):
  compliance.py; ``.../evidence.json`` under ``/api/compliance``: the hand's evidence file
  (shared/audit/evidence.py). Every such view or download is first recorded in the access
  log (shared/audit/access.py: who, when, which table, the exact hands it opens, which key);
  no record, no view.
- ``/cards/{card}.svg``: the cards, drawn here; every asset is served by the app itself (no
  CDN), under a Content-Security-Policy that allows this origin only.

The app calls the table service as itself (``token``: a token of its own whose only role is
``relay``: it sees what any spectator sees, so a private table is neither listed nor
watchable here, and its Watch streams are held to a relay's cap rather than a caller's). Its
live streams come from fanout.py: one Watch of the table service per table for all its
spectators, one per seated player for their pages, each fanned out to any number of pages.
Visitors are held to limits of the web's own (limits.py): live streams per visitor (a
signed-in session, else an address) and per process, sign-ins per address and per player,
hand pages per visitor; over one, 429 and a Retry-After. With a Host allow-list
(``WebSettings.hosts``, POKER_WEB_HOSTS) any other Host header is 400 (but ``/healthz``, which
probes ask by the pod's address).

Players sign in with the platform's token (``POST /api/session``; checked by the identity
provider's keys, ``Backend.verify``) and out (``DELETE /api/session``); the session
(sessions.py: in the POKER_WEB_SESSIONS bucket, shared by the web's processes; the cookie
names a random id) keeps the token and, per table, the seat and its seat token, which the web
makes and never sends to the page. A signed-in player sits down (``/api/tables/{id}/sit``),
follows the table with their own cards and legal actions (the seated Watch), acts
(``/api/tables/{id}/act``) and leaves (``/api/tables/{id}/leave``): seats.py. Every call goes
to the table service with the player's token, so the table service's own rules decide, and
its refusal comes back as the matching HTTP status. A seat whose token the session does not
hold (a new sign-in, another device) is taken back with ``ResumeSeat``. POSTs must be JSON
from this origin (no other site can send them) and small (``MAX_BODY``).
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from starlette.applications import Starlette
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from shared.audit.access import AccessNotRecorded
from shared.infra.eventstore import Stored
from shared.infra.identity import COMPLIANCE, Principal
from shared.infra.protomap import GAME, STRUCTURE
from shared.infra.secrecy import ComplianceKeyring
from shared.infra.tablecache import TableCache

from .compliance import Replays, compliance_body, replay_link
from .fanout import LINGER_S, QUEUE, Fanout
from .hands import HandPages, NotShown
from .limits import (
    STREAMS_PER_PROCESS,
    STREAMS_PER_VISITOR,
    Rates,
    StreamLimits,
    TooManyStreams,
    WebSettings,
)
from .receipts import receipt_route
from .replies import HEADERS, MAX_BODY, Refused, refused
from .seats import Seats, table_id_of, view_json
from .sessions import MemoryKV, Sessions, SessionStore, visitor
from .table_page import LOBBY_FILTERS, SIGN_IN, TablePages
from .tournaments import tournament_routes
from .words import view_words

__all__ = ["MAX_BODY", "Backend", "HandRates", "NotShown", "Refused", "create_app",
           "view_json"]

STATIC = Path(__file__).parent / "static"
#: how often the lobby looks at the log's tables again
LOBBY_EVERY_S = 2.0
#: a card as the views write it ("Ah", "Td"); "??" is a card nobody may see
CARD = re.compile(r"(?:[2-9TJQKA][cdhs]|\?\?)")
SUITS = {"c": ("♣", "#1b5e20"), "d": ("♦", "#0d47a1"), "h": ("♥", "#b71c1c"),
         "s": ("♠", "#212121")}


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
    #: the sessions (sessions.SessionStore over the POKER_WEB_SESSIONS bucket); None: kept in
    #: this process only (a MemoryKV: tests, one process)
    sessions: SessionStore | None = None
    #: a table's commits after a stream sequence (EventStore.read); None: ``read``, filtered
    read_after: Callable[[str, int], Awaitable[list[Stored]]] | None = None
    #: a player's wallet balance (the wallet's Balance); None: the pages show none
    balance: Callable[[str], Awaitable[int]] | None = None
    tournaments: object = None  # the director's stub (tournaments.py); None: no director


class HostAllowList:
    """Starlette's TrustedHostMiddleware (400 for a Host not in ``hosts``) for every path but
    ``/healthz``, which a probe asks by the pod's own address."""

    def __init__(self, app: ASGIApp, hosts: Sequence[str]) -> None:
        self.app = app
        self.checked = TrustedHostMiddleware(app, allowed_hosts=list(hosts), www_redirect=False)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path") == "/healthz":
            await self.app(scope, receive, send)
            return
        await self.checked(scope, receive, send)


def lobby_row(view: table_pb2.TableView) -> dict:
    game = GAME.from_pb(view.game).value if view.game else ""
    return {"table_id": view.table_id, "game": game,
            "structure": STRUCTURE.from_pb(view.structure).value if view.structure else "",
            "stakes": view.stakes, "seats_taken": len(view.seats),
            "max_seats": view.max_seats, "hand_no": view.hand_no, "phase": view.phase,
            "paused": view.paused, "closing": view.closing,
            "phase_words": view_words(view, game), "min_buy_in": view.min_buy_in,
            "max_buy_in": view.max_buy_in}


#: the lobby's hands per hour are measured over at least this long
RATE_AFTER_S = 60.0
#: and a table the lobby has not listed for this long is forgotten (a rate spans minutes)
RATES_IDLE_S = 3600.0


class HandRates:
    """Hands per hour of each table, as this process has seen its hand numbers move (from the
    first time it looked: None until it has looked for RATE_AFTER_S), a whole number.
    Per-table state that forgets (shared/infra/tablecache.py): a table the lobby has not
    listed for :data:`RATES_IDLE_S`, or past POKER_CACHE_TABLES, is measured again from its
    next look."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._first: TableCache[tuple[float, int]] = TableCache(
            "web hand rates", monotonic=clock, released=False, idle_s=RATES_IDLE_S)

    def rate(self, table_id: str, hand_no: int) -> float | None:
        now = self.clock()
        at, first = self._first.setdefault(table_id, lambda: (now, hand_no))
        if now - at < RATE_AFTER_S:
            return None
        return round((hand_no - first) * 3600 / (now - at))


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


def _page(title: str, body: str, *scripts: str) -> HTMLResponse:
    """A page: ``body``, then cards.js (the cards, shared by the pages) and ``scripts``."""
    tags = "".join(f'<script src="/static/{name}"></script>'
                   for name in ("cards.js", *scripts))
    return HTMLResponse(
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title>"
        '<link rel=stylesheet href="/static/style.css"></head>'
        f"<body>{body}{tags}</body></html>", headers=HEADERS)


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
               linger_s: float = LINGER_S, settings: WebSettings | None = None) -> Starlette:
    """The pages over ``backend``. The live streams' limits (limits.py) and the fan-out's
    queue per page and linger (fanout.py) have sane defaults; tests set small ones;
    ``settings``: the deployment's (the Host allow-list, the Secure cookie, the rates). The
    app's ``state`` holds ``fanout``, ``limits``, ``sessions`` and ``hands``."""
    settings = settings or WebSettings()
    sessions = Sessions(backend.sessions or SessionStore(MemoryKV()), backend.verify, settings)
    fanout = Fanout(backend.stub.Watch, table_event, stream_queue, linger_s)
    seats = Seats(backend.stub, sessions, fanout, backend.own)
    limits = StreamLimits(streams_per_visitor, streams_per_process)
    hands = HandPages(backend.read, backend.read_after)
    hand_pages = Rates(*settings.hand_pages_per_visitor, "hand pages from you")
    replays = Replays(backend.read, backend.keyring, backend.record_access)
    rates = HandRates()
    table = TablePages(hands, sessions, seats, backend.balance,
                       lambda title, body: _page(title, body, "session.js", "table.js"))
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

    def too_many(exc: TooManyStreams) -> Response:
        return refused(Refused(429, str(exc), exc.retry_after_s))

    async def lobby(request: Request) -> Response:
        return _page("Poker tables", "<h1>Tables</h1>" + SIGN_IN +
                     '<p><a href="/tournaments">tournaments</a></p>' + LOBBY_FILTERS +
                     "<div class=scroll><table id=lobby><thead><tr>"
                     "<th>table</th><th>game</th><th>structure</th><th>stakes</th>"
                     "<th>buy-in</th><th>seats</th><th>hand</th><th>hands/hour</th>"
                     "<th>now</th></tr></thead><tbody></tbody></table></div>",
                     "session.js", "lobby.js")

    async def tables(request: Request) -> Response:
        return JSONResponse(await current_lobby(), headers=HEADERS)

    async def lobby_events(request: Request) -> Response:
        try:
            release = limits.take(await sessions.visitor_of(request))
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

    async def table_events(request: Request) -> Response:
        try:
            table_id = table_id_of(request)
            session = await sessions.of(request)
        except Refused as exc:
            return refused(exc)
        try:
            release = limits.take(visitor(request, session))
        except TooManyStreams as exc:
            return too_many(exc)
        # A table whose spectators this process follows is there and public: a page that
        # connects again is served from the fan-out's latest view, asking nothing upstream.
        # Else the log, read at the visitor's own rate: no Watch of a table not there.
        seen = fanout.spectators_view(table_id)
        try:
            if seen is None:
                await table.visited(request, table_id)
        except Refused as exc:
            release()
            return refused(exc)
        try:
            subscriber = await seats.follow(table_id, session, seen)
        except BaseException as exc:
            release()
            if isinstance(exc, (grpc.aio.AioRpcError, Refused)):
                return refused(exc)
            raise
        return EventStream(seats.events_of(subscriber, session, table_id),
                           [subscriber.close, release])

    async def hand_of(request: Request):
        """The request's hand rendered (hands.py), or the refusal to send."""
        try:
            table_id = table_id_of(request)
            hand_no = request.path_params["hand_no"]
            if not 1 <= hand_no <= 10**12:
                raise Refused(400, "a hand number is a whole number from 1")
            hand_pages.take(await sessions.visitor_of(request))
            return await hands.get(table_id, hand_no)
        except Refused as exc:
            return refused(exc)
        except NotShown as exc:
            return refused(Refused(exc.status, str(exc)))

    async def hand_page(request: Request) -> Response:
        hand = await hand_of(request)
        if isinstance(hand, Response):
            return hand
        try:  # the compliance role is shown the way to the replay; nobody else
            session = await sessions.of(request)
        except Refused:
            session = None
        link = replay_link(hand.table_id, hand.hand_no) \
            if session is not None and session.principal.has(COMPLIANCE) else ""
        return _page(f"Table {hand.table_id}, hand {hand.hand_no}", hand.page + link,
                     "hand.js", "receipt.js")

    async def hand_json(request: Request) -> Response:
        hand = await hand_of(request)
        if isinstance(hand, Response):
            return hand
        return Response(hand.json, media_type="application/json", headers=HEADERS)

    async def hand_text(request: Request) -> Response:
        hand = await hand_of(request)
        if isinstance(hand, Response):
            return hand
        return _download(hand.text, f"{hand.table_id}-{hand.hand_no}.txt", "text/plain")

    async def hand_phh(request: Request) -> Response:
        hand = await hand_of(request)
        if isinstance(hand, Response):
            return hand
        return _download(hand.phh, f"{hand.table_id}-{hand.hand_no}.phh", "application/toml")

    async def compliance_of(request: Request, evidence: bool = False):
        """The replay (or the evidence file) of the request's hand for a compliance
        session, recorded in the access log first; else the refusal to send."""
        try:
            table_id = table_id_of(request)
            session = await sessions.of(request)
            if session is None or not session.principal.has(COMPLIANCE):
                raise Refused(403, "the compliance replay is for the compliance role: sign in "
                                   "with a token that has it")
            how = replays.evidence if evidence else replays.replay
            return await how(table_id, request.path_params["hand_no"],
                             f"{session.subject} (web)")
        except Refused as exc:
            return refused(exc)
        except AccessNotRecorded as exc:
            return refused(Refused(503, str(exc)))

    async def compliance_json(request: Request) -> Response:
        view = await compliance_of(request)
        return view if isinstance(view, Response) else JSONResponse(view, headers=HEADERS)

    async def evidence_file(request: Request) -> Response:
        data = await compliance_of(request, evidence=True)
        if isinstance(data, Response):
            return data
        name = f"{request.path_params['table_id']}-{request.path_params['hand_no']}-evidence.json"
        return _download(data, name, "application/json")

    async def compliance_page(request: Request) -> Response:
        try:
            table_id = table_id_of(request)
        except Refused as exc:
            return refused(exc)
        n = request.path_params["hand_no"]
        return _page(f"Compliance replay {table_id} {n}", compliance_body(table_id, n),
                     "hand.js")

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
        Route("/api/session", sessions.sign_in, methods=["POST"]),
        Route("/api/session", sessions.whoami, methods=["GET"]),
        Route("/api/session", sessions.sign_out, methods=["DELETE"]),
        Route("/api/tables/{table_id}/sit", seats.sit, methods=["POST"]),
        Route("/api/tables/{table_id}/act", seats.act, methods=["POST"]),
        Route("/api/tables/{table_id}/leave", seats.leave, methods=["POST"]),
        Route("/api/lobby/events", lobby_events),
        Route("/table/{table_id}", table.page),
        *table.routes(),
        Route("/api/tables/{table_id}/events", table_events),
        Route("/table/{table_id}/hands/{hand_no:int}", hand_page),
        Route("/api/tables/{table_id}/hands/{hand_no:int}", hand_json),
        Route("/api/tables/{table_id}/hands/{hand_no:int}/pokerstars.txt", hand_text),
        Route("/api/tables/{table_id}/hands/{hand_no:int}/hand.phh", hand_phh),
        receipt_route(backend.stub, sessions),
        Route("/compliance/tables/{table_id}/hands/{hand_no:int}", compliance_page),
        Route("/api/compliance/tables/{table_id}/hands/{hand_no:int}", compliance_json),
        Route("/api/compliance/tables/{table_id}/hands/{hand_no:int}/evidence.json",
              evidence_file),
        Route("/cards/{card}.svg", card_svg),
        *tournament_routes(backend),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])
    if settings.hosts is not None:
        app.add_middleware(HostAllowList, hosts=settings.hosts)
    app.state.fanout, app.state.limits = fanout, limits
    app.state.sessions, app.state.hands = sessions, hands
    return app


def _download(text: str | bytes, name: str, media: str) -> Response:
    return Response(text, media_type=media, headers={
        **HEADERS, "Content-Disposition": f'attachment; filename="{name}"'})


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
