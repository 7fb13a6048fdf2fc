"""The amounts a view offers are amounts the engine takes (the security issue's finding 5).

For random legal states of every game and structure, on tables from tiny to the options'
bounds (blinds and buy-ins up to what :func:`table_options` allows, stacks up to the maximum
buy-in), every decision's ``min_to`` and ``max_to`` are accepted by ``decide.act``, and
``max_to`` is within ``MAX_CHIPS``, the bound the betting service puts on an amount on the wire.
Calls, checks and bring-ins offered are accepted too.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.betting import legal_actions
from shared.poker.events import ActionKind
from shared.poker.options import MAX_CHIPS, TableOptions, buy_in_limits, table_options
from tests.property.test_hand_properties import (
    GAMES,
    PROPERTY_SETTINGS,
    PlayedHand,
    _of,
    play,
    table_opts,
)


def wide(lo: int, hi: int) -> st.SearchStrategy[int]:
    """Integers in [lo, hi] spread over every order of magnitude, both ends included
    (hypothesis alone draws mostly small ones from a huge range)."""
    magnitude = st.integers(0, hi.bit_length()).flatmap(
        lambda k: st.integers(max(lo, 2**k // 2), max(lo, min(hi, 2**k))))
    return st.one_of(st.just(lo), st.just(hi), magnitude)


@st.composite
def bounded_opts(draw) -> TableOptions:
    """A table with large amounts, anywhere up to the options' bounds."""
    game, structure = draw(st.sampled_from(GAMES))
    seats = draw(st.integers(2, 8 if game.startswith("stud") else 10))
    unit = draw(st.sampled_from([1, 1, 5, 1000]))
    top = MAX_CHIPS // seats  # the largest maximum buy-in for this many seats
    kw: dict = dict(chip_unit=unit, max_seats=seats, max_bets=draw(st.integers(1, 5)),
                    rake_basis_points=draw(st.sampled_from([0, 500, 1000])))
    if draw(st.booleans()):  # an explicit maximum buy-in, up to the bound
        kw["max_buy_in"] = unit * draw(wide(1, top // unit))
        ceiling = kw["max_buy_in"]
    else:  # the default, 200 big blinds (or small bets)
        ceiling = top // 200
    blind = unit * draw(st.one_of(st.integers(1, 20), wide(1, max(1, ceiling // unit))))
    if structure == "fixed_limit":
        kw["small_bet"] = blind
    else:
        kw["big_blind"] = blind
    kw["min_buy_in"] = unit
    return table_options(game, structure, **kw)


@st.composite
def bounded_hands(draw) -> PlayedHand:
    options = draw(st.one_of(table_opts(), bounded_opts()))
    unit = options.chip_unit
    _, high = buy_in_limits(options)
    if draw(st.integers(0, 3)) == 0:  # a full table, everyone at the maximum buy-in
        stacks = [(s, high) for s in range(1, options.max_seats + 1)]
        seat_numbers = [s for s, _ in stacks]
    else:
        n = draw(st.integers(2, options.max_seats))
        seat_numbers = sorted(draw(st.lists(st.integers(1, options.max_seats), min_size=n,
                                            max_size=n, unique=True)))
        stack = st.one_of(st.integers(1, 5), wide(1, high // unit))
        stacks = [(s, unit * draw(stack)) for s in seat_numbers]
    assert sum(s for _, s in stacks) <= MAX_CHIPS
    button = draw(st.sampled_from(seat_numbers))
    return play(options, stacks, button, draw(st.integers(0, 2**32 - 1)),
                passive=draw(st.booleans()))


@PROPERTY_SETTINGS
@given(bounded_hands())
def test_min_to_and_max_to_are_always_accepted(h):
    h.ok()
    for i, e in _of(h, E.ActionTaken):
        state = h.before[i]
        legal = legal_actions(state, e.seat)
        p = state.player(e.seat)
        if legal.call:
            D.act(state, e.seat, ActionKind.CALL)
        if legal.can_check:
            D.act(state, e.seat, ActionKind.CHECK)
        if legal.bring_in:
            D.act(state, e.seat, ActionKind.BRING_IN)
        if legal.raise_kind is None:
            continue
        assert 0 < legal.min_to <= legal.max_to <= p.round_bet + p.stack, legal
        assert legal.max_to <= MAX_CHIPS, f"{legal} offers more than the wire takes"
        for to in (legal.min_to, legal.max_to):
            out = D.act(state, e.seat, legal.raise_kind, to)
            assert out[0].to == to
