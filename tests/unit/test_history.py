"""Hand histories from the event log (shared.history): PokerStars text checked line by line
for hands with known decks, JSON totals, and PHH output that pokerkit replays."""

from __future__ import annotations

import datetime as dt
import json
from collections import deque

import pytest
from pokerkit import HandHistory

from shared.history import hand_id, hands, phh, pokerstars, pokerstars_high, pokerstars_low, to_json
from shared.poker import evaluator as ev
from shared.poker import events as E
from shared.poker.cards import cards
from shared.poker.handrunner import check_call_policy
from shared.poker.options import NO_RAKE_CAP, table_options
from tests.helpers.scenario import Scenario, board_deck, stud_deck

NAMES = {1: "alice", 2: "bob", 3: "carol"}
NL = dict(small_blind=1, big_blind=2, max_seats=6)


def logged(s: Scenario, table_id: str = "t1", names=NAMES) -> list[object]:
    """The scenario's hand as a table log: created, players seated, the hand."""
    seated = [E.PlayerSeated(seat, name, 0, "") for seat, name in names.items()]
    return [E.TableCreated(table_id, s.options), *seated, *s.events]


def one(s: Scenario, **kw):
    (record,) = hands(logged(s), **kw)
    return record


def text(block: str) -> str:
    return "\n".join(line.strip() for line in block.strip().splitlines())


# --- the hands -----------------------------------------------------------------------------


def uncalled_and_rake() -> Scenario:
    """Carol raises, both call; alice bets the flop, bob raises, both fold: bob's raise is
    uncalled (20 back), the 38 pot is raked 5% (1)."""
    s = Scenario(table_options("holdem", "no_limit", **NL),
                 stacks=[(1, 100), (2, 100), (3, 100)], button=3,
                 deck=board_deck({1: "AhKd", 2: "QcQd", 3: "7c2d"}, board="2s3s4h9dJc",
                                 button=3))
    s.play("3 raise 6", "1 call", "2 call", "1 bet 10", "2 raise 30", "3 fold", "1 fold")
    s.finish()
    return s


def three_way_all_in(**opts) -> Scenario:
    """50, 100 and 200 all in preflop: carol's 100 over bob's stack comes back; the main pot
    (150, raked 12: this table takes 5% with no cap) goes to alice's aces, the side pot (100)
    to bob's kings."""
    s = Scenario(table_options("holdem", "no_limit", **{"rake_cap": NO_RAKE_CAP, **NL, **opts}),
                 stacks=[(1, 50), (2, 100), (3, 200)], button=3,
                 deck=board_deck({1: "AhAd", 2: "KcKd", 3: "QhQs"}, board="2s3s4h9dJc",
                                 button=3))
    s.play("3 raise 200", "1 call", "2 call")
    s.finish()
    return s


def split_pot(**opts) -> Scenario:
    s = Scenario(table_options("holdem", "no_limit", **NL, **opts),
                 stacks=[(1, 100), (2, 100), (3, 100)], button=3,
                 deck=board_deck({1: "AhKd", 2: "AcKc", 3: "7c2d"}, board="2s3s4hJdJc",
                                 button=3))
    s.play("3 fold", "1 raise 6", "2 call")
    s.finish(check_call_policy)
    return s


def omaha_hilo() -> Scenario:
    s = Scenario(table_options("omaha_hilo", "pot_limit", **NL),
                 stacks=[(1, 100), (2, 100), (3, 100)], button=3,
                 deck=board_deck({1: "Ah2h3c6c", 2: "QcQdJhJd", 3: "7h8d9s9c"},
                                 board="4c5dTh8hKs", button=3))
    s.play("3 call", "1 call", "2 check", "1 bet 6", "2 call", "3 fold")
    s.finish(check_call_policy)
    return s


def stud_bring_in() -> Scenario:
    s = Scenario(table_options("stud", "fixed_limit", small_bet=10, max_seats=8),
                 stacks=[(1, 100), (2, 100), (3, 100)], button=3,
                 deck=stud_deck({1: "AhKd2cQs5h8s9h", 2: "QcQd3hJc4d5d6d", 3: "7h2d9s"},
                                button=3))
    s.play("1 bring_in", "2 complete 10", "3 fold", "1 call")
    s.finish(check_call_policy)
    return s


