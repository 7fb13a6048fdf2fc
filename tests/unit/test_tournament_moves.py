"""The audit re-decides every balancing move (issue 30) from the tables' logs: the move is
found where the tables' logs take the mover off and seat them, and it is the rules' move for
the big blinds and stacks those logs had then."""

from __future__ import annotations

from shared.audit.tournament import audit_tournament
from shared.poker import events as TE
from shared.poker.driver import new_table
from shared.poker.fold import apply as apply_table
from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament.balance import Move
from shared.poker.tournament.state import EntryStatus, TournamentState, fold
from shared.poker.tournament.structure import Kind, Level, Structure
from shared.poker.tournament.tables import seat_entrant
from shared.poker.tournament.tables import tournament_table_options as options

DIGEST = "ab" * 32
SEED = bytes(range(32))


def _started() -> tuple[list[E.TournamentEvent], TournamentState]:
    """Eight players at two tables of four (T1, T2)."""
    st = Structure(Kind.SCHEDULED, (Level(10, 20, 0, 1),), 500, 10, 1, 30, seats_per_table=4)
    events: list[E.TournamentEvent] = [*D.create(None, "m", st, "moves", 0)]
    s = fold(events)
    for i in range(8):
        more = [*D.register(s, f"p{i}", DIGEST, f"p{i}"), E.EntryPaid(f"p{i}", 1)]  # type: ignore
        events += more
        s = fold(more, s)
    for decide in (lambda t: D.commit_seed(t, SEED), lambda t: D.start(t, SEED, ["T1", "T2"], 0)):
        more = decide(s)
        events += more
        s = fold(more, s)
    assert s is not None
    return events, s


def _bust(events: list[E.TournamentEvent], s: TournamentState, n: int):
    """``n`` players of T1 eliminated: T1 has 4 - n players, T2 four."""
    for k, (_, who) in enumerate(s.table("T1").players[:n]):
        more = D.eliminate(s, "T1", k + 1, [(who, 500)], 0)
        events = [*events, *more]
        s = fold(more, s)  # type: ignore[assignment]
    return events, s


def _logs(s: TournamentState, moves: tuple[Move, ...], busted: list[str],
          big_blind: int) -> dict[str, list[object]]:
    """The tables' logs: everyone seated, the busted taken off, T2's last hand's big blind at
    seat ``big_blind``, then each move made (off one table, on the other, 500 chips)."""
    logs: dict[str, list[object]] = {}
    for table_id in ("T1", "T2"):
        opts = options("m", Level(10, 20, 0, 1), 4)
        t = new_table(opts, table_id)
        logs[table_id] = [TE.TableCreated(table_id, opts)]
        for seat, who in s.table(table_id).players:
            logs[table_id] += seat_entrant(t, seat, who, 500, DIGEST)
    logs["T1"] += [TE.PlayerLeft(seat) for seat, who in _first_seating(logs["T1"])
                   if who in busted]
    logs["T2"] += _a_hand_started(logs["T2"], big_blind)
    for m in moves:
        logs[m.from_table].append(TE.PlayerLeft(m.from_seat))
        logs[m.to_table].append(TE.PlayerSeated(m.to_seat, m.player_id, 500, DIGEST))
    return logs


def _first_seating(log: list[object]) -> list[tuple[int, str]]:
    return [(ev.seat, ev.player_id) for ev in log if isinstance(ev, TE.PlayerSeated)]


def _a_hand_started(log: list[object], big_blind: int) -> list[object]:
    """A hand's start naming ``big_blind`` as its big blind (the log is folded to check it)."""
    seats = [seat for seat, _ in _first_seating(log)]
    ev = TE.HandStarted(1, seats[0], tuple(TE.SeatStack(x, 500) for x in seats),
                        (TE.ForcedBet(big_blind, TE.ForcedKind.BIG_BLIND, 20),))
    t = None
    for e in [*log, ev]:
        t = apply_table(t, e)
    assert t is not None and t.last_big_blind == big_blind
    return [ev]


def _busted(s: TournamentState) -> list[str]:
    return [e.player_id for e in s.entries if e.status is EntryStatus.BUSTED]


def _audited(events, moved: E.PlayersMoved, big_blind: int) -> list[str]:
    """The audit's problems with ``moved``, the tables' logs holding its moves."""
    s = fold(events)
    assert s is not None
    logs = _logs(s, moved.moves, _busted(s), big_blind)
    return [p for p in audit_tournament([*events, moved], logs) if "PlayersMoved" in p]


def _balancing(events, s: TournamentState, big_blind: int) -> E.PlayersMoved:
    (moved,) = D.rebalance(s, {"T2": big_blind}, None,
                           {who: 500 for _, who in s.table("T2").players})
    assert isinstance(moved, E.PlayersMoved) and len(moved.moves) == 1
    return moved


def test_the_rules_balancing_move_passes_and_a_forged_one_is_named():
    events, s = _bust(*_started(), 2)
    big_blind = s.table("T2").players[1][0]  # the next big blind: T2's third player
    moved = _balancing(events, s, big_blind)
    (m,) = moved.moves
    assert m.from_seat == s.table("T2").players[2][0]
    assert _audited(events, moved, big_blind) == []
    # the same move, but T2's last big blind elsewhere: the rules move another player
    assert _audited(events, moved, s.table("T2").players[0][0])
    # the wrong player moved (the tables' logs agree with the move: the director lied)
    other_seat, other = s.table("T2").players[0]
    wrong = moved.evolve(moves=(m.evolve(player_id=other, from_seat=other_seat),))
    (problem,) = _audited(events, wrong, big_blind)
    assert f"{other} T2 seat {other_seat} -> T1 seat {m.to_seat}" in problem
    assert f"not the rules' ({m.player_id} T2 seat {m.from_seat}" in problem
    # the right player to the wrong seat
    free = next(x for x in range(1, 5) if x not in dict(s.table("T1").players)
                and x != m.to_seat)
    (problem,) = _audited(events, moved.evolve(moves=(m.evolve(to_seat=free),)), big_blind)
    assert f"{m.player_id} T2 seat {m.from_seat} -> T1 seat {free}" in problem


def test_a_move_when_the_tables_are_balanced_fails():
    events, s = _bust(*_started(), 1)  # 3 and 4: balanced
    assert D.rebalance(s, {}, None) == []
    (seat, who), to_seat = s.table("T2").players[0], s.table("T1").free_seats()[0]
    forged = E.PlayersMoved((Move(who, "T2", seat, "T1", to_seat),), stacks=(500,))
    (problem,) = _audited(events, forged, seat)
    assert f"{who} T2 seat {seat} -> T1 seat {to_seat}" in problem and "(no move)" in problem


def test_a_move_the_tables_logs_do_not_hold_or_with_other_chips_fails():
    events, s = _bust(*_started(), 2)
    big_blind = s.table("T2").players[1][0]
    moved = _balancing(events, s, big_blind)
    (m,) = moved.moves
    logs = _logs(s, (), _busted(s), big_blind)
    (problem,) = [p for p in audit_tournament([*events, moved], logs) if "PlayersMoved" in p]
    assert f"the move {m.player_id} T2 seat {m.from_seat}" in problem
    assert "T2's log never lets" in problem
    (problem,) = _audited(events, moved.evolve(stacks=(400,)), big_blind)
    assert "leave seat" in problem and "with 500" in problem and "with 400" in problem
