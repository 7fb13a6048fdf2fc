"""A tournament's tables: the director's commands, and the cash-game commands refused."""

from __future__ import annotations

import pytest

from shared.poker import events as E
from shared.poker import table as T
from shared.poker.clock import on_turn
from shared.poker.decide import next_step
from shared.poker.driver import Dealer, automatic_decision, new_table, run_hand
from shared.poker.errors import IllegalAction
from shared.poker.fold import apply
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
    assert t.paused and T.table_step(t) is None  # no hand until the director releases one
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
