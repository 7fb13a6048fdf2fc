"""Betting: every worked example of RULES.md §4, through the engine's
decisions and fold (split from the rule-book example tests by section).

Each test names the rule it checks (section of docs/RULES.md in the docstring or its
section header). Hands are dealt from fixed decks (tests/helpers/scenario.py) so the outcome
is known in advance.
"""

from __future__ import annotations

from shared.poker import events as E
from shared.poker.betting import pot_limit_max_raise_to, raise_presets
from tests.helpers.rules_tables import (
    BET,
    COMPLETE,
    RAISE,
    fl,
    nl,
    pl,
    seats,
    shape,
    stud,
)
from tests.helpers.scenario import Scenario, board_deck, stud_deck


# =============================================================================================
# §4 Betting
# =============================================================================================
def test_round_end_big_blind_all_in_for_one_the_small_blind_is_covered_and_has_no_turn():
    """RULES §4, round end: "$1/$2, the big blind all in for $1 and the button folds: the small
    blind's $1 covers it, so the board is dealt at once (the small blind is not asked to call
    the full $2, and cannot fold)"."""
    s = Scenario(nl(1, 2), seats(3, s2=1), button=3)
    assert s.on_turn == 3
    s.play("3 fold")
    s.finish()  # no player has a decision left: an Act step would fail here
    assert [a.seat for a in s.actions] == [3]  # the small blind was never asked
    assert len(s.hand.board) == 5
    assert {p.seat: p.contributed for p in s.hand.players} == {1: 1, 2: 1, 3: 0}
    assert sum(s.won.values()) == 2  # the $1 and the $1: nothing more went in


def test_round_end_heads_up_big_blind_all_in_for_the_small_blind_no_turn():
    """RULES §4, round end: heads-up, the big blind all in for the small blind's amount: the
    small blind (the button) is covered and has no turn; the board is dealt at once."""
    s = Scenario(nl(1, 2), seats(2, s2=1), button=1)
    s.finish()
    assert s.actions == [] and len(s.hand.board) == 5
    assert {p.seat: p.contributed for p in s.hand.players} == {1: 1, 2: 1}
    assert sum(s.won.values()) == 2


def test_round_end_the_call_is_capped_at_the_largest_all_in_of_the_others():
    """RULES §4, round end: every other player still in is all in: the small blind calls up to the big blind's
    all-in of 7 (2 more, not 5) or folds; no raise (nobody could answer it)."""
    s = Scenario(nl(5, 10), seats(3, s2=7), button=3)
    s.play("3 fold")
    legal = s.legal
    assert legal.seat == 1 and legal.call == 2 and not legal.can_check
    assert legal.raise_kind is None
    s.play("1 call")
    assert s.player(1).contributed == 7 and s.player(1).stack == 993
    s.finish()
    assert sum(s.won.values()) == 14



def test_order_preflop_left_of_big_blind_postflop_left_of_button():
    s = Scenario(nl(), seats(5), button=3)  # SB 4, BB 5
    assert s.on_turn == 1
    s.play("1 call", "2 call", "3 call", "4 call", "5 check")
    assert s.hand.street == 1 and s.on_turn == 4


def test_postflop_first_live_player_left_of_button_skips_folded():
    s = Scenario(nl(), seats(4), button=4)
    s.play("3 call", "4 call", "1 fold", "2 check")
    assert s.hand.street == 1 and s.on_turn == 2


