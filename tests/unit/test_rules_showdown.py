"""Showdown and awarding: every worked example of RULES.md §6, through the engine's
decisions and fold (split from the rule-book example tests by section).

Each test names the rule it checks (section of docs/RULES.md in the docstring or its
section header). Hands are dealt from fixed decks (tests/helpers/scenario.py) so the outcome
is known in advance.
"""

from __future__ import annotations

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import cards
from shared.poker.events import Portion
from shared.poker.handrunner import check_call_policy
from tests.helpers.rules_tables import (
    calls_except,
    nl,
    pl,
    portions,
    seats,
    stud,
)
from tests.helpers.scenario import Scenario, board_deck, stud_deck

# =============================================================================================
# §6 Showdown and awarding
# =============================================================================================

def _river(button: int = 3, **opts) -> Scenario:
    hole = {1: "AcAd", 2: "KcKd", 3: "QcQd"}
    s = Scenario(nl(10, 20, rake_basis_points=0, **opts), seats(3), button=button,
                 deck=board_deck(hole, "2h3h4s 9d 7c", button=button))
    for _ in range(3):  # pre-flop and two streets checked/called around
        while s.hand.street < 3:
            step = s.to_act()
            s.act(step.seat, *check_call_policy(s.hand, step.legal))
    return s


def test_showdown_last_aggressor_on_the_final_round_shows_first():
    s = _river()
    s.play("1 check", "2 bet 50", "3 call", "1 call")
    step = s.to_showdown()
    assert step.seat == 2 and not step.must_show
    assert s.hand.show_order == (2, 3, 1)


def test_showdown_nobody_bet_first_to_act_on_the_final_round_shows_first():
    s = _river(button=1)
    s.play("2 check", "3 check", "1 check")
    assert s.to_showdown().seat == 2
    assert s.hand.show_order == (2, 3, 1)


def test_showdown_later_players_may_muck_and_a_mucked_hand_has_no_claim():
    s = _river()
    s.play("1 bet 50", "2 call", "3 call")
    s.show(1)
    s.muck(2)
    s.muck(3)
    s.finish()
    assert s.won == {1: 210}
    s = _river()
    s.play("1 check", "2 bet 50", "3 call", "1 call")
    s.show(2)
    s.show(3)
    s.muck(1)  # the best hand, mucked: no claim
    s.finish()
    assert s.won == {2: 210}


def test_showdown_a_player_who_does_not_act_has_a_winning_hand_shown_and_a_losing_one_mucked():
    s = _river()
    s.play("1 check", "2 bet 50", "3 call", "1 call")
    s.finish()
    assert s.shown_order() == [2, 3, 1]
    assert [e.seat for e in s.of(E.HandShown)] == [2, 1]
    assert [e.seat for e in s.of(E.HandMucked)] == [3]
    assert s.won == {1: 210}


