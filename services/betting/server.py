"""BettingService: players' actions and time-outs. Its house steps (forced bets, closing a
round) are served from shared/poker/steprules.py by its step stream alone."""

from __future__ import annotations

from poker.betting.v1 import betting_pb2, betting_pb2_grpc

from shared.infra.protomap import ACTION_KIND, UnknownEnumValue
from shared.infra.repository import LoadedTable, TableRepository, digest
from shared.infra.rpc import CLIENT_PREFIX, BadRequest, rpc
from shared.infra.seattokens import check_holder
from shared.infra.stepcalls import asked_time, for_hand, run_step
from shared.infra.stepstream import serve_steps
from shared.poker import decide as D
from shared.poker.clock import is_late, refuse_late_action
from shared.poker.errors import IllegalAction
from shared.poker.events import ActionKind
from shared.poker.options import MAX_CHIPS


def _held_by(seat: int, player_id: str, decide):
    """``decide``, for the player the table service authenticated: refused (PERMISSION_DENIED)
    unless the seat is theirs on this service's own fold."""
    def checked(table):
        check_holder(table, seat, player_id)
        return decide(table)
    return checked


def _on_time(seat: int, hand_no: int, now_ms: int):
    """A guard: the player's action comes before their deadline (shared/poker/clock.py)."""
    def checked(lt: LoadedTable) -> None:
        if lt.state is not None:  # (else the decision says there is no such table)
            refuse_late_action(lt.clock, lt.state.options, seat, hand_no, now_ms)
    return checked


def action_from(request_action: int) -> ActionKind:
    try:
        return ACTION_KIND.from_pb(request_action)
    except UnknownEnumValue:
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
    async def Act(self, request: betting_pb2.ActRequest, context):
        """A player's action (a client's command: the seat must be theirs, and the action
        is refused after their deadline, at the step's time, unless the table service holds
        their clock), or the system's (a leaver's hand folded)."""
        step = request.step
        action = action_from(request.action)
        amount = amount_from(request)
        decide = for_hand(step, D.act, request.seat, action, amount)
        guard = None
        if step.command_id.startswith(CLIENT_PREFIX):  # a player's: the seat must be theirs
            decide = _held_by(request.seat, request.player_id, decide)
            if not request.clock_held:
                guard = _on_time(request.seat, step.hand_no, asked_time(self.repo, step))
        return await run_step(self.repo, step,
                              digest("act", step.hand_no, request.seat, action.value, amount),
                              decide, guard=guard)

    @rpc
    async def TimeOut(self, request: betting_pb2.TimeOutRequest, context):
        """A time-out is this service's decision: it checks on its own fold that the seat is
        on the clock the caller saw and that the deadline has passed at the step's time (the
        table service's, shared/poker/clock.py: the time the commit is stamped with)."""
        step = request.step
        seat, started = request.seat, request.clock_started_unix_ms
        now = asked_time(self.repo, step)

        def on_that_clock_and_late(lt: LoadedTable) -> None:
            if lt.state is None:
                return  # the decision says there is no such table
            clock = lt.clock
            if clock is None or (clock.hand_no, clock.seat, clock.started_ms) != (
                    step.hand_no, seat, started):
                raise IllegalAction(f"seat {seat} is not on the clock of hand {step.hand_no} "
                                    f"that started at {started}: that decision is over")
            if not is_late(clock, lt.state.options, now):
                raise IllegalAction(f"seat {seat} has time left: the deadline is "
                                    f"{clock.deadline_ms(lt.state.options)}, it is {now}")

        return await run_step(self.repo, step, digest("timeout", step.hand_no, seat, started),
                              for_hand(step, D.time_out, seat), guard=on_that_clock_and_late)


async def setup(server, repo, store, config):
    servicer = BettingService(repo)
    betting_pb2_grpc.add_BettingServiceServicer_to_server(servicer, server)
    serve_steps(server, servicer, "betting")
