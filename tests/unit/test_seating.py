"""Seats, the button and the blinds across hands (RULES.md §3, §7): newcomers, sitting out and
coming back, three players to two, bust players, top-ups."""

from __future__ import annotations

import random

import pytest

from shared.audit.sample import seeded_dealer
from shared.poker import events as E
from shared.poker import table as T
from shared.poker.decide import Act, HandComplete, Show, act, next_step, showdown_default
from shared.poker.errors import IllegalAction
from shared.poker.events import ActionKind, ForcedKind
from shared.poker.fold import apply
from shared.poker.handrunner import automatic_decision, check_call_policy
from shared.poker.options import table_options
from shared.poker.state import TableState
from shared.poker.steprules import table_step


def nl(**kw):
    return table_options("holdem", "no_limit", small_blind=1, big_blind=2, **kw)


class Table:
    """A table driven through its own decisions, hand after hand."""

    def __init__(self, options=None) -> None:
        self.state: TableState = apply(None, E.TableCreated("t", options or nl()))
        self.events: list[object] = []

    def _do(self, events) -> list[object]:
        for e in events:
            self.state = apply(self.state, e)
        self.events += events
        return events

    def sit(self, seat: int, stack: int = 100, post: bool = False) -> None:
        self._do(T.sit_down(self.state, seat, f"p{seat}", stack, f"d{seat}", post))

    def away(self, seat: int, sitting_out: bool = True, post: bool = False) -> None:
        self._do(T.sit_out(self.state, seat, sitting_out, post))

    def start(self) -> E.HandStarted:
        # the hand's deck, shared by every step of the hand; seeded: a failure replays
        self.dealer = seeded_dealer(random.Random(self.state.last_hand_no + 1))
        return self._do(T.start_next_hand(self.state))[0]

    def finish(self, first_to_act_folds: bool = True) -> None:
        """Play the running hand out: the first decision folds, everyone else checks/calls."""
        dealer = self.dealer
        folded = not first_to_act_folds
        while True:
            hand = self.state.hand
            step = next_step(hand)
            if isinstance(step, HandComplete):
                return
            if isinstance(step, Act):
                if not folded:
                    folded = True
                    self._do(act(hand, step.seat, ActionKind.FOLD))
                    continue
                kind, to = check_call_policy(hand, step.legal)
                self._do(act(hand, step.seat, kind, to))
            elif isinstance(step, Show):
                self._do(showdown_default(hand, step.seat))
            else:
                self._do(automatic_decision(hand, step, dealer))

    def until_act(self) -> Act:
        dealer = self.dealer
        while not isinstance(step := next_step(self.state.hand), Act):
            self._do(automatic_decision(self.state.hand, step, dealer))
        return step

    def hand(self) -> E.HandStarted:
        h = self.start()
        self.finish()
        return h


def blinds(h: E.HandStarted) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for f in h.forced_bets:
        out.setdefault(f.kind.value, []).append(f.seat)
    return out


def dealt(h: E.HandStarted) -> list[int]:
    return [p.seat for p in h.players]


def test_the_first_player_seated_takes_the_button_first():
    t = Table()
    t.sit(4)
    t.sit(2)
    t.sit(7)
    h = t.start()
    assert h.button == 4
    assert blinds(h) == {"small_blind": [7], "big_blind": [2]}


def test_the_button_moves_clockwise_to_the_next_player_dealt_in():
    t = Table()
    for s in (1, 3, 5):
        t.sit(s)
    buttons = [t.hand().button for _ in range(4)]
    assert buttons == [1, 3, 5, 1]


def test_heads_up_the_button_posts_the_small_blind_and_acts_first():
    t = Table()
    t.sit(1)
    t.sit(2)
    h = t.start()
    assert blinds(h) == {"small_blind": [h.button], "big_blind": [3 - h.button]}
    assert t.until_act().seat == h.button


def test_three_to_two_the_last_big_blind_does_not_post_it_again():
    for leaver in ("button", "small_blind"):
        t = Table()
        for s in (1, 2, 3):
            t.sit(s)
        h = t.hand()
        last_big = blinds(h)["big_blind"][0]
        gone = h.button if leaver == "button" else blinds(h)["small_blind"][0]
        t._do(T.leave(t.state, gone))
        h2 = t.start()
        assert blinds(h2)["big_blind"] != [last_big], leaver
        assert blinds(h2)["small_blind"] == [h2.button]


