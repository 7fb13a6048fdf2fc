"""gRPC helpers shared by the services: error mapping, request checks, serving, shutdown.

A servicer method reads top to bottom: check the request, bind log context, load, decide,
append, reply. Errors map to statuses in one place:
IllegalAction -> FAILED_PRECONDITION, bad arguments -> INVALID_ARGUMENT, unknown table ->
NOT_FOUND, wrong or missing seat token -> PERMISSION_DENIED, lost append races -> ABORTED,
the log unreachable -> UNAVAILABLE, the log out of space -> UNAVAILABLE (its message says so,
and trailing metadata ``poker-log-full`` marks it, also when a peer's refusal is passed on:
:func:`log_full`), a log that does not fold -> DATA_LOSS, a caller over its
limits -> RESOURCE_EXHAUSTED; a request that does not parse -> INVALID_ARGUMENT (before any
handler runs); anything else -> INTERNAL with the call's trace id, never UNKNOWN.

Command ids have two namespaces: a client's id is kept under ``c.<scope>.`` (its kind and seat,
:func:`client_command_id`), and the ids the system derives for its own steps (the driver's
``drv:``, the clock keeper's ``timeout:``) never start with ``c.``, so no client can take an id
the system will use.
"""

from __future__ import annotations

import asyncio
import functools
import re
import signal
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import nats.errors
import nats.js.errors
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from shared.infra.randomness import EntropyUnavailable
from shared.poker.errors import ClockSkew, IllegalAction, InvalidOptions
from shared.poker.table import TABLE_ID

from . import metrics
from .eventstore import AppendConflict, StoreError, StoreFull
from .guard import guarded
from .identity import Forbidden, Unauthenticated
from .repository import Aborted, CommandReused, CorruptLog, UnknownTable
from .tls import (
    CALLERS,
    INSECURE_WARNING,
    OPEN_METHODS,
    SERVER_KEEPALIVE,
    TlsConfig,
    peer_identity,
    refusal,
    server_credentials,
)

log = structlog.get_logger()

#: a client's command id (the client-facing API)
COMMAND_ID = re.compile(r"[A-Za-z0-9_.:@/-]{1,128}")
#: a command id on the internal API: a client's id under its scope, or a system step's id
INTERNAL_COMMAND_ID = re.compile(r"[A-Za-z0-9_.:@/-]{1,192}")
CLIENT_PREFIX = "c."


class BadRequest(ValueError):
    """A malformed request: INVALID_ARGUMENT."""


class Denied(PermissionError):
    """A missing or wrong seat token: PERMISSION_DENIED."""


class Unavailable(RuntimeError):
    """A service this call needs did not answer (the wallet, say): UNAVAILABLE; retry with the
    same command id."""


class FellBehind(RuntimeError):
    """A Watch stream that fell too far behind its table (its client stopped reading): closed
    with ABORTED, saying from which version to watch again."""


class Exhausted(RuntimeError):
    """The caller is over a limit (rate, open streams): RESOURCE_EXHAUSTED, with a hint of
    when to try again (trailing metadata ``retry-after-ms``)."""

    def __init__(self, reason: str, retry_after_s: float | None = None) -> None:
        hint = f"; retry in {retry_after_s:.1f} s" if retry_after_s is not None else ""
        super().__init__(reason + hint)
        self.retry_after_s = retry_after_s


