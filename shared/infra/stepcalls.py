"""What the internal services share: finding the hand a step is for, the reply, and the
request that takes an automated step (the table service's driver sends it; a service that
takes its own next steps in one message builds it the same way, with the same command id)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from poker.betting.v1 import betting_pb2
from poker.dealer.v1 import dealer_pb2
from poker.engine.v1 import step_pb2

from shared.poker.clock import running_hand, step_time
from shared.poker.state import HandState, TableState
from shared.poker.steprules import STEPS, StepRule

from .protomap import ACTION_KIND
from .repository import LoadedTable, Outcome, TableRepository, UnknownTable, digest
from .rpc import check_step, rpc, system_command_id
from .secrecy import Sealing


def current_hand(table: TableState | None, table_id: str, hand_no: int) -> HandState:
    """The running hand, which must be ``hand_no`` (shared/poker/clock.py ``running_hand``:
    a step for a stale hand is refused)."""
    if table is None:
        raise UnknownTable(f"there is no table {table_id!r}")
    return running_hand(table, hand_no)


def reply(outcome: Outcome) -> step_pb2.StepReply:
    return step_pb2.StepReply(version=outcome.version, events=outcome.events,
                              duplicate=outcome.duplicate, commit=outcome.commit)


def asked_time(repo: TableRepository, step) -> int:
    """The step's time: the table service's (``StepRequest.now_unix_ms``), checked against
    this service's clock (shared/poker/clock.py :func:`~shared.poker.clock.step_time`)."""
    return step_time(step.now_unix_ms, repo.now_ms())


def catch_up(repo: TableRepository, step) -> None:
    """Check the request and fold the commits it carries (``StepRequest.tail``) that chain
    onto the cached fold, so that a fold behind the caller by a commit or two needs no read
    of the log."""
    check_step(step)
    repo.absorb_tail(step.table_id, ((c.seq, c.data) for c in step.tail))


async def run_step(repo: TableRepository, step, command_digest: bytes,
                   decide: Callable[[TableState | None], list],
                   guard: Callable[[LoadedTable], None] | None = None,
                   sealing: Sealing | None = None) -> step_pb2.StepReply:
    """One internal step: check the request and its time, catch up with its tail, decide on
    the table's fold (the cached one when it is at least the version the caller saw), append
    stamped with the caller's time (:func:`asked_time`), reply.
    ``guard``, ``sealing``: see :meth:`TableRepository.execute`."""
    at_ms = asked_time(repo, step)
    catch_up(repo, step)
    outcome = await repo.execute(step.table_id, step.command_id, command_digest, decide,
                                 min_version=step.version or None, guard=guard,
                                 sealing=sealing, at_ms=at_ms)
    return reply(outcome)


def for_hand(step, decision: Callable[..., list], *args) -> Callable[[TableState | None], list]:
    """A decide function: ``decision(hand, *args)`` on the hand the step is for."""
    return lambda table: decision(current_hand(table, step.table_id, step.hand_no), *args)


#: the message of each step call that takes more than a StepRequest (the others take one)
STEP_MESSAGES: dict[str, type] = {"Act": betting_pb2.ActRequest,
                                  "TimeOut": betting_pb2.TimeOutRequest,
                                  "ShowOrMuck": dealer_pb2.ShowRequest}

#: the requests of the steps whose call takes more than a StepRequest, by the call's name
_REQUESTS: dict[str, Callable[[step_pb2.StepRequest, Any], Any]] = {
    # a leaver's hand folded (a stud bring-in posted)
    "Act": lambda request, step: betting_pb2.ActRequest(
        step=request, seat=step.seat, action=ACTION_KIND.to_pb(step.action)),
    # nobody asked to show: the rule for a player who does not
    "ShowOrMuck": lambda request, step: dealer_pb2.ShowRequest(
        step=request, seat=step.seat, choice=dealer_pb2.SHOW_CHOICE_DEFAULT),
}


def step_call(table_id: str, version: int, table: TableState, step,
              ) -> tuple[str, str, Any] | None:
    """The call that takes the automated ``step`` of ``table`` at ``version``
    (shared/poker/steprules.py): (its owner, the owner's method, the request), under the one
    command id the step has there; None for a step the table service takes itself (a hand's
    start, a seat freed)."""
    rule = STEPS[type(step)]
    if rule.owner == "table":
        return None
    if rule.default is not None and rule.default_rpc:
        raise AssertionError(f"{type(step).__name__} is a player's step: the driver does not "
                             f"take it")
    hand_no = table.hand.hand_no if table.hand is not None else 0
    request = step_pb2.StepRequest(
        table_id=table_id, hand_no=hand_no, version=version,
        command_id=system_command_id("drv", hand_no, type(step).__name__, version))
    build = _REQUESTS.get(rule.rpc)
    return rule.owner, rule.rpc, build(request, step) if build is not None else request


def house_step(repo: TableRepository, rule: StepRule) -> Callable[[Any, Any], Any]:
    """The call that takes a house step (shared/poker/steprules.py), as its owner's step
    stream serves it: load, the house's decision, append, reply; errors as a unary call's."""
    decision, fingerprint = rule.house, rule.fingerprint
    assert decision is not None and fingerprint is not None  # (a house step has both)

    async def take(_: object, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        return await run_step(repo, request,
                              digest(*fingerprint(None, request.hand_no, request.version)),
                              for_hand(request, decision))

    take.__name__ = rule.rpc
    return functools.partial(rpc(take), None)
