"""Games, betting structures and table options (RULES.md §2, §3, §4, §7, §8).

Every option is recorded in ``TableCreated``, so a replay always knows which rules applied.
:func:`table_options` builds options with the rule book's defaults and validates them; the
derived amounts (fixed-limit blinds, stud ante and bring-in) are resolved there once, so the
rest of the engine reads plain integers.

This is the one place table options are validated, bounds included (:func:`table_options`):
every chip amount fits the engine's :data:`MAX_CHIPS`, and so do all the chips a full table
can buy in for; the rake is at most :data:`MAX_RAKE_BASIS_POINTS`; each clock setting is at
most :data:`MAX_CLOCK_SECONDS`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, TypedDict, TypeGuard

from .cards import SuitOrder
from .errors import InvalidOptions


class Game(enum.Enum):
    HOLDEM = "holdem"
    OMAHA = "omaha"
    OMAHA_HILO = "omaha_hilo"
    STUD = "stud"
    STUD_HILO = "stud_hilo"

    # Members are equal only to themselves, so hashing by identity is consistent, and it is a
    # C slot: Enum.__hash__ is a Python call (hash of the name) on every dict or cache lookup
    # keyed by a member (the showdown's hand-value cache, the step table).
    __hash__ = object.__hash__

    # The sets of games are module constants (below): looking members up on an Enum class is
    # slow, and the engine asks these on every step.
    @property
    def is_stud(self) -> bool:
        return self in _STUD_GAMES

    @property
    def is_hilo(self) -> bool:
        return self in _HILO_GAMES

    @property
    def is_omaha(self) -> bool:
        return self in _OMAHA_GAMES

    @property
    def hole_cards(self) -> int:
        return _HOLE_CARDS.get(self, 3)

    @property
    def max_seats(self) -> int:
        return 8 if self.is_stud else 10


_STUD_GAMES = (Game.STUD, Game.STUD_HILO)
_HILO_GAMES = (Game.OMAHA_HILO, Game.STUD_HILO)
_OMAHA_GAMES = (Game.OMAHA, Game.OMAHA_HILO)
_HOLE_CARDS = {Game.HOLDEM: 2, Game.OMAHA: 4, Game.OMAHA_HILO: 4}  # stud: 3 on 3rd street


class Structure(enum.Enum):
    FIXED_LIMIT = "fixed_limit"
    POT_LIMIT = "pot_limit"
    NO_LIMIT = "no_limit"


#: Structures each game is played in (RULES §2). Omaha hi/lo no limit is allowed as an option.
ALLOWED_STRUCTURES = {
    Game.HOLDEM: (Structure.FIXED_LIMIT, Structure.POT_LIMIT, Structure.NO_LIMIT),
    Game.OMAHA: (Structure.FIXED_LIMIT, Structure.POT_LIMIT, Structure.NO_LIMIT),
    Game.OMAHA_HILO: (Structure.FIXED_LIMIT, Structure.POT_LIMIT, Structure.NO_LIMIT),
    Game.STUD: (Structure.FIXED_LIMIT,),
    Game.STUD_HILO: (Structure.FIXED_LIMIT,),
}


class AnteType(enum.Enum):
    NONE = "none"
    PER_SEAT = "per_seat"  # every player dealt in posts `ante`
    BIG_BLIND = "big_blind"  # the big blind posts `ante` alone, for the table


class TimeoutPolicy(enum.Enum):
    SOURCES = "sources"  # facing a bet with chips already in: all in for what is in; else fold
    CHECK_FOLD = "check_fold"


@dataclass(frozen=True, slots=True)
class RakeCap:
    """Per-hand rake cap, optionally by number of players dealt in (2, 3-4, 5+)."""

    heads_up: int | None = None
    three_four: int | None = None
    five_plus: int | None = None

    def for_players(self, n: int) -> int | None:
        if n <= 2:
            return self.heads_up
        if n <= 4:
            return self.three_four
        return self.five_plus


@dataclass(frozen=True, slots=True)
class TableOptions:
    """All per-table rules. Build with :func:`table_options`; amounts are chips (int)."""

    game: Game
    structure: Structure
    max_seats: int
    chip_unit: int = 1
    small_blind: int = 0
    big_blind: int = 0
    small_bet: int = 0  # fixed limit: the bet on the first two rounds
    big_bet: int = 0  # fixed limit: the bet on the later rounds
    ante: int = 0
    ante_type: AnteType = AnteType.NONE
    bring_in: int = 0  # stud
    max_bets: int = 4
    heads_up_uncapped: bool = False
    suit_order: SuitOrder = SuitOrder.SOURCES
    rake_basis_points: int = 500  # 5%
    rake_cap: RakeCap = field(default_factory=RakeCap)
    no_flop_no_drop: bool = True
    decision_seconds: int = 10
    countdown_seconds: int = 20
    reconnect_bonus_seconds: int = 20
    timeout_policy: TimeoutPolicy = TimeoutPolicy.SOURCES
    min_buy_in: int = 0
    max_buy_in: int = 0
    #: chips come from and return to a wallet: sit-downs, top-ups, leaving and rake run as
    #: sagas with it (events.BuyInRequested ...); the table service's tables always do
    wallet: bool = False
    #: spectators need an operator's or compliance's role (or a seat at the table)
    private: bool = False
    #: the tournament the table belongs to ("": a cash table). Its director seats players
    #: with their stacks, moves them, takes busted players off and sets the level; nobody
    #: buys in, tops up, cashes out or sits out; the table pauses after every hand until the
    #: director releases the next (shared/poker/tournament/tables.py)
    tournament: str = ""

    @property
    def blind_unit(self) -> int:
        """The bet size that sets the no-limit minimum bet and minimum raise (the big blind)."""
        return self.big_blind


#: chips travel as int64; a table never needs more than 2**53 in one amount. Every amount an
#: option sets, and all the chips a full table can buy in for, stay within it, so no stack,
#: pot or bet at a table exceeds it (the betting service refuses larger amounts).
MAX_CHIPS = 2**53

#: the highest rake: 10% (1000 basis points). A cap is not required (the rule book's default
#: is 5% uncapped), so 10% uncapped is the most a table may take.
MAX_RAKE_BASIS_POINTS = 1000

#: the longest any clock setting may be (decision, countdown, reconnect bonus): 10 minutes.
#: A decision gets at least one second; a countdown or a bonus of 0 means none.
MAX_CLOCK_SECONDS = 600

_INT_OPTIONS = {"max_bets", "rake_basis_points", "decision_seconds", "countdown_seconds",
                "reconnect_bonus_seconds", "min_buy_in", "max_buy_in"}
_BOOL_OPTIONS = {"heads_up_uncapped", "no_flop_no_drop", "wallet", "private"}
_CHIP_OPTIONS = ("chip_unit", "small_blind", "big_blind", "small_bet", "big_bet", "ante",
                 "bring_in", "min_buy_in", "max_buy_in")


def _round_down(amount: int, unit: int) -> int:
    return amount - amount % unit


def _is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


class Stakes(TypedDict, total=False):
    """Stakes as keywords of :func:`table_options` (those a caller names; the rest take the
    rule book's defaults)."""

    small_blind: int
    big_blind: int
    small_bet: int
    big_bet: int
    ante: int
    bring_in: int


def table_options(
    game: Game | str,
    structure: Structure | str,
    *,
    small_blind: int | None = None,
    big_blind: int | None = None,
    small_bet: int | None = None,
    big_bet: int | None = None,
    ante: int | None = None,
    ante_type: AnteType | str | None = None,
    bring_in: int | None = None,
    max_seats: int | None = None,
    suit_order: SuitOrder | str = SuitOrder.SOURCES,
    rake_cap: RakeCap | int | None = None,
    **rest: object,
) -> TableOptions:
    """Options with the rule book's defaults filled in, validated.

    - Fixed limit with no explicit blinds: big blind = small bet, small blind = half the
      small bet rounded down to the chip unit ($5/$10 with a $1 unit gives a $2 small blind).
      The big bet defaults to twice the small bet.
    - Stud: ante a tenth of the small bet, bring-in a third of it, rounded down ($15/$30
      brings in $5); a bring-in is never below one unit, an ante that rounds to zero means none.

    Bounds (:class:`InvalidOptions` names the setting, its limit and the value):

    - every chip amount (chip unit, blinds, bets, ante, bring-in, buy-ins, rake caps) is at
      most :data:`MAX_CHIPS`, and ``max_seats`` x the maximum buy-in (the option, or its
      default of 200 big blinds) is too, so a full table of maximum buy-ins fits the engine's
      bound (:func:`shared.poker.table.sit_down` and ``top_up`` keep the table's total within
      it as players come and go); the minimum buy-in is not above the maximum;
    - ``rake_basis_points`` at most :data:`MAX_RAKE_BASIS_POINTS` (10%); the rake cap defaults
      to the rule book's (RULES.md §8: three big blinds in no-limit and pot-limit games, one
      big bet in fixed-limit games); a table has no cap only by saying so (``rake_cap`` an
      empty :class:`RakeCap`, :data:`NO_RAKE_CAP`); a cap is any amount up to
      :data:`MAX_CHIPS`;
    - ``decision_seconds`` 1 to :data:`MAX_CLOCK_SECONDS` (10 minutes), ``countdown_seconds``
      and ``reconnect_bonus_seconds`` 0 (none) to :data:`MAX_CLOCK_SECONDS`;
    - ``max_seats`` 2 to the game's maximum (10; stud 8), ``max_bets`` 1 to 100.
    """
    game, structure, suit_order, ante_type = _named(game, structure, suit_order, ante_type,
                                                    rest)
    unit = _unit(game, structure, rest, small_blind=small_blind, big_blind=big_blind,
                 small_bet=small_bet, big_bet=big_bet, ante=ante, bring_in=bring_in)

    small_blind, big_blind, small_bet, big_bet, ante, ante_type, bring_in = _forced_bets(
        game, structure, unit, small_blind, big_blind, small_bet, big_bet, ante, ante_type,
        bring_in)
    rake_cap = default_rake_cap(structure, big_blind or 0, big_bet or 0) if rake_cap is None \
        else _rake_cap(rake_cap)
    seats = _seats(game, max_seats)
    opts = TableOptions(
        game=game, structure=structure, max_seats=seats, chip_unit=unit,
        small_blind=small_blind or 0, big_blind=big_blind or 0,
        small_bet=small_bet or 0, big_bet=big_bet or 0, ante=ante, ante_type=ante_type,
        bring_in=bring_in, suit_order=suit_order, rake_cap=rake_cap,
    )
    return _checked(_with_extras(opts, rest))


def _unit(game: Game, structure: Structure, rest: dict[str, object],
          **amounts: int | None) -> int:
    """The chip unit, once the game is played in ``structure`` and every amount given is a
    whole number of chips."""
    unit = rest.get("chip_unit", 1)
    if not _is_int(unit) or unit < 1:
        raise InvalidOptions("chip_unit must be a whole number of chips, at least 1")
    if structure not in ALLOWED_STRUCTURES[game]:
        raise InvalidOptions(f"{game.value} is not played {structure.value}")
    for name, value in amounts.items():
        if value is not None and (not _is_int(value) or value < 0):
            raise InvalidOptions(f"{name} must be a whole number of chips, not {value!r}")
    assert isinstance(unit, int)
    return unit


def _seats(game: Game, max_seats: int | None) -> int:
    seats = game.max_seats if max_seats is None else max_seats
    if not _is_int(seats) or not 2 <= seats <= game.max_seats:
        raise InvalidOptions(f"{game.value} seats 2 to {game.max_seats} players, not {seats}")
    return seats


def _named(game: Game | str, structure: Structure | str, suit_order: SuitOrder | str,
           ante_type: AnteType | str | None,
           rest: dict[str, object]) -> tuple[Game, Structure, SuitOrder, AnteType | None]:
    """The options named by a word, as their enums (``rest``'s timeout policy in place)."""
    try:
        named = (Game(game), Structure(structure), SuitOrder(suit_order),
                 AnteType(ante_type) if ante_type is not None else None)
        if "timeout_policy" in rest:
            rest["timeout_policy"] = TimeoutPolicy(rest["timeout_policy"])
        return named
    except ValueError as exc:
        raise InvalidOptions(f"{exc}; games: {', '.join(g.value for g in Game)}; structures: "
                             f"{', '.join(s.value for s in Structure)}; timeout policies: "
                             f"{', '.join(t.value for t in TimeoutPolicy)}") from None


def _forced_bets(game: Game, structure: Structure, unit: int, small_blind: int | None,
                 big_blind: int | None, small_bet: int | None, big_bet: int | None,
                 ante: int | None, ante_type: AnteType | None, bring_in: int | None,
                 ) -> tuple[int | None, int | None, int | None, int | None, int, AnteType, int]:
    """The blinds, bets, ante and bring-in with the rule book's defaults filled in."""
    fixed = structure is Structure.FIXED_LIMIT
    if fixed:
        if not small_bet:
            raise InvalidOptions("fixed limit needs small_bet")
        big_bet = big_bet or 2 * small_bet
        if big_bet < small_bet:
            raise InvalidOptions("big_bet must be at least small_bet")
    if game.is_stud:
        assert small_bet is not None  # stud is fixed limit: checked above
        ante, bring_in, ante_type = _stud_forced_bets(small_bet, ante, bring_in, unit)
        small_blind = big_blind = 0
    else:
        small_blind, big_blind, ante, ante_type = _blinds(
            small_bet if fixed else None, small_blind, big_blind, ante, ante_type, unit)
        bring_in = 0
    if ante == 0:
        ante_type = AnteType.NONE
    return small_blind, big_blind, small_bet, big_bet, ante, ante_type, bring_in


def _stud_forced_bets(small_bet: int, ante: int | None, bring_in: int | None,
                      unit: int) -> tuple[int, int, AnteType]:
    """Stud's ante and bring-in, the rule book's defaults filled in (a tenth and a third of
    the small bet, rounded down to the chip unit; a bring-in at least one unit)."""
    ante = _round_down(small_bet // 10, unit) if ante is None else ante
    bring_in = bring_in if bring_in is not None else max(unit, _round_down(small_bet // 3, unit))
    if not 0 < bring_in <= small_bet:
        raise InvalidOptions("bring_in must be between one chip and the small bet")
    return ante, bring_in, AnteType.PER_SEAT if ante else AnteType.NONE


def _blinds(fixed_small_bet: int | None, small_blind: int | None, big_blind: int | None,
            ante: int | None, ante_type: AnteType | None,
            unit: int) -> tuple[int, int, int, AnteType]:
    """A flop game's blinds and ante, defaults filled in: at fixed limit (``fixed_small_bet``)
    the big blind is the small bet; the small blind is half the big blind rounded down."""
    if fixed_small_bet is not None and big_blind is None:
        big_blind = fixed_small_bet
        if small_blind is None:
            small_blind = max(unit, _round_down(fixed_small_bet // 2, unit))
    if not big_blind:
        raise InvalidOptions("pot limit and no limit tables need big_blind")
    if small_blind is None:
        small_blind = max(unit, _round_down(big_blind // 2, unit))
    if not 0 < small_blind <= big_blind:
        raise InvalidOptions("small_blind must be between one chip and the big blind")
    ante = ante or 0
    if ante_type is None:
        ante_type = AnteType.PER_SEAT if ante else AnteType.NONE
    if ante and ante_type is AnteType.NONE:
        raise InvalidOptions("an ante needs ante_type per_seat or big_blind")
    return small_blind, big_blind, ante, ante_type


def _with_extras(opts: TableOptions, rest: dict[str, object]) -> TableOptions:
    """``opts`` with the other options given by name, each of its kind."""
    # each checked below, or by replace() (an unknown name)
    changes: dict[str, Any] = {k: v for k, v in rest.items() if k != "chip_unit"}
    for name, value in changes.items():
        if name in _INT_OPTIONS and (not _is_int(value) or value < 0):
            raise InvalidOptions(f"{name} must be a whole non-negative number, not {value!r}")
        if name in _BOOL_OPTIONS and not isinstance(value, bool):
            raise InvalidOptions(f"{name} must be true or false, not {value!r}")
        if name == "tournament" and not (isinstance(value, str) and len(value) <= 64):
            raise InvalidOptions(f"tournament is a tournament id, not {value!r}")
    try:
        opts = replace(opts, **changes)
    except TypeError as exc:
        raise InvalidOptions(f"unknown table option: {exc}") from None
    return opts


def _checked(opts: TableOptions) -> TableOptions:
    """``opts`` if every setting is within its bound (the docstring of :func:`table_options`)."""
    if not 1 <= opts.max_bets <= 100:
        raise InvalidOptions("max_bets must be between 1 and 100")
    if not 0 <= opts.rake_basis_points <= MAX_RAKE_BASIS_POINTS:
        raise InvalidOptions(f"rake_basis_points must be between 0 and {MAX_RAKE_BASIS_POINTS} "
                             f"(0% to {MAX_RAKE_BASIS_POINTS / 100:g}%), not "
                             f"{opts.rake_basis_points}")
    for name, least in (("decision_seconds", 1), ("countdown_seconds", 0),
                        ("reconnect_bonus_seconds", 0)):
        if not least <= getattr(opts, name) <= MAX_CLOCK_SECONDS:
            raise InvalidOptions(f"{name} must be between {least} and {MAX_CLOCK_SECONDS} "
                                 f"(10 minutes), not {getattr(opts, name)}")
    cap = opts.rake_cap
    amounts = [(name, getattr(opts, name)) for name in _CHIP_OPTIONS]
    amounts += [("rake_cap", c) for c in (cap.heads_up, cap.three_four, cap.five_plus)
                if c is not None]
    for name, value in amounts:
        if value > MAX_CHIPS:
            raise InvalidOptions(f"{name} {value} is larger than any table can hold "
                                 f"({MAX_CHIPS} chips)")
    low, high = buy_in_limits(opts)
    if low > high:
        raise InvalidOptions(f"the minimum buy-in {low} is above the maximum {high}")
    if opts.max_seats * high > MAX_CHIPS:
        raise InvalidOptions(f"{opts.max_seats} seats buying in for up to {high} chips could "
                             f"bring more than {MAX_CHIPS} chips to the table: with "
                             f"{opts.max_seats} seats the maximum buy-in is at most "
                             f"{MAX_CHIPS // opts.max_seats}")
    return opts


def buy_in_limits(options: TableOptions) -> tuple[int, int]:
    """The table's buy-in range: its options, or 20 to 200 big blinds (stud: small bets)."""
    unit = options.big_blind or options.small_bet
    low = options.min_buy_in or 20 * unit
    high = options.max_buy_in or 200 * unit
    return low, high


#: a table that takes its rake without a cap (it must say so: the default is a cap)
NO_RAKE_CAP = RakeCap()


def default_rake_cap(structure: Structure, big_blind: int, big_bet: int) -> RakeCap:
    """The rule book's cap (RULES.md §8): three big blinds in no-limit and pot-limit games,
    one big bet in fixed-limit games, whatever the number of players."""
    cap = big_bet if structure is Structure.FIXED_LIMIT else 3 * big_blind
    return RakeCap(cap, cap, cap)


def _rake_cap(cap: object) -> RakeCap:
    """A single cap for every table size, or a RakeCap by players dealt in (2, 3-4, 5+)."""
    if _is_int(cap):
        cap = RakeCap(cap, cap, cap)
    if not isinstance(cap, RakeCap):
        raise InvalidOptions(f"rake_cap must be a whole number of chips, not {cap!r}")
    for value in (cap.heads_up, cap.three_four, cap.five_plus):
        if value is not None and (not _is_int(value) or value < 0):
            raise InvalidOptions(f"rake caps are whole non-negative chips, not {value!r}")
    return cap


def stakes_of(o: TableOptions) -> str:
    """A table's stakes as players name them: the small and big bet of a fixed-limit game,
    else the blinds ("10/20")."""
    if o.structure is Structure.FIXED_LIMIT:
        return f"{o.small_bet}/{o.big_bet}"
    return f"{o.small_blind}/{o.big_blind}"
