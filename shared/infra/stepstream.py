"""The step stream's server side: ``engine.v1.StepService/Steps``, one generic handler for the
dealer, betting, showdown and rake services.

Each StepRequest on the stream names a call: its id, the method (one of the steps
``shared/poker/steprules.py`` gives the service: :func:`~shared.poker.steprules.calls_of`)
and that method's request. The handler runs the service's own method for it, the same one a
unary call runs (load, decide, append, reply; its errors mapped to statuses by
:func:`~shared.infra.rpc.rpc`), and writes its StepReply with the call's id and status. Calls
run concurrently, in any order; the replies are matched by id.

Bounded: at most :data:`IN_FLIGHT` calls of a stream run at once, and the stream is not read
further meanwhile (gRPC's flow control then holds the caller back); a reply the caller does
not take within :data:`WRITE_TIMEOUT_S` (it stopped reading) ends the stream. Each call has
its deadline (``timeout_ms``, else :data:`STEP_TIMEOUT_S`): past it the call answers
DEADLINE_EXCEEDED (a step that appended meanwhile is in the log, and a retry with its command
id gets its outcome). The caller's identity is checked when the stream opens, by the
server's interceptor, as for a unary call (only the table service's certificate).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import grpc
import structlog
from poker.engine.v1 import step_pb2, step_pb2_grpc

from shared.poker.steprules import calls_of, house_calls, table_step

from . import failpoints, metrics, tablecache
from .rpc import TRACE_HEADER
from .stepcalls import STEP_MESSAGES, house_step, step_call

log = structlog.get_logger()

#: calls of one stream running at once; the stream is not read further meanwhile
IN_FLIGHT = 64
#: a call's deadline when its request names none
STEP_TIMEOUT_S = 10.0
#: how long a reply may wait for the caller to take it before the stream is ended
WRITE_TIMEOUT_S = 10.0
#: the most steps a service takes after one it was asked for (StepRequest.chain)
MAX_CHAIN = 24
#: not a step: the table service saw the table turn vacant, so this service, which did not
#: fold that commit, releases the table from its caches too (shared/infra/tablecache.py)
RELEASE = "Release"


class StepAbort(grpc.aio.AbortError):
    """How a step run on the stream ends with a status (what context.abort does in a unary
    call)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code, self.details = code, details


class StepContext:
    """What a servicer method sees of its call when it runs on the stream: the stream's
    caller (peer, certificate), the step's trace id, and an abort that ends the step only."""

    def __init__(self, stream: Any, trace_id: str) -> None:
        self._stream = stream
        self._metadata = ((TRACE_HEADER, trace_id),) if trace_id else ()
        self.trailers: dict[str, str] = {}
        self._code: grpc.StatusCode | None = None

    def invocation_metadata(self):
        return self._metadata

    def peer(self) -> str:
        return self._stream.peer()

    def auth_context(self):
        return self._stream.auth_context()

    def set_trailing_metadata(self, metadata) -> None:
        self.trailers.update({str(k): str(v) for k, v in metadata})

    def code(self) -> grpc.StatusCode | None:
        return self._code

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        self._code = code
        raise StepAbort(code, details)


def _methods(servicer: Any, owner: str) -> dict[str, tuple[Callable, type]]:
    """The owner's step methods that are not the house's: name -> (the servicer's method,
    its request class)."""
    return {name: (getattr(servicer, name), STEP_MESSAGES.get(name, step_pb2.StepRequest))
            for name in calls_of(owner) - house_calls(owner).keys()}


def _failed(call_id: int, code: grpc.StatusCode, details: str,
            trailers: Mapping[str, str] | None = None) -> step_pb2.StepReply:
    return step_pb2.StepReply(call_id=call_id, code=code.value[0], details=details,
                              trailers=dict(trailers or {}))


