"""A tournament's tables: the director's commands, and the cash-game commands refused."""

from __future__ import annotations

import pytest

from shared.poker import events as E
from shared.poker import table as T
from shared.poker.clock import on_turn
from shared.poker.decide import next_step
from shared.poker.errors import IllegalAction
from shared.poker.fold import apply
from shared.poker.handrunner import Dealer, automatic_decision, new_table, run_hand
from shared.poker.steprules import table_step
from shared.poker.tournament.structure import Level
from shared.poker.tournament.tables import (
    release,
    seat_entrant,
    set_level,
    tournament_table_options,
    unseat,
)

D = "ab" * 32


def _table():
    t = new_table(tournament_table_options("t9", Level(10, 20, 0, 1), 9), "T1")
    for seat, who, stack in ((1, "a", 1500), (4, "b", 1500), (7, "c", 700)):
        for ev in seat_entrant(t, seat, who, stack, D):
            t = apply(t, ev)
    return t


def test_a_tournament_table_starts_paused_and_pauses_after_every_hand():
    t = _table()
    assert t.paused and table_step(t) is None  # no hand until the director releases one
    for ev in release(t):
        t = apply(t, ev)
    assert not t.paused
    t, _ = run_hand(t, 1, 1, [(1, 1500), (4, 1500), (7, 700)])
    assert t.paused and not t.hand_running
    assert sum(s.stack for s in t.seats) == 3700
    for ev in seat_entrant(t, 9, "moved", 900, D):  # arrives after a hand: dealt in at once
        t = apply(t, ev)
    assert not t.seat(9).owes_big_blind  # type: ignore[union-attr]


def test_the_director_seats_moves_and_sets_the_level_between_hands_only():
    t = _table()
    assert [s.owes_big_blind for s in t.seats] == [False] * 3
    with pytest.raises(IllegalAction, match="not free"):
        seat_entrant(t, 4, "d", 100, D)
    with pytest.raises(IllegalAction, match="already seated"):
        seat_entrant(t, 5, "a", 100, D)
    assert unseat(t, 7, "c") == [E.PlayerLeft(7)]
    with pytest.raises(IllegalAction, match="not at seat"):
        unseat(t, 7, "a")
    (configured,) = set_level(t, Level(25, 50, 5, 1))
    assert (configured.options.small_blind, configured.options.big_blind,
            configured.options.ante) == (25, 50, 5)
    assert set_level(t, Level(10, 20, 0, 1)) == []  # already the table's
    for ev in release(t):
        t = apply(t, ev)
    t = apply(t, E.HandStarted(1, 1, (E.SeatStack(1, 1500), E.SeatStack(4, 1500)), ()))
    with pytest.raises(IllegalAction, match="waits for the running hand"):
        unseat(t, 7, "c")
    with pytest.raises(IllegalAction, match="waits for the running hand"):
        set_level(t, Level(25, 50, 5, 1))


def test_no_buy_in_top_up_leaving_or_sitting_out_at_a_tournament_table():
    t = _table()
    with pytest.raises(IllegalAction, match="plays tournament t9: no sitting down"):
        T.sit_down(t, 2, "x", 1000, D)
    with pytest.raises(IllegalAction, match="no top-up"):
        T.top_up(t, 1, 100)
    with pytest.raises(IllegalAction, match="no leaving"):
        T.leave(t, 1)
    with pytest.raises(IllegalAction, match="no sitting out"):
        T.sit_out(t, 1, True)


def test_an_away_player_is_dealt_in_and_blinded_away():
    t = _table()
    for ev in release(t):
        t = apply(t, ev)
    for ev in T.start_next_hand(t):
        t = apply(t, ev)
    dealer = Dealer()
    while True:
        assert t.hand is not None
        step = next_step(t.hand)
        turn = on_turn(t)
        if turn is not None:
            break
        for ev in automatic_decision(t.hand, step, dealer) or []:
            t = apply(t, ev)
    seat = turn[1]
    t = apply(t, E.PlayerTimedOut(seat))
    assert not t.seat(seat).sitting_out  # type: ignore[union-attr]  # dealt in next hand


# --- the director's rules between hands (shared/poker/tournament/tables.py) ---------------

