"""The action clock and time-outs (RULES.md §7), pure: deadlines from commit times, both
time-out policies, the reconnect bonus once per decision."""

from __future__ import annotations

import random

import pytest

from shared.audit.sample import seeded_dealer
from shared.poker import events as E
from shared.poker.clock import TurnClock, clock_after, is_late, on_turn
from shared.poker.decide import Act, Show, act, next_step, showdown_default, time_out
from shared.poker.errors import IllegalAction
from shared.poker.events import ActionKind
from shared.poker.fold import apply
from shared.poker.handrunner import automatic_decision
from shared.poker.options import table_options
from shared.poker.table import sit_down, start_next_hand


class Hand:
    def __init__(self, policy: str = "sources", stacks=(100, 100, 100)) -> None:
        self.options = table_options("holdem", "no_limit", small_blind=1, big_blind=2,
                                     timeout_policy=policy, rake_basis_points=0)
        self.table = apply(None, E.TableCreated("t", self.options))
        for seat, stack in enumerate(stacks, 1):
            self.do(sit_down(self.table, seat, f"p{seat}", 40 + stack, f"d{seat}"))
        self.dealer = seeded_dealer(random.Random(1))
        self.do(start_next_hand(self.table))
        self.until_act()

    def do(self, events):
        for e in events:
            self.table = apply(self.table, e)
        return events

    @property
    def hand(self):
        return self.table.hand

    @property
    def small_blind(self) -> int:
        return next(f.seat for f in self.hand.forced_bets
                    if f.kind is E.ForcedKind.SMALL_BLIND)

    def until_act(self) -> Act:
        while not isinstance(step := next_step(self.hand), Act):
            self.do(automatic_decision(self.hand, step, self.dealer))
        return step


def test_a_decision_gets_decision_then_countdown_seconds():
    h = Hand()
    clock = clock_after(None, h.table, [E.CardsDealt(0, (), (), ())], at_ms=1_000_000)
    assert (clock.hand_no, clock.seat) == on_turn(h.table)
    assert clock.countdown_ms(h.options) == 1_000_000 + 10_000
    assert clock.deadline_ms(h.options) == 1_000_000 + 30_000
    assert not is_late(clock, h.options, 1_029_999)
    assert is_late(clock, h.options, 1_030_000)


def test_every_new_decision_restarts_the_clock_and_other_commits_do_not():
    h = Hand()
    first = clock_after(None, h.table, [E.CardsDealt(0, (), (), ())], at_ms=0)
    # a spectator-side commit (someone disconnects) keeps the running clock
    assert clock_after(first, h.table, [E.PlayerDisconnected(3)], at_ms=5_000) == first
    seat = h.until_act().seat
    events = h.do(act(h.hand, seat, ActionKind.CALL))
    second = clock_after(first, h.table, events, at_ms=7_000)
    assert second.started_ms == 7_000 and second.seat != seat


def test_a_reconnect_on_the_clock_adds_the_bonus_once_per_decision():
    h = Hand()
    seat = h.until_act().seat
    clock = clock_after(None, h.table, [E.CardsDealt(0, (), (), ())], at_ms=0)
    back = clock_after(clock, h.table, [E.PlayerReconnected(seat)], at_ms=12_000)
    assert back.bonus and back.deadline_ms(h.options) == 50_000
    again = clock_after(back, h.table, [E.PlayerReconnected(seat)], at_ms=20_000)
    assert again.deadline_ms(h.options) == 50_000  # once per decision
    other = clock_after(clock, h.table, [E.PlayerReconnected(seat % 3 + 1)], at_ms=1)
    assert not other.bonus  # only the player on the clock


def test_no_clock_outside_a_players_decision():
    h = Hand()
    assert clock_after(None, None, [], 0) is None
    table = h.table.evolve(hand=None)
    assert clock_after(TurnClock(1, 1, 0), table, [], 0) is None


def test_sources_policy_facing_a_bet_with_chips_in_means_all_in_for_what_is_in():
    h = Hand("sources")
    # pre-flop: the small blind has chips in and faces the big blind
    sbs = h.small_blind
    while (step := h.until_act()).seat != sbs:
        h.do(act(h.hand, step.seat, ActionKind.CALL))
    sb = h.hand.player(sbs)
    assert sb.contributed == 1 and step.legal.call == 1
    events = h.do(time_out(h.hand, sbs))
    assert events[0] == E.PlayerTimedOut(sbs, all_in=True)
    p = h.hand.player(sbs)
    assert p.all_in and not p.folded and p.stack == sb.stack  # nothing more goes in
    # the hand plays on; the all-in player is eligible for the pot so far only
    while isinstance(step := next_step(h.hand), Act) or h.hand.phase.value != "done":
        if isinstance(step, Act):
            kind = ActionKind.CHECK if step.legal.can_check else ActionKind.CALL
            h.do(act(h.hand, step.seat, kind))
        elif isinstance(step, Show):
            h.do(showdown_default(h.hand, step.seat))
        else:
            h.do(automatic_decision(h.hand, step, h.dealer))
    pots = h.hand.pots
    assert pots[0].amount == 3 * 1 and sbs in pots[0].eligible
    assert all(sbs not in pot.eligible for pot in pots[1:])


