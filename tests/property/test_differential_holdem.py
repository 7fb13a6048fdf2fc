"""Differential test, hold'em: our engine against pokerkit 0.7.7, no-limit (NT) and fixed-limit
(FT) hold'em, hand by hand and decision by decision (tests/helpers/differential.py says how),
with the minimal reproductions of the documented divergences that hold'em shows, the pokerkit
facts the harness relies on, and the regression tests of the engine bugs the harness found
(FIXED_ENGINE_BUGS in tests/helpers/divergences.py).

``pytest -s`` prints the per-variant summary; a failure prints a replay command.
"""

from __future__ import annotations

import pytest
from pokerkit import Automation, FixedLimitTexasHoldem

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import DECK, cards
from shared.poker.events import ActionKind
from shared.poker.fold import apply
from shared.poker.handrunner import Dealer, check_call_policy, new_table, run_hand
from shared.poker.options import table_options
from tests.helpers.differential_runs import check_variant, scripted
from tests.helpers.divergences import (
    ODD_CHIP,
    PK_EXTRA_CHECK,
    SHORT_ALLIN_REOPENS,
    SHORT_FORCED_BET,
    classify,
    short_forced_bet,
)
from tests.helpers.pokerkit_oracle import PKLegal
from tests.helpers.rules_model import RulesOracle, rules_settlement


@pytest.mark.parametrize("name", ["NT", "FT"])
def test_differential(name: str) -> None:
    """RULES §3-§6 and §8, no-limit and fixed-limit hold'em: random hands in both engines,
    every disagreement documented, our stacks the rule book's award in every hand."""
    check_variant(name)


# ------------------------------------------------------------------------------------------
# pokerkit facts the harness relies on, and regression tests for the engine bugs found
# (FIXED_ENGINE_BUGS; an open ENGINE_BUGS entry gets an xfail test here)
# ------------------------------------------------------------------------------------------




def test_pokerkit_fixed_limit_preflop_cap() -> None:
    """RULES §4 cap, PK_FL_BLIND_NOT_COUNTED: pokerkit allows a fifth bet pre-flop ($10/$20: up to $50)."""
    state = FixedLimitTexasHoldem((Automation.ANTE_POSTING, Automation.BET_COLLECTION,
                                   Automation.BLIND_OR_STRADDLE_POSTING), True, 0, (5, 10),
                                  10, 20)((1000,) * 3, 3)
    for hole in ("AcAd", "KcKd", "QcQd"):
        state.deal_hole(hole)
    for to in (20, 30, 40, 50):
        state.complete_bet_or_raise_to(to)
    assert state.bets == [30, 40, 50]  # small blind, big blind, button
    assert not state.can_complete_bet_or_raise_to()


def test_rules_oracle_short_allin_example() -> None:
    """RULES §4: RulesOracle on the rule book's fixed-limit example: "a $15 all-in on a $20 round makes
    the next raise $35"."""
    opts = table_options("holdem", "fixed_limit", small_bet=10, big_bet=20, rake_basis_points=0)
    o = RulesOracle(opts)
    table = new_table(opts)
    for e in D.start_hand(table, 1, 3, [(1, 500), (2, 15), (3, 500)]):
        table = apply(table, e)
    hand = table.hand.evolve(street=2)
    o.start_round(hand)
    assert o.expected(hand, 1).min_to == 20
    o.on_action(hand, E.ActionTaken(2, ActionKind.BET, 15, 15, True))
    hand = hand.evolve(players=tuple(p.evolve(round_bet=15, stack=0) if p.seat == 2 else p
                                     for p in hand.players))
    assert o.expected(hand, 3).min_to == 35


def _play(opts, button, stacks, script, deck=None):
    """Play ``script`` [(seat, action, to)] with the check/call policy after it."""
    t = new_table(opts)
    dealer = Dealer(shuffle=lambda cs: tuple(deck or DECK))
    it = iter(script)
    pending = [next(it, None)]
    seen = []

    def policy(state, legal):
        seen.append((legal.seat, legal))
        step = pending[0]
        if step is None:
            return check_call_policy(state, legal)
        pending[0] = next(it, None)
        return ActionKind(step[1]), step[2]

    t, events = run_hand(t, 1, button, stacks, policy, dealer)
    return events, seen


