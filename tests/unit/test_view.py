"""What a viewer may see of a table (shared/poker/view.py), on the pure core's fold of a hand
played in process with plain cards (the fold knows every card: nothing is sealed, so the view
alone keeps the secrets): a spectator sees the board, the up cards and the hands shown, never
a down card of a seat that has not shown it; a seat sees its own cards, and of the others
what a spectator sees."""

from __future__ import annotations

import random

import pytest

from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, Card
from shared.poker.deck import shuffled
from shared.poker.events import ActionKind
from shared.poker.fold import apply, fold
from shared.poker.handrunner import Dealer, check_call_policy, new_table, run_hand
from shared.poker.options import table_options
from shared.poker.view import TableView, table_view

SEATS = (1, 2, 3)
GAMES = {
    "holdem": table_options("holdem", "no_limit", small_blind=1, big_blind=2),
    "stud": table_options("stud", "fixed_limit", small_bet=10, ante=1, bring_in=3),
}


def one_fold_then_calls():
    """The first seat that faces a bet folds; everyone else checks or calls to the end."""
    folded: list[int] = []

    def choose(hand, legal):
        if not folded and legal.can_fold and not legal.can_check and not legal.bring_in:
            folded.append(legal.seat)
            return ActionKind.FOLD, None
        return check_call_policy(hand, legal)
    return choose


def played(game: str, seed: int):
    """A seated table before a hand, and the events of the hand played on it."""
    rng = random.Random(seed)
    table = fold([E.PlayerSeated(s, f"p{s}", 200, "d") for s in SEATS],
                 new_table(GAMES[game], "v1"))
    dealer = Dealer(shuffle=lambda cs: shuffled(cs, rng.randrange),
                    salt=lambda: f"{rng.getrandbits(64):016x}")
    _, events = run_hand(table, 1, 1, [(s, 200) for s in SEATS], one_fold_then_calls(),
                         dealer)
    return table, events


def cards_of(view: TableView) -> list[Card]:
    """Every card a view holds: the board and each seat's."""
    return [*view.board, *(c for s in view.seats for c in s.cards)]


@pytest.mark.parametrize("game", sorted(GAMES))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_spectator_sees_no_down_card_until_shown_and_a_seat_sees_its_own(game, seed):
    table, events = played(game, seed)
    dealt: dict[int, list[tuple[Card, bool]]] = {s: [] for s in SEATS}  # (card, face up)
    shown: set[int] = set()
    looked_at_hidden = 0
    for event in events:
        table = apply(table, event)
        if isinstance(event, E.CardsDealt):
            for d in event.hole:
                dealt[d.seat] += zip(d.cards, d.face_up)
        if isinstance(event, E.HandShown):
            shown.add(event.seat)
        hidden = {c for s in SEATS if s not in shown for c, up in dealt[s] if not up}
        looked_at_hidden += len(hidden)
        spectator = table_view(table, None)
        assert not set(cards_of(spectator)) & hidden, (type(event).__name__, spectator)
        for viewer in (None, *SEATS):
            view = spectator if viewer is None else table_view(table, viewer)
            own = {c for c, _ in dealt.get(viewer, ())}
            assert not set(cards_of(view)) & (hidden - own), (viewer, view)
            for s in view.seats:
                if not dealt[s.seat]:
                    continue
                expected = [c if s.seat == viewer or s.seat in shown or up else UNKNOWN_CARD
                            for c, up in dealt[s.seat]]
                assert list(s.cards) == expected, (viewer, type(event).__name__, s)
                assert s.shown == (s.seat in shown)
    # not vacuous: down cards were dealt and hidden, one seat folded and never showed, and
    # the hand shown at the end is one every spectator sees
    [folder] = {e.seat for e in events if isinstance(e, E.ActionTaken)
                and e.action is ActionKind.FOLD}
    assert looked_at_hidden > 0 and folder not in shown and shown
    end = table_view(table, None)
    down = [c for c, up in dealt[folder] if not up]
    assert down and not set(down) & set(cards_of(end))
    assert {s.seat: list(s.cards) for s in end.seats if s.seat in shown} == {
        s: [c for c, _ in dealt[s]] for s in shown}
