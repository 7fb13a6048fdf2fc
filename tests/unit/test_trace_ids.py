"""Trace ids: a call's id comes from the caller's metadata (or is new), is bound to every log
line of the call, and goes on to the services the call reaches."""

from __future__ import annotations

import structlog

from shared.infra.rpc import TRACE_HEADER, trace_id_of, trace_metadata


class Context:
    def __init__(self, metadata=()) -> None:
        self.metadata = metadata

    def invocation_metadata(self):
        return self.metadata


def test_the_callers_trace_id_is_kept():
    assert trace_id_of(Context(((TRACE_HEADER, "abc123"), ("other", "x")))) == "abc123"


def test_a_call_without_one_gets_a_new_one_each_time():
    a, b = trace_id_of(Context()), trace_id_of(Context())
    assert a and b and a != b


def test_an_oversized_trace_id_is_cut():
    assert len(trace_id_of(Context(((TRACE_HEADER, "x" * 1000),)))) == 64


def test_the_bound_trace_id_goes_on_to_the_next_service():
    structlog.contextvars.clear_contextvars()
    assert trace_metadata() == ()
    structlog.contextvars.bind_contextvars(trace_id="t-1")
    try:
        assert trace_metadata() == ((TRACE_HEADER, "t-1"),)
    finally:
        structlog.contextvars.clear_contextvars()