def test_engine_bug_short_allin_reopens() -> None:
    """RULES §4 short all-ins: FIXED_ENGINE_BUGS['ENGINE_SHORT_ALLIN_REOPENS']."""
    opts = table_options("holdem", "no_limit", small_blind=1, big_blind=2, rake_basis_points=0)
    script = [(3, "call", None), (1, "call", None), (2, "check", None),
              (1, "bet", 10), (2, "raise", 14), (3, "call", None)]
    _, seen = _play(opts, 3, [(1, 100), (2, 16), (3, 100)], script)
    seat, legal = seen[len(script)]  # seat 1 facing the short all-in
    assert seat == 1
    assert legal.raise_kind is None, legal.describe_raise()


def test_engine_bug_big_blind_ante_pots() -> None:
    """RULES §3/§5 dead money: FIXED_ENGINE_BUGS['ENGINE_DEAD_MONEY_POTS'] (a)."""
    opts = table_options("holdem", "no_limit", small_blind=1, big_blind=2, ante=2,
                         ante_type="big_blind", rake_basis_points=0)
    top = cards("7c As 2d Ah Qs Kc 9h 5d Qd 3s Qh 8c")
    deck = top + tuple(c for c in DECK if c not in top)
    events, _ = _play(opts, 1, [(1, 100), (2, 100)], [], deck)
    pots = next(e for e in events if isinstance(e, E.PotsFormed)).pots
    assert all(1 in pot.eligible for pot in pots), pots
    assert next(e for e in events if isinstance(e, E.HandEnded)).stacks == (
        E.SeatStack(1, 104), E.SeatStack(2, 96))


def test_engine_bug_big_blind_all_in_from_ante_pots() -> None:
    """RULES §3/§5 dead money: FIXED_ENGINE_BUGS['ENGINE_DEAD_MONEY_POTS'] (b)."""
    opts = table_options("holdem", "no_limit", small_blind=2, big_blind=4, ante=3,
                         ante_type="big_blind", rake_basis_points=0)
    events, _ = _play(opts, 3, [(1, 100), (2, 1), (3, 100)], [])
    pots = next(e for e in events if isinstance(e, E.PotsFormed)).pots
    assert 2 in pots[0].eligible and sum(p.amount for p in pots) == 9, pots


# ------------------------------------------------------------------------------------------
# Minimal reproductions of the documented pokerkit divergences (scripted hands, both engines)
# ------------------------------------------------------------------------------------------


def test_repro_pk_no_fold_when_check() -> None:
    """RULES §4, fold always allowed: PK_NO_FOLD_WHEN_CHECK."""
    # NL 1/2 heads-up: the small blind (button) calls; the big blind may check, or fold
    run = scripted("NT", {1: 100, 2: 100}, 1, [(1, "call", None)],
                   small_blind=1, big_blind=2)
    seat, ours, theirs, _ = run.at_end
    assert seat == 2 and ours.can_check and ours.can_fold
    assert theirs.can_check_or_call and not theirs.can_fold


def test_repro_pk_fl_blind_not_counted() -> None:
    """RULES §4, the big blind counts toward max_bets: PK_FL_BLIND_NOT_COUNTED."""
    # $10/$20: 20, 30, 40 is the cap with the big blind counted (ours); pokerkit offers 50
    run = scripted("FT", {1: 500, 2: 500, 3: 500}, 3,
                   [(3, "raise", 20), (1, "raise", 30), (2, "raise", 40)],
                   small_bet=10, big_bet=20)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.raise_kind is None and not exp.can_raise
    assert theirs.can_raise and theirs.min_to == 50


