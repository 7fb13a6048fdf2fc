"""RakeService: the house's commission, as a pure function of the pots and the options: a
house step, which its step stream takes from shared/poker/steprules.py alone."""

from __future__ import annotations

from poker.rake.v1 import rake_pb2_grpc

from shared.infra.repository import TableRepository
from shared.infra.stepstream import serve_steps


class RakeService(rake_pb2_grpc.RakeServiceServicer):
    def __init__(self, repo: TableRepository) -> None:
        self.repo = repo


async def setup(server, repo, store, config):
    servicer = RakeService(repo)
    rake_pb2_grpc.add_RakeServiceServicer_to_server(servicer, server)
    serve_steps(server, servicer, "rake")
