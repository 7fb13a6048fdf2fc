"""Rake: every worked example of RULES.md §8, through the engine's
decisions and fold (split from the rule-book example tests by section).

Each test names the rule it checks (section of docs/RULES.md in the docstring or its
section header). Hands are dealt from fixed decks (tests/helpers/scenario.py) so the outcome
is known in advance.
"""

from __future__ import annotations

from shared.poker import events as E
from shared.poker.handrunner import check_call_policy
from shared.poker.options import RakeCap
from tests.helpers.rules_tables import (
    nl,
    seats,
    stud,
)
from tests.helpers.scenario import Scenario, board_deck, stud_deck

# =============================================================================================
# §8 Rake
# =============================================================================================

def _raked_hand(**opts) -> Scenario:
    """Pot 230 after the flop: three limp for 10, seat 1 bets 100, seat 2 calls, seat 3 folds."""
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, **opts), seats(3), button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 call", "3 fold")
    s.finish(check_call_policy)
    return s


def test_rake_is_5_percent_of_the_pot_rounded_down():
    s = _raked_hand()
    assert s.rake == 11  # 5% of 230 = 11.5
    assert s.won == {1: 219}
    [taken] = s.of(E.RakeTaken)
    assert taken.from_pots == (11,)


def test_rake_is_capped():
    assert _raked_hand(rake_cap=5).rake == 5


def test_rake_cap_by_number_of_players_dealt_in():
    cap = RakeCap(heads_up=1, three_four=2, five_plus=3)
    assert _raked_hand(rake_cap=cap).rake == 2


def test_rake_rounds_down_to_the_chip_unit():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, chip_unit=5), seats(3), button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 call", "3 fold")
    s.finish(check_call_policy)
    assert s.rake == 10  # 11.5 -> 10


def test_rake_percent_option():
    assert _raked_hand(rake_basis_points=1000).rake == 23


def test_no_flop_no_drop():
    s = Scenario(nl(), seats(3), button=3)
    s.play("3 raise 100", "1 call", "2 raise 300", "3 fold", "1 fold")
    s.finish()
    assert s.of(E.RakeTaken)[0].amount == 0 and s.won == {2: 300}


def test_no_flop_no_drop_off_rakes_a_preflop_pot():
    s = Scenario(nl(no_flop_no_drop=False), seats(3), button=3)
    s.play("3 raise 100", "1 call", "2 raise 300", "3 fold", "1 fold")
    s.finish()
    assert s.rake == 15 and s.won == {2: 285}  # 5% of 300


def test_no_flop_no_drop_stud_hand_ending_on_3rd_street():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 complete 10", "1 fold", "2 fold")
    s.finish()
    assert s.rake == 0 and s.won == {3: 9}  # antes 3, bring-in 3, own 3 after 7 returned


def test_stud_hand_ending_on_4th_street_is_raked():
    hands = {1: "KcKd 9h 9s", 2: "QcQd 3s 2d", 3: "JcJd Ah Ad"}
    s = Scenario(stud(10, rake_cap=100, rake_basis_points=1000), seats(3), button=3,
                 deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    s.play("3 bet 10", "1 fold", "2 fold")
    s.finish()
    assert s.rake == 1  # 10% of 12


def test_hand_all_in_preflop_is_raked_once_the_flop_is_dealt():
    s = Scenario(nl(), seats(3, 100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 call")
    s.finish()
    assert s.rake == 15


def test_rake_is_taken_from_the_main_pot_first():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(5, 10, rake_basis_points=1000), [(1, 50), (2, 100), (3, 200)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 200", "1 call", "2 call")
    s.finish()
    [taken] = s.of(E.RakeTaken)
    assert taken.amount == 25 and taken.from_pots == (25, 0)  # 10% of 250, from the 150
    assert s.won == {1: 125, 2: 100}


def test_rake_larger_than_the_main_pot_continues_into_side_pots():
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    # (a short all-in from the small blind keeps the main pot below the 10% ceiling's rake)
    s = Scenario(nl(5, 10, rake_basis_points=1000), [(1, 5), (2, 100), (3, 200)], button=3,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 200", "2 call")
    s.finish()
    [taken] = s.of(E.RakeTaken)
    assert s.pots == (E.Pot(15, (1, 2, 3)), E.Pot(190, (2, 3)))
    assert taken.amount == 20 and taken.from_pots == (15, 5)  # 10% of 205, rounded down
    assert s.won == {2: 185}
