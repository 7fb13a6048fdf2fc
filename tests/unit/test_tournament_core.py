"""The tournament core: TDA balancing cases, payouts, committed draws, ranking, the fold."""

from __future__ import annotations

import pytest

from shared.poker.errors import IllegalAction, InvalidEvent, InvalidOptions
from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament.balance import (
    Move,
    TableSeats,
    balance,
    break_table,
    breakable,
    first_seating,
    late_seat,
    next_big_blind,
    worst_free_seat,
)
from shared.poker.tournament.draw import Stream, check_reveal, commitment
from shared.poker.tournament.payouts import prize_pool, prizes, shares_for, tied_prizes
from shared.poker.tournament.ranking import placings
from shared.poker.tournament.state import EntryStatus, Status, TournamentState, fold
from shared.poker.tournament.structure import (
    Kind,
    Level,
    Structure,
    level_at,
    sit_and_go,
)

SEED = bytes(range(32))
DIGEST = "ab" * 32


def table(tid: str, players: dict[int, str], last_bb: int = 0, max_seats: int = 9):
    return TableSeats(tid, max_seats, tuple(sorted(players.items())), last_bb)


# --- TDA balancing ---------------------------------------------------------------------

def test_the_player_who_would_be_big_blind_next_moves_to_the_worst_seat_at_the_short_table():
    # table A: 9 players, last big blind seat 4 -> seat 5 is big blind next; table B: 7
    a = table("A", {s: f"a{s}" for s in range(1, 10)}, last_bb=4)
    b = table("B", {1: "b1", 2: "b2", 3: "b3", 5: "b5", 6: "b6", 8: "b8", 9: "b9"}, last_bb=3)
    # B's big blind reaches free seat 4 first (after seat 3): the worst position
    assert balance([a, b]) == (Move("a5", "A", 5, "B", 4),)


def test_the_big_blind_next_skips_empty_seats_and_wraps_round():
    t = table("A", {1: "x", 2: "y", 8: "z"}, last_bb=8)
    assert next_big_blind(t) == 1
    assert worst_free_seat(t) == 9
    assert worst_free_seat(table("A", {1: "x", 9: "z"}, last_bb=9)) == 2


def test_tables_one_apart_are_balanced_and_two_moves_follow_the_big_blind():
    a = table("A", {s: f"a{s}" for s in range(1, 10)}, last_bb=9)
    b = table("B", {s: f"b{s}" for s in range(1, 9)})
    assert balance([a, b]) == ()
    c = table("C", {1: "c1", 2: "c2", 3: "c3", 4: "c4", 5: "c5"}, last_bb=2)
    moves = balance([a, c])
    # 9 v 5: two moves, a1 (big blind next after seat 9) then a2, to C's seats 6 then 7
    assert moves == (Move("a1", "A", 1, "C", 6), Move("a2", "A", 2, "C", 7))


def test_a_table_is_broken_only_when_the_others_can_seat_its_players():
    a = table("A", {s: f"a{s}" for s in range(1, 8)})  # 7
    b = table("B", {s: f"b{s}" for s in range(1, 8)})  # 7
    c = table("C", {1: "c1", 2: "c2", 3: "c3", 4: "c4"})  # 4: 18 players, 18 free in two
    assert breakable([a, b, c]) == ["A", "B", "C"]
    c5 = c.with_player(5, "c5")  # 19 players do not fit at two tables of 9
    assert breakable([a, b, c5]) == []


def test_breaking_seats_each_player_at_the_shortest_table_in_the_worst_seat():
    a = table("A", {s: f"a{s}" for s in range(1, 8)}, last_bb=7)  # free 8, 9
    b = table("B", {s: f"b{s}" for s in range(1, 7)}, last_bb=2)  # free 7, 8, 9
    c = table("C", {1: "c1", 2: "c2", 3: "c3"})
    broken, moves = break_table([a, b, c], SEED)
    assert broken in ("A", "B", "C")
    if broken == "C":
        # B (6) takes one, then A and B are level at 7: A (first) then B
        assert [(m.to_table, m.to_seat) for m in moves] == [("B", 7), ("A", 8), ("B", 8)]
    tables = {t.table_id: len(t.players) for t in (a, b, c)}
    assert len(moves) == tables[broken]
    assert {m.from_table for m in moves} == {broken}


