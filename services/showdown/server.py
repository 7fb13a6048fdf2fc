"""ShowdownService: pots formed, pots awarded on the hands shown, the hand ended.

Turning hands face up (show or muck) is the dealer's step: only the dealer reads the cards
nobody has seen (shared/infra/secrecy.py), and a pot is awarded on shown hands alone."""

from __future__ import annotations

from poker.engine.v1 import step_pb2
from poker.showdown.v1 import showdown_pb2, showdown_pb2_grpc

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import rpc
from shared.infra.steps import for_hand, run_step
from shared.infra.stepstream import serve_steps
from shared.poker import decide as D
from shared.poker.steprules import house


class ShowdownService(showdown_pb2_grpc.ShowdownServiceServicer):
    def __init__(self, repo: TableRepository) -> None:
        self.repo = repo

    @rpc
    async def FormPots(self, request: step_pb2.StepRequest, context):
        return await run_step(self.repo, request, digest("pots", request.hand_no),
                              for_hand(request, house(D.FormPots)))

    @rpc
    async def AwardPots(self, request: step_pb2.StepRequest, context):
        return await run_step(self.repo, request, digest("award", request.hand_no),
                              for_hand(request, house(D.AwardPots)))


async def setup(server, repo, store, config):
    servicer = ShowdownService(repo)
    showdown_pb2_grpc.add_ShowdownServiceServicer_to_server(servicer, server)
    serve_steps(server, servicer, "showdown",
                showdown_pb2.DESCRIPTOR.services_by_name["ShowdownService"])