_STATUS: tuple[tuple[type[BaseException], grpc.StatusCode], ...] = (
    (BadRequest, grpc.StatusCode.INVALID_ARGUMENT),
    (InvalidOptions, grpc.StatusCode.INVALID_ARGUMENT),
    (CommandReused, grpc.StatusCode.INVALID_ARGUMENT),
    (Denied, grpc.StatusCode.PERMISSION_DENIED),
    (Unauthenticated, grpc.StatusCode.UNAUTHENTICATED),
    (Forbidden, grpc.StatusCode.PERMISSION_DENIED),
    (Exhausted, grpc.StatusCode.RESOURCE_EXHAUSTED),
    (UnknownTable, grpc.StatusCode.NOT_FOUND),
    (IllegalAction, grpc.StatusCode.FAILED_PRECONDITION),
    (Aborted, grpc.StatusCode.ABORTED),
    (FellBehind, grpc.StatusCode.ABORTED),
    (CorruptLog, grpc.StatusCode.DATA_LOSS),
    (EntropyUnavailable, grpc.StatusCode.UNAVAILABLE),
    (ClockSkew, grpc.StatusCode.UNAVAILABLE),
    (Unavailable, grpc.StatusCode.UNAVAILABLE),
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
    if isinstance(exc, grpc.aio.AioRpcError):
        # A peer service's refusal reaches the caller as that status; the peer's own
        # failures (INTERNAL, UNKNOWN) become UNAVAILABLE: the command may be retried.
        code = exc.code()
        return grpc.StatusCode.UNAVAILABLE if code in _PEER_FAILURES else code
    return None


_PEER_FAILURES = (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN)


def reason_for(exc: BaseException) -> str:
    """What the refusal says to a person."""
    if isinstance(exc, grpc.aio.AioRpcError):
        return exc.details() or exc.code().name
    return getattr(exc, "reason", None) or str(exc)


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
            if isinstance(exc, grpc.aio.AbortError):  # the handler set its own status
                outcome = _aborted_with(context, exc)
                raise
            code = status_for(exc)
            if code is None:
                # A bug, not a refusal: logged with its traceback; the caller gets INTERNAL
                # with the trace id to quote, and may retry with the same command id.
                log.exception("rpc failed")
                code = grpc.StatusCode.INTERNAL
                message = (f"internal error (trace id {trace_id_of_call()}); nothing was "
                           f"applied unless a retry with the same command id says so")
            else:
                message = reason_for(exc)
                log.info("rpc refused", code=code.name, reason=message)
            outcome = code.name
            trailing = []
            retry_after = getattr(exc, "retry_after_s", None)
            if retry_after is not None:
                trailing.append((RETRY_AFTER_HEADER, str(int(retry_after * 1000))))
            if log_full(exc):
                trailing.append((LOG_FULL_HEADER, "1"))
            elif log_away(exc):
                trailing.append((LOG_AWAY_HEADER, "1"))
            if trailing:
                context.set_trailing_metadata(tuple(trailing))
            await context.abort(code, message)
        finally:
            metrics.record_rpc(type(self).__name__, method.__name__, outcome,
                               time.perf_counter() - started)

    return wrapper


TRACE_HEADER = "x-trace-id"
#: trailing metadata of a RESOURCE_EXHAUSTED refusal: milliseconds to wait before retrying
RETRY_AFTER_HEADER = "retry-after-ms"
#: trailing metadata of an UNAVAILABLE refusal because the event log is out of space
LOG_FULL_HEADER = "poker-log-full"


#: trailing metadata of an UNAVAILABLE refusal because the event log did not answer (the
#: service itself did): a client says so, and need not wait through its whole retry policy
LOG_AWAY_HEADER = "poker-log-away"


def log_away(exc: BaseException) -> bool:
    """Whether ``exc`` is the event log not answering a service (not out of space, not a
    lost race): this process's StoreError, or a service's refusal that carries
    :data:`LOG_AWAY_HEADER`."""
    if isinstance(exc, StoreError) and not isinstance(exc, (StoreFull, AppendConflict)):
        return True
    if isinstance(exc, (nats.errors.TimeoutError, nats.errors.NoRespondersError,
                        nats.js.errors.NoStreamResponseError)):
        return True
    return _marked(exc, LOG_AWAY_HEADER)


def _marked(exc: BaseException, header: str) -> bool:
    """Whether a refusal (of an asyncio or a blocking stub) carries trailing ``header``."""
    if isinstance(exc, grpc.RpcError) and callable(getattr(exc, "trailing_metadata", None)):
        for item in exc.trailing_metadata() or ():
            if (item[0] if isinstance(item, tuple) else item) == header:
                return True
    return False


def log_full(exc: BaseException) -> bool:
    """Whether ``exc`` is the log refusing an append for lack of space: this process's
    (:class:`~shared.infra.eventstore.StoreFull`) or a service's it called (its refusal
    carries :data:`LOG_FULL_HEADER`)."""
    return isinstance(exc, StoreFull) or _marked(exc, LOG_FULL_HEADER)


def trace_id_of_call() -> str:
    """The trace id bound to the current call's log lines."""
    return str(structlog.contextvars.get_contextvars().get("trace_id", ""))


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
    try:
        code = context.code()
    except Exception:  # no code recorded
        code = None
    return code.name if isinstance(code, grpc.StatusCode) else "ABORTED_BY_HANDLER"


def check_table_id(table_id: str) -> str:
    if not TABLE_ID.fullmatch(table_id or ""):
        raise BadRequest("table_id must be 1 to 64 letters, digits, '-' or '_'")
    return table_id


def check_command_id(command_id: str) -> str:
    """A client's command id, as the client sent it."""
    if not COMMAND_ID.fullmatch(command_id or ""):
        raise BadRequest("command_id must be 1 to 128 characters of letters, digits and "
                         "'_.:@/-' (use a fresh id per command, the same id for its retries)")
    return command_id


def client_command_id(scope: str, command_id: str) -> str:
    """The id under which a client's command is kept: checked, then put under the client's
    scope (``create``, ``sit3``, ``s3``: the kind of command and the seat it is for). The
    system's own ids never start with ``c.``, so a client cannot take one of them; and one
    seat cannot take the next id of another."""
    return f"{CLIENT_PREFIX}{scope}.{check_command_id(command_id)}"


def system_command_id(*parts: object) -> str:
    """The id of a step the system takes itself (a driver step, a time-out), derived from
    the log so that two instances racing on a table make the same command; outside the
    clients' namespace."""
    command_id = ":".join(str(p) for p in parts)
    if command_id.startswith(CLIENT_PREFIX) or not INTERNAL_COMMAND_ID.fullmatch(command_id):
        raise ValueError(f"{command_id!r} is not a system command id")
    return command_id


def check_step(step) -> None:
    check_table_id(step.table_id)
    if not INTERNAL_COMMAND_ID.fullmatch(step.command_id or ""):
        raise BadRequest("command_id must be 1 to 192 characters of letters, digits and "
                         "'_.:@/-'")
    if step.hand_no < 0:
        raise BadRequest("hand_no cannot be negative")
    if len(step.tail) > MAX_TAIL:
        raise BadRequest(f"a step carries at most {MAX_TAIL} commits of the table's tail "
                         f"(it had {len(step.tail)}); the service reads the log for more")
    if any(c.seq <= 0 for c in step.tail):
        raise BadRequest("a tail commit's seq is its stream sequence, from 1")


#: the most commits a step request may carry for the service to fold (StepRequest.tail):
#: more than a hand's (a 10-handed fixed-limit hand capped on every street is about 250), so
#: a service called once a hand (rake, showdown) gets all it lacks
MAX_TAIL = 512


class _Malformed:
    """A request whose bytes do not parse as its message (what the deserializer returns
    instead of raising, so that the caller gets INVALID_ARGUMENT rather than UNKNOWN)."""

    __slots__ = ("error",)

    def __init__(self, error: str) -> None:
        self.error = error


class RequestParsing(grpc.aio.ServerInterceptor):
    """Malformed request bytes answer INVALID_ARGUMENT before any handler runs (grpc's own
    answer is UNKNOWN, "Unexpected <class DecodeError>")."""

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        if handler is None or handler.request_streaming or handler.request_deserializer is None:
            return handler
        parse = handler.request_deserializer

        def tolerant(data: bytes):
            try:
                return parse(data)
            except Exception as exc:  # protobuf's DecodeError, or anything a parser raises
                return _Malformed(f"{type(exc).__name__}: {exc}")

        async def parsed(request, context) -> None:
            if isinstance(request, _Malformed):
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT,
                                    f"the request does not parse as {details.method}'s "
                                    f"message ({request.error})")

        return guarded(handler._replace(request_deserializer=tolerant), parsed)


