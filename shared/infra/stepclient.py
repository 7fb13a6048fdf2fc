"""The step stream's caller side: the table service's one long-lived ``Steps`` stream per
service instance (shared/infra/stepstream.py serves it).

:class:`StepStream` is called like a stub's method (``await stream(request, timeout=...)``,
so :func:`~shared.infra.retry.retrying` drives it as it drove the unary calls): the request
goes on the stream with a call id, and the reply with that id answers it, or its status is
raised as the :class:`grpc.aio.AioRpcError` a unary call would have raised. Each call has its
deadline (DEADLINE_EXCEEDED past it). At most :data:`PER_TABLE` calls of one table are in
flight on a stream, and at most :data:`QUEUE` calls wait to be written; a caller past either
waits, within its deadline (bounded backpressure), and a table's excess waits in that table's
own line, so one table's burst (its players sending Acts as fast as their limits allow) never
takes the stream's room or the service's slots from the other tables. A stream that breaks
(the service killed, restarted, a connection reset) is opened again, waiting for the service
to be ready, and every call not yet answered is written again with its same command id: a
step is idempotent by command id, so one that was applied before the break answers with its
original outcome and nothing is applied twice.

:class:`StepPeers` holds one stream per instance of each service: an address list
(``host:port,host:port``) is one stream per address, each table's steps on one of them (by a
hash of the table id, so an instance keeps its folds warm).
"""

from __future__ import annotations

import asyncio
import itertools
import zlib
from collections.abc import Iterable, Mapping

import grpc
import structlog
from poker.engine.v1 import step_pb2, step_pb2_grpc

from . import metrics
from .rpc import TRACE_HEADER
from .stepstream import RELEASE
from .tls import TlsConfig, channel

log = structlog.get_logger()

#: calls waiting to be written on one stream before a caller waits for room
QUEUE = 256
#: calls of one table in flight on one stream (a table's driver takes one step at a time,
#: and its players' Acts add a few); the rest of that table's calls wait for one to end
PER_TABLE = 8
#: a call's deadline when its caller names none
DEFAULT_TIMEOUT_S = 10.0
#: waits before opening a broken stream again (then the last, until it opens)
REOPEN_S = (0.05, 0.2, 0.5, 1.0)

_CODES = {c.value[0]: c for c in grpc.StatusCode}


def status_error(code: grpc.StatusCode, details: str,
                 trailers: Mapping[str, str] | None = None) -> grpc.aio.AioRpcError:
    """The error a unary call ending with this status raises."""
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(),
                                grpc.aio.Metadata(*(trailers or {}).items()), details)


class _Line:
    """One table's calls on a stream: at most ``bound`` in flight, and how many callers hold
    or wait for a slot (the entry goes when none does)."""

    __slots__ = ("slots", "users")

    def __init__(self, bound: int) -> None:
        self.slots = asyncio.Semaphore(bound)
        self.users = 0


