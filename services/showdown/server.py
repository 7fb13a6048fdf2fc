"""ShowdownService: pots formed, hands shown or mucked, pots awarded, the hand ended."""

from __future__ import annotations

from poker.engine.v1 import step_pb2
from poker.showdown.v1 import showdown_pb2, showdown_pb2_grpc

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import BadRequest, rpc
from shared.infra.steps import for_hand, run_step
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
        return await run_step(self.repo, request, digest("pots", request.hand_no),
                              for_hand(request, D.form_pots))

    @rpc
    async def ShowOrMuck(self, request: showdown_pb2.ShowRequest, context):
        step = request.step
        decision = CHOICES.get(request.choice)
        if decision is None:
            raise BadRequest("choice must be SHOW, MUCK or DEFAULT")
        return await run_step(self.repo, step,
                              digest("show", step.hand_no, request.seat, request.choice),
                              for_hand(step, decision, request.seat))

    @rpc
    async def AwardPots(self, request: step_pb2.StepRequest, context):
        return await run_step(self.repo, request, digest("award", request.hand_no),
                              for_hand(request, D.award_pots))


async def setup(server, repo, store, config):
    showdown_pb2_grpc.add_ShowdownServiceServicer_to_server(ShowdownService(repo), server)
