"""What every page of the web shares: a page rendered from its template (templates/: Jinja2
through Starlette's Jinja2Templates; base.html is what every page shares, its scripts served
by the app itself), server-sent events and the response that streams them, downloads, the
cards drawn as SVG, ``/healthz``, and the Host allow-list."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path

import jinja2
from poker.table.v1 import table_pb2
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Receive, Scope, Send

from .limits import TooManyStreams
from .replies import HEADERS, Refused, refused
from .seats import view_json

STATIC = Path(__file__).parent / "static"
#: a card as the views write it ("Ah", "Td"); "??" is a card nobody may see
CARD = re.compile(r"(?:[2-9TJQKA][cdhs]|\?\?)")
SUITS = {"c": ("♣", "#1b5e20"), "d": ("♦", "#0d47a1"), "h": ("♥", "#b71c1c"),
         "s": ("♠", "#212121")}

TEMPLATES = Path(__file__).parent / "templates"
#: the pages' templates: every value a page is given is escaped (autoescape for every
#: template, whatever its name), and a value a template names but is not given is an error
#: (StrictUndefined), never an empty string; read once (no check of the files per request);
#: a line holding only a tag leaves nothing in the page
templates = Jinja2Templates(env=jinja2.Environment(
    loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
    undefined=jinja2.StrictUndefined, auto_reload=False, trim_blocks=True,
    lstrip_blocks=True))


def page(request: Request, name: str, status: int = 200, **values: object) -> Response:
    """The page of template ``name`` (templates/) given ``values``, with the security
    headers."""
    return templates.TemplateResponse(request, name, values, status_code=status,
                                      headers=HEADERS)


def sse(data: dict) -> bytes:
    """``data`` as one server-sent event."""
    return f"data: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def table_event(view: table_pb2.TableView, you: int) -> bytes:
    """A table view as the page's server-sent event, seen from seat ``you`` (0: a
    spectator)."""
    return sse({**view_json(view), "you": you})


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


def too_many(exc: TooManyStreams) -> Response:
    """A stream refused by the web's limits: 429 with its Retry-After."""
    return refused(Refused(429, str(exc), exc.retry_after_s))


def download(text: str | bytes, name: str, media: str) -> Response:
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


async def card_svg(request: Request) -> Response:
    code = request.path_params["card"]
    if not CARD.fullmatch(code):
        return Response("no such card", status_code=404, headers=HEADERS)
    return Response(card_svg_text(code), media_type="image/svg+xml",
                    headers={**HEADERS, "Cache-Control": "public, max-age=86400"})


async def healthz(request: Request) -> Response:
    return JSONResponse({"ok": True}, headers=HEADERS)


def shared_routes() -> list[Route]:
    """``/healthz`` and the cards."""
    return [Route("/healthz", healthz), Route("/cards/{card}.svg", card_svg)]


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