class StepStream:
    """One Steps stream to one instance of ``service`` over ``chan`` (see the module)."""

    def __init__(self, chan: grpc.aio.Channel, service: str, queue: int = QUEUE,
                 per_table: int = PER_TABLE) -> None:
        self.service = service
        self.per_table = per_table
        #: table id -> its line: the calls of that table in flight or waiting (a table with
        #: none has no entry)
        self._tables: dict[str, _Line] = {}
        self.stub = step_pb2_grpc.StepServiceStub(chan)
        self._ids = itertools.count(1)
        #: call id -> (the request as sent, its answer to be)
        self._pending: dict[int, tuple[step_pb2.StepRequest, asyncio.Future]] = {}
        self._written: dict[int, int] = {}  # call id -> the stream generation it went on
        self._outbox: asyncio.Queue[int] = asyncio.Queue(maxsize=queue)
        self._generation = 0
        self._runner: asyncio.Task | None = None
        self.opened = 0  # streams opened (the first and each reopening)
        #: connected now (a broken stream is not, until it is open again)
        self.up = False
        #: a twin instance can take this one's calls: a break fails them (UNAVAILABLE, which
        #: the caller retries there, same command id) instead of holding them for the reopening
        self.fail_over = False
        self._failures = 0  # reopenings in a row without a reply

    def pending(self) -> int:
        """Calls not answered yet."""
        return len(self._pending)

    def tables(self) -> int:
        """Tables with calls in flight or waiting on this stream."""
        return len(self._tables)

    async def call(self, name: str, request, metadata: Iterable[tuple[str, str]] = (),
                   timeout: float | None = None) -> step_pb2.StepReply:
        """Take step ``name`` with ``request`` (its method's request message) on the stream;
        the reply, or the status it ended with raised."""
        timeout = DEFAULT_TIMEOUT_S if timeout is None else timeout
        if isinstance(request, step_pb2.StepRequest):
            envelope = request
            envelope.call = b""
        else:
            envelope = step_pb2.StepRequest(table_id=request.step.table_id,
                                            call=request.SerializeToString())
        envelope.method = name
        envelope.call_id = call_id = next(self._ids)
        envelope.timeout_ms = int(timeout * 1000)
        envelope.trace_id = next((str(v) for k, v in metadata if k == TRACE_HEADER), "")
        answer: asyncio.Future = asyncio.get_running_loop().create_future()
        self._start()
        line = self._tables.get(envelope.table_id)
        if line is None:
            line = self._tables[envelope.table_id] = _Line(self.per_table)
        line.users += 1
        try:
            async with asyncio.timeout(timeout):
                async with line.slots:
                    self._pending[call_id] = (envelope, answer)
                    await self._outbox.put(call_id)
                    reply = await answer
        except TimeoutError:
            raise status_error(grpc.StatusCode.DEADLINE_EXCEEDED,
                               f"the {self.service} service did not answer {name} within "
                               f"{timeout:g} s on its step stream") from None
        finally:
            self._pending.pop(call_id, None)
            self._written.pop(call_id, None)
            line.users -= 1
            if not line.users:
                del self._tables[envelope.table_id]
        if reply.code:
            raise status_error(_CODES.get(reply.code, grpc.StatusCode.UNKNOWN), reply.details,
                               reply.trailers)
        return reply

    def start(self) -> None:
        """Open the stream now (it opens by itself at the first call)."""
        self._start()

    def _start(self) -> None:
        if self._runner is None or self._runner.done():
            self._runner = asyncio.create_task(self._run(), name=f"steps to {self.service}")

    async def close(self) -> None:
        if self._runner is not None:
            self._runner.cancel()
            await asyncio.gather(self._runner, return_exceptions=True)
            self._runner = None

    async def _run(self) -> None:
        """Hold the stream open; open it again when it breaks, with the calls in flight."""
        self._failures = 0
        while True:
            self._generation += 1
            stream = self.stub.Steps(wait_for_ready=True)
            self.opened += 1
            metrics.STEP_STREAMS_OPEN.inc()
            try:
                await stream.wait_for_connection()
                self.up = True
                await self._resend(stream)
                writer = asyncio.create_task(self._write(stream))
                try:
                    await self._read(stream)
                finally:
                    writer.cancel()
                    await asyncio.gather(writer, return_exceptions=True)
            except asyncio.CancelledError:
                stream.cancel()
                raise
            except (grpc.aio.AioRpcError, grpc.aio.UsageError, ConnectionError) as exc:
                log.info("a step stream broke: it opens again", service=self.service,
                         error=str(exc)[:200], pending=len(self._pending))
            finally:
                self.up = False
                metrics.STEP_STREAMS_OPEN.dec()
            stream.cancel()
            if self.fail_over:
                self._fail_pending()
            await asyncio.sleep(REOPEN_S[min(self._failures, len(REOPEN_S) - 1)])
            self._failures += 1

    def _fail_pending(self) -> None:
        for _, answer in list(self._pending.values()):
            if not answer.done():
                answer.set_exception(status_error(
                    grpc.StatusCode.UNAVAILABLE,
                    f"the step stream to this {self.service} instance broke"))

    async def _resend(self, stream) -> None:
        """Write again every call still waiting that went on a stream before this one."""
        for call_id, (envelope, answer) in list(self._pending.items()):
            went = self._written.get(call_id)
            if went is not None and went < self._generation and not answer.done():
                self._written[call_id] = self._generation
                metrics.STEPS_RESENT.inc()
                await stream.write(envelope)

    async def _write(self, stream) -> None:
        while True:
            call_id = await self._outbox.get()
            found = self._pending.get(call_id)
            if found is None or found[1].done():
                continue  # its caller gave up
            self._written[call_id] = self._generation
            await stream.write(found[0])

    async def _read(self, stream) -> None:
        while True:
            reply = await stream.read()
            if reply is grpc.aio.EOF:
                raise ConnectionError("the service ended the step stream")
            self._failures = 0
            found = self._pending.get(reply.call_id)
            if found is not None and not found[1].done():
                found[1].set_result(reply)