def test_stud_later_streets_best_showing_hand_acts_first():
    # 4th street: seat 3 shows a pair of kings; seat 1 shows A-Q
    hands = {1: "2c2d Ad Qs", 2: "3c3d 5s 4h", 3: "6c6d Kh Kd"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.hand.street == 1 and s.on_turn == 3


def test_stud_showing_tie_goes_to_first_clockwise_from_button():
    # seats 1 and 3 both show A-K; button 1: clockwise 2, 3, 1 -> seat 3
    hands = {1: "2c2d Ad Ks", 2: "3c3d 5s 4h", 3: "6c6d Ah Kd"}
    s = Scenario(stud(), seats(3), button=1, deck=stud_deck(hands, button=1))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.hand.street == 1 and s.on_turn == 3


def test_stud_hilo_first_to_act_by_high_showing_hand():
    hands = {1: "2c2d Ad Qs", 2: "3c3d 5s 4h", 3: "6c6d Kh Kd"}
    s = Scenario(stud(game="stud_hilo"), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.on_turn == 3


def test_fixed_limit_10_20_bet_is_10_raise_to_20():
    s = Scenario(fl(10), seats(3), button=3)
    s.play("3 call", "1 call", "2 check")
    assert s.legal.raise_kind is BET and s.legal.raise_sizes == (10,)
    s.play("1 bet 10")
    assert s.legal.raise_kind is RAISE and s.legal.raise_sizes == (20,)


def test_fixed_limit_10_20_caps_at_40_and_80():
    s = Scenario(fl(10), seats(4), button=4)
    s.play("3 raise 20", "4 raise 30", "1 raise 40")
    legal = s.legal
    assert legal.seat == 2 and legal.raise_kind is None and legal.call == 30
    s.play("2 call", "3 call", "4 call")
    s.play("1 check", "2 check", "3 check", "4 check")  # flop
    assert s.hand.street == 2
    assert s.legal.raise_sizes == (20,)  # big bet on the turn
    s.play("1 bet 20", "2 raise 40", "3 raise 60", "4 raise 80")
    legal = s.legal
    assert legal.seat == 1 and legal.raise_kind is None and legal.call == 60


def test_max_bets_option_sets_the_cap():
    s = Scenario(fl(10, max_bets=3), seats(4), button=4)
    s.play("3 raise 20", "4 raise 30")
    assert s.legal.seat == 1 and s.legal.raise_kind is None and s.legal.call == 25


def test_heads_up_capped_by_default():
    s = Scenario(fl(10), seats(2), button=2)
    s.play("2 raise 20", "1 raise 30", "2 raise 40")
    assert s.legal.raise_kind is None


def test_heads_up_uncapped_when_two_players_start_the_round():
    s = Scenario(fl(10, heads_up_uncapped=True), seats(2), button=2)
    s.play("2 raise 20", "1 raise 30", "2 raise 40", "1 raise 50", "2 raise 60")
    assert s.legal.raise_sizes == (70,)


def test_heads_up_uncapped_when_folds_leave_two_before_the_cap():
    s = Scenario(fl(10, heads_up_uncapped=True), seats(3), button=3)
    s.play("3 raise 20", "1 fold", "2 raise 30", "3 raise 40", "2 raise 50")
    assert s.legal.raise_sizes == (60,)


def test_heads_up_uncapped_not_after_the_cap_was_reached_three_handed():
    s = Scenario(fl(10, heads_up_uncapped=True), seats(3), button=3)
    s.play("3 raise 20", "1 raise 30", "2 raise 40")
    assert s.legal.raise_kind is None
    s.play("3 fold")
    assert s.legal.raise_kind is None


def test_stud_posting_bring_in_counts_as_acting_round_ends_when_all_call():
    hands = {1: "KcKd 9h 2c", 2: "QcQd 3s 2d", 3: "JcJd Ah 2h"}
    s = Scenario(stud(), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 bring_in", "3 call", "1 call")
    assert s.hand.street == 1
    assert [e for e in s.of(E.BettingRoundClosed)] == [E.BettingRoundClosed(0)]


def test_stud_15_30_completion_and_raises_cap_at_60():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah", 4: "TcTd 8h"}
    s = Scenario(stud(15), seats(4), button=4, deck=stud_deck(hands, button=4))
    s.play("2 bring_in")
    assert s.legal.raise_kind is COMPLETE and s.legal.raise_sizes == (15,)
    s.play("3 complete 15")
    assert s.legal.raise_kind is RAISE and s.legal.raise_sizes == (30,)
    s.play("4 raise 30", "1 raise 45")
    legal = s.legal
    assert legal.seat == 2 and legal.call == 40 and legal.raise_sizes == (60,)
    s.play("2 raise 60")
    legal = s.legal
    assert legal.seat == 3 and legal.raise_kind is None and legal.call == 45


def test_stud_bring_in_player_may_complete_instead():
    hands = {1: "KcKd 9h", 2: "QcQd 3s", 3: "JcJd Ah"}
    s = Scenario(stud(15), seats(3), button=3, deck=stud_deck(hands, button=3))
    s.play("2 complete 15")
    assert s.legal.seat == 3 and s.legal.call == 15 and s.legal.raise_sizes == (30,)


def _open_pair_on_4th(game: str):
    # 4th street: seat 1 shows K-K (an open pair); $5/$10
    hands = {1: "2c3d Kh Kd", 2: "4c5d 2s 9h"}
    s = Scenario(stud(5, game=game), seats(2), button=2, deck=stud_deck(hands, button=2))
    s.play("2 bring_in", "1 call")
    assert s.hand.street == 1
    return s


def test_stud_4th_street_open_pair_5_10():
    s = _open_pair_on_4th("stud")
    legal = s.legal
    assert legal.seat == 1 and legal.raise_kind is BET and legal.raise_sizes == (5, 10)
    s.play("1 bet 5")
    legal = s.legal
    assert legal.call == 5 and legal.raise_sizes == (10, 15)


def test_stud_4th_street_open_pair_big_bet_makes_later_raises_big():
    s = _open_pair_on_4th("stud")
    s.play("1 bet 5", "2 raise 15")
    assert s.legal.raise_sizes == (25,)
    s = _open_pair_on_4th("stud")
    s.play("1 bet 10")
    assert s.legal.raise_sizes == (20,)


def test_stud_hilo_open_pair_changes_nothing():
    s = _open_pair_on_4th("stud_hilo")
    assert s.legal.raise_sizes == (5,)
    s.play("1 bet 5")
    assert s.legal.raise_sizes == (10,)


def test_no_limit_bet_is_at_least_the_big_blind():
    s = Scenario(nl(10, 20), seats(2), button=2)
    s.play("2 call", "1 check")
    assert shape(s.legal) == (0, BET, 20, 980)


def test_no_limit_100_bet_min_raise_200():
    s = Scenario(nl(10, 20), seats(2), button=2)
    s.play("2 call", "1 check", "1 bet 100")
    assert shape(s.legal) == (100, RAISE, 200, 980)


def test_no_limit_50_bet_min_raise_100():
    s = Scenario(nl(10, 20), seats(2), button=2)
    s.play("2 call", "1 check", "1 bet 50")
    assert s.legal.min_to == 100


def test_no_limit_min_raise_is_the_largest_previous_bet_or_raise():
    s = Scenario(nl(10, 20), seats(3), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 raise 300")
    assert s.legal.min_to == 500


def test_no_limit_preflop_min_raise_is_a_big_blind_more():
    s = Scenario(nl(10, 20), seats(3), button=3)
    assert shape(s.legal) == (20, RAISE, 40, 1000)


def test_pot_limit_200_pot_150_bet_150_call_allows_800():
    s = Scenario(pl(25, 50), seats(4, 2000), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    assert s.hand.pot_total == 200
    s.play("1 bet 150", "2 call")
    legal = s.legal
    assert legal.seat == 3 and shape(legal) == (150, RAISE, 300, 800)


def test_presets_half_pot_and_pot_are_the_pot_limit_rule_within_the_legal_range():
    """The presets a client offers (betting.raise_presets): the pot is pot limit's maximum
    (RULES §4: pot 200, a 150 bet, a 150 call: 800), half the pot is the highest bet + half of
    (the pot + the call), rounded down; in no limit all in is the stack; none in fixed limit."""
    s = Scenario(pl(25, 50), seats(4, 2000), button=4)
    s.play("3 call", "4 call", "1 call", "2 check", "1 bet 150", "2 call")
    hand, legal = s.hand, s.legal
    presets = raise_presets(legal, hand.structure, hand.round.current_bet, hand.pot_total)
    assert presets == {"min": 300, "half": 150 + (500 + 150) // 2, "pot": 800}
    assert presets["pot"] == pot_limit_max_raise_to(hand, hand.player(3)) == legal.max_to
    n = Scenario(nl(10, 20), seats(3, s3=100), button=3)
    n.play("3 call", "1 call")  # the big blind's option: 60 in the middle, nothing to call
    presets = raise_presets(n.legal, n.hand.structure, 20, n.hand.pot_total)
    assert presets == {"min": 40, "half": 20 + 60 // 2, "pot": 20 + 60, "allin": 1000}
    f = Scenario(fl(10), seats(3), button=3)
    assert raise_presets(f.legal, f.hand.structure, 10, f.hand.pot_total) == {}


def test_pot_limit_100_75_75_max_400():
    s = Scenario(pl(10, 20), seats(5), button=5)
    s.play("3 call", "4 call", "5 call", "1 call", "2 check")
    assert s.hand.pot_total == 100
    s.play("1 bet 75", "2 call")
    assert s.legal.max_to == 400


def test_pot_limit_first_bet_is_at_most_the_pot():
    s = Scenario(pl(10, 20), seats(5), button=5)
    s.play("3 call", "4 call", "5 call", "1 call", "2 check")
    assert shape(s.legal) == (0, BET, 20, 100)


def test_pot_limit_1_2_folded_to_small_blind_max_6():
    s = Scenario(pl(1, 2), seats(3, 100), button=3)
    s.play("3 fold")
    legal = s.legal
    assert legal.seat == 1 and shape(legal) == (1, RAISE, 4, 6)


def test_pot_limit_bb_option_after_three_limpers_max_12():
    s = Scenario(pl(1, 2), seats(5, 100), button=5)  # SB 1, BB 2
    s.play("3 call", "4 call", "5 call", "1 call")
    assert s.hand.pot_total == 10
    legal = s.legal
    assert legal.seat == 2 and legal.can_check and shape(legal) == (0, RAISE, 4, 12)


def test_no_limit_below_the_minimum_only_as_all_in():
    s = Scenario(nl(10, 20), seats(3, s3=150), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 100", "2 call")
    legal = s.legal  # seat 3 has 130 behind: the minimum raise (200) is out of reach
    assert legal.seat == 3 and shape(legal) == (100, RAISE, 130, 130)
    s.play("3 raise 130")
    assert s.actions[-1].all_in


def test_pot_limit_below_the_minimum_only_as_all_in():
    s = Scenario(pl(10, 20), seats(3, s3=50), button=3)
    s.play("3 call", "1 call", "2 check", "1 bet 20")
    legal = s.legal
    assert legal.seat == 2 and shape(legal) == (20, RAISE, 40, 120)  # 20 + (80 + 20)
    s.play("2 call")
    assert shape(s.legal) == (20, RAISE, 30, 30)


def test_no_limit_short_all_in_does_not_reopen_for_players_who_acted():
    s = Scenario(nl(10, 20), seats(4, s3=150), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    s.play("1 bet 100", "2 call", "3 raise 130", "4 call")  # 130 is 30 more: short
    legal = s.legal
    assert legal.seat == 1 and legal.call == 30 and legal.raise_kind is None
    s.play("1 call")
    assert s.legal.seat == 2 and s.legal.raise_kind is None


def test_no_limit_short_all_in_player_yet_to_act_may_raise_a_full_raise_over_it():
    s = Scenario(nl(10, 20), seats(4, s3=150), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    s.play("1 bet 100", "2 call", "3 raise 130")
    legal = s.legal
    assert legal.seat == 4 and shape(legal) == (130, RAISE, 230, 980)


def test_no_limit_short_all_ins_adding_up_to_a_full_raise_reopen():
    s = Scenario(nl(10, 20), seats(4, s2=170, s3=230), button=4)
    s.play("3 call", "4 call", "1 call", "2 check")
    s.play("1 bet 100", "2 raise 150", "3 raise 210", "4 call")
    legal = s.legal  # 210 is 110 over the 100 seat 1 last faced: a full raise in total
    assert legal.seat == 1 and shape(legal) == (110, RAISE, 310, 980)


def test_fixed_limit_15_allin_on_20_round_next_raise_35():
    s = Scenario(fl(10), seats(3, s3=25), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 check", "2 check", "3 check")
    s.play("1 check", "2 check")
    assert s.hand.street == 2 and s.legal.raise_sizes == (15,)  # all in for 15 of 20
    s.play("3 bet 15")
    legal = s.legal
    assert legal.seat == 1 and legal.call == 15
    assert (legal.raise_kind, legal.raise_sizes) == (RAISE, (35,))


def test_fixed_limit_all_in_raise_under_half_a_bet_does_not_reopen():
    s = Scenario(fl(10), seats(3, s3=23), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 bet 10", "2 call", "3 raise 13")
    legal = s.legal
    assert legal.seat == 1 and legal.call == 3 and legal.raise_kind is None


def test_fixed_limit_all_in_raise_under_half_a_bet_next_player_may_complete():
    s = Scenario(fl(10), seats(3, s2=23), button=3)
    s.play("3 call", "1 call", "2 check")
    s.play("1 bet 10", "2 raise 13")
    legal = s.legal
    assert legal.seat == 3 and legal.call == 13 and legal.raise_sizes == (20,)


def test_fixed_limit_all_in_bet_under_half_a_bet_next_player_may_complete():
    s = Scenario(fl(10), seats(3, s1=14), button=3)
    s.play("3 call", "1 call", "2 check")
    assert s.legal.raise_sizes == (4,)
    s.play("1 bet 4")
    legal = s.legal
    assert legal.seat == 2 and legal.call == 4
    assert (legal.raise_kind, legal.raise_sizes) == (COMPLETE, (10,))


def test_one_player_left_the_hand_ends_at_once():
    s = Scenario(nl(), seats(3), button=3)
    s.play("3 raise 60", "1 fold", "2 fold")
    s.finish()
    assert [d.street for d in s.of(E.CardsDealt)] == [0]
    assert s.of(E.HandShown) == []
    assert s.won == {3: 30 + 20}
    assert s.stacks == {1: 990, 2: 980, 3: 1030}


def test_everyone_all_in_remaining_cards_dealt_without_betting():
    s = Scenario(nl(), seats(3, 100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 raise 100", "1 call", "2 call")
    s.finish()
    assert [d.street for d in s.of(E.CardsDealt)] == [0, 1, 2, 3]
    assert s.of(E.BettingRoundClosed) == [E.BettingRoundClosed(0)]
    assert len(s.actions) == 3


def test_all_in_and_one_caller_left_the_rest_is_dealt_without_betting():
    s = Scenario(nl(), seats(3, s1=100), button=3,
                 deck=board_deck({1: "AcAd", 2: "KcKd", 3: "QcQd"}, "2h3h4s 9d 7c", button=3))
    s.play("3 fold", "1 raise 100", "2 call")
    s.finish()
    assert len(s.actions) == 3
    assert s.of(E.BettingRoundClosed) == [E.BettingRoundClosed(0)]
