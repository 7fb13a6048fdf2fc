"""Bounds on table options (shared.poker.options, the security issue's finding 5): each one
just inside is accepted, just outside refused with a message naming the setting and its limit;
the rule book's defaults stay valid; the chips at a table never pass MAX_CHIPS."""

from __future__ import annotations

from dataclasses import replace

import pytest

from shared.poker import events as E
from shared.poker import table as T
from shared.poker.errors import IllegalAction, InvalidOptions
from shared.poker.fold import fold
from shared.poker.handrunner import new_table
from shared.poker.options import (
    MAX_CHIPS,
    MAX_CLOCK_SECONDS,
    MAX_RAKE_BASIS_POINTS,
    NO_RAKE_CAP,
    RakeCap,
    TableOptions,
    buy_in_limits,
    table_options,
)

NL = ("holdem", "no_limit")
BB = dict(small_blind=1, big_blind=2)

# (setting, largest accepted, smallest refused, words of the refusal); with NL 1/2 otherwise
EDGES = [
    ("rake_basis_points", MAX_RAKE_BASIS_POINTS, MAX_RAKE_BASIS_POINTS + 1, "0 and 1000"),
    ("decision_seconds", MAX_CLOCK_SECONDS, MAX_CLOCK_SECONDS + 1, "1 and 600"),
    ("countdown_seconds", MAX_CLOCK_SECONDS, MAX_CLOCK_SECONDS + 1, "0 and 600"),
    ("reconnect_bonus_seconds", MAX_CLOCK_SECONDS, MAX_CLOCK_SECONDS + 1, "0 and 600"),
    ("max_buy_in", MAX_CHIPS // 10, MAX_CHIPS // 10 + 1, "maximum buy-in is at most"),
    ("max_seats", 10, 11, "2 to 10"),
    ("max_bets", 100, 101, "1 and 100"),
]


@pytest.mark.parametrize("name, inside, outside, words", EDGES, ids=[e[0] for e in EDGES])
def test_each_bound_just_inside_and_just_outside(name, inside, outside, words):
    assert getattr(table_options(*NL, **BB, **{name: inside}), name) == inside
    with pytest.raises(InvalidOptions) as info:
        table_options(*NL, **BB, **{name: outside})
    assert words in info.value.reason, info.value.reason
    assert len(info.value.reason) < 300


def test_a_decision_needs_at_least_a_second_a_countdown_or_bonus_may_be_none():
    with pytest.raises(InvalidOptions, match="decision_seconds must be between 1 and 600"):
        table_options(*NL, **BB, decision_seconds=0)
    o = table_options(*NL, **BB, decision_seconds=1, countdown_seconds=0,
                      reconnect_bonus_seconds=0)
    assert (o.decision_seconds, o.countdown_seconds, o.reconnect_bonus_seconds) == (1, 0, 0)
    with pytest.raises(InvalidOptions, match="68|600"):
        table_options(*NL, **BB, decision_seconds=68 * 365 * 24 * 3600)


def test_uncapped_rake_at_the_ceiling_is_allowed_above_it_refused():
    o = table_options(*NL, **BB, rake_basis_points=1000, rake_cap=NO_RAKE_CAP)
    assert o.rake_cap == RakeCap() and o.rake_basis_points == 1000
    for bad in (1001, 10_000):
        with pytest.raises(InvalidOptions, match="10%"):
            table_options(*NL, **BB, rake_basis_points=bad)


def test_the_rake_cap_is_the_rule_books_unless_a_table_says_otherwise():
    """RULES.md §8: three big blinds in no-limit and pot-limit, one big bet in fixed limit;
    no cap only by saying so."""
    assert table_options("holdem", "no_limit", small_blind=1, big_blind=2).rake_cap == \
        RakeCap(6, 6, 6)
    assert table_options("omaha", "pot_limit", small_blind=5, big_blind=10).rake_cap == \
        RakeCap(30, 30, 30)
    assert table_options("holdem", "fixed_limit", small_bet=10).rake_cap == RakeCap(20, 20, 20)
    assert table_options("stud", "fixed_limit", small_bet=10, big_bet=25).rake_cap == \
        RakeCap(25, 25, 25)
    assert table_options(*NL, **BB, rake_cap=NO_RAKE_CAP).rake_cap.for_players(9) is None
    assert table_options(*NL, **BB, rake_cap=7).rake_cap == RakeCap(7, 7, 7)


def test_rake_caps_are_chip_amounts_within_max_chips():
    assert table_options(*NL, **BB, rake_cap=MAX_CHIPS).rake_cap.heads_up == MAX_CHIPS
    for cap in (MAX_CHIPS + 1, RakeCap(1, 2, MAX_CHIPS + 1)):
        with pytest.raises(InvalidOptions, match="rake_cap .* larger than any table"):
            table_options(*NL, **BB, rake_cap=cap)


TOO_BIG = MAX_CHIPS + 1
CHIP_AMOUNTS = [  # (name, game and structure, settings with that amount just over MAX_CHIPS)
    ("small_blind", NL, dict(small_blind=TOO_BIG, big_blind=TOO_BIG, max_buy_in=1000)),
    ("big_blind", NL, dict(small_blind=1, big_blind=TOO_BIG, max_buy_in=1000)),
    ("ante", NL, dict(**BB, ante=TOO_BIG, ante_type="per_seat")),
    ("min_buy_in", NL, dict(**BB, min_buy_in=TOO_BIG)),
    ("max_buy_in", NL, dict(**BB, max_buy_in=TOO_BIG)),
    ("chip_unit", NL, dict(chip_unit=TOO_BIG, small_blind=TOO_BIG, big_blind=TOO_BIG)),
    ("small_bet", ("stud", "fixed_limit"), dict(small_bet=TOO_BIG, max_buy_in=1000)),
    ("big_bet", ("holdem", "fixed_limit"), dict(small_bet=10, big_bet=TOO_BIG)),
    ("rake_cap", NL, dict(**BB, rake_cap=TOO_BIG)),
]


@pytest.mark.parametrize("name, game, kw", CHIP_AMOUNTS, ids=[c[0] for c in CHIP_AMOUNTS])
def test_every_chip_amount_is_within_max_chips(name, game, kw):
    """(A bring-in is at most the small bet, so the small bet's bound is the bring-in's.)"""
    with pytest.raises(InvalidOptions) as info:
        table_options(*game, **kw)
    assert info.value.reason.startswith(f"{name} {TOO_BIG} is larger than any table can hold")


def test_a_full_table_of_maximum_buy_ins_fits_max_chips():
    for seats in (2, 6, 10):
        top = MAX_CHIPS // seats
        o = table_options(*NL, **BB, max_seats=seats, max_buy_in=top)
        assert o.max_seats * buy_in_limits(o)[1] <= MAX_CHIPS
        with pytest.raises(InvalidOptions, match=f"with {seats} seats"):
            table_options(*NL, **BB, max_seats=seats, max_buy_in=top + 1)
    with pytest.raises(InvalidOptions, match="2 seats"):  # the finding: 2**53 heads-up
        table_options(*NL, **BB, max_seats=2, max_buy_in=2**53)


def test_the_default_buy_in_counts_too():
    """With no max_buy_in the default is 200 big blinds: the blinds are bounded through it."""
    bb = MAX_CHIPS // (10 * 200)
    o = table_options(*NL, small_blind=1, big_blind=bb)
    assert buy_in_limits(o)[1] * 10 <= MAX_CHIPS
    with pytest.raises(InvalidOptions, match="maximum buy-in"):
        table_options(*NL, small_blind=1, big_blind=bb + 1)


def test_the_minimum_buy_in_is_not_above_the_effective_maximum():
    table_options(*NL, **BB, min_buy_in=400)  # the default maximum: 200 x 2
    with pytest.raises(InvalidOptions, match="minimum buy-in 401 is above the maximum 400"):
        table_options(*NL, **BB, min_buy_in=401)


def test_the_rule_books_defaults_are_valid():
    defaults = table_options(*NL, **BB)
    assert defaults.rake_basis_points == 500 <= MAX_RAKE_BASIS_POINTS
    assert (defaults.decision_seconds, defaults.countdown_seconds,
            defaults.reconnect_bonus_seconds) == (10, 20, 20)
    assert defaults.max_seats == 10 and defaults.max_bets == 4
    for game in ("holdem", "omaha", "omaha_hilo"):
        for structure in ("fixed_limit", "pot_limit", "no_limit"):
            kw = dict(small_bet=10) if structure == "fixed_limit" else BB
            table_options(game, structure, **kw)
    for game in ("stud", "stud_hilo"):
        assert table_options(game, "fixed_limit", small_bet=10).max_seats == 8
    assert TableOptions.__dataclass_fields__["rake_basis_points"].default == 500


# --- the chips at a table ------------------------------------------------------------------

def _table_with_stacks(stacks: dict[int, int]):
    """A 3-seat table at the bound, its seats holding ``stacks``: as if earlier hands had moved
    the chips (a winner's stack grows past any buy-in as others leave and buy in)."""
    options = table_options(*NL, **BB, max_seats=3, max_buy_in=MAX_CHIPS // 3, min_buy_in=2)
    table = fold([E.PlayerSeated(seat, f"p{seat}", 2, "d") for seat in stacks],
                 new_table(options))
    return replace(table, seats=tuple(replace(s, stack=stacks[s.seat]) for s in table.seats))


def test_sitting_down_beyond_the_tables_chip_bound_is_refused():
    table = _table_with_stacks({1: MAX_CHIPS - 10})
    assert T.table_chips(table) == MAX_CHIPS - 10
    assert T.sit_down(table, 2, "newcomer", 10, "d")
    with pytest.raises(IllegalAction, match=f"already holds {MAX_CHIPS - 10} chips: it may "
                                            f"hold at most {MAX_CHIPS} in all"):
        T.sit_down(table, 2, "newcomer", 11, "d")


def test_topping_up_beyond_the_tables_chip_bound_is_refused():
    table = _table_with_stacks({1: MAX_CHIPS - 20, 2: 2})
    assert T.top_up(table, 2, 18)
    with pytest.raises(IllegalAction, match="already holds"):
        T.top_up(table, 2, 19)


def test_a_top_up_stays_within_the_maximum_buy_in():
    table = fold([E.PlayerSeated(1, "a", 100, "d")], new_table(table_options(*NL, **BB)))
    assert T.top_up(table, 1, 300)
    with pytest.raises(IllegalAction, match="at most 400"):
        T.top_up(table, 1, 301)
