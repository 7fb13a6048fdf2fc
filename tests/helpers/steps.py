"""Tests that take a step themselves, as the table service would: on the service's step
stream (engine.v1.StepService/Steps; no unary call takes a step), one fresh stream per call."""

from __future__ import annotations

from typing import Any

import grpc
from poker.engine.v1 import step_pb2, step_pb2_grpc

from shared.infra.stepclient import status_error


async def one_step(chan: grpc.aio.Channel, method: str, request: Any, timeout: float = 10.0,
                   wait_for_ready: bool | None = None) -> step_pb2.StepReply:
    """Step ``method`` with ``request`` (a StepRequest, or the method's message whose ``step``
    is one) on a new Steps stream of ``chan``: its reply, or the status it ended with raised
    as a unary call raises it (the stream's own: a caller refused; or the step's)."""
    if isinstance(request, step_pb2.StepRequest):
        envelope = step_pb2.StepRequest()
        envelope.CopyFrom(request)
    else:
        envelope = step_pb2.StepRequest(table_id=request.step.table_id,
                                        call=request.SerializeToString())
    envelope.method = method
    envelope.call_id = 1
    envelope.timeout_ms = int(timeout * 1000)
    call = step_pb2_grpc.StepServiceStub(chan).Steps(timeout=timeout,
                                                     wait_for_ready=wait_for_ready)
    await call.write(envelope)
    reply = await call.read()
    await call.done_writing()
    if reply is grpc.aio.EOF:
        raise status_error(grpc.StatusCode.UNAVAILABLE, "the step stream ended unanswered")
    if reply.code:
        raise status_error(grpc.StatusCode(next(c for c in grpc.StatusCode
                                                if c.value[0] == reply.code)),
                           reply.details, reply.trailers)
    return reply


class StepStub:
    """A step service's steps, called as a unary stub's methods were: ``StepStub(chan).Act(
    request)`` sends ``Act`` on the service's step stream (:func:`one_step`)."""

    def __init__(self, chan: grpc.aio.Channel) -> None:
        self._chan = chan

    def __getattr__(self, method: str):
        async def call(request: Any, timeout: float = 10.0, wait_for_ready: bool | None = None,
                       **_: Any) -> step_pb2.StepReply:
            return await one_step(self._chan, method, request, timeout, wait_for_ready)
        return call
