"""pokerctl audit's reader of the log: it reads into an audit run or into rows, never into
nothing (the store is not touched then)."""

from __future__ import annotations

import asyncio

import pytest

from services.pokerctl.audit_read import read_stream


def test_reading_the_log_into_neither_a_run_nor_rows_is_refused():
    with pytest.raises(ValueError, match="reads into a run or into rows"):
        asyncio.run(read_stream(None, None, None, None))
