"""BettingService: forced bets and players' actions."""

from __future__ import annotations

from poker.betting.v1 import betting_pb2, betting_pb2_grpc
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import BadRequest, rpc
from shared.infra.steps import for_hand, run_step
from shared.poker import decide as D
from shared.poker.events import ActionKind

#: protobuf ActionKind -> domain
ACTIONS = {events_pb2.ActionKind.Value(f"ACTION_KIND_{a.name}"): a for a in ActionKind}
MAX_CHIPS = 2**53  # no real stack comes near; beyond it an amount is a mistake or an attack


def action_from(request_action: int) -> ActionKind:
    try:
        return ACTIONS[request_action]
    except KeyError:
        raise BadRequest(f"action {request_action} is not one of "
                         f"{', '.join(a.value for a in ActionKind)}") from None


def amount_from(message, field: str = "amount") -> int | None:
    if not message.HasField(field):
        return None
    amount = getattr(message, field)
    if not 0 < amount <= MAX_CHIPS:
        raise BadRequest(f"amount {amount} is not a positive number of chips")
    return amount


class BettingService(betting_pb2_grpc.BettingServiceServicer):
    def __init__(self, repo: TableRepository) -> None:
        self.repo = repo

    @rpc
    async def PostForcedBets(self, request: step_pb2.StepRequest, context):
        return await run_step(self.repo, request, digest("forced", request.hand_no),
                              for_hand(request, D.post_forced_bets))

    @rpc
    async def CloseRound(self, request: step_pb2.StepRequest, context):
        return await run_step(self.repo, request, digest("close", request.hand_no),
                              for_hand(request, D.close_round))

    @rpc
    async def Act(self, request: betting_pb2.ActRequest, context):
        step = request.step
        action = action_from(request.action)
        amount = amount_from(request)
        return await run_step(self.repo, step,
                              digest("act", step.hand_no, request.seat, action.value, amount),
                              for_hand(step, D.act, request.seat, action, amount))


async def setup(server, repo, store, config):
    betting_pb2_grpc.add_BettingServiceServicer_to_server(BettingService(repo), server)
