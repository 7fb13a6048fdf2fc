"""The audit re-decides every balancing move (issue 30) from the tables' logs: the move is
found where the tables' logs take the mover off and seat them, and it is the rules' move for
the big blinds and stacks those logs had then."""

from __future__ import annotations

from shared.audit.tournament import audit_tournament
from shared.poker import events as TE
from shared.poker.handrunner import new_table
from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament.balance import Move
from shared.poker.tournament.state import TournamentState, fold
from shared.poker.tournament.structure import Kind, Level, Structure
from shared.poker.tournament.tables import seat_entrant
from shared.poker.tournament.tables import tournament_table_options as options

DIGEST = "ab" * 32
SEED = bytes(range(32))
SEED2 = b"\x05" * 32


def _started(tables: int = 2) -> tuple[list[E.TournamentEvent], TournamentState]:
    """Four players at each of ``tables`` tables of four (T1, T2, ...)."""
    st = Structure(Kind.SCHEDULED, (Level(10, 20, 0, 1),), 500, 10, 1, 30, seats_per_table=4)
    events: list[E.TournamentEvent] = [*D.create(None, "m", st, "moves", 0)]
    s = fold(events)
    for i in range(4 * tables):
        more = [*D.register(s, f"p{i}", DIGEST, f"p{i}"), E.EntryPaid(f"p{i}", 1)]  # type: ignore
        events += more
        s = fold(more, s)
    ids = [f"T{i + 1}" for i in range(tables)]
    for decide in (lambda t: D.commit_seed(t, SEED), lambda t: D.start(t, SEED, ids, 0)):
        more = decide(s)
        events += more
        s = fold(more, s)
    assert s is not None
    return events, s


def _bust(events: list[E.TournamentEvent], s: TournamentState, n: int, table_id: str = "T1"):
    """``n`` players of ``table_id`` eliminated."""
    for k, (_, who) in enumerate(s.table(table_id).players[:n]):
        more = D.eliminate(s, table_id, k + 1, [(who, 500)], 0)
        events = [*events, *more]
        s = fold(more, s)  # type: ignore[assignment]
    return events, s


def _logs(s: TournamentState, moves: tuple[Move, ...],
          big_blinds: dict[str, int]) -> dict[str, list[object]]:
    """The tables' logs: everyone the tournament seats seated with 500 chips, a hand started
    with the big blind ``big_blinds`` names, then each move made (off one table, on the
    other)."""
    logs: dict[str, list[object]] = {}
    for table in s.tables:
        opts = options("m", Level(10, 20, 0, 1), 4)
        t = new_table(opts, table.table_id)
        logs[table.table_id] = [TE.TableCreated(table.table_id, opts)]
        for seat, who in table.players:
            logs[table.table_id] += seat_entrant(t, seat, who, 500, DIGEST)
        if table.table_id in big_blinds:
            logs[table.table_id] += _a_hand_started(table.players, big_blinds[table.table_id])
    for m in moves:
        logs[m.from_table].append(TE.PlayerLeft(m.from_seat))
        logs[m.to_table].append(TE.PlayerSeated(m.to_seat, m.player_id, 500, DIGEST))
    return logs


def _a_hand_started(players: tuple[tuple[int, str], ...], big_blind: int) -> list[object]:
    """A hand's start naming ``big_blind`` as its big blind."""
    seats = [seat for seat, _ in players]
    return [TE.HandStarted(1, seats[0], tuple(TE.SeatStack(x, 500) for x in seats),
                           (TE.ForcedBet(big_blind, TE.ForcedKind.BIG_BLIND, 20),))]


def _audited(events, moved: E.PlayersMoved, big_blind: int,
             table_id: str = "T2") -> list[str]:
    """The audit's problems with ``moved``, the tables' logs holding its moves and
    ``table_id``'s last big blind at seat ``big_blind``."""
    s = fold(events)
    assert s is not None
    logs = _logs(s, moved.moves, {table_id: big_blind})
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
    logs = _logs(s, (), {"T2": big_blind})
    (problem,) = [p for p in audit_tournament([*events, moved], logs) if "PlayersMoved" in p]
    assert f"the move {m.player_id} T2 seat {m.from_seat}" in problem
    assert "T2's log never lets" in problem
    (problem,) = _audited(events, moved.evolve(stacks=(400,)), big_blind)
    assert "leave seat" in problem and "with 500" in problem and "with 400" in problem


def test_a_break_is_re_decided_and_a_balancing_move_instead_of_it_fails():
    events, s = _bust(*_bust(*_started(3), 2), 2, "T2")  # 2, 2 and 4: T1 or T2 breaks
    events += D.commit_seed(s, SEED2)
    s = fold(D.commit_seed(s, SEED2), s)  # type: ignore[assignment]
    assert s is not None and D.needs_break(s)
    big_blinds = {t.table_id: t.players[0][0] for t in s.tables}
    stacks = {who: 500 for t in s.tables for _, who in t.players}
    (broken,) = D.rebalance(s, big_blinds, SEED2, stacks)
    assert isinstance(broken, E.PlayersMoved) and broken.broken and len(broken.moves) == 2

    def audited(moved: E.PlayersMoved) -> list[str]:
        logs = _logs(s, moved.moves, big_blinds)  # type: ignore[arg-type]
        return [p for p in audit_tournament([*events, moved], logs) if "PlayersMoved" in p]

    assert audited(broken) == []
    # the two movers' seats swapped (the logs agree)
    m, n = broken.moves
    assert m.to_table == n.to_table
    (problem,) = audited(broken.evolve(moves=(m.evolve(to_seat=n.to_seat),
                                              n.evolve(to_seat=m.to_seat))))
    assert f"the break moves {m.player_id} {m.from_table} seat {m.from_seat} -> " \
        f"{m.to_table} seat {n.to_seat}" in problem and "are not the rules'" in problem
    # a balancing move where a table is to be broken
    (seat_from, who), to = s.table("T3").players[0], s.table("T1").free_seats()[0]
    balancing = E.PlayersMoved((Move(who, "T3", seat_from, "T1", to),), stacks=(500,))
    (problem,) = audited(balancing)
    assert f"{who} T3 seat {seat_from} -> T1 seat {to} are made where a table is to be " \
        "broken" in problem
