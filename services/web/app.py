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

The app is put together here from its modules: the lobby (lobby.py), the table page and its
live stream (table_page.py), the hands and the compliance replay (hand_routes.py), the seats
(seats.py), the sessions (sessions.py), receipts, tournaments, and what every page shares
(pages.py: a page rendered from its template, server-sent events, the cards, ``/healthz``,
the Host allow-list). Each page is a Jinja2 template of templates/ (base.html: what every
page shares), rendered through Starlette's Jinja2Templates with every value escaped.

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

import contextlib
from collections.abc import AsyncIterator

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from .backend import Backend
from .compliance import Replays
from .fanout import LINGER_S, QUEUE, Fanout
from .hand_routes import HandRoutes
from .hands import HandPages, NotShown
from .limits import STREAMS_PER_PROCESS, STREAMS_PER_VISITOR, Rates, StreamLimits, WebSettings
from .lobby import HandRates, Lobby
from .pages import STATIC, HostAllowList, shared_routes, table_event
from .receipts import receipt_route
from .replies import MAX_BODY, Refused
from .seats import Seats, view_json
from .sessions import MemoryKV, Sessions, SessionStore
from .table_page import TablePages
from .tournaments import tournament_routes

__all__ = ["MAX_BODY", "Backend", "HandRates", "NotShown", "Refused", "create_app",
           "view_json"]


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
    hand_routes = HandRoutes(
        hands, Rates(*settings.hand_pages_per_visitor, "hand pages from you"), sessions,
        Replays(backend.read, backend.keyring, backend.record_access))
    table = TablePages(hands, sessions, seats, backend.balance, limits)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await fanout.close()

    app = Starlette(lifespan=lifespan, routes=[
        *Lobby(backend, sessions, limits).routes(),
        *shared_routes(),
        Route("/api/session", sessions.sign_in, methods=["POST"]),
        Route("/api/session", sessions.whoami, methods=["GET"]),
        Route("/api/session", sessions.sign_out, methods=["DELETE"]),
        Route("/api/tables/{table_id}/sit", seats.sit, methods=["POST"]),
        Route("/api/tables/{table_id}/act", seats.act, methods=["POST"]),
        Route("/api/tables/{table_id}/leave", seats.leave, methods=["POST"]),
        *table.routes(),
        *hand_routes.routes(),
        receipt_route(backend.stub, sessions),
        *hand_routes.compliance_routes(),
        *tournament_routes(backend),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])
    if settings.hosts is not None:
        app.add_middleware(HostAllowList, hosts=settings.hosts)
    app.state.fanout, app.state.limits = fanout, limits
    app.state.sessions, app.state.hands = sessions, hands
    return app
