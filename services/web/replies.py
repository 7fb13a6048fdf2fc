"""What every page and API of the web shares: the security headers, a refusal with its HTTP
status, the refusal as a JSON reply (429s with their Retry-After), and the checked JSON body
of a POST (same origin, JSON, at most MAX_BODY bytes)."""

from __future__ import annotations

import json
import math

import grpc
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

HEADERS = {
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; style-src 'self'; "
                               "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
#: the most bytes a POST may carry
MAX_BODY = 4096
#: a refusal of the table service as the page's HTTP status
HTTP_STATUS = {grpc.StatusCode.INVALID_ARGUMENT: 400, grpc.StatusCode.UNAUTHENTICATED: 401,
               grpc.StatusCode.PERMISSION_DENIED: 403, grpc.StatusCode.NOT_FOUND: 404,
               grpc.StatusCode.FAILED_PRECONDITION: 409, grpc.StatusCode.ALREADY_EXISTS: 409,
               grpc.StatusCode.RESOURCE_EXHAUSTED: 429, grpc.StatusCode.UNAVAILABLE: 503,
               grpc.StatusCode.DEADLINE_EXCEEDED: 504}


class Refused(Exception):
    """A request the pages refuse: the HTTP status and a message a person can act on
    (``retry_after_s``: a 429's or 503's wait, sent as Retry-After)."""

    def __init__(self, status: int, why: str, retry_after_s: float | None = None) -> None:
        super().__init__(why)
        self.status = status
        self.retry_after_s = retry_after_s


def refused(exc: Exception) -> Response:
    """A refusal (:class:`Refused`, or the table service's) as the page's JSON reply."""
    if isinstance(exc, Refused):
        headers = dict(HEADERS)
        if exc.retry_after_s is not None:
            headers["Retry-After"] = str(max(1, math.ceil(exc.retry_after_s)))
        return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=headers)
    assert isinstance(exc, grpc.aio.AioRpcError)
    return JSONResponse({"error": exc.details() or exc.code().name},
                        status_code=HTTP_STATUS.get(exc.code(), 502), headers=HEADERS)


def same_origin(request: Request) -> None:
    """Refused (403) when the request says it comes from another site's page."""
    origin = request.headers.get("origin")
    if origin is not None and origin != f"{request.url.scheme}://{request.url.netloc}":
        raise Refused(403, "requests come from this site's own pages only")


async def body_of(request: Request) -> dict:
    """A POST's JSON object: from this origin, at most MAX_BODY bytes."""
    same_origin(request)
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
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


def whole(body: dict, key: str, least: int = 1) -> int:
    """``body[key]``, a whole number from ``least`` (at most 10**12), or Refused (400)."""
    value = body.get(key)
    if type(value) is not int or not least <= value <= 10**12:
        raise Refused(400, f"{key} is a whole number from {least}")
    return value


def address_of(request: Request) -> str:
    """The client's address (uvicorn's: the proxy's X-Forwarded-For from a trusted proxy)."""
    return request.client.host if request.client else ""
