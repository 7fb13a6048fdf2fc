"""A tournament's structure: levels (blinds, ante, minutes), breaks, the starting stack, the
buy-in and fee, late registration, re-entries, rebuys, the field and the payouts' guarantee.

Money (buy-in, fee, guarantee) is in the wallet's units; chips are tournament chips, which
never leave the tournament's tables. Both are integers.
"""

from __future__ import annotations

import enum

from ..errors import InvalidOptions
from ..evolve import Value, value

#: a field beyond which no payout table is defined (payouts.py)
MAX_FIELD = 100
MAX_MONEY = 10**12
MAX_STACK = 10**9
SEATS_PER_TABLE = 9


class Kind(enum.Enum):
    SIT_AND_GO = "sit_and_go"  # starts when full
    SCHEDULED = "scheduled"  # an operator starts it (multi-table)


@value
class Level(Value):
    """A level of play, or a break (no hand starts during a break: its blinds are unused)."""

    small_blind: int
    big_blind: int
    ante: int
    minutes: float
    is_break: bool = False


@value
class Structure(Value):
    kind: Kind
    levels: tuple[Level, ...]
    starting_stack: int
    buy_in: int  # to the prize pool
    fee: int  # to the house
    max_players: int  # a sit-and-go starts when this many have registered
    min_players: int = 2
    seats_per_table: int = SEATS_PER_TABLE
    #: registration stays open until this many levels have been played (0: closes at start)
    late_levels: int = 0
    #: entries a player may buy (1: no re-entry); a re-entry needs late registration open
    max_entries: int = 1
    guarantee: int = 0  # the least prize pool; the house pays the overlay
    decision_seconds: int = 15  # the action clock at its tables
    #: rebuys are open while fewer than this many levels are over (0: no rebuys); a rebuy
    #: adds ``rebuy_chips`` for ``rebuy_price``, all of it to the prize pool (no fee), to a
    #: stack at most the starting stack (TDA / PokerStars), ``max_rebuys`` times a player
    rebuy_levels: int = 0
    rebuy_chips: int = 0
    rebuy_price: int = 0
    max_rebuys: int = 0
    #: the add-on: ``add_on_chips`` for ``add_on_price`` (to the pool, no fee), once a
    #: player, any stack, during the last rebuy level and the break right after it
    add_on_chips: int = 0
    add_on_price: int = 0

    def __post_init__(self) -> None:
        check_structure(self)


def check_structure(s: Structure) -> None:
    """InvalidOptions naming the first field out of its bounds."""
    if not s.levels or s.levels[0].is_break:
        raise InvalidOptions("a structure needs levels, and starts with one that is played")
    for i, lv in enumerate(s.levels, 1):
        if lv.minutes <= 0 or lv.minutes > 24 * 60:
            raise InvalidOptions(f"level {i} lasts more than 0 and at most 1440 minutes")
        if not lv.is_break and not (0 < lv.small_blind <= lv.big_blind <= MAX_STACK
                                    and 0 <= lv.ante <= lv.big_blind):
            raise InvalidOptions(f"level {i}: 0 < small blind <= big blind and 0 <= ante <= "
                                 f"big blind")
    if not 0 < s.starting_stack <= MAX_STACK:
        raise InvalidOptions(f"the starting stack is 1 to {MAX_STACK} chips")
    if s.buy_in < 0 or s.fee < 0 or s.guarantee < 0 or max(s.buy_in, s.fee,
                                                           s.guarantee) > MAX_MONEY:
        raise InvalidOptions(f"buy-in, fee and guarantee are 0 to {MAX_MONEY}")
    if not 2 <= s.seats_per_table <= 10:
        raise InvalidOptions("a table has 2 to 10 seats")
    if not 2 <= s.min_players <= s.max_players <= MAX_FIELD:
        raise InvalidOptions(f"2 <= min players <= max players <= {MAX_FIELD}")
    if s.kind is Kind.SIT_AND_GO and s.late_levels:
        raise InvalidOptions("a sit-and-go starts when full: it has no late registration")
    if not 0 <= s.late_levels <= len(s.levels) or not 1 <= s.max_entries <= 10:
        raise InvalidOptions("late registration lasts at most every level; 1 to 10 entries")
    if not 1 <= s.decision_seconds <= 600:
        raise InvalidOptions("the action clock is 1 to 600 seconds a decision")
    check_rebuys(s)
    chips = s.starting_stack + s.max_rebuys * s.rebuy_chips + s.add_on_chips
    if s.max_players * s.max_entries * chips > MAX_STACK:
        raise InvalidOptions(f"max players x entries x (starting stack + rebuys' and add-on's "
                             f"chips) is "
                             f"at most {MAX_STACK} chips")


