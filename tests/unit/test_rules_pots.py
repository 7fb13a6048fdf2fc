"""All-in and pots: every worked example of RULES.md §5, through the engine's
decisions and fold (split from the rule-book example tests by section).

Each test names the rule it checks (section of docs/RULES.md in the docstring or its
section header). Hands are dealt from fixed decks (tests/helpers/scenario.py) so the outcome
is known in advance.
"""

from __future__ import annotations

from shared.poker import events as E
from shared.poker.handrunner import check_call_policy
from tests.helpers.rules_tables import (
    nl,
    seats,
)
from tests.helpers.scenario import Scenario, board_deck

# =============================================================================================
# §5 All-in and pots
# =============================================================================================

def test_uncalled_bet_is_returned():
    s = Scenario(nl(), seats(3), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 fold", "3 fold")
    assert s.of(E.BetReturned) == [E.BetReturned(1, 100)]
    s.finish()
    assert s.pots == (E.Pot(60, (1,)),)
    assert s.stacks == {1: 1040 - s.rake, 2: 980, 3: 980}


def test_uncalled_part_of_an_all_in_raise_is_returned():
    s = Scenario(nl(), seats(3, s1=300), button=3)
    s.play("3 raise 1000", "1 call", "2 fold")
    assert s.of(E.BetReturned) == [E.BetReturned(3, 700)]


def test_uncalled_part_of_a_blind_is_returned_when_the_other_player_is_all_in_from_the_blind():
    # heads-up: the button posts the small blind with all it has (30); the big blind's 70 over
    # it is uncalled
    s = Scenario(nl(50, 100), [(1, 30), (2, 1000)], button=1,
                 deck=board_deck({1: "AcAd", 2: "KcKd"}, "2h3h4s 9d 7c", button=1))
    s.finish()
    assert s.of(E.BetReturned) == [E.BetReturned(2, 70)]
    assert s.pots == (E.Pot(60, (1, 2)),)
    assert s.rake == 3  # 5% of 60, not of 130


def test_side_pots_each_contested_by_their_contributors():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, rake_basis_points=0), [(1, 50), (2, 100), (3, 200)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 200", "1 call", "2 call")
    assert s.of(E.BetReturned) == [E.BetReturned(3, 100)]
    s.finish()
    assert s.pots == (E.Pot(150, (1, 2, 3)), E.Pot(100, (2, 3)))
    assert s.won == {1: 150, 2: 100}
    assert s.stacks == {1: 150, 2: 100, 3: 100}
    # the last side pot is awarded first
    assert [a.pot_index for a in s.of(E.PotAwarded)] == [1, 0]


def test_folded_players_chips_stay_in_the_pots_they_fed():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(10, 20, rake_basis_points=0), [(1, 50), (2, 1000), (3, 1000)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 fold")
    s.finish()
    assert s.pots == (E.Pot(120, (1, 3)),)
    assert s.won == {1: 120}


# =============================================================================================
# §5 Later additions: a big blind all in from its ante
# =============================================================================================


def _bb_all_in_from_its_ante(sb_stack: int) -> Scenario:
    # heads-up, big-blind ante 10: the big blind (seat 2) has exactly the ante and posts no
    # blind; the small blind (the button, seat 1) holds the best hand
    o = nl(5, 10, ante=10, ante_type="big_blind", rake_basis_points=0)
    s = Scenario(o, [(1, sb_stack), (2, 10)], button=1,
                 deck=board_deck({1: "AcAd", 2: "7c2d"}, "KhQs9d 5c 4h", button=1))
    s.finish(check_call_policy)
    return s


def test_big_blind_all_in_from_its_ante_contests_the_ante_only():
    # the big-blind ante is dead money in the main pot, which every live player contests; the
    # small blind's bet is uncalled (the big blind has no live bet) and comes back whole: its
    # 5 already cover the big blind's nothing, so it has no turn (RULES §4, round end)
    s = _bb_all_in_from_its_ante(100)
    assert s.of(E.BetReturned) == [E.BetReturned(1, 5)]
    assert s.actions == []
    assert s.pots == (E.Pot(10, (1, 2)),)
    assert s.stacks == {1: 110, 2: 0}  # the aces win the ante; nothing else was at stake


def test_big_blind_all_in_from_its_ante_small_blind_all_in_too():
    # both all in: the ante (dead) and the small blind's 5 against the big blind's nothing
    s = _bb_all_in_from_its_ante(5)
    assert s.of(E.BetReturned) == [E.BetReturned(1, 5)]
    assert s.pots == (E.Pot(10, (1, 2)),)
    assert s.stacks == {1: 15, 2: 0}  # the small blind's 5 back, and the ante won