def test_repro_short_forced_bet() -> None:
    """RULES §3, a short big blind: SHORT_FORCED_BET, and exactly that."""
    # NL 1/2, the big blind has 1 chip: the button still owes the full big blind (RULES §3)
    run = scripted("NT", {1: 100, 2: 1, 3: 100}, 3, [], small_blind=1, big_blind=2)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.call == exp.call == 2 and ours.min_to == exp.min_to == 4
    assert theirs.call == 1 and theirs.min_to == 3
    hand = run.at_hand
    for what in ("call", "min_to"):
        assert short_forced_bet(run, hand, ours, theirs, exp, what)
    # a pokerkit value that is neither reading is not exempted
    other = PKLegal(**{**vars(theirs), "call": 3, "min_to": 5})
    for what in ("call", "min_to"):
        assert not short_forced_bet(run, hand, ours, other, exp, what)


def test_repro_short_allin_reopens() -> None:
    """RULES §4, short all-ins and the half-bet rule: SHORT_ALLIN_REOPENS."""
    # NL 5/10: two limp, the big blind goes all in for 13 (+3, not a full raise): the limpers
    # may only call or fold (RULES §4); pokerkit lets them raise
    run = scripted("NT", {1: 13, 3: 1000, 4: 1000}, 3, [(3, "call", None), (4, "call", None),
                                                        (1, "raise", 13)],
                   small_blind=5, big_blind=10)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.raise_kind is None and not exp.can_raise
    assert theirs.can_raise and theirs.min_to == 23
    # fixed limit $10/$20, flop: 10 bet, all in for 14 (under half a bet over 10): the next
    # player may complete to 20 (RULES §4); pokerkit makes it 24
    run = scripted("FT", {1: 500, 2: 24, 3: 500}, 3,
                   [(3, "call", None), (1, "call", None), (2, "check", None),
                    (1, "bet", 10), (2, "raise", 14)], small_bet=10, big_bet=20)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.raise_sizes == (20,) and exp.min_to == 20
    assert theirs.min_to == theirs.max_to == 24
    # exempted exactly: pokerkit's 24 is its own arithmetic (PokerkitBetting); a value that is
    # neither that nor the rule book's is not
    assert classify(run, run.at_hand, ours, theirs, exp, "min_to") == SHORT_ALLIN_REOPENS
    other = PKLegal(**{**vars(theirs), "min_to": 25, "max_to": 25})
    assert classify(run, run.at_hand, ours, other, exp, "min_to") is None


def test_repro_pk_no_raise_uncovered() -> None:
    """RULES §4 (silent): a raise nobody could answer: PK_NO_RAISE_UNCOVERED."""
    # NL 1/2: the button moves in for 200; the big blind (30 chips) can still act but could
    # not answer a raise. pokerkit refuses the small blind a raise; RULES §4 is silent (the
    # engine allowed it at 53a8804..cab41de; the working tree now refuses it too)
    run = scripted("NT", {1: 1000, 2: 30, 3: 200}, 3, [(3, "raise", 200)],
                   small_blind=1, big_blind=2)
    seat, ours, theirs, exp = run.at_end
    assert seat == 1 and exp.raise_optional and not theirs.can_raise


def test_repro_pk_hu_equal_blinds() -> None:
    """RULES §3, heads-up the button acts first pre-flop: PK_HU_EQUAL_BLINDS."""
    # NL 2/2 heads-up: the button (small blind) acts first pre-flop (RULES §3); pokerkit asks
    # the big blind
    run = scripted("NT", {1: 100, 2: 100}, 1, [], small_blind=2, big_blind=2)
    seat, ours, theirs, _ = run.at_end
    assert seat == 1 and run.seat_of[theirs.actor] == 2


def test_repro_pk_extra_check() -> None:
    """RULES §4 round end: a covered player has no turn: PK_EXTRA_CHECK."""
    # NL 2/4: the small blind is all in for 3, the button folds: nothing is left to bet
    # (ours deals on); pokerkit gives the big blind a turn, to check
    run = scripted("NT", {1: 3, 2: 100, 3: 100}, 3, [(3, "fold", None)], stop=False,
                   small_blind=2, big_blind=4)
    assert run.result.causes[PK_EXTRA_CHECK] == 1 and run.result.outcome == "identical"