EPOCH = "1969/12/31 19:00:00 ET"  # no commit time: the unix epoch in US Eastern time


def test_uncalled_bet_and_rake():
    at = int(dt.datetime(2026, 11, 30, 13, 0, tzinfo=dt.UTC).timestamp() * 1000)
    s = uncalled_and_rake()
    events = logged(s)
    record = hands(events, at_ms=[at] * len(events))[0]
    assert pokerstars(record) == text("""
        PokerStars Hand #1:  Hold'em No Limit (1/2) - 2026/11/30 8:00:00 ET
        Table 't1' 6-max Seat #3 is the button
        Seat 1: alice (100 in chips)
        Seat 2: bob (100 in chips)
        Seat 3: carol (100 in chips)
        alice: posts small blind 1
        bob: posts big blind 2
        *** HOLE CARDS ***
        Dealt to alice [Ah Kd]
        Dealt to bob [Qc Qd]
        Dealt to carol [7c 2d]
        carol: raises 4 to 6
        alice: calls 5
        bob: calls 4
        *** FLOP *** [2s 3s 4h]
        alice: bets 10
        bob: raises 20 to 30
        carol: folds
        alice: folds
        Uncalled bet (20) returned to bob
        bob collected 37 from pot
        bob: doesn't show hand
        *** SUMMARY ***
        Total pot 38 | Rake 1
        Board [2s 3s 4h]
        Seat 1: alice (small blind) folded on the Flop
        Seat 2: bob (big blind) collected (37)
        Seat 3: carol (button) folded on the Flop
    """)


def test_three_way_all_in_with_a_side_pot():
    assert pokerstars(one(three_way_all_in())) == text(f"""
        PokerStars Hand #1:  Hold'em No Limit (1/2) - {EPOCH}
        Table 't1' 6-max Seat #3 is the button
        Seat 1: alice (50 in chips)
        Seat 2: bob (100 in chips)
        Seat 3: carol (200 in chips)
        alice: posts small blind 1
        bob: posts big blind 2
        *** HOLE CARDS ***
        Dealt to alice [Ah Ad]
        Dealt to bob [Kc Kd]
        Dealt to carol [Qh Qs]
        carol: raises 198 to 200 and is all-in
        alice: calls 49 and is all-in
        bob: calls 98 and is all-in
        Uncalled bet (100) returned to carol
        *** FLOP *** [2s 3s 4h]
        *** TURN *** [2s 3s 4h] [9d]
        *** RIVER *** [2s 3s 4h 9d] [Jc]
        *** SHOW DOWN ***
        alice: shows [Ah Ad] (a pair of Aces)
        bob: shows [Kc Kd] (a pair of Kings)
        carol: shows [Qh Qs] (a pair of Queens)
        bob collected 100 from side pot
        alice collected 138 from main pot
        *** SUMMARY ***
        Total pot 250 Main pot 138. Side pot 100. | Rake 12
        Board [2s 3s 4h 9d Jc]
        Seat 1: alice (small blind) showed [Ah Ad] and won (138) with a pair of Aces
        Seat 2: bob (big blind) showed [Kc Kd] and won (100) with a pair of Kings
        Seat 3: carol (button) showed [Qh Qs] and lost with a pair of Queens
    """)


