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
_IN_HAND = E.HAND_EVENTS + (E.PlayerTimedOut, E.PlayerLeaving, E.PlayerDisconnected,
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
    names: dict[int, str] = {}
    ids: dict[int, str] = {}
    out: list[HandRecord] = []
    current: list[object] | None = None
    started: int | None = None
    seq: int | None = None
    hand_names: dict[int, str] = {}
    hand_ids: dict[int, str] = {}

    def close() -> None:
        if current:
            if options is None:
                raise ValueError("the log has no TableCreated event: pass options=")
            start = cast(E.HandStarted, current[0])  # a hand's events open with it
            out.append(HandRecord(table_id, options, start.hand_no, start.button,
                                  dict(hand_names), tuple(current), started, seq,
                                  players=dict(hand_ids)))

    for e, t, q in zip(events, times, seqs):
        if isinstance(e, E.TableCreated):
            options, table_id = e.options, e.table_id
        elif isinstance(e, E.PlayerSeated) or isinstance(e, E.BuyInRequested) and not e.top_up:
            names[e.seat] = e.name or e.player_id
            ids[e.seat] = e.player_id
        elif isinstance(e, E.PlayerLeft):
            names.pop(e.seat, None)
            ids.pop(e.seat, None)
        if isinstance(e, E.HandStarted):
            close()
            current, started, seq = [e], t, q
            hand_names = {p.seat: names.get(p.seat, f"Seat {p.seat}") for p in e.players}
            hand_ids = {p.seat: ids[p.seat] for p in e.players if p.seat in ids}
        elif current is not None and isinstance(e, _IN_HAND):
            current.append(e)
    close()
    return out
