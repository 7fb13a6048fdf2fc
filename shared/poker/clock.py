"""The action clock (RULES.md §7), derived from the log: a decision's clock starts at the time
of the commit that put the player on turn. Each decision gets ``decision_seconds``, then a
visible ``countdown_seconds``; a player who reconnects while still on the clock gets
``reconnect_bonus_seconds`` more, once per decision.

Times are the commits' own timestamps (milliseconds), so a restarted service finds the same
deadline. Nothing orders events by time (a table's events are ordered by stream sequence
alone; a commit stamped earlier than the one before it folds as any other): the clock only
says when a decision is late.

One time source per table: the table service's. Services whose clocks disagree by seconds
must still time out the right player at the right moment, so no other service's clock enters a
decision. Every step the table service asks for carries its time (``StepRequest.now_unix_ms``,
filled by ``Driver.call``; the keeper's time-out carries the keeper's ``now``), and the service
taking the step stamps its commit with that time, not its own (:func:`step_time`); the table
service's own commits are stamped by its own clock. So the commit that starts a decision, the
keeper's deadline check, the betting service's lateness check on ``TimeOut`` (against the
request's time) and the time-out's commit all read the table service's clock: the time-out's
commit time is the very ``now`` the keeper found late, so it is never before the deadline and
the audit (which compares the two commit times) agrees. A service checks the time it is given
against its own clock: more than :data:`CLOCK_TOLERANCE_MS` apart is refused
(:class:`~shared.poker.errors.ClockSkew`, UNAVAILABLE, nothing appended), so a badly set clock
on either side is loud instead of silently moving deadlines. 0 (an older caller): the
service's own clock.

What is left is skew between table-service replicas: the replica that took a player's action
stamps the start of the next decision, and the lease holder's keeper judges its deadline. The
two are the same service's clocks (kept in sync as any one service's replicas are, by NTP:
milliseconds), and each passed the tolerance check of the same peer services, so they are at
most ``2 * CLOCK_TOLERANCE_MS`` apart even when NTP fails; the player is timed out at most that
early or late, and never before the deadline by the log's own times (the audit's view).

The clock does not run while the table cannot act. When the log refuses the table's appends
(out of space: no action, no time-out can land), the clock keeper notes when, and once the log
accepts again it appends ``ClockRestarted`` before anything else is decided on the clock: the
decision starts again at that commit (a whole decision time), so the player on turn is not
timed out for the outage. Only the keeper sees the outage (nothing reaches the log during
it) and the first refusal it sees may be at the deadline itself, so "the time the outage took"
cannot be measured from the log; a fresh decision time is what every fold of the log agrees on
(services/table/keeper.py).
"""

from __future__ import annotations

from . import events as E
from .errors import ClockSkew, IllegalAction
from .evolve import Value, value
from .options import TableOptions
from .state import HandState, Phase, TableState

#: how far the time a step is asked at (the table service's) may be from the clock of the
#: service taking it: further apart, one of the two clocks is wrong and the step is refused
CLOCK_TOLERANCE_MS = 60_000

#: events that move a hand on: a decision after one of them is a new decision
_PROGRESS = (E.HandStarted, E.CardsDealt, E.ActionTaken, E.PlayerTimedOut, E.ForcedBetPosted,
             E.BettingRoundClosed, E.BetReturned)


@value
class TurnClock(Value):
    hand_no: int
    seat: int
    started_ms: int
    bonus: bool = False  # the reconnect bonus was granted for this decision

    def countdown_ms(self, options: TableOptions) -> int:
        """When the visible countdown starts."""
        return self.started_ms + options.decision_seconds * 1000

    def deadline_ms(self, options: TableOptions) -> int:
        extra = options.reconnect_bonus_seconds if self.bonus else 0
        return self.started_ms + (options.decision_seconds + options.countdown_seconds
                                  + extra) * 1000


def on_turn(table: TableState | None) -> tuple[int, int] | None:
    """(hand_no, seat) of the player whose decision the clock is timing, if any."""
    if table is None or table.hand is None:
        return None
    hand = table.hand
    if hand.phase is Phase.BET and hand.to_act is not None:
        return hand.hand_no, hand.to_act
    return None


def clock_after(clock: TurnClock | None, table: TableState | None, events: list[object],
                at_ms: int) -> TurnClock | None:
    """The clock after a commit of ``events`` made at ``at_ms`` left the table as ``table``."""
    turn = on_turn(table)
    if turn is None:
        return None
    hand_no, seat = turn
    moved = reconnected = False
    for e in events:  # one pass: this runs after every commit of a betting round
        if isinstance(e, _PROGRESS) or isinstance(e, E.ClockRestarted) and e.seat == seat:
            moved = True
        elif isinstance(e, E.PlayerReconnected) and e.seat == seat:
            reconnected = True
    if clock is None or moved or clock.hand_no != hand_no or clock.seat != seat:
        clock = TurnClock(hand_no, seat, at_ms)
    if reconnected and not clock.bonus:
        clock = TurnClock(hand_no, seat, clock.started_ms, bonus=True)
    return clock


def is_late(clock: TurnClock | None, options: TableOptions, now_ms: int) -> bool:
    return clock is not None and now_ms >= clock.deadline_ms(options)


def refuse_late_action(clock: TurnClock | None, options: TableOptions, seat: int,
                       hand_no: int, now_ms: int) -> None:
    """An action after the deadline is refused (RULES §7): the seat on the clock of hand
    ``hand_no`` whose deadline has passed at ``now_ms`` no longer decides; the table acts for
    it (the time-out rule). IllegalAction saying so."""
    if (clock is not None and clock.seat == seat and clock.hand_no == hand_no
            and is_late(clock, options, now_ms)):
        raise IllegalAction(f"seat {seat}'s time ran out at {clock.deadline_ms(options)} (unix "
                            f"ms): the table acts for it (the {options.timeout_policy.value} "
                            f"time-out rule)")


def running_hand(table: TableState, hand_no: int) -> HandState:
    """A step or an action names the hand it is for: one for another hand than the table's
    running one (a hand over, or not started) is refused (IllegalAction)."""
    hand = table.hand
    if hand is None:
        raise IllegalAction("no hand has started at this table")
    if hand.hand_no != hand_no:
        raise IllegalAction(f"hand {hand_no} is not the table's hand (it is at hand "
                            f"{hand.hand_no})")
    return hand


def step_time(asked_ms: int, own_ms: int) -> int:
    """The time a step's commit is made at: ``asked_ms``, the table service's time sent with
    the step (0: none sent, ``own_ms``), checked against ``own_ms``, the clock of the service
    taking it; ClockSkew if they are more than :data:`CLOCK_TOLERANCE_MS` apart."""
    if not asked_ms:
        return own_ms
    if abs(asked_ms - own_ms) > CLOCK_TOLERANCE_MS:
        raise ClockSkew(f"the table service's time {asked_ms} (unix ms) is {asked_ms - own_ms} "
                        f"ms from this service's clock ({own_ms}), more than the "
                        f"{CLOCK_TOLERANCE_MS} ms tolerated: one of the two clocks is wrong")
    return asked_ms