class StepStreams(step_pb2_grpc.StepServiceServicer):
    """The Steps handler of one service (``owner``: dealer, betting, showdown or rake)."""

    def __init__(self, servicer: Any, owner: str) -> None:
        self.owner = owner
        self.repo = servicer.repo
        self.methods = _methods(servicer, owner)

    def method(self, name: str) -> tuple[Callable, type] | None:
        """What takes call ``name``: the owner's house step as the map decides it
        (shared/infra/stepcalls.py ``house_step``, read from the map at each call), or the
        servicer's method; None for a call this service does not take."""
        rule = house_calls(self.owner).get(name)
        if rule is not None:
            return house_step(self.repo, rule), step_pb2.StepRequest
        return self.methods.get(name)

    async def Steps(self, requests: AsyncIterator[step_pb2.StepRequest], context) -> None:
        metrics.STEP_STREAMS_SERVED.inc()
        slots = asyncio.Semaphore(IN_FLIGHT)
        writing = asyncio.Lock()
        running: set[asyncio.Task] = set()
        ended: list[BaseException] = []

        async def answer(request: step_pb2.StepRequest) -> None:
            try:
                reply = await self._run(request, context)
                async with writing:
                    await asyncio.wait_for(context.write(reply), WRITE_TIMEOUT_S)
            except (TimeoutError, grpc.aio.AioRpcError, ConnectionError) as exc:
                ended.append(exc)  # the caller stopped reading, or went
                for task in running:
                    task.cancel()
            finally:
                slots.release()

        try:
            async for request in requests:
                if ended:
                    break
                await slots.acquire()
                task = asyncio.create_task(answer(request))
                running.add(task)
                task.add_done_callback(running.discard)
            await asyncio.gather(*running, return_exceptions=True)
        finally:
            for task in running:
                task.cancel()
            metrics.STEP_STREAMS_SERVED.dec()
        if ended:
            log.warning("a step stream's caller stopped taking replies: stream ended",
                        service=self.owner, peer=context.peer())
            await context.abort(grpc.StatusCode.DEADLINE_EXCEEDED,
                                f"replies were not taken within {WRITE_TIMEOUT_S:g} s")

    async def _run(self, request: step_pb2.StepRequest, stream) -> step_pb2.StepReply:
        """One call on the stream: its method run as a unary call would run it."""
        if request.method == RELEASE:
            tablecache.release(request.table_id)
            return step_pb2.StepReply(call_id=request.call_id)
        found = self.method(request.method)
        if found is None:
            return _failed(request.call_id, grpc.StatusCode.UNIMPLEMENTED,
                           f"the {self.owner} service takes no step {request.method!r} "
                           f"(it takes {', '.join(sorted(calls_of(self.owner)))})")
        method, kind = found
        if kind is step_pb2.StepRequest:
            message: Any = request
        else:
            message = kind()
            try:
                message.ParseFromString(request.call)
            except Exception as exc:  # noqa: BLE001 - protobuf's DecodeError
                return _failed(request.call_id, grpc.StatusCode.INVALID_ARGUMENT,
                               f"the call does not parse as {request.method}'s message "
                               f"({type(exc).__name__}: {exc})")
        context = StepContext(stream, request.trace_id)
        timeout = request.timeout_ms / 1000 if request.timeout_ms > 0 else STEP_TIMEOUT_S
        try:
            reply = await asyncio.wait_for(method(message, context), timeout)
        except StepAbort as exc:
            return _failed(request.call_id, exc.code, exc.details, context.trailers)
        except TimeoutError:
            return _failed(request.call_id, grpc.StatusCode.DEADLINE_EXCEEDED,
                           f"the step took longer than {timeout:g} s; retry it with the same "
                           f"command id for its outcome")
        except Exception as exc:  # noqa: BLE001 - answered, as the unary call's INTERNAL
            log.exception("a step failed", service=self.owner, method=request.method,
                          table_id=request.table_id)
            return _failed(request.call_id, grpc.StatusCode.INTERNAL,
                           f"the {self.owner} service failed on {request.method} "
                           f"({type(exc).__name__}); retry it with the same command id")
        step = getattr(message, "step", message)
        if step.chain and not reply.duplicate:
            try:
                await asyncio.wait_for(self._chain(step, reply, stream), timeout)
            except TimeoutError:
                pass  # what was taken is in the reply; the table service takes the rest
        failpoints.hit("steps.before_reply")  # (tests: applied, its reply not yet sent)
        reply.call_id = request.call_id
        return reply

    async def _chain(self, asked: step_pb2.StepRequest, reply: step_pb2.StepReply,
                     stream) -> None:
        """Take the table's next automated steps while they are this service's own, each as
        the table service would ask for it (shared/infra/stepcalls.py step_call: its command id
        the same, so a retry of one is answered as a duplicate), into ``reply.chained``."""
        version = reply.version
        for _ in range(MAX_CHAIN):
            lt = self.repo.cached(asked.table_id)
            if lt is None or lt.state is None or lt.seq != version:
                return  # the fold moved or went: the table service carries on
            step = table_step(lt.state)
            call = step_call(asked.table_id, version, lt.state, step) if step else None
            if call is None or call[0] != self.owner:
                return
            _, name, message = call
            found = self.method(name)
            if found is None:
                return
            inner = getattr(message, "step", message)
            inner.now_unix_ms = asked.now_unix_ms
            try:
                taken = await found[0](message, StepContext(stream, asked.trace_id))
            except StepAbort:
                return  # the table service asks for it and hears why
            reply.chained.append(taken)
            version = taken.version


def serve_steps(server: grpc.aio.Server, servicer: Any, owner: str) -> None:
    """Add the Steps stream of ``servicer`` (service ``owner``: its steps are its only way
    in, no unary call takes one) to ``server``."""
    step_pb2_grpc.add_StepServiceServicer_to_server(StepStreams(servicer, owner), server)
