"""pokerkit 0.7.7 as the differential test's second engine (tests/property/test_differential_*.py).

- The games: pokerkit states for our table options (``pokerkit_state``), with our seats mapped
  to pokerkit's player indices clockwise from the button's left (``deal_order``).
- The hands: random setups (seats, stacks, stakes, a deck) from a seeded ``random.Random``
  (``Chooser``) or from hypothesis' draws (``DrawChooser``, which shrinks).
- pokerkit's options at a decision (``pk_legal``), and a model of pokerkit's own award code
  (``pokerkit_award_model``) that says whether a final-stack difference is pokerkit's award
  rules (RULES §6 against ``State.push_chips``) and nothing else.

Nothing here reads the engine's pot or award code: the engine is driven and compared in
tests/helpers/differential.py.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from pokerkit import (
    Automation,
    BettingStructure,
    Deck,
    FixedLimitSevenCardStud,
    FixedLimitSevenCardStudHighLowSplitEightOrBetter,
    FixedLimitTexasHoldem,
    Mode,
    NoLimitTexasHoldem,
    OmahaEightOrBetterLowHand,
    OmahaHoldemHand,
    Opening,
    PotLimitOmahaHoldem,
    State,
    Street,
)
from pokerkit import (
    Card as PKCard,
)

from shared.poker import events as E
from shared.poker.cards import DECK, Card
from shared.poker.events import ActionKind
from shared.poker.options import Structure, TableOptions, table_options
from shared.poker.state import HandState
from tests.helpers.divergences import ODD_CHIP, PK_FREEROLL, PK_SIDE_POT_LOW, STUD_HILO_DOUBLE_TIE
from tests.helpers.rules_model import hand_values

PK_CARD: dict[Card, PKCard] = {c: next(iter(PKCard.parse(str(c)))) for c in DECK}

AUTOMATIONS = (
    Automation.ANTE_POSTING,
    Automation.BET_COLLECTION,
    Automation.BLIND_OR_STRADDLE_POSTING,
    Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    Automation.HAND_KILLING,
    Automation.CHIPS_PUSHING,
    Automation.CHIPS_PULLING,
)


def fixed_limit_omaha_hilo_state(automations, antes, trimming: bool, blinds, small_bet: int,
                                 big_bet: int, stacks, n: int) -> State:
    """A truly fixed-limit Omaha hi/lo 8 or better, on ``pokerkit.State``.

    pokerkit 0.7.7's ``FixedLimitOmahaHoldemHighLowSplitEightOrBetter`` mixes in
    ``PotLimitPokerMixin`` (betting_structure POT_LIMIT, no cap), its name and parameters
    notwithstanding (``test_pokerkit_fo8_class_is_pot_limit``). Here: pokerkit's hold'em
    streets with 4 down cards (no burn; burn + 3; burn + 1; burn + 1), the small bet pre-flop
    and on the flop, the big bet on turn and river, at most 4 completions/bets/raises per round
    (as pokerkit's other fixed-limit games), FIXED_LIMIT, Omaha high and Omaha 8-or-better low.
    """
    streets = (
        Street(False, (False,) * 4, 0, False, Opening.POSITION, small_bet, 4),
        Street(True, (), 3, False, Opening.POSITION, small_bet, 4),
        Street(True, (), 1, False, Opening.POSITION, big_bet, 4),
        Street(True, (), 1, False, Opening.POSITION, big_bet, 4),
    )
    return State(automations, Deck.STANDARD, (OmahaHoldemHand, OmahaEightOrBetterLowHand),
                 streets, BettingStructure.FIXED_LIMIT, trimming, antes, blinds, 0,
                 stacks, n, mode=Mode.TOURNAMENT)


@dataclass(frozen=True)
class Variant:
    name: str
    game: str
    structure: str
    max_players: int

    @property
    def stud(self) -> bool:
        return self.game.startswith("stud")

    @property
    def fixed(self) -> bool:
        return self.structure == "fixed_limit"


VARIANTS = {
    "NT": Variant("NT", "holdem", "no_limit", 9),
    "FT": Variant("FT", "holdem", "fixed_limit", 9),
    "PO": Variant("PO", "omaha", "pot_limit", 9),
    "FO/8": Variant("FO/8", "omaha_hilo", "fixed_limit", 9),
    "F7S": Variant("F7S", "stud", "fixed_limit", 8),
    "F7S/8": Variant("F7S/8", "stud_hilo", "fixed_limit", 8),
}


def deal_order(seats, button: int) -> list[int]:
    """Seats clockwise from the button's left: pokerkit's player indices."""
    s = sorted(seats)
    return [x for x in s if x > button] + [x for x in s if x <= button]


def pokerkit_state(v: Variant, o: TableOptions, stacks: tuple[int, ...],
                   automations=AUTOMATIONS) -> State:
    """The pokerkit state for our options; ``stacks`` in pokerkit order (deal_order)."""
    n = len(stacks)
    if v.stud:
        cls = (FixedLimitSevenCardStud if v.game == "stud"
               else FixedLimitSevenCardStudHighLowSplitEightOrBetter)
        return cls(automations, True, o.ante, o.bring_in, o.small_bet, o.big_bet,
                   mode=Mode.TOURNAMENT)(stacks, n)
    if o.ante_type.value == "big_blind":
        antes, trimming = {1: o.ante}, False  # index 1 is the big blind (heads-up too)
    else:
        antes, trimming = o.ante, True
    blinds = (o.small_blind, o.big_blind)
    if v.name == "NT":
        return NoLimitTexasHoldem(automations, trimming, antes, blinds, o.big_blind,
                                  mode=Mode.TOURNAMENT)(stacks, n)
    if v.name == "PO":
        return PotLimitOmahaHoldem(automations, trimming, antes, blinds, o.big_blind,
                                   mode=Mode.TOURNAMENT)(stacks, n)
    if v.name == "FT":
        return FixedLimitTexasHoldem(automations, trimming, antes, blinds, o.small_bet,
                                     o.big_bet, mode=Mode.TOURNAMENT)(stacks, n)
    if v.name == "FO/8":
        return fixed_limit_omaha_hilo_state(automations, antes, trimming, blinds, o.small_bet,
                                            o.big_bet, stacks, n)
    raise AssertionError(v.name)


@dataclass
class Setup:
    """Everything that defines a hand apart from the players' choices."""

    variant: Variant
    options: TableOptions
    seats: list[int]
    button: int
    stacks: dict[int, int]
    deck: tuple[Card, ...]
    reshuffle_seed: int = 0

    @property
    def order(self) -> list[int]:
        return deal_order(self.seats, self.button)

    def pokerkit_state(self) -> State:
        return pokerkit_state(self.variant, self.options,
                              tuple(self.stacks[s] for s in self.order))

    def describe(self) -> str:
        o = self.options
        stakes = (f"ante={o.ante} bring_in={o.bring_in} bets={o.small_bet}/{o.big_bet}"
                  if self.variant.stud else
                  f"blinds={o.small_blind}/{o.big_blind} bets={o.small_bet}/{o.big_bet} "
                  f"ante={o.ante}({o.ante_type.value})")
        return (f"{self.variant.name} {stakes} button={self.button} "
                f"stacks={dict(sorted(self.stacks.items()))}\n"
                f"  deck={' '.join(str(c) for c in self.deck)}")



# ------------------------------------------------------------------------------------------
# Choices: a seeded random.Random, or hypothesis' data.draw (which shrinks)
# ------------------------------------------------------------------------------------------

class Chooser:
    def __init__(self, rng: random.Random):
        self.rng = rng

    def randint(self, lo: int, hi: int) -> int:
        return self.rng.randint(lo, hi)

    def choice(self, seq):
        return seq[self.randint(0, len(seq) - 1)]

    def weighted(self, items, weights):
        return self.rng.choices(items, weights)[0]

    def permutation(self, items):
        items = list(items)
        self.rng.shuffle(items)
        return items


class DrawChooser(Chooser):
    """Choices drawn by hypothesis (shrinks towards the first option and small numbers)."""

    def __init__(self, data):
        from hypothesis import strategies as st
        self.data = data
        self.st = st

    def randint(self, lo: int, hi: int) -> int:
        return self.data.draw(self.st.integers(lo, hi))

    def weighted(self, items, weights):
        return self.choice([x for x, w in zip(items, weights, strict=True) if w > 0])

    def permutation(self, items):
        return self.data.draw(self.st.permutations(list(items)))


# ------------------------------------------------------------------------------------------
# Random hands
# ------------------------------------------------------------------------------------------

def _stack(ch: Chooser, unit: int, forced: int) -> int:
    kind = ch.weighted(("deep", "medium", "short", "tiny"), (40, 30, 23, 7))
    if kind == "deep":
        return ch.randint(40 * unit, 300 * unit)
    if kind == "medium":
        return ch.randint(8 * unit, 40 * unit)
    if kind == "short":
        return ch.randint(max(1, forced), 8 * unit)
    return ch.randint(1, max(1, forced + unit // 2))  # may not cover the ante or blind


def random_setup(v: Variant, ch: Chooser) -> Setup:
    n = ch.randint(2, v.max_players)
    seats = sorted(ch.permutation(range(1, (8 if v.stud else 10) + 1))[:n])
    button = ch.choice(seats)
    ante_types = ("none", "per_seat", "big_blind")
    if v.stud:
        small = ch.choice((2, 4, 10, 20, 30, 50))
        ante = ch.weighted((small // 10, 0, max(1, small // 5)), (6, 1, 2))
        bring_in = ch.randint(1, small - 1)  # pokerkit: the bring-in must be below the bet
        opts = table_options(v.game, v.structure, small_bet=small, big_bet=2 * small,
                             ante=ante, bring_in=bring_in, suit_order="bridge",
                             rake_basis_points=0)
        unit, forced = small, ante + bring_in
    elif v.fixed:
        small = ch.choice((2, 4, 10, 20, 50))
        sb = ch.weighted((small // 2, ch.randint(1, small)), (3, 1))
        ante_type = ch.weighted(ante_types, (6, 2, 1))
        ante = 0 if ante_type == "none" else ch.randint(1, max(1, small // 2))
        opts = table_options(v.game, v.structure, small_bet=small, big_bet=2 * small,
                             small_blind=max(1, sb), big_blind=small, ante=ante,
                             ante_type=ante_type if ante else None, suit_order="bridge",
                             rake_basis_points=0, max_bets=4)
        unit, forced = small, small + ante
    else:
        bb = ch.choice((2, 4, 10, 25, 100))
        sb = ch.weighted((bb // 2, ch.randint(1, bb)), (3, 1))
        ante_type = ch.weighted(ante_types, (6, 2, 1))
        ante = 0 if ante_type == "none" else ch.randint(1, bb)
        opts = table_options(v.game, v.structure, small_blind=max(1, sb), big_blind=bb,
                             ante=ante, ante_type=ante_type if ante else None,
                             suit_order="bridge", rake_basis_points=0)
        unit, forced = bb, bb + ante
    stacks = {s: _stack(ch, unit, forced) for s in seats}
    deck = tuple(ch.permutation(DECK))
    if v.name == "F7S":
        deck = _deck_without_open_pair(deck, n, ch)
    return Setup(v, opts, seats, button, stacks, deck, reshuffle_seed=ch.randint(0, 2**31))


def _deck_without_open_pair(deck: tuple[Card, ...], n: int, ch: Chooser) -> tuple[Card, ...]:
    """F7S (STUD_OPEN_PAIR): no 4th-street card pairs any 3rd-street upcard.

    Deck order: 3 rounds of n cards (the third round face up), burn, then 4th street to the
    players still in, in order: a prefix of the n cards after the burn, whoever folded. Each
    of those n cards whose rank shows on 3rd street is swapped with a later card that does not.
    """
    deck = list(deck)
    up_ranks = {c.rank for c in deck[2 * n: 3 * n]}
    window = range(3 * n + 1, 4 * n + 1)
    spare = [k for k in range(4 * n + 1, 52) if deck[k].rank not in up_ranks]
    for k in window:
        if deck[k].rank in up_ranks and spare:
            j = spare.pop(ch.randint(0, len(spare) - 1))
            deck[k], deck[j] = deck[j], deck[k]
    return tuple(deck)



@dataclass
class PKLegal:
    actor: int | None
    can_fold: bool
    can_check_or_call: bool
    call: int
    bring_in: int
    can_raise: bool
    min_to: int
    max_to: int


def pk_legal(pk: State) -> PKLegal:
    can_raise = pk.can_complete_bet_or_raise_to()
    cc = pk.can_check_or_call()
    return PKLegal(
        actor=pk.actor_index,
        can_fold=pk.can_fold(),
        can_check_or_call=cc,
        call=(pk.checking_or_calling_amount or 0) if cc else 0,
        bring_in=(pk.effective_bring_in_amount or 0) if pk.can_post_bring_in() else 0,
        can_raise=can_raise,
        min_to=pk.min_completion_betting_or_raising_to_amount if can_raise else 0,
        max_to=pk.max_completion_betting_or_raising_to_amount if can_raise else 0,
    )



# ------------------------------------------------------------------------------------------
# pokerkit's award code, modelled
# ------------------------------------------------------------------------------------------

def pokerkit_award_model(hand: HandState, events: list, dead: dict[int, int],
                         order: list[int], alive: list[int]) -> tuple[dict[int, int], set[str]]:
    """Final stacks under pokerkit's award code, from our chips and the hands' values.

    As State.pots / _begin_chips_pushing / push_chips: pots are formed from every player's
    stake (dead money into the first pot) over the hands still live at the end (``alive``:
    losing hands are killed first), consecutive pots with the same claimants merged; each pot is
    halved when any live hand has a qualifying low (odd chip to the high half); each part
    goes to the best hand among its claimants, ties split with the whole remainder to the
    first claimant by index (``order``: pokerkit's indices), and a half with no qualifying low
    among its claimants is split among all of them. Returns the stacks and the documented
    rules that made a difference possible (the caller accepts a difference only if the model
    equals pokerkit, and only once our own stacks equal the rule book's award)."""
    index = {s: i for i, s in enumerate(order)}
    model = {p.seat: p.stack for p in hand.players}
    ours_split_rem = False
    for ev in events:
        if isinstance(ev, E.PotAwarded):
            amounts = [sh.amount for sh in ev.shares]
            ours_split_rem |= len(set(amounts)) > 1
            for sh in ev.shares:
                model[sh.seat] -= sh.amount
    causes: set[str] = {ODD_CHIP} if ours_split_rem else set()
    if len(alive) == 1:
        for pot in hand.pots:
            model[alive[0]] += pot.amount
        return model, causes
    stake = {p.seat: p.contributed - dead.get(p.seat, 0) for p in hand.players}
    pots: list[list] = []
    amount, prev = sum(dead.values()), 0
    for level in sorted(set(stake.values())):
        amount += sum(level - prev for x in stake.values() if x >= level)
        claim = tuple(sorted((s for s in alive if stake[s] >= level), key=index.get))
        while pots and pots[-1][1] == claim:
            amount += pots.pop()[0]
        if amount:
            pots.append([amount, claim])
        amount, prev = 0, level
    if [a for a, _ in pots] != [pot.amount for pot in hand.pots]:
        causes.add(ODD_CHIP)  # merged pots: their odd units fall differently
    if any(hand.player(s).contributed == 0 for _, claim in pots for s in claim):
        causes.add(PK_FREEROLL)
    values = {s: hand_values(hand.game, hand.player(s).hole, hand.board) for s in alive}
    any_low = hand.game.is_hilo and any(x[1] is not None for x in values.values())
    parts = (0, 1) if any_low else (0,)
    for amount_all, claim in pots:
        if not claim:
            continue
        q, r = divmod(amount_all, len(parts))
        if r:
            causes.add(ODD_CHIP)  # the odd unit of a halved pot
        for k in parts:
            amount = q + (r if k == 0 else 0)
            vals = {s: values[s][k] for s in claim}
            best = max((x for x in vals.values() if x is not None), default=None)
            winners = [s for s in claim if vals[s] == best]
            if k == 1 and best is None:
                causes.add(PK_SIDE_POT_LOW)
            share, rem = divmod(amount, len(winners))
            if rem:
                causes.add(ODD_CHIP)
            for s in winners:
                model[s] += share + (rem if s == winners[0] else 0)
        if hand.game.value == "stud_hilo" and any_low:
            top = max(values[s][0] for s in claim)
            hi = {s for s in claim if values[s][0] == top}
            lows = [values[s][1] for s in claim if values[s][1] is not None]
            lo = {s for s in claim if lows and values[s][1] == max(lows)}
            if len(hi) > 1 and hi == lo:
                causes.add(STUD_HILO_DOUBLE_TIE)
    return model, causes


# ------------------------------------------------------------------------------------------
# pokerkit's raise arithmetic, modelled
# ------------------------------------------------------------------------------------------

@dataclass
class PKOffer:
    can_raise: bool
    min_to: int = 0
    max_to: int = 0


class PokerkitBetting:
    """pokerkit 0.7.7's own raise arithmetic for one hand, fed the same actions
    (State._begin_betting, _pop_actor_index, complete_bet_or_raise_to,
    _verify_completion_betting_or_raising, min/max_completion_betting_or_raising_to_amount):

    - per round: the largest bet/raise increment over the previous highest bet (``ca``,
      0 at the start: the blinds set none), the count of completions/bets/raises (the
      blinds not counted; fixed limit at most 4), who acted since the last raise of at least
      ``ca``, and the consecutive all-in increments since a raise that was not all in;
    - a raise is refused when the call is below ``ca``, at the count limit, when the player
      acted and the consecutive short all-ins add up to less than ``ca``, without chips
      beyond the call, or when no other live player has chips beyond the highest bet;
    - the minimum raise-to is the highest bet + max(``ca``, the street's minimum: big blind,
      or the fixed-limit bet) (stud's completion: the small bet alone); fixed limit has one
      size; pot limit at most max(minimum, 2 x highest bet - own bet + pot).

    The differential test uses it to say that a disagreement after a short all-in is
    pokerkit's documented measure of raises (SHORT_ALLIN_REOPENS) and nothing else."""

    def __init__(self, options: TableOptions):
        self.o = options
        self.street = -1

    def _sync(self, hand: HandState) -> None:
        if hand.street != self.street:
            self.street = hand.street
            self.ca = self.count = 0
            self.acted: set[int] = set()
            self.shorts: list[int] = []
            self.completion = self.o.game.is_stud and hand.street == 0

    def on_action(self, hand: HandState, e: E.ActionTaken) -> None:
        """``hand`` is the state before the action."""
        self._sync(hand)
        self.acted.add(e.seat)
        if e.action in (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE):
            inc = e.to - max(p.round_bet for p in hand.players)
            if inc >= self.ca:
                self.acted = {e.seat}
            self.ca = max(self.ca, inc)
            self.count += 1
            self.completion = False
            if e.all_in:
                self.shorts.append(inc)
            else:
                self.shorts.clear()
            if sum(self.shorts) >= self.ca:
                self.shorts.clear()

    def offers(self, hand: HandState, seat: int) -> PKOffer:
        self._sync(hand)
        o = self.o
        p = hand.player(seat)
        top = max(q.round_bet for q in hand.players)
        call = min(p.stack, top - p.round_bet)
        fixed = o.structure is Structure.FIXED_LIMIT
        if (call < self.ca or (fixed and self.count >= 4)
                or (self.shorts and sum(self.shorts) < self.ca and seat in self.acted)
                or p.stack <= top - p.round_bet
                or not any(q.seat != seat and not q.folded and q.stack + q.round_bet > top
                           for q in hand.players)):
            return PKOffer(False)
        street_min = (o.small_bet if hand.street < 2 else o.big_bet) if fixed else o.big_blind
        all_in_to = p.stack + p.round_bet
        min_to = min(all_in_to, max(self.ca, street_min) + (0 if self.completion else top))
        max_to = all_in_to
        if fixed:
            max_to = min_to
        elif o.structure is Structure.POT_LIMIT:
            max_to = min(all_in_to, max(min_to, 2 * top - p.round_bet + hand.pot_total))
        return PKOffer(True, min_to, max_to)
