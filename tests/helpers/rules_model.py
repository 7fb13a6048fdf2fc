"""RULES.md written again, independently of the engine, for the differential test.

- ``RulesOracle`` (RULES §3-§4): what the player on turn may do: the call, check, whether a
  raise is allowed and its bounds.
- ``rules_pots`` (RULES §3, §5): main and side pots from what each player put in.
- ``rules_rake`` (RULES §8) and ``rules_settlement`` (RULES §5, §6, §8): a whole hand's
  settlement from its events alone: the uncalled stake returned, pots by contribution levels,
  rake from the main pot first, each pot (each half of a hi/lo pot on its own, 8-or-better
  low) to its best hand, odd chips in the rule book's order. Hand strength comes from
  pokerkit's evaluator (``hand_values``); nothing here imports the engine's betting, pot,
  showdown or award code (shared/poker/betting.py, pots.py, showdown.py), so a bug there
  cannot hide behind the same bug here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache

from pokerkit import Card as PKCard
from pokerkit import (
    EightOrBetterLowHand,
    OmahaEightOrBetterLowHand,
    OmahaHoldemHand,
    StandardHighHand,
)

from shared.poker import events as E
from shared.poker.cards import DECK, Card
from shared.poker.events import ActionKind, ForcedKind
from shared.poker.options import AnteType, Game, Structure, TableOptions
from shared.poker.state import HandState

# ------------------------------------------------------------------------------------------
# RULES.md §3-§4, independently: what the player on turn may do
# ------------------------------------------------------------------------------------------

@dataclass
class Expected:
    call: int
    can_check: bool
    can_raise: bool
    min_to: int = 0
    max_to: int = 0
    why_no_raise: str = ""
    raise_optional: bool = False  # RULES is silent: nobody else could answer a raise


class RulesOracle:
    """The betting rules of RULES.md §3-§4 for one hand, from the chips on the table and the
    actions seen (written from the rule book, not from the engine):

    - the bet to call is the highest bet, but at least the full big blind pre-flop and the
      full bring-in once it is posted (a short forced bet still owes the full amount);
    - no/pot limit: a full bet or raise increases the bet by at least the largest previous bet
      or raise of the round, and at least the big blind; fixed limit: at least half a unit
      over the last full bet (half-bet rule), which also counts toward max_bets (the big blind
      and a stud completion count as the first bet);
    - a player who acted may raise again only after a later full bet or raise, or when the
      short all-ins since reach a full raise over the bet they last faced;
    - no raise without chips beyond a call, when no other live player can still bet, or at
      the fixed-limit cap; pot limit: at most the highest bet + the pot + the call.

    ``forced_as_posted=True`` is the one reading RULES §3 rules out: a short (all-in) big blind
    or bring-in counts at what was posted, so the others owe only that and the raise sizes are
    measured from it (what pokerkit does: its bet to call is ``max(bets)``). The differential
    test exempts a disagreement as SHORT_FORCED_BET only where pokerkit gives exactly this
    reading's numbers and our engine the rule book's.
    """

    def __init__(self, options: TableOptions, forced_as_posted: bool = False):
        self.o = options
        self.as_posted = forced_as_posted
        self.street = -1

    def start_round(self, hand: HandState) -> None:
        o = self.o
        self.street = hand.street
        self.unit = o.small_bet if hand.street < 2 else o.big_bet
        blind_game = not o.game.is_stud
        preflop = blind_game and hand.street == 0
        posted = max(p.round_bet for p in hand.players)
        self.nominal = o.big_blind if preflop and not self.as_posted else 0
        self.full_inc = o.big_blind  # no/pot limit: the minimum bet or raise increment
        self.full_level = 0
        if preflop and self.fixed:
            self.full_level = posted if self.as_posted else o.big_blind
        self.count = 1 if preflop else 0
        self.acted_since_full: set[int] = set()
        self.faced: dict[int, int] = {}
        self.raise_size: dict[int, int] = {}
        self.short_allin = False  # an all-in short of a full bet/raise (RULES)
        self.allin_below_unit = False  # an all-in raising by less than the unit/last raise

    @property
    def fixed(self) -> bool:
        return self.o.structure is Structure.FIXED_LIMIT

    def _sync(self, hand: HandState) -> None:
        if self.street != hand.street:
            self.start_round(hand)

    def current(self, hand: HandState) -> int:
        self._sync(hand)
        return max(max(p.round_bet for p in hand.players), self.nominal)

    def forced_short(self, hand: HandState) -> bool:
        """A short forced bet still sets the bet to call (nobody bet more yet)."""
        self._sync(hand)
        return self.nominal > max(p.round_bet for p in hand.players)

    def on_action(self, hand: HandState, e: E.ActionTaken) -> None:
        """``hand`` is the state before the action."""
        cur = self.current(hand)
        if e.all_in and e.to > cur and e.to - cur < (self.unit if self.fixed else self.full_inc):
            self.allin_below_unit = True  # a raise pokerkit counts as short
        if e.action is ActionKind.BRING_IN:
            self.nominal = max(self.nominal, e.to if self.as_posted else self.o.bring_in)
        elif e.to > cur:
            if self.fixed:
                full = 2 * (e.to - self.full_level) >= self.unit
                if full:
                    self.full_level = e.to
                    self.count += 1
            else:
                full = e.to - cur >= self.full_inc
                if full:
                    self.full_inc = e.to - cur
            if full:
                self.acted_since_full = set()
            else:
                self.short_allin = True
        self.acted_since_full.add(e.seat)
        self.faced[e.seat] = max(cur, e.to, self.nominal)
        self.raise_size[e.seat] = self.unit if self.fixed else self.full_inc

    def expected(self, hand: HandState, seat: int) -> Expected:
        self._sync(hand)
        o = self.o
        p = hand.player(seat)
        cur = self.current(hand)
        owed = max(0, cur - p.round_bet)
        others = [q for q in hand.players if q.seat != seat and not q.folded]
        if others and all(q.all_in for q in others):
            # RULES §4: against players who are all in, the call is capped at the largest of
            # their all-ins (more would come straight back as uncalled)
            owed = max(0, min(cur, max(q.round_bet for q in others)) - p.round_bet)
        all_in_to = p.round_bet + p.stack
        out = Expected(call=min(owed, p.stack), can_check=owed == 0, can_raise=False)
        if p.stack <= owed:
            out.why_no_raise = "no chips beyond a call"
        elif not any(q.seat != seat and not q.folded and not q.all_in for q in hand.players):
            out.why_no_raise = "nobody else can bet"
        elif seat in self.acted_since_full and cur - self.faced[seat] < self.raise_size[seat]:
            out.why_no_raise = "acted, not reopened"
        elif self.fixed and self.count >= o.max_bets:
            out.why_no_raise = "capped"
        else:
            out.can_raise = True
            out.raise_optional = not any(
                q.seat != seat and not q.folded and not q.all_in
                and q.round_bet + q.stack > cur for q in hand.players)
            if self.fixed:
                out.min_to = out.max_to = min(self.full_level + self.unit, all_in_to)
            else:
                out.max_to = all_in_to
                if o.structure is Structure.POT_LIMIT:
                    out.max_to = min(all_in_to, cur + hand.pot_total + owed)
                    if self.as_posted:
                        # with the short bet as posted, a pot can be smaller than a minimum
                        # raise; that reading (pokerkit's) still allows the minimum raise
                        out.max_to = min(all_in_to, max(out.max_to, cur + self.full_inc))
                out.min_to = min(cur + self.full_inc, out.max_to)
        return out



# ------------------------------------------------------------------------------------------
# RULES.md §3, §5: pots
# ------------------------------------------------------------------------------------------

def rules_pots(contributed: Mapping[int, int], dead: Mapping[int, int], folded: Iterable[int],
               all_in: Iterable[int]) -> list[tuple[int, frozenset]]:
    """Main and side pots per RULES §3/§5, written from the rule book: a player all in is
    eligible only for the pot up to their contribution, each further level is contested by
    its contributors, folded players' chips stay in the pots they fed; dead money (a
    big-blind ante, a dead small blind: "not part of any bet") goes into the main pot, which
    every live hand contests; beyond it, a player who put nothing in (a call returned
    uncalled) claims nothing. ``contributed``: every chip each seat put in (dead money
    included), net of returned bets. Main pot first."""
    folded, all_in = set(folded), set(all_in)
    c = {s: x - dead.get(s, 0) for s, x in contributed.items()}
    everyone = frozenset(s for s in contributed if s not in folded)
    live = [s for s in contributed if s not in folded and contributed[s] > 0]
    if not live:  # nothing at stake (e.g. a stud bring-in without antes, returned uncalled)
        total = sum(contributed.values())
        return [(total, everyone)] if total else []
    top = max(c[s] for s in live)
    levels = sorted({c[s] for s in live if s in all_in and c[s] < top} | {top})
    pots: list[list] = []
    prev = 0
    for level in levels:
        amount = sum(min(x, level) - min(x, prev) for x in c.values())
        eligible = frozenset(s for s in live if c[s] >= level)
        prev = level
        if pots and pots[-1][1] == eligible:
            pots[-1][0] += amount
        elif amount or not pots:
            pots.append([amount, eligible])
    pots[-1][0] += sum(max(0, x - top) for x in c.values())  # folded above every live hand
    # dead money: contested by every live hand (as ruled in tests/unit/test_rules_pots.py,
    # test_big_blind_all_in_from_its_ante_contests_the_ante_only)
    dead_total = sum(dead.values())
    if dead_total and pots[0][1] == everyone:
        pots[0][0] += dead_total
    elif dead_total:
        pots.insert(0, [dead_total, everyone])
    return [(a, e) for a, e in pots if a]


def return_uncalled(contributed: Mapping[int, int], dead: Mapping[int, int],
                    folded: Iterable[int]) -> tuple[dict[int, int], dict[int, int]]:
    """RULES §5 "Uncalled parts of a bet are returned": the highest stake (dead money aside)
    above every other player's, folded players' included, was never called and goes back to
    its owner if they are still in the hand. Returns (contributions after it, returned)."""
    net = dict(contributed)
    stakes = sorted(((x - dead.get(s, 0), s) for s, x in net.items()), reverse=True)
    (top, seat), (second, _) = stakes[0], stakes[1]
    if top > second and seat not in set(folded):
        net[seat] -= top - second
        return net, {seat: top - second}
    return net, {}


def hand_rules_pots(hand: HandState, dead: Mapping[int, int]) -> list[tuple[int, frozenset]]:
    """``rules_pots`` of the chips in a hand state once the betting is over (an uncalled stake
    returned first, if the state still holds one)."""
    folded = [p.seat for p in hand.players if p.folded]
    net, returned = return_uncalled({p.seat: p.contributed for p in hand.players}, dead, folded)
    all_in = [p.seat for p in hand.players if p.all_in and p.seat not in returned]
    return rules_pots(net, dead, folded, all_in)


# ------------------------------------------------------------------------------------------
# RULES.md §2, §6, §8: hand values, rake, awards
# ------------------------------------------------------------------------------------------

_PK_CARD: dict[Card, PKCard] = {c: next(iter(PKCard.parse(str(c)))) for c in DECK}


def hand_values(game: Game, hole: Iterable[Card], board: Iterable[Card] = ()) -> tuple:
    """(high, low or None) by pokerkit's evaluator, per RULES §2: hold'em best 5 of 7; Omaha
    exactly 2 hole + 3 board, high and low chosen separately; stud best 5 of the player's own
    cards (and a common card, if one was turned up). Values compare with < and ==; a low is
    None when none qualifies (8 or better) or the game has no low."""
    return _hand_values(game, tuple(hole), tuple(board))


@lru_cache(maxsize=4096)
def _hand_values(game: Game, hole: tuple[Card, ...], board: tuple[Card, ...]) -> tuple:
    h = tuple(_PK_CARD[c] for c in hole)
    b = tuple(_PK_CARD[c] for c in board)
    omaha = game in (Game.OMAHA, Game.OMAHA_HILO)
    high = (OmahaHoldemHand if omaha else StandardHighHand).from_game(h, b)
    low = None
    if game in (Game.OMAHA_HILO, Game.STUD_HILO):
        try:
            low = (OmahaEightOrBetterLowHand if omaha else EightOrBetterLowHand).from_game(h, b)
        except ValueError:  # no five distinct ranks of 8 or lower
            low = None
    return high, low


def rules_rake(options: TableOptions, total: int, players: int, reached_flop: bool) -> int:
    """RULES §8: min(cap, percent x the total pot after uncalled bets are returned), rounded
    down to the chip unit; the cap by players dealt in (2, 3-4, 5+); none under
    ``no_flop_no_drop`` if the hand ended before the flop (stud: on 3rd street)."""
    if options.no_flop_no_drop and not reached_flop:
        return 0
    c = options.rake_cap
    cap = c.heads_up if players <= 2 else c.three_four if players <= 4 else c.five_plus
    amount = total * options.rake_basis_points // 10_000  # basis points: 500 = 5%
    if cap is not None:
        amount = min(amount, cap)
    return amount - amount % options.chip_unit


# suit letter -> strength (higher is stronger) under RULES §1's two orders
_SUIT_STRENGTH = {"sources": {"c": 3, "d": 2, "h": 1, "s": 0},
                  "bridge": {"s": 3, "h": 2, "d": 1, "c": 0}}
_RANK = {r: i for i, r in enumerate("23456789TJQKA", start=2)}


def card_strength(c: Card, suit_order: str, ace_low: bool = False) -> tuple[int, int]:
    text = str(c)
    rank = _RANK[text[0]]
    if ace_low and rank == 14:
        rank = 1
    return rank, _SUIT_STRENGTH[suit_order][text[1]]


def odd_chip_order(game: Game, suit_order: str, button: int, seats: Iterable[int],
                   hole: Mapping[int, tuple], part: str) -> list[int]:
    """RULES §6: the order in which tied winners get remainder units, one each. Hold'em,
    Omaha and stud high: from the first winner clockwise from the button; stud hi/lo: tied
    high hands (``part`` "high", also a tie for both) by their highest card by suit, tied low
    hands by their lowest card by suit (ace as 1), counting all seven cards."""
    seats = list(seats)
    if game is Game.STUD_HILO and part == "low":
        return sorted(seats, key=lambda s: min(card_strength(c, suit_order, True) for c in hole[s]))
    if game is Game.STUD_HILO:
        return sorted(seats, key=lambda s: max(card_strength(c, suit_order) for c in hole[s]),
                      reverse=True)
    return sorted(seats, key=lambda s: (s <= button, s))  # clockwise from the button's left


def split(amount: int, order: list[int], unit: int) -> dict[int, int]:
    """Split evenly in chip units; remainder units one each in ``order``. Chips below a unit
    (only from stacks that were not whole units; the rule book is silent) go to the first."""
    units, dust = divmod(amount, unit)
    base, extra = divmod(units, len(order))
    return {s: (base + (i < extra)) * unit + (dust if i == 0 else 0)
            for i, s in enumerate(order)}


@dataclass
class Settlement:
    """A hand's end under the rule book: pots (main first), rake, chips won, final stacks."""

    pots: list[tuple[int, frozenset]]
    rake: int
    won: Counter = field(default_factory=Counter)
    stacks: dict[int, int] = field(default_factory=dict)
    returned: dict[int, int] = field(default_factory=dict)