def test_break_choice_and_order_come_from_the_seed_alone():
    tables = [table(t, {1: f"{t}1", 2: f"{t}2", 3: f"{t}3"}) for t in "ABC"]
    assert break_table(tables, SEED) == break_table(tables, SEED)
    chosen = {break_table(tables, bytes([i]) * 32)[0] for i in range(40)}
    assert chosen == {"A", "B", "C"}  # each can be drawn


def test_late_registrants_sit_at_a_shortest_table():
    a = table("A", {s: f"a{s}" for s in range(1, 7)})
    b = table("B", {1: "b1", 2: "b2", 3: "b3", 4: "b4", 5: "b5"})
    st = late_seat([a, b], "late", SEED)
    assert st.table_id == "B" and st.seat in (6, 7, 8, 9)


# --- first seating and committed randomness ----------------------------------------------

def test_first_seating_is_even_random_and_from_the_seed():
    players = [f"p{i:02}" for i in range(30)]
    seats = first_seating(players, [(t, 9) for t in "ABCD"], SEED)
    assert sorted(s.player_id for s in seats) == players
    per = [sum(s.table_id == t for s in seats) for t in "ABCD"]
    assert sorted(per) == [7, 7, 8, 8]
    assert len({(s.table_id, s.seat) for s in seats}) == 30
    assert seats == first_seating(list(reversed(players)), [(t, 9) for t in "ABCD"], SEED)
    assert seats != first_seating(players, [(t, 9) for t in "ABCD"], b"\x01" * 32)


def test_a_revealed_seed_must_match_its_commitment():
    check_reveal(SEED, commitment(SEED))
    with pytest.raises(InvalidEvent):
        check_reveal(b"\x00" * 32, commitment(SEED))


def test_the_stream_is_uniform_enough_and_never_out_of_bounds():
    s = Stream(SEED, "x")
    counts = [0] * 3
    for _ in range(3000):
        counts[s.below(3)] += 1
    assert all(900 < c < 1100 for c in counts)


# --- payouts and ranking -----------------------------------------------------------------

def test_payouts_lock_by_field_and_remainders_go_to_the_best_places():
    assert shares_for(9) == (5000, 3000, 2000)
    assert shares_for(30) == (3500, 2500, 1700, 1300, 1000)
    assert prizes(1001, (5000, 3000, 2000)) == (501, 300, 200)
    assert prizes(7, (3500, 2500, 1700, 1300, 1000)) == (3, 2, 2, 0, 0)
    assert sum(prizes(98765, shares_for(50))) == 98765
    assert prize_pool(9, 100, 0) == 900 and prize_pool(9, 100, 2000) == 2000
    with pytest.raises(InvalidOptions):
        shares_for(101)


def test_tied_players_share_their_places_prizes():
    assert tied_prizes((500, 300, 200), 2, ["x", "y"]) == {"x": 250, "y": 250}
    assert tied_prizes((500, 301, 200), 2, ["x", "y"]) == {"x": 251, "y": 250}


def _started(n: int, structure: Structure | None = None) -> TournamentState:
    structure = structure or sit_and_go(players=n)
    evs: list[E.TournamentEvent] = D.create(None, "t1", structure, "sng", 0)
    s = fold(evs)
    assert s is not None
    for i in range(n):
        for ev in [*D.register(s, f"p{i}", DIGEST, f"p{i}")]:
            s = fold([ev], s)
        s = fold(D.settle_entry(s, f"p{i}", 1, True), s)
    assert s is not None
    s = fold(D.commit_seed(s, SEED), s)
    assert s is not None and D.ready_to_start(s) == (structure.kind is Kind.SIT_AND_GO)
    started = fold(D.start(s, SEED, [f"T{i}" for i in range(D.tables_for_start(s))], 1000), s)
    assert started is not None
    return started


def test_simultaneous_eliminations_are_ranked_by_starting_stack():
    s = _started(9)
    table_id = s.tables[0].table_id
    for i in range(5):
        s = fold(D.eliminate(s, table_id, i + 1, [(f"p{i}", 100)], 0), s)  # type: ignore
    # one hand busts p5 (started with 300) and p6 (started with 800): p6 third, p5 fourth
    s = fold(D.eliminate(s, table_id, 9, [("p5", 300), ("p6", 800)], 0), s)  # type: ignore
    got = {p.player_id: (p.place, p.prize) for p in placings(s)}
    assert got["p6"] == (3, 180) and got["p5"] == (4, 0) and got["p0"] == (9, 0)
    s = fold(D.eliminate(s, table_id, 10, [("p7", 50)], 0), s)  # type: ignore
    due = D.prizes_due(s, 5)
    assert E.TournamentFinished("p8", 5) in due
    paid = {(e.player_id, e.place, e.amount) for e in due if isinstance(e, E.PrizeRequested)}
    assert paid == {("p6", 3, 180), ("p7", 2, 270), ("p8", 1, 450)}
    s = fold(due, s)
    assert s is not None and s.status is Status.FINISHED and s.winner == "p8"
    assert D.prizes_due(s, 6) == []  # each prize asked for once