def test_split_pot():
    assert pokerstars(one(split_pot())) == text(f"""
        PokerStars Hand #1:  Hold'em No Limit (1/2) - {EPOCH}
        Table 't1' 6-max Seat #3 is the button
        Seat 1: alice (100 in chips)
        Seat 2: bob (100 in chips)
        Seat 3: carol (100 in chips)
        alice: posts small blind 1
        bob: posts big blind 2
        *** HOLE CARDS ***
        Dealt to alice [Ah Kd]
        Dealt to bob [Ac Kc]
        Dealt to carol [7c 2d]
        carol: folds
        alice: raises 4 to 6
        bob: calls 4
        *** FLOP *** [2s 3s 4h]
        alice: checks
        bob: checks
        *** TURN *** [2s 3s 4h] [Jd]
        alice: checks
        bob: checks
        *** RIVER *** [2s 3s 4h Jd] [Jc]
        alice: checks
        bob: checks
        *** SHOW DOWN ***
        alice: shows [Ah Kd] (a pair of Jacks)
        bob: shows [Ac Kc] (a pair of Jacks)
        alice collected 6 from pot
        bob collected 6 from pot
        *** SUMMARY ***
        Total pot 12 | Rake 0
        Board [2s 3s 4h Jd Jc]
        Seat 1: alice (small blind) showed [Ah Kd] and won (6) with a pair of Jacks
        Seat 2: bob (big blind) showed [Ac Kc] and won (6) with a pair of Jacks
        Seat 3: carol (button) folded before Flop (didn't bet)
    """)


def test_omaha_hilo_high_and_low_halves():
    assert pokerstars(one(omaha_hilo())) == text(f"""
        PokerStars Hand #1:  Omaha Hi/Lo Pot Limit (1/2) - {EPOCH}
        Table 't1' 6-max Seat #3 is the button
        Seat 1: alice (100 in chips)
        Seat 2: bob (100 in chips)
        Seat 3: carol (100 in chips)
        alice: posts small blind 1
        bob: posts big blind 2
        *** HOLE CARDS ***
        Dealt to alice [Ah 2h 3c 6c]
        Dealt to bob [Qc Qd Jh Jd]
        Dealt to carol [7h 8d 9s 9c]
        carol: calls 2
        alice: calls 1
        bob: checks
        *** FLOP *** [4c 5d Th]
        alice: bets 6
        bob: calls 6
        carol: folds
        *** TURN *** [4c 5d Th] [8h]
        alice: checks
        bob: checks
        *** RIVER *** [4c 5d Th 8h] [Ks]
        alice: checks
        bob: checks
        *** SHOW DOWN ***
        alice: shows [Ah 2h 3c 6c] (HI: high card Ace; LO: 8,5,4,2,A)
        bob: shows [Qc Qd Jh Jd] (HI: a pair of Queens)
        bob collected 9 from pot
        alice collected 9 from pot
        *** SUMMARY ***
        Total pot 18 | Rake 0
        Board [4c 5d Th 8h Ks]
        Seat 1: alice (small blind) showed [Ah 2h 3c 6c] and won (9) with HI: high card Ace; LO: 8,5,4,2,A
        Seat 2: bob (big blind) showed [Qc Qd Jh Jd] and won (9) with HI: a pair of Queens
        Seat 3: carol (button) folded on the Flop
    """)
    awards = {(a.portion, a.shares[0].seat) for a in omaha_hilo().of(E.PotAwarded)}
    assert awards == {(E.Portion.HIGH, 2), (E.Portion.LOW, 1)}


