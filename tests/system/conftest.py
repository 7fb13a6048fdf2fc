"""Fixtures the system tests of tournaments share."""

from __future__ import annotations

import pytest

from tests.helpers.tournaments import FAST


@pytest.fixture
async def tstack(nats_server):
    """Every service of a table plus the tournament director, on ``nats_server``, the clock
    ticking every 20 ms."""
    from services.stack import start_local
    s = await start_local(nats_server.url, env=FAST)
    await s.start_service("tournament")
    yield s
    await s.stop()