def rules_settlement(options: TableOptions, events: Iterable[object]) -> Settlement:
    """The settlement of one hand from its events (HandStarted on), by RULES §5, §6, §8.

    Read from the events: the stacks dealt in, every forced bet and action (chips put in,
    folds, a time-out all in), the cards, who mucked. Decided here: the uncalled stake (the
    highest stake above every other, RULES §5 "uncalled parts of a bet are returned"; the
    engine's own BetReturned events are ignored), the pots, the rake, who wins each pot (hi/lo:
    halved, odd unit to the high half, no qualifying low and the high takes it all; stud hi/lo:
    a tie for both splits the whole pot) and the odd chips."""
    start: dict[int, int] = {}
    put: Counter = Counter()
    dead: Counter = Counter()
    folded: set[int] = set()
    timed_all_in: set[int] = set()
    mucked: set[int] = set()
    hole: dict[int, tuple] = {}
    board: tuple = ()
    button, reached_flop = 0, False
    for e in events:
        if isinstance(e, E.HandStarted):
            button, start = e.button, {p.seat: p.stack for p in e.players}
            hole = {s: () for s in start}
        elif isinstance(e, E.ForcedBetPosted):
            put[e.seat] += e.amount
            if e.kind is ForcedKind.DEAD_SMALL_BLIND or (
                    e.kind is ForcedKind.ANTE and options.ante_type is AnteType.BIG_BLIND):
                dead[e.seat] += e.amount  # posted for the table, not as a stake (RULES §3)
        elif isinstance(e, E.ActionTaken):
            put[e.seat] += e.added
            if e.action is ActionKind.FOLD:
                folded.add(e.seat)
        elif isinstance(e, E.PlayerTimedOut) and e.all_in:
            timed_all_in.add(e.seat)  # RULES §7: all in for what they put in
        elif isinstance(e, E.CardsDealt):
            for h in e.hole:
                hole[h.seat] += tuple(h.cards)
            board += tuple(e.board)
            reached_flop |= e.street >= 1
        elif isinstance(e, E.HandMucked):
            mucked.add(e.seat)
    net, returned = return_uncalled({s: put[s] for s in start}, dead, folded)
    all_in = {s for s in start if s not in folded and start[s] == net[s]} | timed_all_in
    pots = rules_pots(net, dead, folded, all_in)
    rake = rules_rake(options, sum(a for a, _ in pots), len(start), reached_flop)
    out = Settlement(pots, rake, returned=returned)
    game, unit = options.game, options.chip_unit
    suits = options.suit_order.value
    left = rake
    for amount, eligible in pots:
        taken = min(left, amount)  # rake from the main pot first, then the side pots in order
        left -= taken
        amount -= taken
        claim = [s for s in eligible if s not in mucked] or list(eligible)  # a muck claims nothing
        if len(claim) == 1:
            out.won[claim[0]] += amount
            continue
        values = {s: hand_values(game, hole[s], board) for s in claim}
        top_high = max(v[0] for v in values.values())
        high = [s for s in claim if values[s][0] == top_high]
        lows = [v[1] for v in values.values() if v[1] is not None]
        low = [s for s in claim if lows and values[s][1] == max(lows)]
        parts: list[tuple[int, list[int], str]]
        if not lows:  # no qualifying low (or no low game): the high wins it all
            parts = [(amount, high, "high")]
        elif game is Game.STUD_HILO and len(high) > 1 and set(high) == set(low):
            parts = [(amount, high, "high")]  # a tie for both: the whole pot, highest card
        else:
            low_half = amount // unit // 2 * unit  # the odd unit goes to the high half
            parts = [(amount - low_half, high, "high"), (low_half, low, "low")]
        for chips, winners, part in parts:
            order = odd_chip_order(game, suits, button, winners, hole, part)
            out.won.update(split(chips, order, unit))
    out.stacks = {s: start[s] - net[s] + out.won[s] for s in start}
    return out
