"""gRPC helpers shared by the services: error mapping, request checks, serving, shutdown.

A servicer method reads top to bottom: check the request, bind log context, load, decide,
append, reply. Errors map to statuses in one place:
IllegalAction -> FAILED_PRECONDITION, bad arguments -> INVALID_ARGUMENT, unknown table ->
NOT_FOUND, wrong or missing seat token -> PERMISSION_DENIED, lost append races -> ABORTED,
the log unreachable -> UNAVAILABLE, a log that does not fold -> DATA_LOSS.
"""

from __future__ import annotations

import asyncio
import functools
import re
import signal
import time
import uuid
from collections.abc import Awaitable, Callable

import grpc
import nats.errors
import nats.js.errors
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from shared.poker.deck import EntropyUnavailable
from shared.poker.errors import IllegalAction, InvalidOptions

from . import metrics
from .eventstore import StoreError
from .repository import Aborted, CommandReused, CorruptLog, UnknownTable

log = structlog.get_logger()

COMMAND_ID = re.compile(r"[A-Za-z0-9_.:@/-]{1,128}")
TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class BadRequest(ValueError):
    """A malformed request: INVALID_ARGUMENT."""


class Denied(PermissionError):
    """A missing or wrong seat token: PERMISSION_DENIED."""


_STATUS: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (BadRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidOptions, grpc.StatusCode.INVALID_ARGUMENT),
    (CommandReused, grpc.StatusCode.INVALID_ARGUMENT),
    (Denied, grpc.StatusCode.PERMISSION_DENIED),
    (UnknownTable, grpc.StatusCode.NOT_FOUND),
    (IllegalAction, grpc.StatusCode.FAILED_PRECONDITION),
    (Aborted, grpc.StatusCode.ABORTED),
    (CorruptLog, grpc.StatusCode.DATA_LOSS),
    (EntropyUnavailable, grpc.StatusCode.UNAVAILABLE),
    (StoreError, grpc.StatusCode.UNAVAILABLE),
    # the log between leaders (a node killed, an election): no answer yet, so retry with the
    # same command id; an append that did land is recognised by its message id or the fold
    (nats.js.errors.NoStreamResponseError, grpc.StatusCode.UNAVAILABLE),
    (nats.errors.NoRespondersError, grpc.StatusCode.UNAVAILABLE),
    (nats.errors.TimeoutError, grpc.StatusCode.UNAVAILABLE),
)


def status_for(exc: BaseException) -> grpc.StatusCode | None:
    for kind, code in _STATUS:
        if isinstance(exc, kind):
            return code
    return None


def rpc(method: Callable[..., Awaitable]) -> Callable[..., Awaitable]:
    """Wrap a servicer method: log context from the request, domain errors to statuses."""

    @functools.wraps(method)
    async def wrapper(self, request, context):
        structlog.contextvars.clear_contextvars()
        step = getattr(request, "step", None) or request
        seat = getattr(request, "seat", 0)
        if not isinstance(seat, int):  # SitOut nests its seat request
            step, seat = seat, seat.seat
        structlog.contextvars.bind_contextvars(
            rpc=method.__name__, table_id=getattr(step, "table_id", ""),
            hand_no=getattr(step, "hand_no", 0), seat=seat, trace_id=trace_id_of(context))
        started, outcome = time.perf_counter(), "OK"
        try:
            return await method(self, request, context)
        except Exception as exc:  # mapped below, or re-raised as INTERNAL
            code = status_for(exc)
            outcome = code.name if code is not None else _aborted_with(context, exc)
            if code is None:
                log.exception("rpc failed")
                raise
            message = getattr(exc, "reason", None) or str(exc)
            log.info("rpc refused", code=code.name, reason=message)
            await context.abort(code, message)
        finally:
            metrics.record_rpc(type(self).__name__, method.__name__, outcome,
                               time.perf_counter() - started)

    return wrapper


TRACE_HEADER = "x-trace-id"


def trace_id_of(context) -> str:
    """The caller's trace id (gRPC metadata ``x-trace-id``), or a new one: every log line of
    the call and of the calls it makes to other services carries it."""
    for key, value in context.invocation_metadata() or ():
        if key == TRACE_HEADER and value:
            return str(value)[:64]
    return uuid.uuid4().hex[:16]


def trace_metadata() -> tuple[tuple[str, str], ...]:
    """Metadata passing the current call's trace id on to the services it calls."""
    trace_id = structlog.contextvars.get_contextvars().get("trace_id")
    return ((TRACE_HEADER, trace_id),) if trace_id else ()


def _aborted_with(context, exc: BaseException) -> str:
    """The status a handler aborted with itself (context.abort), for the metrics."""
    if isinstance(exc, grpc.aio.AbortError):
        try:
            return context.code().name
        except Exception:  # no code recorded
            return "UNKNOWN"
    return "INTERNAL"


def check_table_id(table_id: str) -> str:
    if not TABLE_ID.fullmatch(table_id or ""):
        raise BadRequest("table_id must be 1 to 64 letters, digits, '-' or '_'")
    return table_id


def check_command_id(command_id: str) -> str:
    if not COMMAND_ID.fullmatch(command_id or ""):
        raise BadRequest("command_id must be 1 to 128 characters of letters, digits and "
                         "'_.:@/-' (use a fresh id per command, the same id for its retries)")
    return command_id


def check_step(step) -> None:
    check_table_id(step.table_id)
    check_command_id(step.command_id)
    if step.hand_no < 0:
        raise BadRequest("hand_no cannot be negative")


class Server:
    """A grpc.aio server on 127.0.0.1 with health checking and graceful shutdown."""

    def __init__(self, name: str, host: str = "127.0.0.1", port: int = 0) -> None:
        self.name = name
        self.server = grpc.aio.server(options=[("grpc.max_receive_message_length", 1 << 20)])
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self.port = self.server.add_insecure_port(f"{host}:{port}")
        self.address = f"{host}:{self.port}"

    def enable_reflection(self, service_names: list[str]) -> None:
        """gRPC reflection (grpcurl, grpc_cli) for ``service_names`` and health; call
        before :meth:`start`."""
        from grpc_reflection.v1alpha import reflection
        reflection.enable_server_reflection(
            [*service_names, health.SERVICE_NAME, reflection.SERVICE_NAME], self.server)

    async def start(self) -> None:
        await self.server.start()
        await self._set_health(health_pb2.HealthCheckResponse.SERVING)
        log.info("serving", service=self.name, address=self.address)

    async def _set_health(self, status) -> None:
        await self.health.set("", status)

    async def stop(self, grace: float = 5.0) -> None:
        """NOT_SERVING first (load balancers stop sending), then finish calls in flight."""
        await self._set_health(health_pb2.HealthCheckResponse.NOT_SERVING)
        await self.server.stop(grace)


async def run_until_signalled(server: Server, cleanup: Callable[[], Awaitable] | None = None,
                              grace: float = 5.0) -> None:
    """Serve until SIGTERM or SIGINT, then stop gracefully and clean up (drain NATS)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await server.start()
    await stop.wait()
    log.info("stopping", service=server.name)
    await server.stop(grace)
    if cleanup is not None:
        await cleanup()
