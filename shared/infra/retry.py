"""Retrying an idempotent gRPC call through a server that is away: the one retry loop of
this project (the table service calling its peers, the bots, the CLI_RETRY, the web pages).

Every command carries a command id (or an idempotency key), and the services apply a command
once whatever the number of attempts: a retry of one that landed gets its first outcome. So a
client may send the very same request again while the answer is one a restart or a failover
causes:

- UNAVAILABLE: the instance it reached died or is restarting (a channel over several
  addresses picks another on the next attempt);
- ABORTED: the log's leader changed under the append (the service says so; nothing landed
  twice);
- DEADLINE_EXCEEDED: an attempt took longer than its own deadline.

A refusal because the event log is out of space (UNAVAILABLE, marked
:func:`~shared.infra.rpc.log_full`) is retried too, as long as the policy rides it out: a
player's client does (the same command lands once space is back); the table service calling
its peers does not (``while_log_full`` False): it passes the refusal on at once, for its
caller to retry, rather than hold the call and the table for the whole policy.

Any other status (FAILED_PRECONDITION: a decision on a stale view; INVALID_ARGUMENT; a rate
limit's RESOURCE_EXHAUSTED) is an answer, raised at once. Attempts back off from
``first_delay_s`` doubling to ``max_delay_s``, each delay jittered (thousands of clients of a
dead instance must not come back in step), until ``total_s`` have passed; then the last error
is raised. Each attempt carries ``attempt_s`` as its gRPC deadline (the server sees it too).

    await retrying(stub.Act, request, metadata, RetryPolicy(total_s=30))
    retrying_sync(stub.SitOut, request, metadata, CLI_RETRY)  # a blocking stub (the CLI_RETRY)
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc

from .rpc import log_away, log_full, trace_metadata

RETRYABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.ABORTED,
                       grpc.StatusCode.DEADLINE_EXCEEDED})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How long to keep trying one call, and how long one attempt may take."""

    total_s: float = 30.0
    attempt_s: float = 10.0
    first_delay_s: float = 0.05
    max_delay_s: float = 1.0
    #: wait for the channel to connect within the attempt instead of failing at once (peers
    #: inside the cluster: a restarting service comes back on its address)
    wait_for_ready: bool = False
    #: retry while the event log is out of space (False: that refusal is raised at once)
    while_log_full: bool = True
    #: retry while the service answers that its event log does not (False: raised at once:
    #: a person at a command line is told within seconds what is down)
    while_log_away: bool = True

    def delays(self, clock: Callable[[], float] = time.monotonic) -> Iterator[float]:
        """The waits before each retry, until ``total_s`` would be over (0: no retry)."""
        deadline = clock() + self.total_s
        delay = self.first_delay_s
        while True:
            wait = delay * (0.5 + random.random() / 2)  # noqa: S311 (jitter, not a secret)
            if clock() + wait > deadline:
                return
            yield wait
            delay = min(2 * delay, self.max_delay_s)


#: the table service calling a peer's step (a replica restarting comes back within seconds)
PEER_RETRY = RetryPolicy(total_s=15.0, attempt_s=10.0, wait_for_ready=True,
                         while_log_full=False)
#: a player's client (bots, the web pages): a delay rather than an error, through a failover
PLAYER_RETRY = RetryPolicy(total_s=30.0, attempt_s=10.0)
#: a command typed at the command line: a few seconds, then a one-line error (at once when
#: the service answers that its log does not)
CLI_RETRY = RetryPolicy(total_s=8.0, attempt_s=10.0, while_log_away=False)


def retryable(exc: grpc.RpcError, policy: RetryPolicy | None = None) -> bool:
    if policy is not None and not policy.while_log_full and log_full(exc):
        return False
    if policy is not None and not policy.while_log_away and log_away(exc):
        return False
    return exc.code() in RETRYABLE


async def retrying(fn: Callable[..., Awaitable], request, metadata: tuple = (),
                   policy: RetryPolicy = PLAYER_RETRY):
    """``fn(request, ...)``, sent again with the very same request while it fails with a
    :data:`RETRYABLE` status, as ``policy`` says. ``fn``: a stub's method, or anything called
    like one. The trace id goes with every attempt, beside ``metadata``."""
    delays = policy.delays()
    while True:
        try:  # the attempt's deadline goes to the server too (not asyncio.wait_for, which
            # on Python 3.11 can swallow the caller's cancellation)
            return await fn(request, metadata=(*trace_metadata(), *metadata),
                            timeout=policy.attempt_s, wait_for_ready=policy.wait_for_ready)
        except grpc.aio.AioRpcError as exc:
            wait = next(delays, None) if retryable(exc, policy) else None
            if wait is None:
                raise
        await asyncio.sleep(wait)


def retrying_sync(fn: Callable, request, metadata: tuple = (), policy: RetryPolicy = CLI_RETRY):
    """:func:`retrying` for a blocking stub."""
    delays = policy.delays()
    while True:
        try:
            return fn(request, metadata=(*trace_metadata(), *metadata),
                      timeout=policy.attempt_s, wait_for_ready=policy.wait_for_ready)
        except grpc.RpcError as exc:
            wait = next(delays, None) if retryable(exc, policy) else None
            if wait is None:
                raise
        time.sleep(wait)


async def watching(watch: Callable[..., AsyncIterator], request, metadata: tuple = (),
                   policy: RetryPolicy = PLAYER_RETRY) -> AsyncGenerator:
    """The views of ``watch(request)`` (a TableService Watch: ``request`` a ViewRequest, each
    view with its ``version``), the stream opened again from the last version seen while it
    breaks with a :data:`RETRYABLE` status, as ``policy`` says; then the last error is
    raised. Any other status (the token expired, the seat was taken) is raised at once."""
    resumed = type(request)()
    resumed.CopyFrom(request)
    delays = None
    while True:
        call: Any = watch(resumed, metadata=(*trace_metadata(), *metadata),
                     wait_for_ready=policy.wait_for_ready)
        try:
            async for view in call:
                delays = None  # it served: a later break gets the whole policy again
                resumed.after_version = max(resumed.after_version, view.version)
                yield view
            return  # the server ended the stream
        except grpc.aio.AioRpcError as exc:
            if not retryable(exc):
                raise
            delays = delays or policy.delays()
            wait = next(delays, None)
            if wait is None:
                raise
        finally:
            call.cancel()
        await asyncio.sleep(wait)
