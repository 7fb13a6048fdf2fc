"""The tournament audit: a tournament's log re-decided against its tables' logs.

Folding the log checks every revealed seed against the commitment appended before it
(shared/poker/tournament/draw.py) and that no seat is taken twice. Then each decision that a
seed, the clock or a table decided is made again:

- every seating drawn (the first, and each late registrant's) is the draw of its seed over
  the tables and players the log had then;
- every table broken is the seed's choice among the tables the others could seat, and its
  players are the ones moved;
- every move is found in the tables' logs (the mover off one seat, on the next, with the
  stack it records), and every balancing move is the rules' for the big blinds the tables'
  logs had then (shared/audit/moves.py);
- every elimination is a player the table's log left with no chips after that hand, with the
  stack the hand started with;
- every level started when the structure's clock says, from the start;
- every rebuy and add-on is one the rules allowed (the period, the count, the stack it
  names), and the payouts locked are the pool of the entries, rebuys and add-ons paid;
- chips come to the tables only as entries' stacks, rebuys and add-ons: every top-up in the
  tables' logs is chips the tournament's log says were added to that player, and back;
- the prizes asked for are the locked payout table's for the places the eliminations give.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from shared.audit.moves import MoveAudit
from shared.poker import events as TE
from shared.poker.errors import IllegalAction, InvalidEvent
from shared.poker.fold import apply as apply_table
from shared.poker.state import TableState
from shared.poker.tournament import decide as D
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


def top_ups_of(table_events: Sequence[object]) -> Counter[tuple[str, int]]:
    """(player, chips) of every top-up in a table's events (at a tournament's table: a
    rebuy's chips, by its director)."""
    table: TableState | None = None
    out: Counter[tuple[str, int]] = Counter()
    for ev in table_events:
        if isinstance(ev, TE.PlayerToppedUp) and table is not None:
            seat = table.seat(ev.seat)
            out[seat.player_id if seat is not None else "", ev.amount] += 1
        table = apply_table(table, ev)
    return out


def _chips_added(events: Sequence[E.TournamentEvent],
                 tables: Mapping[str, Sequence[object]]) -> str:
    """Every rebuy's chips the log says were added, at its table, and no other chips."""
    want = {t: Counter[tuple[str, int]]() for t in tables}
    for ev in events:
        if isinstance(ev, E.RebuyChipsAdded):
            want.setdefault(ev.table_id, Counter())[ev.player_id, ev.chips] += 1
    for table_id, evs in tables.items():
        got = top_ups_of(evs)
        if got != want[table_id]:
            return (f"chips added at {table_id} {sorted(got.items())} are not the rebuys' "
                    f"{sorted(want[table_id].items())}")
    return ""


def audit_tournament(events: Sequence[E.TournamentEvent],
                     tables: Mapping[str, Sequence[object]]) -> list[str]:
    """The problems found (none: the tournament is what its seeds, its clock and its tables
    decided). ``tables``: each table's events, in order."""
    hands = {t: hands_of(evs) for t, evs in tables.items()}
    moves = MoveAudit(tables)
    problems: list[str] = []
    state: TournamentState | None = None
    for k, ev in enumerate(events):
        before = state
        try:
            state = apply(state, ev)
        except InvalidEvent as exc:
            return [*problems, f"event {k} ({type(ev).__name__}) does not fold: {exc.reason}"]
        if before is not None:
            moved = moves.check(before, ev)  # every event: it counts the moves it finds
            problem = _redecided(before, ev, hands) or moved
            if problem:
                problems.append(f"event {k} ({type(ev).__name__}): {problem}")
    problem = _chips_added(events, tables)
    if problem:
        problems.append(problem)
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
    if isinstance(ev, E.RebuyRequested | E.RegistrationClosed):
        return _redecided_money(s, ev)
    if isinstance(ev, E.LevelStarted) and ev.level > 0:
        due, _ = level_at(s.structure, ev.at_ms - s.started_ms)
        if due != ev.level:
            return f"at {ev.at_ms} the clock says level {due + 1}"
    return ""


def _redecided_money(s: TournamentState, ev: E.RebuyRequested | E.RegistrationClosed) -> str:
    """A rebuy (or add-on) the rules allowed with the stack it names; payouts locked on the
    field and the rebuys and add-ons paid."""
    if isinstance(ev, E.RebuyRequested):
        try:
            want = (D.add_on if ev.add_on else D.rebuy)(s, ev.player_id, ev.stack)
        except IllegalAction as exc:
            return f"the rules refuse this rebuy: {exc.reason}"
        return "" if want == [ev] else f"the rules decide {want}"
    closed = D.lock_payouts(s)
    return "" if closed == ev else f"the payouts locked are {closed}"