def _tournament(players: int, per_table: int = 9):
    """A scheduled tournament started with ``players`` (p0, p1, ...), its seed drawn."""
    from shared.poker.tournament import decide as TD
    from shared.poker.tournament import events as TE
    from shared.poker.tournament.state import fold
    from shared.poker.tournament.structure import Kind, Structure
    seed = bytes(range(32))
    st = Structure(Kind.SCHEDULED, (Level(10, 20, 0, 1), Level(0, 0, 0, 1, True),
                                    Level(20, 40, 0, 1)), 500, 10, 1, 30,
                   seats_per_table=per_table)
    s = fold(TD.create(None, "t9", st, "t", 0))
    for i in range(players):
        s = fold([*TD.register(s, f"p{i}", D, f"p{i}"), TE.EntryPaid(f"p{i}", 1)], s)
    s = fold(TD.commit_seed(s, seed), s)
    ids = [f"T{i + 1}" for i in range(TD.tables_for_start(s))]
    return fold(TD.start(s, seed, ids, 0), s)


def _its_table(s, table_id: str, stacks: dict[str, int]):
    t = new_table(tournament_table_options("t9", Level(10, 20, 0, 1), 9), table_id)
    for seat, who in s.table(table_id).players:
        for ev in seat_entrant(t, seat, who, stacks.get(who, 500), D):
            t = apply(t, ev)
    return t


def test_the_players_a_hand_leaves_without_chips_bust_with_their_starting_stacks():
    from shared.poker.tournament.tables import busted_after_hand
    s = _tournament(3)
    seats = dict(s.table("T1").players)  # seat -> player
    short = {seats[min(seats)]: 20, seats[max(seats)]: 10}  # all in on the blinds
    t = _its_table(s, "T1", short)
    assert busted_after_hand(s, "T1", t) == []  # no hand yet: nobody is out
    for ev in release(t):
        t = apply(t, ev)
    button = sorted(seats)[1]  # the two short stacks are the blinds
    t, _ = run_hand(t, 1, button, [(seat, s.latest(p).carry if p not in short else short[p])
                                   for seat, p in sorted(seats.items())],
                    dealer=Dealer(shuffle=tuple))
    out = [(seat.player_id, seat.stack) for seat in t.seats if seat.stack == 0]
    assert out  # the unshuffled deck leaves a short stack with nothing
    assert busted_after_hand(s, "T1", t) == [(p, short[p]) for p, _ in out]
    # a player the tournament no longer seats there (moved, already out) is not this hand's
    gone = s.evolve(tables=tuple(x.without_seat(next(k for k, v in seats.items()
                                                     if v == out[0][0]))
                                 for x in s.tables))
    assert out[0][0] not in [p for p, _ in busted_after_hand(gone, "T1", t)]


def test_a_table_is_released_only_when_its_players_are_seated_and_nothing_holds_it():
    from shared.poker.tournament.tables import tables_to_release
    s = _tournament(12, per_table=6)  # two tables of six
    both, full = {"T1", "T2"}, {"T1": 6, "T2": 6}
    assert tables_to_release(s, both, set(), full) == ["T1", "T2"]
    assert tables_to_release(s, {"T1"}, set(), full) == ["T1"]  # T2 is playing a hand
    assert tables_to_release(s, both, {"T2"}, full) == ["T1"]  # held for a move
    assert tables_to_release(s, both, set(), {"T1": 5, "T2": 6}) == ["T2"]  # one to seat
    on_break = s.evolve(level=1)
    assert tables_to_release(on_break, both, set(), full) == []


def test_hand_for_hand_releases_every_table_together():
    from shared.poker.tournament import decide as TD
    from shared.poker.tournament.state import fold
    from shared.poker.tournament.tables import tables_to_release
    s = _tournament(12, per_table=6)
    s = fold(TD.next_level(s, 0) or [], s)
    assert s.registration_closed and len(s.prizes) == 4
    for i, e in enumerate([e for e in s.in_field() if e.table_id == "T1"][:4]
                          + [e for e in s.in_field() if e.table_id == "T2"][:3]):
        s = fold(TD.eliminate(s, e.table_id, i + 1, [(e.player_id, 5)], 0), s)
    assert TD.hand_for_hand(s)  # five left, four paid
    seated = {t.table_id: t.count for t in s.live_tables()}
    assert tables_to_release(s, {"T1"}, set(), seated) == []  # T1 waits for T2
    assert tables_to_release(s, {"T1", "T2"}, set(), seated) == ["T1", "T2"]


def test_a_break_keeps_the_blinds_of_the_level_before_it():
    from shared.poker.tournament.structure import played_level
    s = _tournament(3)
    assert played_level(s.structure, -1) == Level(10, 20, 0, 1)  # before the start
    assert played_level(s.structure, 1) == Level(10, 20, 0, 1)  # the break
    assert played_level(s.structure, 2) == Level(20, 40, 0, 1)
