"""A client that rides through a crash or a failover as the bots' real callers would."""

from __future__ import annotations

from services.table.calls import call_with_retry


class RetryingStub:
    """A stub retrying a call a crash or a failover interrupted with the same request (so
    the same command id: a retry of an append that landed gets the original outcome)."""

    def __init__(self, stub, attempts: int = 60) -> None:
        self._stub = stub
        self._attempts = attempts

    def __getattr__(self, method: str):
        call = getattr(self._stub, method)

        async def retrying(request, metadata=()):
            return await call_with_retry(call, request, attempts=self._attempts, timeout=5,
                                         metadata=metadata)
        return retrying