def test_two_to_three_and_back_nobody_pays_the_big_blind_twice_in_a_row():
    t = Table()
    for s in (1, 2):
        t.sit(s)
    history = [t.hand()]
    t.sit(3, post=True)
    history += [t.hand() for _ in range(3)]
    t._do(T.leave(t.state, 3))
    history += [t.hand() for _ in range(3)]
    bigs = [blinds(h)["big_blind"][0] for h in history]
    assert all(a != b for a, b in zip(bigs, bigs[1:])), bigs


def test_a_newcomer_waits_until_the_big_blind_reaches_the_seat():
    t = Table()
    for s in (1, 2, 3):
        t.sit(s)
    t.hand()  # button 1, small 2, big 3
    t.sit(5)  # owes a big blind; waits for it
    seen = []
    for _ in range(4):
        h = t.hand()
        seen.append((h.button, 5 in dealt(h), blinds(h)["big_blind"]))
        if 5 in dealt(h):
            assert blinds(h)["big_blind"] == [5]  # dealt in as the big blind, no extra post
            break
    assert any(in_hand for _, in_hand, _ in seen), seen
    assert all(b == [5] for _, in_hand, b in seen if in_hand)


def test_a_newcomer_who_posts_is_dealt_in_at_once_with_a_live_big_blind():
    t = Table()
    for s in (1, 2, 3):
        t.sit(s)
    t.hand()  # button 1, small 2, big 3
    t.sit(6, post=True)
    h = t.start()  # button 2, small 3; seat 6 is the next after the small blind
    assert 6 in dealt(h)
    assert h.forced_bets.count(E.ForcedBet(6, ForcedKind.BIG_BLIND, 2)) == 1
    # the newcomer's seat is where the big blind falls: one big blind, posted once
    assert (h.button, blinds(h)["small_blind"], blinds(h)["big_blind"]) == (2, [3], [6])


def test_a_newcomer_is_not_dealt_in_on_the_button_or_the_small_blind_seat():
    t = Table()
    for s in (1, 3, 5):
        t.sit(s)
    t.hand()  # button 1, small 3, big 5
    t.sit(4, post=True)  # between the coming button (3) and small blind (5): the small seat
    h = t.start()
    assert h.button == 3 and blinds(h)["small_blind"] == [5]
    assert 4 not in dealt(h)
    t.finish()
    h = t.start()  # button 5: seat 4 is now right before the button, free to post
    assert 4 in dealt(h)


def test_a_bust_player_is_not_dealt_in():
    t = Table()
    t.sit(1, 100)
    t.sit(2, 100)
    t.sit(3, 100)
    t.state = t.state.evolve(seats=tuple(s.evolve(stack=0) if s.seat == 2 else s
                                         for s in t.state.seats))
    h = t.start()
    assert 2 not in dealt(h)


def test_a_player_who_sits_out_misses_blinds_and_owes_them_coming_back():
    t = Table()
    for s in (1, 2, 3, 4):
        t.sit(s)
    t.hand()  # button 1, small 2, big 3
    t.away(4)
    h = t.hand()  # button 2, small 3, big 1 (4 is away): the big blind passed seat 4
    assert 4 not in dealt(h) and h.missed_big_blind == (4,)
    seat4 = t.state.seat(4)
    assert seat4.owes_big_blind
    t.away(4, sitting_out=False, post=True)
    h = t.start()  # button 3: seat 4 is right after it, the small-blind seat: it waits
    assert h.button == 3 and 4 not in dealt(h)
    t.finish()
    h = t.start()  # button 1: seat 4 posts and is dealt in
    assert 4 in dealt(h)
    assert E.ForcedBet(4, ForcedKind.BIG_BLIND, 2) in h.forced_bets
    # only the big blind passed it: nothing dead (the test below has both pass)
    assert not seat4.owes_small_blind
    assert all(f.kind is not ForcedKind.DEAD_SMALL_BLIND for f in h.forced_bets)
    t.finish()
    assert not t.state.seat(4).owes_big_blind


