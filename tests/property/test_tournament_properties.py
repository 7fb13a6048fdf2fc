"""Tournaments played to the end in the pure core, with random hands: chips are conserved at
every step, nobody is seated twice or lost, the tables stay balanced, one winner holds every
chip, and the prizes add up to the pool, each paid once."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament.balance import apply_moves, balance
from shared.poker.tournament.state import Status, TournamentState, fold
from shared.poker.tournament.structure import Kind, Level, Structure

DIGEST = "cd" * 32


def _apply(s: TournamentState, evs: list[E.TournamentEvent]) -> TournamentState:
    out = fold(evs, s)
    assert out is not None
    _check_seats(out)
    return out


def _check_seats(s: TournamentState) -> None:
    """Every player in the field at one seat that the table also lists; nobody twice."""
    seen = [(p, t.table_id, seat) for t in s.tables for seat, p in t.players]
    assert len({p for p, _, _ in seen}) == len(seen)
    placed = {(e.player_id, e.table_id, e.seat) for e in s.in_field() if e.table_id}
    assert placed == set(seen)


def _seed(rng: random.Random) -> bytes:
    return rng.randbytes(32)


def _play(players: int, per_table: int, rng: random.Random) -> None:
    structure = Structure(Kind.SCHEDULED, (Level(5, 10, 0, 1),), 100, 10, 1, players,
                          seats_per_table=per_table)
    s = fold(D.create(None, "prop", structure, "p", 0))
    assert s is not None
    for i in range(players):
        s = _apply(s, D.register(s, f"p{i:02}", DIGEST, f"p{i}"))
        s = _apply(s, D.settle_entry(s, f"p{i:02}", 1, True))
    seed = _seed(rng)
    s = _apply(s, D.commit_seed(s, seed))
    s = _apply(s, D.start(s, seed, [f"T{i}" for i in range(D.tables_for_start(s))], 0))
    stacks = {e.player_id: 100 for e in s.in_field()}
    big_blinds: dict[str, int] = {}
    total, hand = players * 100, 0
    while s.status is Status.RUNNING:
        if D.needs_break(s):
            seed = _seed(rng)
            s = _apply(s, D.commit_seed(s, seed))
        s = _apply(s, D.rebalance(s, big_blinds, seed))
        counts = [t.count for t in s.live_tables()]
        assert max(counts) - min(counts) <= 1 and not D.needs_break(s)
        table = rng.choice([t for t in s.live_tables() if t.count >= 2])
        hand += 1
        seats = [p for _, p in table.players]
        start = {p: stacks[p] for p in seats}
        # a hand: some players put chips in, one (or two, splitting) take them
        pot = 0
        for p in seats:
            bet = rng.choice([0, 0, stacks[p], rng.randint(0, stacks[p])])
            stacks[p] -= bet
            pot += bet
        winners = rng.sample(seats, rng.choice([1, 1, 2]) if len(seats) > 2 else 1)
        for i, w in enumerate(winners):
            stacks[w] += pot // len(winners) + (1 if i < pot % len(winners) else 0)
        big_blinds[table.table_id] = rng.choice([seat for seat, _ in table.players])
        assert sum(stacks.values()) == total  # chips conserved
        busts = [(p, start[p]) for p in seats if stacks[p] == 0]
        for p, _ in busts:
            del stacks[p]
        s = _apply(s, D.eliminate(s, table.table_id, hand, busts, hand))
        s = _apply(s, D.prizes_due(s, hand))
    assert s.status is Status.FINISHED and stacks == {s.winner: total}
    amounts = [p.amount for p in s.prize_requests]
    assert sum(amounts) == s.pool == players * 10
    assert len({(p.player_id, p.entry_no) for p in s.prize_requests}) == len(amounts)
    assert D.prizes_due(s, hand + 1) == []


@settings(max_examples=60, deadline=None)
@given(players=st.integers(2, 40), per_table=st.integers(2, 10), seed=st.integers(0, 2**32))
def test_tournaments_play_to_one_winner_with_every_chip(players, per_table, seed):
    _play(players, per_table, random.Random(seed))


@settings(max_examples=200, deadline=None)
@given(counts=st.lists(st.integers(0, 9), min_size=2, max_size=8),
       bbs=st.lists(st.integers(0, 9), min_size=8, max_size=8))
def test_balancing_keeps_every_player_once_and_levels_the_tables(counts, bbs):
    from shared.poker.tournament.balance import TableSeats
    tables = [TableSeats(f"T{i}", 9, tuple((s, f"T{i}p{s}") for s in range(1, c + 1)),
                         bbs[i]) for i, c in enumerate(counts)]
    moves = balance(tables)
    after = apply_moves(tables, moves)
    before_players = sorted(p for t in tables for _, p in t.players)
    assert sorted(p for t in after for _, p in t.players) == before_players
    sizes = [t.count for t in after]
    assert max(sizes) - min(sizes) <= 1
    assert all(len({s for s, _ in t.players}) == t.count for t in after)
