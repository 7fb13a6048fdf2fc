"""Replay a PHH hand through the engine: the same decisions a live table takes, fed from the file.

Conventions:

- Seats are 1..n in PHH player order. With three or more players the button is seat n (PHH lists
  players from the small blind; stud from the dealer's left); heads-up the button is seat 2 (p2,
  the small blind) and p1 is the big blind. ``antes`` and ``blinds_or_straddles`` are indexed by
  position (0 the small blind, 1 the big blind) and are reverse-assigned heads-up, as the PHH
  specification and pokerkit do. Forced bets are built from those arrays (antes first, then the
  small and the big blind); a big-blind ante is an ANTE of the big blind alone. Straddles
  (entries past the big blind) are not played by this engine and are reported as an error.
- Amounts: every amount of a hand is scaled by the smallest power of ten that makes them all
  whole, the engine runs on integer chips, and the stacks are scaled back for the result.
- Options: ``suit_order="bridge"`` (what real rooms and PHH assume; a user field
  ``_suit_order`` written by :mod:`shared.phh.export` overrides it), no rake, ``min_bet`` as the
  no/pot-limit big blind (the minimum bet and raise).
- Cards: burns are not recorded in PHH and are dealt as the unknown card ``??``; ``d dh`` and
  ``d db`` cards are passed to the engine exactly as written. ``sm`` lines may come before the
  last board cards (all-in); they are kept until the showdown. At the showdown the file's
  ``sm`` for the seat the engine asks is used, in whatever order the file lists the shows; a
  seat with no ``sm`` gets the engine's default (a winning or tying hand shown, any other
  mucked) when its cards are known, and is an error when they are not.
- Nothing is skipped or repaired: an action the engine refuses is reported with its position,
  its text and the engine's reason; so is a file that ends before the hand does, or has
  actions left over after it.
- Expected result: ``finishing_stacks``; without it ``winnings``, which the specification
  defines as the pots each player collected (compared with the engine's awards); with neither,
  a hand that completes legally is ok.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, TypedDict

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, Card
from shared.poker.errors import IllegalAction, PokerError
from shared.poker.events import ActionKind, ForcedKind
from shared.poker.fold import apply
from shared.poker.handrunner import new_table
from shared.poker.memo import Memo
from shared.poker.options import AnteType, Game, Structure, TableOptions, table_options
from shared.poker.pots import form_pots
from shared.poker.state import HandState, TableState
from shared.poker.steprules import NO_DECK, automatic, next_step

from .parse import Action, HandHistory

#: PHH variant code -> (game, structure). Standard codes: NT, FT, PO, FO/8, F7S, F7S/8. Codes
#: defined here for games PHH has no code for: PT (pot-limit hold'em), NO (no-limit Omaha),
#: FO (fixed-limit Omaha high), PO/8 (pot-limit Omaha hi/lo), NO/8 (no-limit Omaha hi/lo).
VARIANTS: dict[str, tuple[Game, Structure]] = {
    "NT": (Game.HOLDEM, Structure.NO_LIMIT),
    "PT": (Game.HOLDEM, Structure.POT_LIMIT),
    "FT": (Game.HOLDEM, Structure.FIXED_LIMIT),
    "NO": (Game.OMAHA, Structure.NO_LIMIT),
    "PO": (Game.OMAHA, Structure.POT_LIMIT),
    "FO": (Game.OMAHA, Structure.FIXED_LIMIT),
    "NO/8": (Game.OMAHA_HILO, Structure.NO_LIMIT),
    "PO/8": (Game.OMAHA_HILO, Structure.POT_LIMIT),
    "FO/8": (Game.OMAHA_HILO, Structure.FIXED_LIMIT),
    "F7S": (Game.STUD, Structure.FIXED_LIMIT),
    "F7S/8": (Game.STUD_HILO, Structure.FIXED_LIMIT),
}


@dataclass(frozen=True, slots=True)
class ReplayResult:
    """The outcome of one hand. Stacks are in the file's units (exact ``Decimal``).

    ``compared``: what ``expected`` holds: ``finishing_stacks``, ``winnings`` or ``""`` (the
    file has neither). ``supported``: False when the variant is not played by this engine.
    """

    variant: str
    ok: bool
    finishing_stacks: tuple[Decimal, ...] | None
    expected: tuple[Decimal, ...] | None
    error: str | None = None
    compared: str = "finishing_stacks"
    supported: bool = True


class ReplayError(Exception):
    """The file and the engine disagree; the message says where and why."""


def replay(hh: HandHistory) -> ReplayResult:
    """Replay one hand; never raises for a bad hand, the result carries the error."""
    expected, compared = _expected(hh)
    if hh.variant not in VARIANTS:
        return ReplayResult(hh.variant, False, None, expected,
                            f"variant {hh.variant} is not played by this engine",
                            compared, supported=False)
    try:
        scale = amount_scale(hh)
        stacks, collected = _Replay(hh, scale).run()
    except ReplayError as exc:
        return ReplayResult(hh.variant, False, None, expected, str(exc), compared)
    except Exception as exc:  # noqa: BLE001 - an engine failure is a result, not a crash
        return ReplayResult(hh.variant, False, None, expected,
                            f"engine failure: {type(exc).__name__}: {exc}", compared)
    finishing = tuple(unscale(s, scale) for s in stacks)
    if compared == "winnings":
        got = tuple(unscale(c, scale) for c in collected)
    else:
        got = finishing
    if expected is not None and got != expected:
        return ReplayResult(hh.variant, False, finishing, expected,
                            f"{compared} differ: engine {_show_amounts(got)}, "
                            f"file {_show_amounts(expected)}", compared)
    return ReplayResult(hh.variant, True, finishing, expected, None, compared)


def _expected(hh: HandHistory) -> tuple[tuple[Decimal, ...] | None, str]:
    if hh.finishing_stacks is not None:
        return hh.finishing_stacks, "finishing_stacks"
    if hh.winnings is not None:
        return hh.winnings, "winnings"
    return None, ""


def _show_amounts(values: tuple[Decimal, ...]) -> str:
    return "[" + ", ".join(str(plain(v)) for v in values) + "]"


def plain(d: Decimal) -> int | float:
    """An amount for JSON and display: an int when whole, else a float."""
    return int(d) if d == d.to_integral_value() else float(d)


# --- amounts ---------------------------------------------------------------------------------


def _all_amounts(hh: HandHistory) -> list[Decimal]:
    values = [*hh.starting_stacks, *hh.antes, *hh.blinds_or_straddles,
              *(hh.finishing_stacks or ()), *(hh.winnings or ())]
    values += [v for v in (hh.bring_in, hh.small_bet, hh.big_bet, hh.min_bet) if v is not None]
    values += [a.amount for a in hh.actions if a.amount is not None]
    unit = _chip_unit(hh)
    if unit is not None:
        values.append(unit)
    return values


def _chip_unit(hh: HandHistory) -> Decimal | None:
    """The ``_chip_unit`` user field (written by :mod:`shared.phh.export`), if any."""
    unit = hh.field("_chip_unit")
    if unit is None:
        return None
    if not isinstance(unit, int | float | str | Decimal):
        raise ReplayError(f"_chip_unit must be a number, not {unit!r}")
    return Decimal(unit)


def amount_scale(hh: HandHistory) -> int:
    """The smallest power of ten that makes every amount of the hand whole (as an exponent)."""
    k = 0
    for v in _all_amounts(hh):
        if not v.is_finite():
            raise ReplayError(f"the amount {v} cannot be played (unknown stacks are 'inf')")
        if v == v.to_integral_value():  # whole: it needs no power of ten (most amounts)
            continue
        exponent = v.normalize().as_tuple().exponent
        assert isinstance(exponent, int)  # a finite amount's exponent is a number
        k = max(k, -exponent)
    return k


def _hand(table: TableState) -> HandState:
    assert table.hand is not None  # the replay's table has its hand from start_hand on
    return table.hand


def chips(value: Decimal, scale: int) -> int:
    whole = value.scaleb(scale)
    assert whole == whole.to_integral_value()
    return int(whole)


def unscale(amount: int, scale: int) -> Decimal:
    return Decimal(amount).scaleb(-scale)


# --- the table -------------------------------------------------------------------------------


def by_seat(values: tuple[Decimal, ...], scale: int) -> list[int]:
    """Per-position array -> per-seat chips (index 0 is seat 1); reversed heads-up."""
    amounts = [chips(v, scale) for v in values]
    return amounts[::-1] if len(amounts) == 2 else amounts


def setup(hh: HandHistory, scale: int) -> tuple[TableOptions, int, list[tuple[int, int]],
                                              list[E.ForcedBet]]:
    """Options, button, (seat, stack) and forced bets for the hand."""
    game, structure = VARIANTS[hh.variant]
    n = hh.player_count
    seats = range(1, n + 1)
    button = n
    antes = by_seat(hh.antes, scale)
    forced = [E.ForcedBet(s, ForcedKind.ANTE, antes[s - 1]) for s in seats if antes[s - 1]]
    positional = [chips(v, scale) for v in hh.blinds_or_straddles]
    if any(positional[2:]):
        raise ReplayError("straddles (blinds_or_straddles past the big blind) are not played "
                          "by this engine")
    if game.is_stud and any(positional):
        raise ReplayError("stud has no blinds (blinds_or_straddles must be zeros)")
    # The larger blind (the later one on a tie) is the big blind: the betting starts left of
    # it and it gets the option, as in pokerkit (``[250, 0, 0]``: p1 posts the one blind).
    big_pos = 1 if positional[1] and positional[1] >= positional[0] else 0
    pos_seat = (2, 1) if n == 2 else (1, 2)
    sb = positional[1 - big_pos] if positional[big_pos] else 0
    bb = positional[big_pos]
    sb_seat, bb_seat = pos_seat[1 - big_pos], pos_seat[big_pos]
    if sb:
        forced.append(E.ForcedBet(sb_seat, ForcedKind.SMALL_BLIND, sb))
    if bb:
        forced.append(E.ForcedBet(bb_seat, ForcedKind.BIG_BLIND, bb))

    def need(name: str) -> int:
        value = getattr(hh, name)
        if value is None:
            raise ReplayError(f"variant {hh.variant} needs the field {name!r}")
        return chips(value, scale)

    common: dict[str, Any] = dict(rake_basis_points=0,
                                  suit_order=hh.field("_suit_order", "bridge"),
                                  **_user_options(hh, scale))
    ante = max(antes)
    try:
        if game.is_stud:
            opts = _table_options(game, structure, small_bet=need("small_bet"),
                                  big_bet=need("big_bet"), bring_in=need("bring_in"),
                                  ante=ante, **common)
        else:
            ante_type = "big_blind" if [s for s in seats if antes[s - 1]] == [bb_seat] \
                else "per_seat"
            if structure is Structure.FIXED_LIMIT:
                limits = _Limits(small_bet=need("small_bet"), big_bet=need("big_bet"),
                                 big_blind=bb or None)
            else:
                big = chips(hh.min_bet, scale) if hh.min_bet is not None else bb
                if not big:
                    raise ReplayError(f"variant {hh.variant} needs 'min_bet' or a big blind")
                limits = _Limits(big_blind=big)
            small = sb if 0 < sb <= (limits.get("big_blind") or sb) else None
            opts = _table_options(game, structure, small_blind=small, ante=ante,
                                  ante_type=ante_type, **limits, **common)
    except PokerError as exc:
        raise ReplayError(f"the table cannot be set up: {exc}") from None
    stacks = [(s, chips(hh.starting_stacks[s - 1], scale)) for s in seats]
    return opts, button, stacks, forced


_PLAIN = (int, bool, str, type(None))


@lru_cache(maxsize=256)
def _cached_options(game: Game, structure: Structure, kwargs: tuple) -> TableOptions:
    return table_options(game, structure, **{k: v for k, _, v in kwargs})


def _table_options(game: Game, structure: Structure, **kwargs: Any) -> TableOptions:
    """``table_options``, remembered: the hands of a session share their table's options
    (they are frozen; a refused set of options is not remembered, it raises again). Only
    plain values make a key (an equal key then means the same call): a user field written
    as an array, a float or a Decimal is checked afresh every time."""
    if not all(type(v) in _PLAIN for v in kwargs.values()):
        return table_options(game, structure, **kwargs)
    return _cached_options(game, structure,
                           tuple((k, type(v), v) for k, v in sorted(kwargs.items())))


class _Limits(TypedDict, total=False):
    small_bet: int
    big_bet: int
    big_blind: int | None


def _user_options(hh: HandHistory, scale: int) -> dict[str, Any]:
    """Table options written by :mod:`shared.phh.export` as user fields (``_max_bets`` ...),
    as the file has them (``table_options`` checks them)."""
    out: dict[str, Any] = {}
    unit = _chip_unit(hh)
    if unit is not None:
        out["chip_unit"] = chips(unit, scale)
    if hh.field("_max_bets") is not None:
        out["max_bets"] = hh.field("_max_bets")
    if hh.field("_heads_up_uncapped") is not None:
        out["heads_up_uncapped"] = bool(hh.field("_heads_up_uncapped"))
    return out


# --- the hand --------------------------------------------------------------------------------


#: The events the replay reads as they pass (the awards, the antes, the pots).
_WATCHED = (E.PotAwarded, E.ForcedBetPosted, E.PotsFormed)


class _Replay:
    """Drives the engine's steps, taking players' and dealer's choices from the file."""

    def __init__(self, hh: HandHistory, scale: int) -> None:
        self.hh = hh
        self.scale = scale
        self.queue: deque[Action] = deque(a for a in hh.actions if a.kind != "noop")
        self.early_shows: dict[int, Action] = {}
        self.board_ahead: list[Card] = []  # board cards written ahead of their street
        #: what the steps and their decisions ask twice (shared/poker/memo.py)
        self.memo = Memo()
        #: the steps whose choices the file records
        self.choices: dict[type, Callable[[HandState, Any], list]] = {
            D.Act: self._act, D.Deal: lambda hand, step: self._deal(hand),
            D.Show: self._show}

    def run(self) -> tuple[list[int], list[int]]:
        """The final stacks and the chips each seat collected from the pots."""
        opts, button, stacks, forced = setup(self.hh, self.scale)
        table = new_table(opts, "phh")
        collected = {s: 0 for s, _ in stacks}
        try:
            new: list = D.start_hand(table, 1, button, stacks, forced)
        except IllegalAction as exc:
            raise ReplayError(f"the hand cannot start: {exc.reason}") from None
        antes: dict[int, int] = {}  # per-seat antes posted (a big-blind ante is dead anyway)
        while True:
            for e in new:
                table = apply(table, e, self.memo)
                if not isinstance(e, _WATCHED):  # most events: one check, not three
                    continue
                if isinstance(e, E.PotAwarded):
                    for share in e.shares:
                        collected[share.seat] += share.amount
                elif isinstance(e, E.ForcedBetPosted) and e.kind is ForcedKind.ANTE \
                        and opts.ante_type is AnteType.PER_SEAT:
                    antes[e.seat] = e.amount
                elif isinstance(e, E.PotsFormed) and antes and not self.hh.ante_trimming_status:
                    self._check_untrimmed_antes(_hand(table), antes)
            step = next_step(_hand(table), self.memo)
            if isinstance(step, D.HandComplete):
                break
            new = self._decide(_hand(table), step)
        if self.queue:
            raise ReplayError(f"{self.queue[0].where}: the hand is already over")
        if self.board_ahead:
            raise ReplayError("board cards were dealt beyond the last street")
        return [p.stack for p in _hand(table).players], [collected[s] for s, _ in stacks]

    @staticmethod
    def _check_untrimmed_antes(hand: HandState, antes: dict[int, int]) -> None:
        """``ante_trimming_status = false`` (PHH): the antes are dead money, outside every
        player's stake. This engine plays per-seat antes as stakes (what ``true`` means), so
        a file whose pots that changes is refused, not replayed to another result."""
        dead = tuple(p.evolve(dead=p.dead + antes.get(p.seat, 0)) for p in hand.players)
        if form_pots(dead) != form_pots(hand.players):
            raise ReplayError("ante_trimming_status = false makes the antes dead money, which "
                              "changes this hand's pots (a player could not cover the ante); "
                              "this engine plays per-seat antes as stakes "
                              "(ante_trimming_status = true), so it does not replay this file")

    def _decide(self, hand: HandState, step: D.Step) -> list:
        """The file's choice for a step it records (an action, a deal, a show or muck), else
        the step's decision (shared/poker/steprules.py), with no deck: an import has none to
        commit to or reveal."""
        chosen = self.choices.get(type(step))
        if chosen is not None:
            return chosen(hand, step)
        events = automatic(hand, step, NO_DECK, self.memo)
        if events is None:
            raise ReplayError(f"unexpected engine step {step!r}")
        return events

    def _next(self, expecting: str) -> Action:
        if not self.queue:
            raise ReplayError(f"the file ends before the hand does: {expecting}")
        return self.queue.popleft()

    # --- dealing ---

    def _deal(self, hand: HandState) -> list:
        while self.queue and self.queue[0].kind == "sm":
            a = self.queue.popleft()  # shown ahead of the run-out (all in)
            if a.player in self.early_shows:
                raise ReplayError(f"{a.where}: p{a.player} already showed")
            assert a.player is not None  # a show (sm) is a player's
            self.early_shows[a.player] = a
        plan = D.deal_plan(hand)
        street = f"street {hand.street}"
        cards: list[Card] = [UNKNOWN_CARD] * plan.burn  # burns are not recorded
        if plan.order:
            cards += self._hole_cards(plan, street)
        while len(self.board_ahead) < plan.board:
            a = self._next(f"the board cards of {street} are due")
            if a.kind != "db":
                raise ReplayError(f"{a.where}: the engine deals the board of {street} next")
            assert a.cards is not None  # a board deal (db) has its cards
            self.board_ahead += a.cards
        cards += self.board_ahead[:plan.board]
        del self.board_ahead[:plan.board]
        try:
            return D.deal(hand, cards, self.memo)
        except IllegalAction as exc:
            raise ReplayError(f"dealing {street}: {exc.reason}") from None

    def _hole_cards(self, plan: D.DealPlan, street: str) -> list[Card]:
        got: dict[int, tuple[Card, ...]] = {}  # seat -> its cards of the street
        per_seat = len(plan.face_up)
        while len(got) < len(plan.order):
            a = self._next(f"hole cards of {street} for p{plan.order[len(got)]}")
            if a.kind != "dh":
                missing = ", ".join(f"p{s}" for s in plan.order if s not in got)
                raise ReplayError(f"{a.where}: {street} deals hole cards to {missing} first")
            if a.player not in plan.order or a.player in got:
                raise ReplayError(f"{a.where}: p{a.player} gets no (more) cards on {street}")
            assert a.player is not None and a.cards is not None  # a hole deal (dh) has both
            if len(a.cards) != per_seat:
                raise ReplayError(f"{a.where}: {street} deals {per_seat} card(s) a player")
            got[a.player] = a.cards
        # one card at a time, clockwise from the button's left
        return [got[s][r] for r in range(per_seat) for s in plan.order]

    # --- betting ---

    def _act(self, hand: HandState, step: D.Act) -> list:
        a = self._next(f"p{step.seat} is to act")
        if a.kind not in ("f", "cc", "cbr", "pb"):
            raise ReplayError(f"{a.where}: the betting round is open, p{step.seat} is to act")
        if a.player != step.seat:
            raise ReplayError(f"{a.where}: it is p{step.seat}'s turn, not p{a.player}'s")
        legal = step.legal
        to = None
        if a.kind == "f":
            kind = ActionKind.FOLD
        elif a.kind == "cc":
            kind = ActionKind.CHECK if legal.can_check else ActionKind.CALL
        elif a.kind == "pb":
            kind = ActionKind.BRING_IN
        else:
            kind = legal.raise_kind or ActionKind.RAISE
            assert a.amount is not None  # a bet or raise (cbr) has its amount
            to = chips(a.amount, self.scale)
        try:
            return D.act(hand, step.seat, kind, to, self.memo)
        except IllegalAction as exc:
            raise ReplayError(f"{a.where}: {exc.reason}") from None

    # --- showdown ---

    def _find_show(self, seat: int) -> Action | None:
        """The seat's ``sm`` among the file's shows at this point, else one made earlier
        (all in). Stud shows again after a face-down 7th-street card: the earlier show must
        then be the start of the later one."""
        early = self.early_shows.pop(seat, None)
        late = None
        for i, a in enumerate(self.queue):
            if a.kind != "sm":
                break
            if a.player == seat:
                del self.queue[i]
                late = a
                break
        if early and late and early.cards and late.cards \
                and tuple(late.cards[:len(early.cards)]) != early.cards:
            raise ReplayError(f"{late.where}: p{seat} showed other cards in {early.where}")
        return late or early

    def _show(self, hand: HandState, step: D.Show) -> list:
        seat = step.seat
        a = self._find_show(seat)
        held = hand.player(seat).hole
        try:
            if a is None:
                if all(c.known for c in held):
                    return D.showdown_default(hand, seat)
                why = "must show (all-in showdown)" if step.must_show else "shows or mucks"
                raise ReplayError(f"p{seat} {why}, but the file never shows the hand")
            if a.is_muck:
                return D.muck(hand, seat)
            shown = held if a.cards is None else a.cards
            if len(shown) < len(held):  # stud: shown all in, before the last streets' cards
                shown = tuple(shown) + held[len(shown):]
            if not all(c.known for c in shown):
                raise ReplayError(f"{a.where}: a hand shown in part ('??') cannot be played: "
                                  "the engine shows whole hands")
            return D.show(hand, seat, shown)
        except IllegalAction as exc:
            at = a.where if a is not None else f"p{seat} at showdown"
            raise ReplayError(f"{at}: {exc.reason}") from None