def test_sources_policy_with_nothing_in_folds():
    h = Hand("sources")
    step = h.until_act()  # first to act pre-flop (left of the big blind): nothing put in yet
    assert h.hand.player(step.seat).contributed == 0
    events = h.do(time_out(h.hand, step.seat))
    assert events[:2] == [E.PlayerTimedOut(step.seat),
                          E.ActionTaken(step.seat, ActionKind.FOLD, 0, 0, False)]


@pytest.mark.parametrize("policy", ["sources", "check_fold"])
def test_with_nothing_to_call_a_time_out_checks(policy):
    h = Hand(policy)
    while not (step := h.until_act()).legal.can_check:
        h.do(act(h.hand, step.seat, ActionKind.CALL))
    events = h.do(time_out(h.hand, step.seat))
    assert events[1].action is ActionKind.CHECK


def test_check_fold_policy_facing_a_bet_folds_even_with_chips_in():
    h = Hand("check_fold")
    sbs = h.small_blind
    while (step := h.until_act()).seat != sbs:
        h.do(act(h.hand, step.seat, ActionKind.CALL))
    events = h.do(time_out(h.hand, sbs))
    assert events[1] == E.ActionTaken(sbs, ActionKind.FOLD, 1, 0, False)


def test_only_the_player_on_the_clock_can_time_out():
    h = Hand()
    step = h.until_act()
    with pytest.raises(IllegalAction, match="turn"):
        time_out(h.hand, step.seat % 3 + 1)


def test_a_stud_time_out_posts_the_bring_in():
    options = table_options("stud", "fixed_limit", small_bet=10)
    table = apply(None, E.TableCreated("t", options))
    for seat in (1, 2, 3):
        for e in sit_down(table, seat, f"p{seat}", 400, f"d{seat}"):
            table = apply(table, e)
    for e in start_next_hand(table):
        table = apply(table, e)
    dealer = seeded_dealer(random.Random(2))
    while not isinstance(step := next_step(table.hand), Act):
        for e in automatic_decision(table.hand, step, dealer):
            table = apply(table, e)
    events = time_out(table.hand, step.seat)
    assert events[1].action is ActionKind.BRING_IN


@pytest.mark.parametrize("policy", ["sources", "check_fold"])
@pytest.mark.parametrize("game, structure, stakes", [
    ("holdem", "no_limit", {"small_blind": 1, "big_blind": 2}),
    ("omaha_hilo", "pot_limit", {"small_blind": 1, "big_blind": 2}),
    ("stud", "fixed_limit", {"small_bet": 10}),
])
def test_random_play_with_time_outs_conserves_chips_and_finishes(policy, game, structure,
                                                                 stakes):
    from shared.poker.decide import HandComplete
    from shared.poker.handrunner import random_policy

    rng = random.Random(f"{policy}{game}")
    options = table_options(game, structure, timeout_policy=policy, **stakes)
    choose = random_policy(rng)
    for n in range(60):
        table = apply(None, E.TableCreated("t", options))
        seats = rng.randint(2, 6)
        for seat in range(1, seats + 1):
            for e in sit_down(table, seat, f"p{seat}", 400, f"d{seat}"):
                table = apply(table, e)
        for e in start_next_hand(table):
            table = apply(table, e)
        total = sum(p.stack for p in table.hand.players)
        dealer = seeded_dealer(rng)
        for _ in range(500):
            step = next_step(table.hand)
            if isinstance(step, HandComplete):
                break
            if isinstance(step, Act):
                events = (time_out(table.hand, step.seat) if rng.random() < 0.3
                          else act(table.hand, step.seat, *choose(table.hand, step.legal)))
            elif isinstance(step, Show):
                events = showdown_default(table.hand, step.seat)
            else:
                events = automatic_decision(table.hand, step, dealer)
            for e in events:
                table = apply(table, e)
                assert table.hand.chips_in_play == total
        else:
            raise AssertionError(f"hand {n} did not finish")
        assert sum(p.stack for p in table.hand.players) + table.hand.rake == total
