"""A client stub that rides through a service restart: for the failover and crash tests."""

from __future__ import annotations

from services.table.calls import call_with_retry


class RetryingStub:
    """A gRPC stub whose calls are retried on the errors a restart or failover causes
    (services/table/calls.py), with the same request: the same command id, so a retry of an
    append that landed gets the original outcome instead of a second decision."""

    def __init__(self, stub, attempts: int = 60, timeout: float = 5) -> None:
        self._stub = stub
        self._attempts = attempts
        self._timeout = timeout

    def __getattr__(self, method: str):
        call = getattr(self._stub, method)

        async def retrying(request, metadata=(), timeout: float | None = None):
            return await call_with_retry(call, request, attempts=self._attempts,
                                         timeout=timeout or self._timeout, metadata=metadata)

        return retrying
