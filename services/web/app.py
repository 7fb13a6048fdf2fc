"""The web pages (issue 14, first part): the lobby and a table to watch, served by an ASGI app
(Starlette) that is a client of the table service and of the log, never a second source of
truth.

- ``/``: the lobby, the log's tables (their public views: game, structure, seats taken, the
  hand), followed live over server-sent events (``/api/lobby/events``).
- ``/table/{id}``: the felt of one table as a spectator sees it (seats, stacks, bets, pots,
  board, the button, the player on turn and the action clock), followed live: the page's
  ``/api/tables/{id}/events`` stream is the table service's Watch, one view per commit. A
  spectator's view has no hole card before the showdown: the table service never puts one
  in it, and the web service holds no seat token.
- ``/table/{id}/hands/{n}``: a hand that is over, step by step (``hand.js`` replays it from the
  JSON of ``/api/tables/{id}/hands/{n}``), with its PokerStars text and PHH to download
  (``.../pokerstars.txt``, ``.../hand.phh``). Read from the log without a key, so the cards
  nobody saw read ``??`` (the compliance replay, with the key, is for the compliance role);
  a private table's hands are not shown.
- ``/cards/{card}.svg``: the cards, drawn here; every asset is served by the app itself (no
  CDN), under a Content-Security-Policy that allows this origin only.

The app calls the table service as itself (``token``: a token of its own, with no role), so a
private table is neither listed nor watchable here.
"""

from __future__ import annotations

import asyncio
import html
import json
import re
from collections.abc import AsyncIterator, Awaitable, Callable
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

from shared.history import phh, pokerstars, to_json
from shared.history.log import table_hands
from shared.history.record import HandRecord
from shared.infra.eventstore import Stored
from shared.infra.protomap import GAME, STRUCTURE
from shared.infra.repository import CorruptLog
from shared.poker.table import TABLE_ID

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
            "seats_taken": len(view.seats), "hand_no": view.hand_no, "phase": view.phase,
            "paused": view.paused, "closing": view.closing}


async def lobby_rows(backend: Backend) -> list[dict]:
    """The public tables of the log, as the table service shows them to a spectator."""
    rows = []
    for table_id in await backend.table_ids():
        try:
            view = await backend.stub.GetState(table_pb2.ViewRequest(table_id=table_id),
                                               timeout=5)
        except grpc.aio.AioRpcError:
            continue  # private (refused to a spectator), stopped, or away: not listed
        rows.append(lobby_row(view))
    return rows


def _page(title: str, body: str, script: str) -> HTMLResponse:
    return HTMLResponse(
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        f"<title>{html.escape(title)}</title>"
        '<link rel=stylesheet href="/static/style.css"></head>'
        f"<body>{body}<script src=\"/static/{script}\"></script></body></html>",
        headers=HEADERS)


def _sse(data: dict) -> bytes:
    return f"data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def create_app(backend: Backend) -> Starlette:
    async def lobby(request: Request) -> Response:
        return _page("Poker tables", "<h1>Tables</h1><table id=lobby><thead><tr>"
                     "<th>table</th><th>game</th><th>structure</th><th>seats</th>"
                     "<th>hand</th><th>phase</th></tr></thead><tbody></tbody></table>",
                     "lobby.js")

    async def tables(request: Request) -> Response:
        return JSONResponse(await lobby_rows(backend), headers=HEADERS)

    async def lobby_events(request: Request) -> Response:
        async def stream() -> AsyncIterator[bytes]:
            last = None
            while True:
                rows = await lobby_rows(backend)
                if rows != last:
                    last = rows
                    yield _sse({"tables": rows})
                await asyncio.sleep(LOBBY_EVERY_S)  # the lobby's refresh period
        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={**HEADERS, "Cache-Control": "no-store"})

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
                '<p><a id=last-hand></a></p><p><a href="/">lobby</a></p>')
        return _page(f"Table {table_id}", body, "table.js")

    async def table_events(request: Request) -> Response:
        table_id = _table_id(request)
        if isinstance(table_id, Response):
            return table_id
        try:
            first = await backend.stub.GetState(table_pb2.ViewRequest(table_id=table_id),
                                                timeout=5)
        except grpc.aio.AioRpcError as exc:
            code = {grpc.StatusCode.NOT_FOUND: 404, grpc.StatusCode.PERMISSION_DENIED: 403,
                    grpc.StatusCode.INVALID_ARGUMENT: 400}.get(exc.code(), 503)
            return JSONResponse({"error": exc.details()}, status_code=code, headers=HEADERS)

        async def stream() -> AsyncIterator[bytes]:
            yield _sse(view_json(first))
            call = backend.stub.Watch(table_pb2.ViewRequest(table_id=table_id))
            try:
                async for view in call:
                    yield _sse(view_json(view))
            finally:
                call.cancel()
        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={**HEADERS, "Cache-Control": "no-store"})

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

    async def card_svg(request: Request) -> Response:
        code = request.path_params["card"]
        if not CARD.fullmatch(code):
            return Response("no such card", status_code=404, headers=HEADERS)
        return Response(card_svg_text(code), media_type="image/svg+xml",
                        headers={**HEADERS, "Cache-Control": "public, max-age=86400"})

    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True}, headers=HEADERS)

    return Starlette(routes=[
        Route("/", lobby),
        Route("/healthz", healthz),
        Route("/api/tables", tables),
        Route("/api/lobby/events", lobby_events),
        Route("/table/{table_id}", table_page),
        Route("/api/tables/{table_id}/events", table_events),
        Route("/table/{table_id}/hands/{hand_no:int}", hand_page),
        Route("/api/tables/{table_id}/hands/{hand_no:int}", hand_json),
        Route("/api/tables/{table_id}/hands/{hand_no:int}/pokerstars.txt", hand_text),
        Route("/api/tables/{table_id}/hands/{hand_no:int}/hand.phh", hand_phh),
        Route("/cards/{card}.svg", card_svg),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ])


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
