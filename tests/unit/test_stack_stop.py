"""Stopping the in-process stack (services/stack.py) cannot hang its caller: a service stop
that does not finish by the deadline is reported, with where the tasks wait, and left
behind (cancelled); one that finishes is awaited, and its error raised."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

import services.stack as stack


async def test_a_stop_that_never_finishes_is_reported_and_left_behind(monkeypatch):
    monkeypatch.setattr(stack, "STOP_DEADLINE_S", 0.05)
    never = asyncio.Event()
    cancelled = asyncio.Event()

    async def hung() -> None:
        try:
            await never.wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise

    with capture_logs() as logs:
        await stack._bounded(hung(), "stopping the test service")
    await asyncio.wait_for(cancelled.wait(), 5)
    [entry] = [e for e in logs if e["event"].startswith("a stop did not finish")]
    assert entry["what"] == "stopping the test service" and entry["log_level"] == "error"
    assert any("hung" in frame for frames in entry["tasks"].values() for frame in frames)


async def test_a_stop_that_finishes_is_awaited_and_its_error_raised():
    done = []

    async def quick() -> None:
        done.append(True)

    await stack._bounded(quick(), "a quick stop")
    assert done == [True]

    async def broken() -> None:
        raise RuntimeError("the cleanup failed")

    with pytest.raises(RuntimeError, match="the cleanup failed"):
        await stack._bounded(broken(), "a broken stop")
