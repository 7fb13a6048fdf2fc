"""The one retry loop (shared/infra/retry.py): the very same request again on the statuses a
restart or failover causes, an answer raised at once, a deadline per attempt and one overall,
and jittered backoff."""

from __future__ import annotations

import time

import grpc
import pytest
from poker.table.v1 import table_pb2

from shared.infra.retry import PEER_RETRY, PLAYER_RETRY, RetryPolicy, retrying, retrying_sync


def _error(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), code.name)


class Flaky:
    """A stub method that fails with ``codes`` in turn, then answers; it records each
    request it was sent and the keywords it was sent with."""

    def __init__(self, *codes: grpc.StatusCode) -> None:
        self.codes = list(codes)
        self.requests: list[object] = []
        self.keywords: list[dict] = []

    def answer(self, request, **kw):
        self.requests.append(request)
        self.keywords.append(kw)
        if self.codes:
            raise _error(self.codes.pop(0))
        return "reply"

    async def __call__(self, request, **kw):
        return self.answer(request, **kw)


REQUEST = table_pb2.ActRequest(table_id="t", seat=1, command_id="bot-7-1-abcd")


async def test_a_call_is_retried_with_the_same_request_on_a_failover_status_only():
    flaky = Flaky(grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE,
                  grpc.StatusCode.ABORTED, grpc.StatusCode.DEADLINE_EXCEEDED)
    assert await retrying(flaky, REQUEST, policy=RetryPolicy(total_s=10)) == "reply"
    assert len(flaky.requests) == 5 and all(r is REQUEST for r in flaky.requests)

    for answer in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT,
                   grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNKNOWN):
        stale = Flaky(answer)  # an answer, not a fault: never retried
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await retrying(stale, REQUEST, policy=RetryPolicy(total_s=10))
        assert refused.value.code() is answer
        assert len(stale.requests) == 1


async def test_the_overall_deadline_holds_and_zero_is_one_attempt():
    gone = Flaky(*[grpc.StatusCode.UNAVAILABLE] * 1000)  # away for good
    started = time.monotonic()
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        await retrying(gone, REQUEST, policy=RetryPolicy(total_s=0.3))
    assert failed.value.code() is grpc.StatusCode.UNAVAILABLE
    assert time.monotonic() - started < 2 and 2 <= len(gone.requests) < 30
    once = Flaky(grpc.StatusCode.UNAVAILABLE)
    with pytest.raises(grpc.aio.AioRpcError):
        await retrying(once, REQUEST, policy=RetryPolicy(total_s=0))
    assert len(once.requests) == 1


async def test_each_attempt_carries_its_deadline_and_the_metadata():
    flaky = Flaky(grpc.StatusCode.DEADLINE_EXCEEDED)
    token = (("authorization", "Bearer x"),)
    assert await retrying(flaky, REQUEST, token, PEER_RETRY) == "reply"
    assert [kw["timeout"] for kw in flaky.keywords] == [PEER_RETRY.attempt_s] * 2
    assert all(kw["wait_for_ready"] is True for kw in flaky.keywords)
    assert all(("authorization", "Bearer x") in kw["metadata"] for kw in flaky.keywords)
    player = Flaky()
    await retrying(player, REQUEST)  # a client: fail fast on a dead address, try another
    assert player.keywords[0]["wait_for_ready"] is False
    assert player.keywords[0]["timeout"] == PLAYER_RETRY.attempt_s


def test_the_blocking_loop_is_the_same_loop():
    flaky = Flaky(grpc.StatusCode.UNAVAILABLE)
    assert retrying_sync(flaky.answer, REQUEST, policy=RetryPolicy(total_s=5)) == "reply"
    assert len(flaky.requests) == 2
    refused = Flaky(grpc.StatusCode.PERMISSION_DENIED)
    with pytest.raises(grpc.RpcError):
        retrying_sync(refused.answer, REQUEST)
    assert len(refused.requests) == 1


def test_backoff_doubles_to_its_cap_with_jitter_and_stops_at_the_deadline():
    now = [0.0]
    policy = RetryPolicy(total_s=10.0, first_delay_s=0.1, max_delay_s=1.0)
    waits = []
    for wait in policy.delays(clock=lambda: now[0]):
        waits.append(wait)
        now[0] += wait
    assert sum(waits) <= 10.0 and sum(waits) > 8.0
    caps = [min(0.1 * 2 ** i, 1.0) for i in range(len(waits))]
    assert all(cap / 2 <= w <= cap for w, cap in zip(waits, caps, strict=True))
    assert len(set(waits)) == len(waits)  # jittered: no two clients in step
