"""The tournament audit: a tournament's log re-decided against its tables' logs.

Folding the log checks every revealed seed against the commitment appended before it
(shared/poker/tournament/draw.py) and that no seat is taken twice. Then each decision that a
seed, the clock or a table decided is made again:

- every seating drawn (the first, and each late registrant's) is the draw of its seed over
  the tables and players the log had then;
- every table broken is the seed's choice among the tables the others could seat, and its
  players are the ones moved;
- every elimination is a player the table's log left with no chips after that hand, with the
  stack the hand started with;
- every level started when the structure's clock says, from the start;
- the prizes asked for are the locked payout table's for the places the eliminations give.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from shared.poker import events as TE
from shared.poker.errors import InvalidEvent
from shared.poker.fold import apply as apply_table
from shared.poker.state import TableState
from shared.poker.tournament import events as E
from shared.poker.tournament.balance import breakable, first_seating, late_seat
from shared.poker.tournament.draw import Stream
from shared.poker.tournament.ranking import placings
from shared.poker.tournament.state import TournamentState, apply
from shared.poker.tournament.structure import level_at


def hands_of(table_events: Sequence[object]) -> dict[int, tuple[dict[str, int], dict[str, int]]]:
    """hand number -> (each player's stack when it started, when it ended), from a table's
    events."""
    table: TableState | None = None
    out: dict[int, tuple[dict[str, int], dict[str, int]]] = {}
    for ev in table_events:
        before = table
        table = apply_table(table, ev)
        if isinstance(ev, TE.HandStarted) and before is not None:
            who = {s.seat: s.player_id for s in before.seats}
            out[ev.hand_no] = ({who[p.seat]: p.stack for p in ev.players}, {})
        hand = table.hand
        if hand is not None and not table.hand_running and hand.hand_no in out \
                and not out[hand.hand_no][1]:
            who = {s.seat: s.player_id for s in table.seats}
            out[hand.hand_no][1].update({who[p.seat]: p.stack for p in hand.players})
    return out


def audit_tournament(events: Sequence[E.TournamentEvent],
                     tables: Mapping[str, Sequence[object]]) -> list[str]:
    """The problems found (none: the tournament is what its seeds, its clock and its tables
    decided). ``tables``: each table's events, in order."""
    hands = {t: hands_of(evs) for t, evs in tables.items()}
    problems: list[str] = []
    state: TournamentState | None = None
    for k, ev in enumerate(events):
        before = state
        try:
            state = apply(state, ev)
        except InvalidEvent as exc:
            return [*problems, f"event {k} ({type(ev).__name__}) does not fold: {exc.reason}"]
        if before is not None:
            problem = _redecided(before, ev, hands)
            if problem:
                problems.append(f"event {k} ({type(ev).__name__}): {problem}")
    if state is not None:
        asked = sorted((p.player_id, p.entry_no, p.place, p.amount)
                       for p in state.prize_requests)
        due = sorted((p.player_id, p.entry_no, p.place, p.prize) for p in placings(state)
                     if p.prize)
        if asked != due:
            problems.append(f"the prizes asked for {asked} are not the places' {due}")
    return problems


def _redecided(s: TournamentState, ev: E.TournamentEvent, hands: Mapping) -> str:
    if isinstance(ev, E.PlayersSeated):
        seed = bytes.fromhex(ev.seed)
        if not any(t.players for t in s.tables) and len(ev.seatings) > 1:
            field = [e.player_id for e in s.in_field()]
            want = first_seating(field, [(t.table_id, t.max_seats) for t in s.tables], seed)
        else:
            (st,) = ev.seatings
            want = (late_seat(s.live_tables() or list(s.tables), st.player_id, seed),)
        return "" if want == ev.seatings else f"the seed draws {want}"
    if isinstance(ev, E.PlayersMoved) and ev.broken:
        live = s.live_tables()
        chosen = Stream(bytes.fromhex(ev.seed), "break-table").choice(breakable(live))
        movers = {p for _, p in s.table(ev.broken).players}
        if chosen != ev.broken or {m.player_id for m in ev.moves} != movers:
            return f"the seed breaks {chosen}, moving {sorted(movers)}"
    if isinstance(ev, E.PlayersEliminated):
        started, ended = hands.get(ev.table_id, {}).get(ev.hand_no, ({}, {}))
        for b in ev.busts:
            if ended.get(b.player_id) != 0 or started.get(b.player_id) != b.start_stack:
                return (f"{b.player_id} started hand {ev.hand_no} at {ev.table_id} with "
                        f"{started.get(b.player_id)} and ended it with "
                        f"{ended.get(b.player_id)}")
    if isinstance(ev, E.LevelStarted) and ev.level > 0:
        due, _ = level_at(s.structure, ev.at_ms - s.started_ms)
        if due != ev.level:
            return f"at {ev.at_ms} the clock says level {due + 1}"
    return ""