def test_equal_starting_stacks_tie_and_split():
    s = _started(9)
    tid = s.tables[0].table_id
    for i in range(6):
        s = fold(D.eliminate(s, tid, i + 1, [(f"p{i}", 10)], 0), s)  # type: ignore
    s = fold(D.eliminate(s, tid, 7, [("p6", 40), ("p7", 40)], 0), s)  # type: ignore
    got = {p.player_id: (p.place, p.prize) for p in placings(s)}
    assert got["p6"] == got["p7"] == (2, 225)  # (270 + 180) / 2
    assert got["p8"] == (1, 450)


def test_registration_rules():
    s = fold(D.create(None, "t2", sit_and_go(players=2), "x", 0))
    assert s is not None
    with pytest.raises(IllegalAction, match="SHA-256"):
        D.register(s, "a", "nope", "a")
    s = fold(D.register(s, "a", DIGEST, "a"), s)
    assert s is not None
    with pytest.raises(IllegalAction, match="already registered"):
        D.register(s, "a", DIGEST, "a")
    s = fold(D.settle_entry(s, "a", 1, True), s)
    s = fold(D.unregister(s, "a"), s)  # type: ignore
    assert s is not None and s.entry("a", 1).status is EntryStatus.WITHDRAWN
    assert D.refund_paid(s, "a", 1) == [E.RefundPaid("a", 1)]
    s = fold(D.register(s, "a", DIGEST, "a"), s)  # a new entry after withdrawing
    assert s is not None and s.latest("a").entry_no == 2  # type: ignore[union-attr]
    s = fold(D.register(s, "b", DIGEST, "b"), s)
    assert s is not None
    with pytest.raises(IllegalAction, match="field is full"):
        D.register(s, "c", DIGEST, "c")


def test_registering_and_unregistering_in_a_loop_is_bounded():
    s = fold(D.create(None, "t2", sit_and_go(players=2), "x", 0))
    assert s is not None
    for n in range(1, D.MAX_UNDONE_ENTRIES + 1):
        s = fold([*D.register(s, "a", DIGEST, "a"), E.EntryPaid("a", n)], s)
        s = fold(D.unregister(s, "a"), s)  # type: ignore[arg-type]
        assert s is not None
    with pytest.raises(IllegalAction, match="withdrawn or been refused 3 entries"):
        D.register(s, "a", DIGEST, "a")
    s = fold([*D.register(s, "b", DIGEST, "b"), E.EntryRefused("b", 1, "poor")], s)
    assert s is not None and D.register(s, "b", DIGEST, "b")  # others are not held up


def _mtt(late: int = 2, entries: int = 2) -> Structure:
    return Structure(Kind.SCHEDULED, (Level(10, 20, 0, 1), Level(20, 40, 0, 1),
                                      Level(50, 100, 10, 1), Level(0, 0, 0, 0.5, True),
                                      Level(100, 200, 20, 1)),
                     1000, 50, 5, 30, min_players=2, late_levels=late, max_entries=entries)


def test_late_registration_and_a_re_entry():
    s = _started(12, _mtt())
    assert not s.registration_closed and len(s.tables) == 2
    tid = next(t.table_id for t in s.tables if "p0" in dict(t.players).values())
    s = fold(D.eliminate(s, tid, 1, [("p0", 1000)], 0), s)  # type: ignore
    s = fold(D.register(s, "p0", DIGEST, "p0"), s)  # type: ignore  # re-entry
    s = fold(D.settle_entry(s, "p0", 2, True), s)  # type: ignore
    s = fold(D.register(s, "late", DIGEST, "late"), s)  # type: ignore
    s = fold(D.settle_entry(s, "late", 1, True), s)  # type: ignore
    for who in ("p0", "late"):
        s = fold(D.commit_seed(s, SEED), s)  # type: ignore
        s = fold(D.seat_late(s, who, SEED, s.live_tables()), s)  # type: ignore
    assert s is not None and s.latest("late").table_id  # type: ignore[union-attr]
    # one minute in: level 2; two: level 3 and registration closes with 14 entries
    assert D.next_level(s, 1000 + 60_000) == [E.LevelStarted(1, 61_000)]
    closing = D.next_level(s, 1000 + 120_000)
    assert closing[0] == E.LevelStarted(2, 121_000)
    assert closing[1] == E.RegistrationClosed(14, 700, prizes(700, shares_for(14)))
    s = fold(closing, s)
    with pytest.raises(IllegalAction, match="closed"):
        D.register(s, "later", DIGEST, "later")  # type: ignore[arg-type]