def test_a_player_who_missed_both_blinds_posts_the_small_one_dead_coming_back():
    """Through the seating code alone (no forced bets injected): away while both blinds pass
    the seat, a returning player who posts pays the big blind live and the small blind dead,
    and owes nothing after."""
    t = Table()
    for s in (1, 2, 3, 4):
        t.sit(s)
    t.hand()
    t.away(4)
    for _ in range(6):  # until both blinds have passed seat 4
        if t.state.seat(4).owes_big_blind and t.state.seat(4).owes_small_blind:
            break
        t.hand()
    seat4 = t.state.seat(4)
    assert seat4.owes_big_blind and seat4.owes_small_blind
    t.away(4, sitting_out=False, post=True)
    for _ in range(4):  # dealt in once the button has passed it
        h = t.start()
        if 4 in dealt(h):
            break
        t.finish()
    assert 4 in dealt(h)
    assert E.ForcedBet(4, ForcedKind.BIG_BLIND, 2) in h.forced_bets
    assert E.ForcedBet(4, ForcedKind.DEAD_SMALL_BLIND, 1) in h.forced_bets
    t.until_act()
    posted = [e for e in t.events if isinstance(e, E.ForcedBetPosted) and e.seat == 4]
    assert [(e.kind, e.amount) for e in posted][-2:] == [
        (ForcedKind.BIG_BLIND, 2), (ForcedKind.DEAD_SMALL_BLIND, 1)]
    player = next(p for p in t.state.hand.players if p.seat == 4)
    # the dead small blind is in the pot but not part of its bet this round
    assert (player.round_bet, player.contributed, player.dead) == (2, 3, 1)
    t.finish()
    assert not t.state.seat(4).owes_big_blind and not t.state.seat(4).owes_small_blind


def test_top_ups_happen_between_hands_within_the_buy_in():
    t = Table()
    t.sit(1, 100)
    t.sit(2, 100)
    t.start()
    with pytest.raises(IllegalAction, match="between hands"):
        T.top_up(t.state, 1, 50)
    t.finish()
    with pytest.raises(IllegalAction, match="at most"):
        T.top_up(t.state, 1, 10_000)
    before = t.state.seat(1).stack
    t._do(T.top_up(t.state, 1, 20))
    assert t.state.seat(1).stack == before + 20


def test_leaving_in_a_hand_folds_it_at_the_players_turn_and_frees_the_seat_after():
    t = Table()
    for s in (1, 2, 3):
        t.sit(s)
    t.start()
    seat = t.until_act().seat
    leaver = 1 + seat % 3  # someone who acts later this round
    assert t._do(T.leave(t.state, leaver)) == [E.PlayerLeaving(leaver)]
    with pytest.raises(IllegalAction, match="already leaving"):
        T.leave(t.state, leaver)
    assert table_step(t.state) is None  # `seat` is on turn, not the leaver
    kind, to = check_call_policy(t.state.hand, t.until_act().legal)
    t._do(act(t.state.hand, seat, kind, to))
    step = table_step(t.state)
    while not isinstance(step, T.FoldLeaver):  # the other player acts first, if between
        kind, to = check_call_policy(t.state.hand, t.until_act().legal)
        t._do(act(t.state.hand, t.until_act().seat, kind, to))
        step = table_step(t.state)
    assert step == T.FoldLeaver(leaver)
    t._do(act(t.state.hand, leaver, ActionKind.FOLD))
    t.finish(first_to_act_folds=False)
    assert table_step(t.state) == T.FreeSeat(leaver)
    t._do(T.free_seat(t.state, leaver))
    assert t.state.seat(leaver) is None


def test_a_table_of_newcomers_only_starts_afresh():
    t = Table()
    for s in (1, 2):
        t.sit(s)
    t.hand()
    t.sit(4)
    t.sit(5)
    for s in (1, 2):  # everyone who played leaves; only newcomers remain
        t._do(T.leave(t.state, s))
    h = t.start()
    assert dealt(h) == [4, 5]


def test_a_stud_player_leaving_while_the_bring_in_is_due_posts_it():
    t = Table(table_options("stud", "fixed_limit", small_bet=10))
    for s in (1, 2, 3):
        t.sit(s, 400)
    t.start()
    seat = t.until_act().seat
    t._do(T.leave(t.state, seat))
    assert table_step(t.state) == T.FoldLeaver(seat, ActionKind.BRING_IN)