def test_repro_round_end_capped_call_is_not_exempted() -> None:
    """RULES §4 round end: "When every other player still in the hand is all in, a player's call
    is capped at the largest of those all-ins". NL 5/10, the big blind all in for 7, the button
    folds: the small blind calls 2 (not 5) and may not raise, in both engines: no exemption,
    although the big blind was short (SHORT_FORCED_BET no longer covers the round end)."""
    run = scripted("NT", {1: 100, 2: 7, 3: 100}, 3, [(3, "fold", None)],
                   small_blind=5, big_blind=10)
    seat, ours, theirs, exp = run.at_end
    assert seat == 1 and ours.call == theirs.call == exp.call == 2
    assert ours.raise_kind is None and not theirs.can_raise
    assert not run.result.causes
    run = scripted("NT", {1: 100, 2: 7, 3: 100}, 3, [(3, "fold", None)], stop=False,
                   small_blind=5, big_blind=10)
    assert not run.result.causes and run.result.outcome == "identical"


def test_repro_round_end_covered_small_blind_only_pk_extra_check() -> None:
    """RULES §4 round end, the rule book's example: $1/$2, the big blind all in for $1, the
    button folds: the small blind's $1 covers it and has no turn. pokerkit asks the small
    blind to check (PK_EXTRA_CHECK, exactly); nothing else is exempted."""
    run = scripted("NT", {1: 100, 2: 1, 3: 100}, 3, [(3, "fold", None)], stop=False,
                   small_blind=1, big_blind=2)
    assert dict(run.result.causes) == {PK_EXTRA_CHECK: 1}
    assert SHORT_FORCED_BET not in run.result.causes
    assert run.result.outcome == "identical"


def _tied_board(button: int, script, **opts):
    # four players, the board a royal flush: every live hand ties (RULES §2)
    top = "2c4c6c8c3d5d7d9d2hAsKsQs3hJs4hTs"
    return scripted("NT", {1: 100, 2: 100, 3: 100, 4: 100}, button, script, top=top,
                    stop=False, **opts)


def test_rules_award_model_odd_chips_one_each_clockwise_from_the_button() -> None:
    """RULES §6 odd chips, through the independent award model (rules_settlement): NL 2/4,
    button 2, the small blind (3) folds: 14 chips among seats 4, 1 and 2 (all tie), the two
    remainder units one each to the first winners clockwise from the button: 4, then 1.
    pokerkit gives both to one player (ODD_CHIP): our stacks are still checked, and match."""
    run = _tied_board(2, [(1, "call", None), (2, "call", None), (3, "fold", None),
                          (4, "check", None)], small_blind=2, big_blind=4)
    book = rules_settlement(run.setup.options, run.events)
    assert [a for a, _ in book.pots] == [14]
    assert dict(book.won) == {4: 5, 1: 5, 2: 4}
    assert book.stacks == {1: 101, 2: 100, 3: 98, 4: 101}
    assert run.result.outcome == "known" and ODD_CHIP in run.result.causes


def test_rules_award_model_uncalled_bet_and_side_pots() -> None:
    """RULES §5, through the independent award model: an uncalled bet goes back (seat 4's
    raise beyond seat 3's all-in), side pots by contribution levels, each contested by its
    contributors."""
    run = scripted("NT", {1: 100, 2: 30, 3: 60, 4: 100}, 4,
                   [(3, "raise", 60), (4, "raise", 100), (1, "fold", None), (2, "call", None)],
                   top="2c4c6c8c3d5d7d9d2hAsKsQs3hJs4hTs", stop=False,
                   small_blind=1, big_blind=2)
    book = rules_settlement(run.setup.options, run.events)
    assert book.returned == {4: 40}
    assert book.pots == [(91, frozenset({2, 3, 4})), (60, frozenset({3, 4}))]