def test_all_in_showdown_shows_every_hand():
    s = Scenario(nl(rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 call")
    step = s.to_showdown()
    assert step.must_show
    err = s.reject(D.muck, step.seat)
    assert "shown" in err.reason
    s.finish()
    assert sorted(e.seat for e in s.of(E.HandShown)) == [1, 2, 3]
    assert s.of(E.HandMucked) == []


def test_omaha_the_whole_four_card_hand_is_shown():
    hole = {1: "AcAdKhQh", 2: "KcKd2s3s"}
    s = Scenario(pl(1, 2, "omaha", rake_basis_points=0), seats(2, 100), button=2,
                 deck=board_deck(hole, "2h7h4s 9d 7c", button=2))
    s.finish(check_call_policy)
    assert {e.seat: e.cards for e in s.of(E.HandShown) if e.seat == 1} == {1: cards("AcAdKhQh")}


def test_hilo_pot_is_halved_odd_unit_to_the_high_half():
    # pot 5: seat 2 wins high (trip kings), seat 3 wins low (7-4-3-2-A)
    hole = {1: "8s8c8d8h", 2: "KsQsJd9h", 3: "Ac3c9dTs"}
    s = Scenario(pl(1, 2, "omaha_hilo", rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck(hole, "KhKd7c 4s 2h", button=3))
    s.play("3 call", "1 fold", "2 check")
    s.finish(check_call_policy)
    assert portions(s) == {(Portion.HIGH, 2): 3, (Portion.LOW, 3): 2}


def test_hilo_each_half_is_split_on_its_own():
    # pot 6: high 3 to seat 3; low 3 split between seats 1 and 2, odd unit to seat 1
    # (first clockwise from the button, seat 3)
    hole = {1: "Ac3c9dTs", 2: "Ad3dTcJc", 3: "KsQsJd9h"}
    s = Scenario(pl(1, 2, "omaha_hilo", rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck(hole, "KhKd7c 4s 2h", button=3))
    s.finish(check_call_policy)
    assert portions(s) == {(Portion.HIGH, 3): 3, (Portion.LOW, 1): 2, (Portion.LOW, 2): 1}


def test_holdem_odd_chip_to_the_first_winner_clockwise_from_the_button():
    # button 2: SB 3, BB 4; pot 5 split between seats 4 and 1; clockwise from the button
    # seat 4 comes first (seat order would give seat 1)
    hole = {1: "2c3d", 2: "AhAs", 3: "KhKs", 4: "2d3c"}
    s = Scenario(nl(1, 2, rake_basis_points=0), seats(4, 100), button=2,
                 deck=board_deck(hole, "9cTdJh Qs Kc", button=2))
    s.play("1 call", "2 fold", "3 fold", "4 check")
    s.finish(check_call_policy)
    assert s.won == {4: 3, 1: 2}


def test_omaha_odd_chip_to_the_first_winner_clockwise_from_the_button():
    hole = {1: "2c3d4h5s", 2: "AhAsAdAc", 3: "KhKsKdKc", 4: "2d3c4s5h"}
    s = Scenario(pl(1, 2, "omaha", rake_basis_points=0), seats(4, 100), button=2,
                 deck=board_deck(hole, "9cTdJh Qs 7c", button=2))
    s.play("1 call", "2 fold", "3 fold", "4 check")
    s.finish(check_call_policy)
    # both play Q-J-T with 5-4
    assert s.won == {4: 3, 1: 2}


def _stud_tied_straights(game: str, button: int, **opts):
    # seats 1 and 2 both make a king-high straight; seat 3 folds on 3rd street. Pot 9.
    hands = {1: "9cTc 9h Jd Qd Kc Th", 2: "9dTd 9s Jh Qh Kd Ts", 3: "2c3c Ah"}
    s = Scenario(stud(10, game, rake_basis_points=0, **opts), seats(3, 200), button=button,
                 deck=stud_deck(hands, button=button))
    s.finish(calls_except({3}))
    assert sum(s.won.values()) == 9
    return s


def test_stud_high_odd_chip_to_the_first_winner_clockwise_from_the_button():
    s = _stud_tied_straights("stud", button=1)  # clockwise 2, 3, 1
    assert s.won == {2: 5, 1: 4}
    s = _stud_tied_straights("stud", button=3)  # clockwise 1, 2, 3
    assert s.won == {1: 5, 2: 4}


def test_stud_hilo_tied_high_odd_chip_by_highest_card_by_suit_sources():
    s = _stud_tied_straights("stud_hilo", button=1)  # Kc beats Kd: clubs highest
    assert s.won == {1: 5, 2: 4}


def test_stud_hilo_tied_high_odd_chip_by_highest_card_by_suit_bridge():
    s = _stud_tied_straights("stud_hilo", button=3, suit_order="bridge")  # Kd beats Kc
    assert s.won == {2: 5, 1: 4}


def _stud_hilo_tied_lows(**opts):
    # seat 3 wins high with four nines; seats 1 and 2 tie for low 6-4-3-2-A.
    # Pot 15 (antes 2 x 3, bring-in 3, two calls): high 8, low 7 split 4 / 3.
    hands = {1: "2c3c Kc Ah 4d 6h Qc", 2: "2d3d Kd As 4h 6s Qd", 3: "9c9d Tc 9h 9s Td Jh"}
    s = Scenario(stud(10, "stud_hilo", ante=2, rake_basis_points=0, **opts), seats(3, 200),
                 button=3, deck=stud_deck(hands, button=3))
    s.finish(check_call_policy)
    return s


def test_stud_hilo_tied_low_odd_chip_by_lowest_card_by_suit_sources():
    s = _stud_hilo_tied_lows()  # As is lower than Ah: spades lowest
    assert portions(s) == {(Portion.HIGH, 3): 8, (Portion.LOW, 2): 4, (Portion.LOW, 1): 3}


def test_stud_hilo_tied_low_odd_chip_by_lowest_card_by_suit_bridge():
    s = _stud_hilo_tied_lows(suit_order="bridge")  # Ah is lower than As
    assert portions(s) == {(Portion.HIGH, 3): 8, (Portion.LOW, 1): 4, (Portion.LOW, 2): 3}


def _stud_hilo_tie_both(**opts):
    # seats 1 and 2 both hold A-2-3-4-5 (wheel: tie for high and for low), K, 9; seat 3 folds.
    # Pot 11 (antes 3, bring-in 4, call 4). Seat 1 holds Kh and Ac, seat 2 Ks and As.
    hands = {1: "2c3d Kh Ac 4d 5h 9c", 2: "2s3h Ks As 4h 5d 9s", 3: "QcJc Ad"}
    s = Scenario(stud(10, "stud_hilo", bring_in=4, rake_basis_points=0, **opts),
                 seats(3, 200), button=3, deck=stud_deck(hands, button=3))
    s.finish(calls_except({3}))
    return s


def test_stud_hilo_tie_for_high_and_low_split_whole_pot_odd_unit_to_highest_card_sources():
    s = _stud_hilo_tie_both()  # Kh beats Ks (sources: spades lowest)
    assert s.won == {1: 6, 2: 5}


def test_stud_hilo_tie_for_high_and_low_split_whole_pot_odd_unit_to_highest_card_bridge():
    s = _stud_hilo_tie_both(suit_order="bridge")  # Ks beats Kh
    assert s.won == {2: 6, 1: 5}


def test_chip_unit_odd_chip_is_a_whole_unit():
    # unit 5, blinds 5/10: pot 25 = 5 units split 3 / 2 units
    hole = {1: "AhAs", 2: "2c3d", 3: "2d3c"}
    s = Scenario(nl(5, 10, chip_unit=5, rake_basis_points=0), seats(3, 100), button=3,
                 deck=board_deck(hole, "9cTdJh Qs Kc", button=3))
    s.play("3 call", "1 fold", "2 check")
    s.finish(check_call_policy)
    assert s.won == {2: 15, 3: 10}


# =============================================================================================
# §6 Later additions: stud showdown order, hi/lo side pots, three-way odd chips
# =============================================================================================


def test_stud_showdown_nobody_bet_on_7th_the_best_showing_hand_shows_first():
    hands = {1: "2c2d Ad Qs 3h 4h 6s 9c", 2: "3c3d 5s 7h 8h Js Tc", 3: "6c6d Kh Kd 5d 7c Jc"}
    s = Scenario(stud(rake_basis_points=0), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.finish(check_call_policy)
    assert s.shown_order()[0] == 3  # pair of kings showing acted first on 7th street


def test_hilo_each_pot_is_halved_on_its_own_with_side_pots():
    # seat 1 (all in for 30) wins the main pot's low; seat 2 wins both highs; seat 3 wins the
    # side pot's low. Main pot 90 (45 / 45), side pot 40 (20 / 20).
    hole = {1: "Ac3c9dTs", 2: "KsQsJd9h", 3: "Ad5dTcJc"}
    o = pl(5, 10, "omaha_hilo", rake_basis_points=0)
    s = Scenario(o, [(1, 30), (2, 200), (3, 200)], button=3,
                 deck=board_deck(hole, "KhKd7c 4s 2h", button=3))
    s.play("3 raise 30", "1 call", "2 call")
    s.play("2 bet 20", "3 call")
    s.finish(check_call_policy)
    assert s.pots == (E.Pot(90, (1, 2, 3)), E.Pot(40, (2, 3)))
    assert portions(s) == {(Portion.HIGH, 2): 65, (Portion.LOW, 1): 45, (Portion.LOW, 3): 20}
    assert s.won == {1: 45, 2: 65, 3: 20}


def test_omaha_hilo_no_qualifying_low_high_wins_the_whole_pot():
    hole = {1: "AcAd2c3d", 2: "KsKcQdJh"}  # the board has only two low cards: no low at all
    s = Scenario(pl(1, 2, "omaha_hilo", rake_basis_points=0), seats(2, 100), button=2,
                 deck=board_deck(hole, "KhTd7c 4s Qh", button=2))
    s.finish(check_call_policy)
    assert [a.portion for a in s.of(E.PotAwarded)] == [Portion.WHOLE]
    assert s.won == {2: 4}


def test_odd_chips_three_way_split_one_unit_each_from_the_button_left():
    # pot 8 (four limp for 2); seats 1, 3 and 4 tie with king-high straights, seat 2 has a
    # queen-high one. 8 = 3 x 2 + 2 units left: one each to seats 3 and 4, the first winners
    # clockwise from the button (seat 2).
    hole = {1: "Kc2d", 2: "7h8s", 3: "Kd3c", 4: "Kh2h"}
    s = Scenario(nl(1, 2, rake_basis_points=0), seats(4, 100), button=2,
                 deck=board_deck(hole, "9cTdJh Qs 4d", button=2))
    s.play("1 call", "2 call", "3 call", "4 check")
    s.finish(check_call_policy)
    assert s.won == {3: 3, 4: 3, 1: 2}
