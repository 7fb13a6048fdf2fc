"""What a receipt may prove (shared/history/render.py seen_cards): for every hand of sample
tables of every game (stud's face-up cards, showdowns, mucks, folds), every seat gets exactly
its own cards, the board, the cards dealt face up and the hands shown, worked out here from
the raw events; never another seat's face-down card that was not shown."""

from __future__ import annotations

import pytest

from shared.audit.sample import MIXED, sample_keyring, sample_table
from shared.history.log import table_hands
from shared.history.render import seen_cards
from shared.poker import events as E


@pytest.mark.parametrize("game, structure, seats", [
    (g, s, 8 if g.startswith("stud") else 6) for g, s, _ in MIXED])
def test_a_seat_is_given_exactly_what_it_saw(game, structure, seats):
    records = table_hands(sample_table("t1", game, structure, hands=12, seats=seats, seed=4),
                          sample_keyring())
    assert records and any(r.of(E.HandShown) for r in records)
    for r in records:
        dealt = [h for e in r.of(E.CardsDealt) for h in e.hole]
        public = {c for e in r.of(E.CardsDealt) for c in e.board}
        public |= {c for h in dealt for c, up in zip(h.cards, h.face_up) if up}
        public |= {c for e in r.of(E.HandShown) for c in e.cards}
        for p in r.start.players:
            own = {c for h in dealt if h.seat == p.seat for c in h.cards}
            hidden = {c for h in dealt if h.seat != p.seat
                      for c, up in zip(h.cards, h.face_up) if not up} - public
            got = seen_cards(r, p.seat)
            assert len(got) == len({c for c, _ in got}), "a card twice"
            assert {c for c, _ in got} == own | public, (r.hand_no, p.seat)
            assert not {c for c, _ in got} & hidden
            assert {how for c, how in got if c in own} == {"hole"}