STUD = f"""
    PokerStars Hand #1:  7 Card Stud Limit (10/20) - {EPOCH}
    Table 't1' 8-max
    Seat 1: alice (100 in chips)
    Seat 2: bob (100 in chips)
    Seat 3: carol (100 in chips)
    alice: posts the ante 1
    bob: posts the ante 1
    carol: posts the ante 1
    *** 3rd STREET ***
    Dealt to alice [Ah Kd 2c]
    Dealt to bob [Qc Qd 3h]
    Dealt to carol [7h 2d 9s]
    alice: brings in for 3
    bob: completes it to 10
    carol: folds
    alice: calls 7
    *** 4th STREET ***
    Dealt to alice [Ah Kd 2c] [Qs]
    Dealt to bob [Qc Qd 3h] [Jc]
    alice: checks
    bob: checks
    *** 5th STREET ***
    Dealt to alice [Ah Kd 2c Qs] [5h]
    Dealt to bob [Qc Qd 3h Jc] [4d]
    alice: checks
    bob: checks
    *** 6th STREET ***
    Dealt to alice [Ah Kd 2c Qs 5h] [8s]
    Dealt to bob [Qc Qd 3h Jc 4d] [5d]
    alice: checks
    bob: checks
    *** RIVER ***
    Dealt to alice [Ah Kd 2c Qs 5h 8s] [9h]
    Dealt to bob [Qc Qd 3h Jc 4d 5d] [6d]
    alice: checks
    bob: checks
    *** SHOW DOWN ***
    alice: shows [Ah Kd 2c Qs 5h 8s 9h] (high card Ace)
    bob: shows [Qc Qd 3h Jc 4d 5d 6d] (a pair of Queens)
    bob collected 22 from pot
    *** SUMMARY ***
    Total pot 23 | Rake 1
    Seat 1: alice showed [Ah Kd 2c Qs 5h 8s 9h] and lost with high card Ace
    Seat 2: bob showed [Qc Qd 3h Jc 4d 5d 6d] and won (22) with a pair of Queens
    Seat 3: carol folded on the 3rd Street (didn't bet)
"""


def test_stud_with_a_bring_in():
    assert pokerstars(one(stud_bring_in())) == text(STUD)


def test_stud_hilo_shows_name_both_halves_in_pokerstars_words():
    s = Scenario(table_options("stud_hilo", "fixed_limit", small_bet=10, max_seats=8),
                 stacks=[(1, 100), (2, 100), (3, 100)], button=3,
                 deck=stud_deck({1: "Ah2d3cQs5h8s9h", 2: "QcQd4hJc4d5d6d", 3: "7h2s9s"},
                                button=3))
    s.play("1 bring_in", "2 complete 10", "3 fold", "1 call")
    s.finish(check_call_policy)
    out = pokerstars(one(s))
    assert text("""
        *** SHOW DOWN ***
        bob: shows [Qc Qd 4h Jc 4d 5d 6d] (HI: two pair, Queens and Fours)
        alice: shows [Ah 2d 3c Qs 5h 8s 9h] (HI: high card Ace; LO: 8,5,3,2,A)
        bob collected 11 from pot
        alice collected 11 from pot
        *** SUMMARY ***
        Total pot 23 | Rake 1
        Seat 1: alice showed [Ah 2d 3c Qs 5h 8s 9h] and won (11) with HI: high card Ace; LO: 8,5,3,2,A
        Seat 2: bob showed [Qc Qd 4h Jc 4d 5d 6d] and won (11) with HI: two pair, Queens and Fours
    """) in out


@pytest.mark.parametrize("hand, name", [
    ("AhJd8c5s3h", "high card Ace"),
    ("KhKd8c5s3h", "a pair of Kings"),
    ("2h2d8c5s3hJc9d", "a pair of Deuces"),
    ("AhAdKcKs3h", "two pair, Aces and Kings"),
    ("6h6d3c3s2hQd2c", "two pair, Sixes and Threes"),
    ("QhQdQc5s3h", "three of a kind, Queens"),
    ("TsJhQdKcAh", "a straight, Ten to Ace"),
    ("Ah2d3c4s5hKd", "a straight, Ace to Five"),
    ("2d3c4s5h6h", "a straight, Deuce to Six"),
    ("Ah9h7h4h2h", "a flush, Ace high"),
    ("KhKdKc4s4h", "a full house, Kings full of Fours"),
    ("9h9d9c9sAh", "four of a kind, Nines"),
    ("9hThJhQhKh", "a straight flush, Nine to King"),
    ("As2s3s4s5s", "a straight flush, Ace to Five"),
    ("TsJsQsKsAs9s", "a Royal Flush"),
])
def test_every_hand_category_in_pokerstars_words(hand, name):
    assert pokerstars_high(ev.high_value(cards(hand))) == name


@pytest.mark.parametrize("hand, low", [("Ah2d4c5h8s", "8,5,4,2,A"), ("5d4c3h2sAdKc", "5,4,3,2,A"),
                                       ("7c6d4h3s2c8d", "7,6,4,3,2")])
