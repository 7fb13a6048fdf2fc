"""Split a table's log into hands.

A hand is every event from its ``HandStarted`` up to the next ``HandStarted`` that belongs to a
hand (table events between hands, such as a player sitting down or topping up, are not part
of it; a time-out or a player leaving during the hand is). Player names are the name (else the
player id) of the ``PlayerSeated`` or ``BuyInRequested`` that put the player in the seat, as
of the hand.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from shared.poker import events as E
from shared.poker.options import TableOptions

#: events that happen inside a hand besides the hand events proper
IN_HAND = E.HAND_EVENTS + (E.PlayerTimedOut, E.PlayerLeaving, E.PlayerDisconnected,
                           E.PlayerReconnected)


@dataclass(frozen=True)
class HandRecord:
    table_id: str
    options: TableOptions
    hand_no: int
    button: int
    names: dict[int, str]  # seat -> player name, for the seats dealt in
    events: tuple[object, ...]  # HandStarted first
    started_at_ms: int | None = None  # when the hand started (the commit time), if known
    seq: int | None = None  # stream sequence of the commit holding HandStarted, if known
    extra: dict = field(default_factory=dict)
    players: dict[int, str] = field(default_factory=dict)  # seat -> player id, seats dealt in

    @property
    def start(self) -> E.HandStarted:
        return cast(E.HandStarted, self.events[0])  # a record's events open with it

    @property
    def complete(self) -> bool:
        return any(isinstance(e, E.HandEnded) for e in self.events)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    def name(self, seat: int) -> str:
        return self.names.get(seat) or f"Seat {seat}"


class HandSplitter:
    """A table's events, one at a time, into hand records: who sits where (their printed
    names and player ids), and the events of the hand running. :func:`hands` splits a whole
    log with it; the web's incremental hand pages (services/web/hands.py) feed it a commit at a
    time. ``options``/``table_id`` stand in for a missing TableCreated."""

    def __init__(self, table_id: str = "", options: TableOptions | None = None) -> None:
        self.table_id, self.options = table_id, options
        self.names: dict[int, str] = {}
        self.ids: dict[int, str] = {}
        self.current: list[object] | None = None  # the running hand's events so far
        self.started: int | None = None
        self.seq: int | None = None
        self.hand_names: dict[int, str] = {}
        self.hand_ids: dict[int, str] = {}

    @property
    def hand_no(self) -> int:
        """The running (or last) hand's number; 0 before the first."""
        return cast(E.HandStarted, self.current[0]).hand_no if self.current else 0

    def feed(self, e: object, at_ms: int | None = None, seq: int | None = None
             ) -> HandRecord | None:
        """Take one event (``at_ms``: its time, ``seq``: its commit's stream sequence); the
        record of the hand it ends, when it starts the next."""
        closed = None
        if isinstance(e, E.TableCreated):
            self.options, self.table_id = e.options, e.table_id
        elif isinstance(e, E.PlayerSeated) or isinstance(e, E.BuyInRequested) and not e.top_up:
            self.names[e.seat] = e.name or e.player_id
            self.ids[e.seat] = e.player_id
        elif isinstance(e, E.PlayerLeft):
            self.names.pop(e.seat, None)
            self.ids.pop(e.seat, None)
        if isinstance(e, E.HandStarted):
            closed = self.running()
            self.current, self.started, self.seq = [e], at_ms, seq
            self.hand_names = {p.seat: self.names.get(p.seat, f"Seat {p.seat}")
                               for p in e.players}
            self.hand_ids = {p.seat: self.ids[p.seat] for p in e.players if p.seat in self.ids}
        elif self.current is not None and isinstance(e, IN_HAND):
            self.current.append(e)
        return closed

    def running(self) -> HandRecord | None:
        """The running hand's record as the events so far have it (None before a hand)."""
        if not self.current:
            return None
        if self.options is None:
            raise ValueError("the log has no TableCreated event: pass options=")
        start = cast(E.HandStarted, self.current[0])  # a hand's events open with it
        return HandRecord(self.table_id, self.options, start.hand_no, start.button,
                          dict(self.hand_names), tuple(self.current), self.started, self.seq,
                          players=dict(self.hand_ids))


def hands(events: Iterable[object], at_ms: Sequence[int | None] | None = None,
          *, seqs: Sequence[int | None] | None = None, options: TableOptions | None = None,
          table_id: str = "") -> list[HandRecord]:
    """The hands in a table's events (in log order). ``at_ms``: each event's time (unix ms),
    ``seqs``: the stream sequence of each event's commit, both parallel to ``events``;
    ``options``/``table_id`` stand in for a missing TableCreated."""
    events = list(events)
    times = list(at_ms) if at_ms is not None else [None] * len(events)
    if len(times) != len(events):
        raise ValueError("at_ms must give one time per event")
    seqs = list(seqs) if seqs is not None else [None] * len(events)
    if len(seqs) != len(events):
        raise ValueError("seqs must give one sequence per event")
    split = HandSplitter(table_id, options)
    out = [r for e, t, q in zip(events, times, seqs) if (r := split.feed(e, t, q)) is not None]
    last = split.running()
    return out + ([last] if last is not None else [])
