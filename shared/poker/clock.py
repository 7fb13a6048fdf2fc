"""The action clock (RULES.md §7), derived from the log: a decision's clock starts at the time
of the commit that put the player on turn. Each decision gets ``decision_seconds``, then a
visible ``countdown_seconds``; a player who reconnects while still on the clock gets
``reconnect_bonus_seconds`` more, once per decision.

Times are the commits' own timestamps (milliseconds), recorded by whoever appended them, so a
restarted service finds the same deadline. Nothing orders events by time: the clock only says
when a decision is late.

The clock does not run while the table cannot act. When the log refuses the table's appends
(out of space: no action, no time-out can land), the clock keeper notes when, and once the log
accepts again it appends ``ClockRestarted`` before anything else is decided on the clock: the
decision starts again at that commit (a whole decision time), so the player on turn is not
timed out for the outage. Only the keeper sees the outage (nothing reaches the log during
it) and the first refusal it sees may be at the deadline itself, so "the time the outage took"
cannot be measured from the log; a fresh decision time is what every fold of the log agrees on
(services/table/clock.py).
"""

from __future__ import annotations

from . import events as E
from .evolve import Value, value
from .options import TableOptions
from .state import Phase, TableState

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
