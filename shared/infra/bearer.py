"""The client side of identity: ``authorization: Bearer <token>`` on a call
(:func:`bearer_metadata`) or on every call of a channel (:func:`bearer`'s interceptors)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import grpc
import structlog

from .identity import AUTHORIZATION, B64TOKEN

log = structlog.get_logger()


class _Bearer:
    def __init__(self, supply: Callable[[], Any]) -> None:
        self._supply = supply

    async def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        token = self._supply()
        if inspect.isawaitable(token):
            token = await token
        kept = [(k, v) for k, v in (details.metadata or ()) if k.lower() != AUTHORIZATION]
        metadata = grpc.aio.Metadata(*kept, *bearer_metadata(token))
        return details._replace(metadata=metadata)


class _BearerUnaryUnary(_Bearer, grpc.aio.UnaryUnaryClientInterceptor):
    async def intercept_unary_unary(self, continuation, client_call_details, request):
        return await continuation(await self._details(client_call_details), request)


class _BearerUnaryStream(_Bearer, grpc.aio.UnaryStreamClientInterceptor):
    async def intercept_unary_stream(self, continuation, client_call_details, request):
        return await continuation(await self._details(client_call_details), request)


class _BearerStreamUnary(_Bearer, grpc.aio.StreamUnaryClientInterceptor):
    async def intercept_stream_unary(self, continuation, client_call_details,
                                     request_iterator):
        return await continuation(await self._details(client_call_details), request_iterator)


class _BearerStreamStream(_Bearer, grpc.aio.StreamStreamClientInterceptor):
    async def intercept_stream_stream(self, continuation, client_call_details,
                                      request_iterator):
        return await continuation(await self._details(client_call_details), request_iterator)


def _checked(token: object) -> str:
    if not isinstance(token, str) or not B64TOKEN.fullmatch(token):
        raise ValueError("a bearer token is a non-empty string of letters, digits and "
                         "'-._~+/' (a JWT)")
    return token


def bearer_metadata(token: object) -> tuple[tuple[str, str]]:
    """One call's metadata entry carrying ``token``: ``authorization: Bearer <token>`` (for a
    call made without :func:`bearer`'s interceptors on the channel). ValueError for a value
    that is not a token."""
    return ((AUTHORIZATION, f"Bearer {_checked(token)}"),)


def bearer(token_or_supplier: str | Callable[[], Any]) -> list[grpc.aio.ClientInterceptor]:
    """Client interceptors (every kind of call: unary and streaming) that put
    ``authorization: Bearer <token>`` in each call's metadata, replacing one already there.
    ``token_or_supplier``: the token, or a function (plain or async) called before each call
    that returns the current one (so a client can refresh a token before it expires). Pass
    them as ``interceptors=`` when making the channel."""
    if callable(token_or_supplier):
        supply = token_or_supplier
    else:
        fixed = _checked(token_or_supplier)

        def supply() -> str:
            return fixed
    return [_BearerUnaryUnary(supply), _BearerUnaryStream(supply),
            _BearerStreamUnary(supply), _BearerStreamStream(supply)]
