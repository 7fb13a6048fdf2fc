"""BettingService: forced bets and players' actions."""

from __future__ import annotations

from poker.betting.v1 import betting_pb2, betting_pb2_grpc
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import BadRequest, check_step, rpc
from shared.infra.steps import current_hand, reply
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
        check_step(request)
        outcome = await self.repo.execute(
            request.table_id, request.command_id, digest("forced", request.hand_no),
            lambda t: D.post_forced_bets(current_hand(t, request.table_id, request.hand_no)))
        return reply(outcome)

    @rpc
    async def CloseRound(self, request: step_pb2.StepRequest, context):
        check_step(request)
        outcome = await self.repo.execute(
            request.table_id, request.command_id, digest("close", request.hand_no),
            lambda t: D.close_round(current_hand(t, request.table_id, request.hand_no)))
        return reply(outcome)

    @rpc
    async def Act(self, request: betting_pb2.ActRequest, context):
        step = request.step
        check_step(step)
        action = action_from(request.action)
        amount = amount_from(request)
        outcome = await self.repo.execute(
            step.table_id, step.command_id,
            digest("act", step.hand_no, request.seat, action.value, amount),
            lambda t: D.act(current_hand(t, step.table_id, step.hand_no), request.seat,
                            action, amount))
        return reply(outcome)


async def setup(server, repo, store, config):
    betting_pb2_grpc.add_BettingServiceServicer_to_server(BettingService(repo), server)