def test_lows_in_pokerstars_words(hand, low):
    assert pokerstars_low(ev.low8_value(cards(hand))) == low


def test_one_players_view_hides_the_others_down_cards():
    """--seat: carol's own cards; the others' up cards (stud) and shown hands only."""
    out = pokerstars(one(stud_bring_in()), viewer=3)
    assert "Dealt to carol [7h 2d 9s]" in out
    assert "Dealt to alice [2c]" in out and "Dealt to alice [2c] [Qs]" in out
    assert "Dealt to alice [2c Qs 5h 8s]" not in out
    assert not any(line.startswith("Dealt to") for line in out.splitlines()
                   if "[9h]" in line or "[6d]" in line)  # 7th street is dealt down
    holdem = pokerstars(one(uncalled_and_rake()), viewer=1)
    assert "Dealt to alice [Ah Kd]" in holdem
    assert "QcQd" not in holdem.replace(" ", "") and "7c" not in holdem
    view = to_json(one(uncalled_and_rake()), viewer=1)
    hole = {h["seat"]: h["cards"] for h in view["streets"][0]["hole"]}
    assert hole == {1: ["Ah", "Kd"], 2: ["??", "??"], 3: ["??", "??"]}


def test_mucked_hands_in_the_auditors_history():
    s = Scenario(table_options("holdem", "no_limit", **NL),
                 stacks=[(1, 100), (2, 100), (3, 100)], button=3,
                 deck=board_deck({1: "AhAd", 2: "7c2d", 3: "KcKd"}, board="2s3s4h9dJc",
                                 button=3))
    s.play("3 call", "1 call", "2 check", "1 check", "2 check", "3 check", "1 check", "2 check",
           "3 check", "1 check", "2 check", "3 check")
    s.show(1)
    s.muck(2)
    s.finish()
    out = pokerstars(one(s))
    assert "bob: mucks hand" in out
    assert "Seat 2: bob (big blind) mucked [7c 2d]" in out
    assert "Seat 2: bob (big blind) mucked\n" in pokerstars(one(s), viewer=1) + "\n"


# --- JSON ----------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [uncalled_and_rake, three_way_all_in, split_pot, omaha_hilo,
                                  stud_bring_in])
def test_json_round_trips_with_consistent_totals(make):
    s = make()
    record = one(s)
    obj = json.loads(json.dumps(to_json(record)))
    awarded = sum(sh["amount"] for a in obj["awards"] for sh in a["shares"])
    assert obj["total_pot"] == sum(p["amount"] for p in obj["pots"]) == awarded + obj["rake"]
    assert obj["rake"] == sum(p["rake"] for p in obj["pots"]) == s.rake
    start = sum(p["stack"] for p in obj["players"])
    final = sum(p["stack"] for p in obj["final_stacks"])
    assert start == final + obj["rake"]
    assert [p["name"] for p in obj["players"]] == ["alice", "bob", "carol"]
    assert obj["complete"] is True


def test_json_of_the_side_pot_hand():
    obj = to_json(one(three_way_all_in()))
    assert obj["pots"] == [{"amount": 150, "eligible": [1, 2, 3], "rake": 12},
                           {"amount": 100, "eligible": [2, 3], "rake": 0}]
    assert obj["uncalled"] == [{"seat": 3, "name": "carol", "amount": 100}]
    assert obj["won"] == {"1": 138, "2": 100}
    assert [st["name"] for st in obj["streets"]] == ["preflop", "flop", "turn", "river"]
    assert obj["board"] == ["2s", "3s", "4h", "9d", "Jc"]
    assert obj["final_stacks"] == [{"seat": 1, "name": "alice", "stack": 138},
                                   {"seat": 2, "name": "bob", "stack": 100},
                                   {"seat": 3, "name": "carol", "stack": 100}]


# --- the log split into hands ------------------------------------------------------------------


