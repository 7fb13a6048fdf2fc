"""Waiting on a condition with a deadline (never a fixed sleep): for tools and tests that wait
for something outside the process, a server electing a leader or a key expiring."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def until(condition: Callable[[], Awaitable[T]], timeout: float, what: str = "condition",
                every: float = 0.02) -> T:
    """``await condition()`` until it is truthy (and return it), for at most ``timeout``
    seconds, looking again every ``every`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        result = await condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"no {what} within {timeout} s")
        await asyncio.sleep(every)
