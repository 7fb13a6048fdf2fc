"""A client stub that rides through a service restart: for the failover and crash tests."""

from __future__ import annotations

from shared.infra.retry import RetryPolicy, retrying


class RetryingStub:
    """A gRPC stub whose calls are retried on the errors a restart or failover causes
    (shared/infra/retry.py), with the same request: the same command id, so a retry of an
    append that landed gets the original outcome instead of a second decision."""

    def __init__(self, stub, total_s: float = 60.0, timeout: float = 5) -> None:
        self._stub = stub
        self._policy = RetryPolicy(total_s=total_s, attempt_s=timeout, wait_for_ready=True)

    def __getattr__(self, method: str):
        call = getattr(self._stub, method)

        async def retried(request, metadata=(), timeout: float | None = None,
                          wait_for_ready: bool | None = None):
            # (a caller's own retries pass wait_for_ready; these wait for the channel)
            policy = self._policy if timeout is None else RetryPolicy(
                total_s=self._policy.total_s, attempt_s=timeout, wait_for_ready=True)
            return await retrying(call, request, metadata, policy)

        return retried
