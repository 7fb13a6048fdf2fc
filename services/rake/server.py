"""RakeService: the house's commission, as a pure function of the pots and the options."""

from __future__ import annotations

from poker.engine.v1 import step_pb2
from poker.rake.v1 import rake_pb2, rake_pb2_grpc

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import rpc
from shared.infra.steps import for_hand, run_step
from shared.infra.stepstream import serve_steps
from shared.poker import decide as D
from shared.poker.steprules import house


class RakeService(rake_pb2_grpc.RakeServiceServicer):
    def __init__(self, repo: TableRepository) -> None:
        self.repo = repo

    @rpc
    async def TakeRake(self, request: step_pb2.StepRequest, context):
        return await run_step(self.repo, request, digest("rake", request.hand_no),
                              for_hand(request, house(D.TakeRake)))


async def setup(server, repo, store, config):
    servicer = RakeService(repo)
    rake_pb2_grpc.add_RakeServiceServicer_to_server(servicer, server)
    serve_steps(server, servicer, "rake", rake_pb2.DESCRIPTOR.services_by_name["RakeService"])
