"""Living with the failures of the services a table needs: failures reported once (the
driver, the clock keeper and the cashier share them); retries of idempotent calls are
shared/infra/retry.py's."""

from __future__ import annotations

import time

import structlog

from shared.poker.clock import TurnClock

log = structlog.get_logger()


class Failures:
    """What keeps failing at each table, so that it is reported once and retried less often:
    the first failure of a kind is an error with its traceback; the same again is logged at
    debug level, and the table is left alone for a while that doubles up to ``max_s``."""

    def __init__(self, what: str, first_s: float = 0.5, max_s: float = 30.0,
                 monotonic=time.monotonic) -> None:
        self.what = what
        self.first_s = first_s
        self.max_s = max_s
        self.monotonic = monotonic
        self._failing: dict[str, tuple[str, float, float]] = {}  # table -> (kind, wait, at)

    def failed(self, table_id: str, exc: BaseException) -> None:
        kind = f"{type(exc).__name__}: {exc}"
        seen = self._failing.get(table_id)
        if seen is None or seen[0] != kind:
            log.error(f"{self.what} failed; the table waits for it (reported once)",
                      table_id=table_id, exc_info=exc)
            wait = self.first_s
        else:
            log.debug(f"{self.what} failed again", table_id=table_id, error=kind)
            wait = min(seen[1] * 2, self.max_s)
        self._failing[table_id] = (kind, wait, self.monotonic() + wait)

    def ok(self, table_id: str) -> None:
        if self._failing.pop(table_id, None) is not None:
            log.info(f"{self.what} works again", table_id=table_id)

    def until(self, table_id: str) -> float | None:
        """When (monotonic) the table's wait after a failure is over (None: not failing)."""
        seen = self._failing.get(table_id)
        return seen[2] if seen is not None else None

    def waiting(self, table_id: str) -> bool:
        """Whether the table failed a moment ago (leave it until its wait is over)."""
        seen = self._failing.get(table_id)
        return seen is not None and self.monotonic() < seen[2]


class Outages:
    """The decisions on the clock at each table when the event log refused the table's
    appends for lack of space (RULES §7: the clock does not run while the table cannot act):
    table -> (the decision's clock, when the log first refused). The clock keeper appends
    ``ClockRestarted`` for it once the log accepts again (services/table/keeper.py), and until
    then neither it nor the table service holds the player late."""

    def __init__(self) -> None:
        self._held: dict[str, tuple[TurnClock, int]] = {}

    def refused(self, table_id: str, clock: TurnClock | None, at_ms: int) -> None:
        """The log refused an append at the table while ``clock``'s decision was on."""
        if clock is None:
            return
        held = self._held.get(table_id)
        if held is None or not same_decision(held[0], clock):
            log.warning("the event log is out of space: the clock is held", table_id=table_id,
                        hand_no=clock.hand_no, seat=clock.seat, refused_at_ms=at_ms)
            self._held[table_id] = (clock, at_ms)

    def held(self, table_id: str, clock: TurnClock | None) -> int | None:
        """When the log first refused during ``clock``'s decision, if it did (else None; a
        record of an earlier decision is dropped)."""
        held = self._held.get(table_id)
        if held is None:
            return None
        if not same_decision(held[0], clock):
            del self._held[table_id]
            return None
        return held[1]

    def over(self, table_id: str) -> None:
        self._held.pop(table_id, None)


def same_decision(a: TurnClock | None, b: TurnClock | None) -> bool:
    return a is not None and b is not None and (a.hand_no, a.seat, a.started_ms) == (
        b.hand_no, b.seat, b.started_ms)