class CallerIdentity(grpc.aio.ServerInterceptor):
    """Only the identities :data:`shared.infra.tls.CALLERS` names for ``service`` (and
    :data:`~shared.infra.tls.METHOD_CALLERS` for a method) may call it (PERMISSION_DENIED otherwise, naming who may); health and reflection are open to every
    certificate of the CA."""

    def __init__(self, service: str) -> None:
        self.service = service

    async def intercept_service(self, continuation, details):
        handler = await continuation(details)
        if handler is None or details.method.startswith(OPEN_METHODS):
            return handler

        async def known_caller(_request, context) -> None:
            reason = refusal(self.service, peer_identity(context), details.method)
            if reason is not None:
                log.warning("caller refused", reason=reason, peer=context.peer())
                await context.abort(grpc.StatusCode.PERMISSION_DENIED, reason)

        return guarded(handler, known_caller)


def interceptors(service: str, tls: TlsConfig | None) -> list[grpc.aio.ServerInterceptor]:
    """Every server's: the caller's identity checked first (for a service :data:`CALLERS`
    names, over TLS: in plaintext there is no certificate to read it from), then the request
    parsed."""
    checked = [CallerIdentity(service)] if tls is not None and service in CALLERS else []
    return [*checked, RequestParsing()]


class Server:
    """A grpc.aio server on 127.0.0.1 with health checking and graceful shutdown.

    Over TLS with ``tls``'s certificate (None: plaintext, POKER_INSECURE, with a loud
    warning). A service named in ``tls.CALLERS`` (the internal ones) requires a client
    certificate of the CA and accepts only the identities named there; the others (the
    client-facing table service) take a client certificate if one is offered."""

    def __init__(self, name: str, host: str = "127.0.0.1", port: int = 0, *,
                 tls: TlsConfig | None,
                 access: grpc.aio.ServerInterceptor | None = None) -> None:
        self.name = name
        self.server = grpc.aio.server(
            options=[("grpc.max_receive_message_length", 1 << 20), *SERVER_KEEPALIVE],
            interceptors=[*([access] if access is not None else []), *interceptors(name, tls)])
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        bind = f"{host}:{port}"
        if tls is None:
            log.warning(INSECURE_WARNING, service=name)
            self.port = self.server.add_insecure_port(bind)
        else:
            self.port = self.server.add_secure_port(bind, server_credentials(
                tls, require_client_auth=name in CALLERS))
        self.address = f"{host}:{self.port}"
        #: the service's tables (shared/infra/boot.py sets it; tests count its log reads)
        self.repo: Any = None

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