class StepPeers:
    """One :class:`StepStream` per instance of each step service."""

    def __init__(self, streams: Mapping[str, list[StepStream]],
                 channels: list[grpc.aio.Channel]) -> None:
        self.streams = dict(streams)
        self.channels = channels
        self._releasing: set[asyncio.Future] = set()
        for instances in self.streams.values():
            for s in instances:
                s.fail_over = len(instances) > 1

    @classmethod
    def connect(cls, addresses: Mapping[str, str], tls: TlsConfig | None,
                services: Iterable[str]) -> StepPeers:
        """A channel and a stream per address of each service (a comma list: one each)."""
        streams: dict[str, list[StepStream]] = {}
        channels: list[grpc.aio.Channel] = []
        for service in services:
            for address in (a.strip() for a in addresses[service].split(",") if a.strip()):
                chan = channel(address, tls, service=service)
                channels.append(chan)
                streams.setdefault(service, []).append(StepStream(chan, service))
        return cls(streams, channels)

    def of(self, service: str, table_id: str) -> StepStream:
        """The stream a table's steps of ``service`` go on: its instance by a hash of the
        table id, or while that one's stream is down, the next one up."""
        instances = self.streams[service]
        first = zlib.crc32(table_id.encode()) % len(instances)
        if len(instances) == 1:
            return instances[0]
        for s in instances:
            s.start()
        for i in range(len(instances)):
            s = instances[(first + i) % len(instances)]
            if s.up:
                return s
        return instances[first]

    def method(self, service: str, table_id: str, name: str):
        """A callable like the stub's method ``name`` for the table's steps: each attempt on
        the stream :meth:`of` picks then (a retry goes to a twin if this one broke)."""
        async def call(request, metadata: Iterable[tuple[str, str]] = (),
                       timeout: float | None = None,
                       wait_for_ready: bool | None = None) -> step_pb2.StepReply:
            return await self.of(service, table_id).call(name, request, metadata, timeout)
        return call

    def release(self, table_id: str, services: Iterable[str]) -> None:
        """Tell ``services`` (their streams for the table) that it turned vacant, in the
        background: each releases it from its caches (a lost message costs only the idle
        time)."""
        for service in services:
            if service in self.streams:
                task = asyncio.ensure_future(self.of(service, table_id).call(
                    RELEASE, step_pb2.StepRequest(table_id=table_id), timeout=5.0))
                self._releasing.add(task)  # held until done: the loop keeps weak references
                task.add_done_callback(self._releasing.discard)
                task.add_done_callback(lambda t: t.cancelled() or t.exception())

    async def close(self) -> None:
        for streams in self.streams.values():
            for s in streams:
                await s.close()
        for c in self.channels:
            await c.close()
