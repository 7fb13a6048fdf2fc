"""A gRPC method handler with a check before its method runs: what the access rules
(shared/infra/identity.py) and the request checks (shared/infra/rpc.py) wrap handlers with.
It imports neither, so neither imports the other for it."""

from __future__ import annotations

import asyncio
import inspect

import grpc

#: how long the check of a client stream waits for the caller's first message: a refusal sent
#: while the caller writes could end the stream INTERNAL instead, and a refused caller that
#: opens a stream and never writes hears its refusal after this instead of holding the stream
FIRST_MESSAGE_S = 1.0


def guarded(handler: grpc.RpcMethodHandler, check) -> grpc.RpcMethodHandler:
    """``handler`` with ``await check(request, context)`` before its method runs (``check``
    aborts the call to refuse it); the request is None for a client stream."""
    kind = ("stream_" if handler.request_streaming else "unary_") + \
        ("stream" if handler.response_streaming else "unary")
    inner = getattr(handler, kind)
    if inspect.isasyncgenfunction(inner):
        async def replies(request, context):
            await check(None if handler.request_streaming else request, context)
            async for reply in inner(request, context):
                yield reply
        return handler._replace(**{kind: replies})

    async def method(request, context):  # a coroutine (streamed replies go through context.write)
        first = None
        if handler.request_streaming:  # the caller's first message (or FIRST_MESSAGE_S)
            request, first = await _first_then(request)
        try:
            await check(None if handler.request_streaming else request, context)
        except BaseException:
            if first is not None:
                first.cancel()
            raise
        return await inner(request, context)
    return handler._replace(**{kind: method})


async def _first_then(requests) -> tuple:
    """A client stream as an iterator of all its messages, once its first message has
    arrived, the stream ended, or :data:`FIRST_MESSAGE_S` went by; with the wait for that
    first message (to cancel if the caller is refused)."""
    iterator = requests.__aiter__()
    first = asyncio.ensure_future(iterator.__anext__())
    # (its outcome counts as seen even if the method never reads the stream)
    first.add_done_callback(lambda t: t.cancelled() or t.exception())
    await asyncio.wait((first,), timeout=FIRST_MESSAGE_S)

    async def chained():
        try:
            request = await first
        except StopAsyncIteration:
            return
        yield request
        async for request in iterator:
            yield request
    return chained(), first