def test_a_log_of_several_hands():
    import random

    from shared.poker.handrunner import new_table, random_policy, run_hand

    options = table_options("holdem", "no_limit", small_blind=1, big_blind=2, max_seats=6)
    log: list[object] = [E.TableCreated("multi", options)]
    log += [E.PlayerSeated(seat, f"p{seat}", 100, "") for seat in (1, 2, 3, 4)]
    table = new_table(options, "multi")
    rng = random.Random(4)
    stacks = {s: 100 for s in (1, 2, 3, 4)}
    for hand_no in range(1, 6):
        table, events = run_hand(table, hand_no, hand_no % 4 + 1, sorted(stacks.items()),
                                 random_policy(rng))
        stacks = {p.seat: p.stack or 100 for p in table.hand.players}
        log += events
        log.append(E.PlayerToppedUp(1, 0))  # a table event between hands: not in any hand
    records = hands(log)
    assert [r.hand_no for r in records] == [1, 2, 3, 4, 5]
    assert all(r.complete and r.table_id == "multi" for r in records)
    assert all(not any(isinstance(e, E.PlayerToppedUp) for e in r.events) for r in records)
    assert records[2].names == {1: "p1", 2: "p2", 3: "p3", 4: "p4"}
    for r in records:
        assert pokerstars(r).startswith(f"PokerStars Hand #{r.hand_no}:  Hold'em No Limit")


def test_hand_ids_are_stream_sequences_unique_across_tables():
    """Both tables play their hand 1; the id is the stream sequence of the commit holding
    the hand's HandStarted (here table a's commits come first, two events a commit)."""
    a, b = logged(split_pot(), "a"), logged(uncalled_and_rake(), "b")
    seq_a = [1 + i // 2 for i in range(len(a))]
    seq_b = [seq_a[-1] + 1 + i // 2 for i in range(len(b))]
    (ra,), (rb,) = hands(a, seqs=seq_a), hands(b, seqs=seq_b)
    assert ra.hand_no == rb.hand_no == 1
    start = [next(i for i, e in enumerate(log) if isinstance(e, E.HandStarted)) for log in (a, b)]
    assert (hand_id(ra), hand_id(rb)) == (seq_a[start[0]], seq_b[start[1]])
    assert hand_id(ra) != hand_id(rb)
    assert pokerstars(ra).startswith(f"PokerStars Hand #{hand_id(ra)}:  Hold'em")
    assert pokerstars(rb).startswith(f"PokerStars Hand #{hand_id(rb)}:  Hold'em")
    assert to_json(rb)["hand_id"] == hand_id(rb) and to_json(rb)["hand_no"] == 1
    assert pokerstars(hands(a, seqs=seq_a)[0]) == pokerstars(ra)  # exported again: the same
    assert hand_id(hands(a)[0]) == 1  # no sequence: the table's hand number
    with pytest.raises(ValueError, match="seqs"):
        hands(a, seqs=seq_a[1:])


def test_a_log_without_table_created_needs_options():
    with pytest.raises(ValueError, match="options"):
        hands(split_pot().events)
    s = split_pot()
    assert hands(s.events, options=s.options, table_id="x")[0].table_id == "x"


# --- PHH through pokerkit ------------------------------------------------------------------------


@pytest.mark.parametrize("make", [three_way_all_in, split_pot], ids=["side-pot", "split"])
def test_phh_of_a_logged_hand_replays_in_pokerkit(make):
    """The hand split out of a table's log, written as PHH, replays in pokerkit to the logged
    final stacks. PHH cannot express rake (the finishing stacks are after it), so the table
    plays without rake here."""
    s = make(rake_basis_points=0, suit_order="bridge")
    (record,) = hands(logged(s))
    out = phh(record)
    state = deque(HandHistory.loads(out), maxlen=1).pop()  # the state after every action
    assert not state.status, "pokerkit did not finish the hand"
    final = {x.seat: x.stack for x in record.of(E.HandEnded)[0].stacks}
    seats = json.loads(next(x for x in out.splitlines()
                            if x.startswith("seats = ")).split("=", 1)[1])
    assert list(state.stacks) == [final[seat] for seat in seats], out
    assert "players = ['alice', 'bob', 'carol']" in out