def test_a_re_entry_beyond_the_allowed_entries_is_refused():
    s = _started(4, _mtt(entries=1))
    tid = s.tables[0].table_id
    s = fold(D.eliminate(s, tid, 1, [("p0", 1000)], 0), s)  # type: ignore
    with pytest.raises(IllegalAction, match="1 of the 1 entries"):
        D.register(s, "p0", DIGEST, "p0")  # type: ignore[arg-type]


def test_levels_run_by_the_clock_and_the_last_goes_on():
    st = _mtt()
    assert level_at(st, 0) == (0, 60_000)
    assert level_at(st, 185_000) == (3, 25_000)  # the break
    assert level_at(st, 10**9) == (4, 0)


def test_hand_for_hand_on_the_bubble_only():
    s = _started(12, _mtt(late=0))
    assert len(s.prizes) == 4 and not D.hand_for_hand(s)
    out = ([e for e in s.in_field() if e.table_id == "T0"][:4]
           + [e for e in s.in_field() if e.table_id == "T1"][:3])
    for i, e in enumerate(out):
        s = fold(D.eliminate(s, e.table_id, i + 1, [(e.player_id, 5)], 0), s)  # type: ignore
    assert s is not None and len(s.in_field()) == 5 and len(s.live_tables()) == 2
    assert D.hand_for_hand(s)


def test_the_fold_refuses_a_seat_taken_twice_and_a_wrong_reveal():
    s = _started(9)
    e = s.in_field()[0]
    other = s.in_field()[1]
    with pytest.raises(InvalidEvent):
        fold([E.PlayersMoved((Move(e.player_id, e.table_id, e.seat, other.table_id,
                                   other.seat),))], s)
    s2 = fold(D.commit_seed(s, SEED), s)
    assert s2 is not None
    with pytest.raises(InvalidEvent, match="commitment"):
        fold([E.PlayersSeated(s2.draws, (b"\x09" * 32).hex(), ())], s2)


def _registered(n: int, structure: Structure | None = None) -> TournamentState:
    s = fold(D.create(None, "t1", structure or sit_and_go(players=n), "sng", 0))
    assert s is not None
    for i in range(n):
        s = fold([*D.register(s, f"p{i}", DIGEST, f"p{i}"),  # type: ignore[arg-type]
                  E.EntryPaid(f"p{i}", 1)], s)
    assert s is not None
    return s


def test_a_draw_uses_only_the_seed_committed_for_it():
    s = _registered(9)
    tables = ["T0"]
    with pytest.raises(IllegalAction, match="no committed seed yet"):
        D.start(s, SEED, tables, 0)
    D.check_start(s)  # the rules alone need no seed: a refused start commits none
    committed = fold(D.commit_seed(s, SEED), s)
    assert committed is not None
    with pytest.raises(IllegalAction, match="not the one committed for draw 1"):
        D.start(committed, b"\x09" * 32, tables, 0)
    started = fold(D.start(committed, SEED, tables, 0), committed)  # folds: the reveal checks
    assert started is not None and not started.pending_commitment
    with pytest.raises(IllegalAction, match="already started"):
        D.check_start(started)
    # a late seat and a table broken reveal their draw's seed likewise
    mtt = _started(12, _mtt())
    mtt = fold([*D.register(mtt, "late", DIGEST, "late"), E.EntryPaid("late", 1)], mtt)
    assert mtt is not None
    with pytest.raises(IllegalAction, match="no committed seed yet"):
        D.seat_late(mtt, "late", SEED, mtt.live_tables())
    mtt = fold(D.commit_seed(mtt, SEED), mtt)
    assert mtt is not None
    with pytest.raises(IllegalAction, match="not the one committed"):
        D.seat_late(mtt, "late", b"\x09" * 32, mtt.live_tables())
    for e in [e for e in mtt.in_field() if e.table_id == "T1"][:5]:
        mtt = fold(D.eliminate(mtt, "T1", 1, [(e.player_id, 5)], 0), mtt)  # type: ignore
    assert mtt is not None and D.needs_break(mtt)
    with pytest.raises(IllegalAction, match="not the one committed"):
        D.rebalance(mtt, {}, b"\x09" * 32)
    assert fold(D.rebalance(mtt, {}, SEED), mtt) is not None


