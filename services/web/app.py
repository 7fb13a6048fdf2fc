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

from shared.infra.protomap import GAME, STRUCTURE
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
                '<p><a href="/">lobby</a></p>')
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
