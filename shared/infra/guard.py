"""A gRPC method handler with a check before its method runs: what the access rules
(shared/infra/identity.py) and the request checks (shared/infra/rpc.py) wrap handlers with.
It imports neither, so neither imports the other for it."""

from __future__ import annotations

import inspect

import grpc


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
        if handler.request_streaming:  # the caller's first message before the check: a
            # refusal sent while the caller writes could end the stream INTERNAL instead
            request = await _first_then(request)
        await check(None if handler.request_streaming else request, context)
        return await inner(request, context)
    return handler._replace(**{kind: method})


async def _first_then(requests):
    """A client stream whose first message has arrived (or which ended without one), as
    an iterator of all its messages."""
    iterator = requests.__aiter__()
    try:
        first = await iterator.__anext__()
    except StopAsyncIteration:
        return iterator

    async def chained():
        yield first
        async for request in iterator:
            yield request
    return chained()
