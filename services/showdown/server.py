"""ShowdownService: pots formed, pots awarded on the hands shown, the hand ended: house steps,
which its step stream takes from shared/poker/steprules.py alone (no method of its own).

Turning hands face up (show or muck) is the dealer's step: only the dealer reads the cards
nobody has seen (shared/infra/secrecy.py), and a pot is awarded on shown hands alone."""

from __future__ import annotations

from poker.showdown.v1 import showdown_pb2_grpc

from shared.infra.repository import TableRepository
from shared.infra.stepstream import serve_steps


class ShowdownService(showdown_pb2_grpc.ShowdownServiceServicer):
    def __init__(self, repo: TableRepository) -> None:
        self.repo = repo


async def setup(server, repo, store, config):
    servicer = ShowdownService(repo)
    showdown_pb2_grpc.add_ShowdownServiceServicer_to_server(servicer, server)
    serve_steps(server, servicer, "showdown")