def check_rebuys(s: Structure) -> None:
    """InvalidOptions for a rebuy or add-on option out of its bounds (all 0: none)."""
    if not s.rebuy_levels:
        if s.rebuy_chips or s.rebuy_price or s.max_rebuys or s.add_on_chips or s.add_on_price:
            raise InvalidOptions("rebuy chips, price and count and the add-on need a rebuy "
                                 "period (rebuy levels > 0): the add-on comes at its end")
        return
    if not 0 < s.rebuy_levels <= len(s.levels):
        raise InvalidOptions(f"the rebuy period lasts 1 to {len(s.levels)} levels (the "
                             f"structure's)")
    if not 0 < s.rebuy_chips <= MAX_STACK:
        raise InvalidOptions(f"a rebuy adds 1 to {MAX_STACK} chips")
    if not 0 <= s.rebuy_price <= MAX_MONEY:
        raise InvalidOptions(f"a rebuy's price is 0 to {MAX_MONEY}")
    if not 1 <= s.max_rebuys <= 10:
        raise InvalidOptions("a player may rebuy 1 to 10 times when there are rebuys")
    if not 0 <= s.add_on_chips <= MAX_STACK or not 0 <= s.add_on_price <= MAX_MONEY:
        raise InvalidOptions(f"an add-on adds 0 (none) to {MAX_STACK} chips for 0 to "
                             f"{MAX_MONEY}")
    if s.add_on_price and not s.add_on_chips:
        raise InvalidOptions("an add-on with a price needs its chips (add-on chips > 0)")


def sit_and_go(players: int = 9, minutes: float = 5.0, starting_stack: int = 1500,
               buy_in: int = 100, fee: int = 10) -> Structure:
    """The default: a no-limit hold'em sit-and-go at one table (``create`` with no options)."""
    blinds = ((10, 20), (15, 30), (25, 50), (50, 100), (75, 150), (100, 200), (150, 300),
              (200, 400), (300, 600), (400, 800), (600, 1200), (800, 1600), (1000, 2000))
    levels = tuple(Level(sb, bb, bb // 10 if i >= 3 else 0, minutes)
                   for i, (sb, bb) in enumerate(blinds))
    return Structure(Kind.SIT_AND_GO, levels, starting_stack, buy_in, fee, players,
                     min_players=players, seats_per_table=min(players, SEATS_PER_TABLE))


def level_at(structure: Structure, elapsed_ms: int) -> tuple[int, int]:
    """The level played ``elapsed_ms`` after the start (0-based index) and the milliseconds
    left in it; past the last level, the last one goes on (no end)."""
    left = elapsed_ms
    for i, lv in enumerate(structure.levels):
        span = int(lv.minutes * 60_000)
        if left < span:
            return i, span - left
        left -= span
    return len(structure.levels) - 1, 0


def played_level(structure: Structure, level_index: int) -> Level:
    """The level the tables play at ``level_index`` (0-based; before the start, the first):
    during a break, the last level played before it (a break's blinds are unused; the
    tables keep the last ones for the hand that starts after it)."""
    levels = structure.levels[:max(level_index, 0) + 1]
    return next(lv for lv in reversed(levels) if not lv.is_break)


def rebuy_period(structure: Structure, level_index: int) -> bool:
    """Rebuys are open while fewer than ``rebuy_levels`` levels are over (from the start)."""
    return 0 <= level_index < structure.rebuy_levels


def add_on_window(structure: Structure, level_index: int) -> bool:
    """The add-on is offered during the last rebuy level and the break right after it."""
    if not structure.add_on_chips:
        return False
    last, levels = structure.rebuy_levels - 1, structure.levels
    return level_index == last or (level_index == last + 1 < len(levels)
                                   and levels[level_index].is_break)


def late_registration_open(structure: Structure, level_index: int) -> bool:
    """Registration (and re-entry) is open while fewer than ``late_levels`` levels are over."""
    return level_index < structure.late_levels
