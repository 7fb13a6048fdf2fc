"""ShowdownService: pots formed, hands shown or mucked, pots awarded, the hand ended."""

from __future__ import annotations

from poker.engine.v1 import step_pb2
from poker.showdown.v1 import showdown_pb2, showdown_pb2_grpc

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import BadRequest, check_step, rpc
from shared.infra.steps import current_hand, reply
from shared.poker import decide as D

CHOICES = {
    showdown_pb2.SHOW_CHOICE_SHOW: D.show,
    showdown_pb2.SHOW_CHOICE_MUCK: D.muck,
    showdown_pb2.SHOW_CHOICE_DEFAULT: D.showdown_default,
}


class ShowdownService(showdown_pb2_grpc.ShowdownServiceServicer):
    def __init__(self, repo: TableRepository) -> None:
        self.repo = repo

    @rpc
    async def FormPots(self, request: step_pb2.StepRequest, context):
        check_step(request)
        outcome = await self.repo.execute(
            request.table_id, request.command_id, digest("pots", request.hand_no),
            lambda t: D.form_pots(current_hand(t, request.table_id, request.hand_no)))
        return reply(outcome)

    @rpc
    async def ShowOrMuck(self, request: showdown_pb2.ShowRequest, context):
        step = request.step
        check_step(step)
        decision = CHOICES.get(request.choice)
        if decision is None:
            raise BadRequest("choice must be SHOW, MUCK or DEFAULT")
        outcome = await self.repo.execute(
            step.table_id, step.command_id,
            digest("show", step.hand_no, request.seat, request.choice),
            lambda t: decision(current_hand(t, step.table_id, step.hand_no), request.seat))
        return reply(outcome)

    @rpc
    async def AwardPots(self, request: step_pb2.StepRequest, context):
        check_step(request)
        outcome = await self.repo.execute(
            request.table_id, request.command_id, digest("award", request.hand_no),
            lambda t: D.award_pots(current_hand(t, request.table_id, request.hand_no)))
        return reply(outcome)


async def setup(server, repo, store, config):
    showdown_pb2_grpc.add_ShowdownServiceServicer_to_server(ShowdownService(repo), server)