def test_the_tables_a_move_involves_are_held_until_it_is_made():
    s = _started(12, _mtt(late=0))  # two tables of six
    assert D.tables_moving(s, {}) == frozenset()
    t0 = [e for e in s.in_field() if e.table_id == "T0"]
    s = fold(D.eliminate(s, "T0", 1, [(t0[0].player_id, 5), (t0[1].player_id, 5)], 0), s)
    assert s is not None
    assert D.tables_moving(s, {}) == frozenset({"T0", "T1"})  # 4 and 6: one moves
    assert len(D.rebalance(s, {}, None)[0].moves) == 1  # type: ignore[union-attr]
    for e in t0[2:4]:
        s = fold(D.eliminate(s, "T0", 2, [(e.player_id, 5)], 0), s)  # type: ignore
    assert s is not None and D.needs_break(s)  # 2 and 6: T0 breaks, both tables held
    assert D.tables_moving(s, {}) == frozenset({"T0", "T1"})


def test_structure_bounds():
    with pytest.raises(InvalidOptions):
        sit_and_go(players=1)
    with pytest.raises(InvalidOptions):
        Structure(Kind.SIT_AND_GO, (Level(10, 20, 0, 1),), 100, 1, 0, 9, late_levels=1)
    with pytest.raises(InvalidOptions):
        Structure(Kind.SCHEDULED, (Level(20, 10, 0, 1),), 100, 1, 0, 9)


# --- the house's money: fees and a guarantee's overlay ----------------------------------

def _guaranteed(guarantee: int) -> TournamentState:
    st = Structure(Kind.SIT_AND_GO, (Level(10, 20, 0, 1),), 500, 100, 50, 3, min_players=3,
                   seats_per_table=3, guarantee=guarantee)
    return _started(3, st)


def test_the_house_is_owed_the_fees_and_owes_the_overlay_once_registration_closes():
    from shared.poker.tournament.ranking import money_audit, prizes_payable
    s = _guaranteed(400)  # buy-ins 300: the house adds 100; fees 3 x 50
    assert s.registration_closed and s.pool == 400
    assert s.house_due() == (150, 100) and not prizes_payable(s)
    assert D.fees_paid(s) == [E.FeesPaid(150)] and D.overlay_paid(s) == [E.OverlayPaid(100)]
    s = fold([*D.fees_paid(s), *D.overlay_paid(s)], s)
    assert s is not None and prizes_payable(s)
    assert D.fees_paid(s) == [] and D.overlay_paid(s) == []  # once each
    audit = money_audit(s)  # 450 in + 100 from the house = 0 paid + 150 fees + 400 held
    assert (audit.buy_ins, audit.overlay, audit.fees, audit.held) == (450, 100, 150, 400)
    assert audit.balanced
    covered = _guaranteed(200)  # the buy-ins cover the guarantee: no overlay
    assert covered.house_due() == (150, 0) and prizes_payable(covered)
    assert D.overlay_paid(covered) == []
    # registering: nothing is owed yet (an entry may still be refunded)
    registering = fold(D.create(None, "t", sit_and_go(), "x", 0))
    assert registering is not None and registering.house_due() == (0, 0)
    # the fold takes the house's money once, and only what is due
    with pytest.raises(InvalidEvent, match="the house is owed 150, once"):
        fold([E.FeesPaid(140)], _guaranteed(400))
    with pytest.raises(InvalidEvent, match="the house owes 100, once"):
        fold([E.OverlayPaid(100), E.OverlayPaid(100)], _guaranteed(400))


def test_a_prize_paid_before_the_overlay_leaves_the_pool_below_nothing():
    from shared.poker.tournament.ranking import money_audit
    s = _guaranteed(400)
    s = s.evolve(prize_requests=(E.PrizeRequested("p0", 1, 1, 400),),
                 entries=tuple(e.evolve(prize_paid=e.player_id == "p0") for e in s.entries))
    audit = money_audit(s)  # 400 paid from 300 of buy-ins
    assert audit.pool_held == -100 and not audit.balanced
