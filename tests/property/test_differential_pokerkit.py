"""Differential test: our engine against pokerkit 0.7.7, hand by hand, decision by decision.

Random hands (2-9 seats, random and short stacks, random legal actions with random amounts)
run through BOTH engines with the SAME cards and must end with IDENTICAL final stacks, for
no-limit hold'em (NT), fixed-limit hold'em (FT), pot-limit Omaha (PO), fixed-limit Omaha hi/lo
8 or better (FO/8), seven-card stud (F7S) and stud hi/lo 8 or better (F7S/8).

How the two engines are driven in lockstep
------------------------------------------
* Our engine is stepped with ``decide.next_step`` and the public decisions (the steps
  ``driver.run_hand`` takes); the dealer's deck is fixed (``Dealer(shuffle=...)``).
* pokerkit runs in automatic mode for everything except actions and dealing. Every card our
  dealer deals (burns, hole cards one at a time clockwise from the button's left, round by
  round, then the board) is dealt to pokerkit explicitly; at each card we check that pokerkit
  expects a card for that very player. Our seats map to pokerkit indices by rotating from the
  button's left (index 0: the small blind, or the big blind heads-up; stud: the dealer's left).
* At each decision the acting player must be the same, and the legal options are compared:
  fold, check, call amount, bring-in amount, whether a bet/raise/completion is allowed, its
  minimum and maximum "to" amounts (our fixed-limit size against pokerkit's single size).
  The action is random among those legal in BOTH engines (random amounts in the intersection
  of the raise ranges), so both engines always see the same action sequence.
* A small, independent model of RULES.md §4 (``RulesOracle``: amount to call, whether a raise
  is allowed after short all-ins and at the cap, minimum and pot-limit maximum raise-to) says
  which engine deviates when they disagree. Our engine is also checked against it at every
  decision, whatever pokerkit says.
* Every disagreement gets a cause. Causes where pokerkit deviates from RULES.md are listed in
  ``KNOWN_DIVERGENCES`` (each cites pokerkit's behaviour against the rule book); open bugs of
  our engine go in ``ENGINE_BUGS`` with a minimal reproduction and an xfail test (none open
  now: ``FIXED_ENGINE_BUGS`` keeps the two this harness found, with regression tests).
  Anything else fails the test with a reproduction (setup, deck, actions).
* Our pots are checked against ``rules_pots`` (RULES §3/§5, written independently).
* Final stacks are compared exactly. A difference is accepted only when a model of pokerkit's
  own pot and award code (``State.pots``/``_begin_chips_pushing``/``push_chips``), fed with our
  chips and our hand values, reproduces pokerkit's stacks exactly, and the difference comes
  from documented award rules (``ODD_CHIP``, ``STUD_HILO_DOUBLE_TIE``, ``PK_SIDE_POT_LOW``,
  ``PK_FREEROLL``).

Cases avoided (never silently)
------------------------------
``AVOIDED`` lists every reason a hand may be stopped before its end (the rest of the hand
would not be the same game in both engines). Stopped hands are counted per reason and printed
in the summary; the test fails on a reason not listed, or when fewer than 90% of a variant's
hands (not counting those stopped by an ENGINE_BUGS case) are compared to the end.

``PYTHONPATH=. python -m pytest tests/property/test_differential_pokerkit.py -s`` prints a
per-variant summary with the first example of every cause. ``DIFF_SEED`` and ``DIFF_HANDS``
(hands per variant) change the run; a failure prints the seed of the failing hand, and
``python -m tests.property.test_differential_pokerkit <variant>:<hand seed>`` (or ``DIFF_REPLAY=...``) replays that one hand.
"""

from __future__ import annotations

import os
import random
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field

import pytest


from pokerkit import (  # noqa: E402
    Automation,
    BettingStructure,
    Card as PKCard,
    Deck,
    FixedLimitOmahaHoldemHighLowSplitEightOrBetter,
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

from shared.poker import decide as D  # noqa: E402
from shared.poker import events as E  # noqa: E402
from shared.poker.betting import LegalActions  # noqa: E402
from shared.poker.cards import DECK, Card, cards  # noqa: E402
from shared.poker.driver import Dealer, check_call_policy, new_table, run_hand  # noqa: E402
from shared.poker.driver import _decide_step  # noqa: E402  (every step as run_hand takes it)
from shared.poker.events import ActionKind, ForcedKind  # noqa: E402
from shared.poker.fold import apply  # noqa: E402
from shared.poker.options import Structure, TableOptions, table_options  # noqa: E402
from shared.poker.showdown import high_low_values  # noqa: E402
from shared.poker.state import HandState  # noqa: E402

# ------------------------------------------------------------------------------------------
# Documented divergences
# ------------------------------------------------------------------------------------------

#: pokerkit 0.7.7 against RULES.md (cause -> pokerkit's behaviour vs the rule book).
KNOWN_DIVERGENCES: dict[str, str] = {}
#: our engine against RULES.md (cause -> what goes wrong, minimal reproduction): open bugs,
#: counted (and the hands they spoil stopped) instead of failing the test.
ENGINE_BUGS: dict[str, str] = {}
#: engine bugs this harness found that are fixed since (kept for the record; a recurrence is
#: an undocumented disagreement and fails the test; each has a regression test below).
FIXED_ENGINE_BUGS: dict[str, str] = {}
#: reasons a hand is stopped before its end (reason -> why).
AVOIDED: dict[str, str] = {}


def _doc(table: dict[str, str], name: str, text: str) -> str:
    table[name] = " ".join(text.split())
    return name


def _open_bug(name: str) -> str | None:
    """``name`` while it is an open ENGINE_BUGS entry; None (undocumented) once fixed."""
    return name if name in ENGINE_BUGS else None


PK_NO_FOLD_WHEN_CHECK = _doc(KNOWN_DIVERGENCES, "PK_NO_FOLD_WHEN_CHECK", """
    RULES §4: "fold (always allowed on one's turn)". pokerkit (Mode.TOURNAMENT,
    State.verify_folding) refuses a fold when there is nothing to call ("There is no reason
    for this player to fold"). Mode.CASH_GAME only warns, but it also changes all-in run-outs
    and showing, so we keep tournament mode and never fold when checking is free.""")

PK_FL_BLIND_NOT_COUNTED = _doc(KNOWN_DIVERGENCES, "PK_FL_BLIND_NOT_COUNTED", """
    RULES §4: fixed limit caps at max_bets (4) per round and "the big blind ... counts as the
    first, so a $10/$20 game caps at $40". pokerkit counts only the completions, bets and
    raises made in the round (completion_betting_or_raising_count starts at 0 after the
    blinds), so its fixed-limit hold'em and Omaha allow a fifth bet pre-flop ($50). See
    test_pokerkit_fixed_limit_preflop_cap.""")

SHORT_FORCED_BET = _doc(KNOWN_DIVERGENCES, "SHORT_FORCED_BET", """
    RULES §3: "A player who cannot cover an ante, blind or bring-in posts what they have and
    is all in; the others still call the full amount, and the raise sizes stay those of the
    full blind". pokerkit's amount to call is max(bets) - own bet: after a short (all-in) big
    blind or bring-in the others owe only what was posted, the minimum and pot-limit maximum
    raise are computed from that smaller bet, and a player facing only a short big blind
    that is below the small blind is skipped (actor differs) or may only check.""")

SHORT_ALLIN_REOPENS = _doc(KNOWN_DIVERGENCES, "SHORT_ALLIN_REOPENS", """
    RULES §4: "an all-in that raises by less than a full raise does not reopen the betting
    to players who already acted ... unless the total of such all-ins (or a later raise)
    reaches a full raise over what they last faced"; fixed limit: "an all-in of at least half
    a bet counts as a full bet or raise (it reopens, counts toward the cap, and the next raise
    is a full unit on top ...); under half a bet it does not reopen, and a player who has not
    yet acted may fold, call it, or complete it to the full bet". pokerkit measures a raise
    against the largest bet/raise increment of the round (completion_betting_or_raising_amount,
    0 when the round starts): an all-in opening bet below the big blind or the fixed-limit bet
    reopens the betting; short all-ins add up only while consecutive; fixed limit has no
    half-bet rule: under half a bet the next raise is the all-in plus a unit (RULES: complete
    to the full bet), at or above half it does not reopen, and every all-in bet or raise counts
    toward the cap. Assigned only where our engine agrees with RulesOracle.""")

PK_NO_RAISE_UNCOVERED = _doc(KNOWN_DIVERGENCES, "PK_NO_RAISE_UNCOVERED", """
    RULES §4 is silent on a raise that nobody could answer. pokerkit
    (_verify_completion_betting_or_raising) refuses it when no other live player has chips
    beyond the current bet ("There is no reason to complete, bet, or raise since every other
    player has either folded or gone all-in"), e.g. the only other player left has fewer chips
    than the bet they face; our engine allowed it while another live player was not all in
    (the working tree now refuses it too). Harmless either way: the excess would come back
    uncalled. RulesOracle accepts both readings; a disagreement is counted here.""")

STUD_STAND_IN_FOLD = _doc(KNOWN_DIVERGENCES, "STUD_STAND_IN_FOLD", """
    RULES §3: "If that player [the bring-in] is all in from the ante, the next player
    clockwise who is not all in acts first and may fold, bring in, or complete." pokerkit
    keeps bring_in_status for the stand-in and refuses the fold ("The player must post a
    bring-in or complete").""")

PK_EXTRA_CHECK = _doc(KNOWN_DIVERGENCES, "PK_EXTRA_CHECK", """
    RULES §4: "with everyone all in (or all but one), the remaining cards are dealt without
    betting"; a round ends when every live player who is not all in has acted and matched the
    highest bet. pokerkit still gives the last player who is not all in a turn when they have
    nothing to call (e.g. the big blind after the small blind went all in for less and
    everyone else folded); its only option there is to check. We let pokerkit check and
    count it.""")

PK_ALLIN_BRING_IN_COMPLETES = _doc(KNOWN_DIVERGENCES, "PK_ALLIN_BRING_IN_COMPLETES", """
    RULES §3: the bring-in "posts the bring-in or completes to the small bet"; one who cannot
    cover it "posts what they have and is all in". A player whose chips after the ante are no
    more than the bring-in can only post them as the bring-in (ours). pokerkit also offers a
    "completion" to the same all-in amount (min = max completion = the stack) and then treats
    it as the round's first bet, not as a bring-in.""")

PK_HU_EQUAL_BLINDS = _doc(KNOWN_DIVERGENCES, "PK_HU_EQUAL_BLINDS", """
    RULES §3: "Heads-up: the button posts the small blind, acts first before the flop". With
    small blind == big blind (allowed: 0 < small_blind <= big_blind) pokerkit's opener
    (State._begin_betting, Opening.POSITION: left of the largest blind, ties to the highest
    index) is the big blind heads-up. The hand is stopped (ACTOR:PK_HU_EQUAL_BLINDS).""")

ODD_CHIP = _doc(KNOWN_DIVERGENCES, "ODD_CHIP", """
    RULES §6: "Each half of each pot is split on its own"; remainder units go one each to the
    tied winners from the first clockwise from the button (stud hi/lo: by the highest card by
    suit for the high half, the lowest card by suit for the low half). pokerkit
    (State.push_chips) gives the whole remainder to the tied winner with the lowest index
    (first from the button's left), and it splits the pots after killing the losing hands and
    merging consecutive pots whose remaining claimants are the same, so remainders differ.
    Accepted only where a model of pokerkit's split reproduces its stacks exactly.""")

PK_FREEROLL = _doc(KNOWN_DIVERGENCES, "PK_FREEROLL", """
    RULES §5 (as ruled in tests/unit/test_rules_examples.py, "a player who risked nothing
    wins nothing"): a player whose only bet came back uncalled claims no pot. pokerkit
    (State.pots) puts dead money (a big-blind ante) into a pot at stake level 0 that every live
    hand claims, including one that put nothing in (e.g. heads-up, the big blind all in from
    its ante, the small blind's call returned: pokerkit lets the small blind win the ante).
    Accepted only where the pokerkit model reproduces its stacks exactly.""")

STUD_HILO_DOUBLE_TIE = _doc(KNOWN_DIVERGENCES, "STUD_HILO_DOUBLE_TIE", """
    RULES §6: in stud hi/lo "two players who tie for both high and low split the whole pot as
    evenly as possible and the one holding the highest card by suit gets the odd unit".
    pokerkit splits the high and the low half separately (each remainder to the lowest
    index). Accepted only where the pokerkit model reproduces its stacks exactly.""")

PK_SIDE_POT_LOW = _doc(KNOWN_DIVERGENCES, "PK_SIDE_POT_LOW", """
    RULES §6: "No qualifying low: the high hand wins the whole pot" (each pot among the hands
    eligible for it). pokerkit (_begin_chips_pushing) halves every pot as soon as ANY live hand
    has a qualifying low; in a pot where no eligible hand has one, push_chips finds no low
    (max is None) and splits that half among every eligible hand still live. Accepted only
    where the pokerkit model reproduces its stacks exactly.""")

ENGINE_SHORT_ALLIN_REOPENS = _doc(FIXED_ENGINE_BUGS, "ENGINE_SHORT_ALLIN_REOPENS", """
    Fixed in 68f97cc ("short all-ins do not reopen").
    RULES §4: an all-in short of a full raise does not reopen the betting to players who
    already acted. fold._raise_changes marks every other player acted=False after ANY raise,
    and betting._raise_allowed refuses a raise only when `p.acted and current_bet <
    p.reopen_at`, so after a short all-in the reopen_at guard never applies and players who
    already acted may raise again. Repro (test_engine_bug_short_allin_reopens): NL 1/2, seats
    1, 2, 3, button 3, stacks 100/16/100; pre-flop 3 call, 1 call, 2 check; flop 1 bet 10, 2
    raise 14 (all in, +4 < 10), 3 call: seat 1 is offered "raise to between 24 and 98";
    expected call or fold only (pokerkit agrees with the rule book here).""")

ENGINE_DEAD_MONEY_POTS = _doc(FIXED_ENGINE_BUGS, "ENGINE_DEAD_MONEY_POTS", """
    Fixed in 68f97cc ("dead money (big-blind ante, dead blind) in the main pot").
    RULES §3/§5: a big-blind ante is dead money; only an all-in player is limited to the pots
    up to their contribution. (a) From 53a8804 to 10aed60 pots.form_pots makes a pot at the
    largest contribution and makes eligible only players who contributed at least each level,
    so dead money (a big-blind ante, a dead small blind) puts the poster alone in the top pot:
    every other live player who is not all in loses their claim, and with all-ins the ante is
    spread over the side pots. Repro (test_engine_bug_big_blind_ante_pots): NL 1/2, big-blind
    ante 2, seats 1 (button, small blind) and 2, stacks 100/100, deck 7c As 2d Ah | Qs Kc 9h 5d
    | Qd 3s | Qh 8c, everyone checks/calls: PotsFormed(6, eligible (2,)): seat 1 (aces) must
    muck and seat 2 (seven high) wins 6. (b) A first fix (stake = contributed - dead, dead money
    into the main pot; uncommitted, before 68f97cc) left a big blind all in from its ante
    (stake 0) out of every pot, even the main pot holding its own ante (the team's own ruling
    in test_rules_examples: the player who put money in may win it). Repro
    (test_engine_bug_big_blind_all_in_from_ante_pots): NL 2/4, big-blind ante 3, seats
    1 (100), 2 (1 chip), 3 (button, 100); 3 calls, 1 calls, checks down: ours PotsFormed(9,
    eligible (1, 3)); expected (1, eligible 1, 2, 3) + (8, eligible 1, 3). While open, hands
    whose pots differ from rules_pots were stopped at the pots (ENGINE:ENGINE_DEAD_MONEY_POTS);
    now such a difference fails the test.""")

STUD_OPEN_PAIR = _doc(AVOIDED, "STUD_OPEN_PAIR", """
    F7S only. RULES §4: stud high, 4th street, with an open pair showing any player may bet or
    raise the small or the big bet. pokerkit has no such option. As ruled by the lead, F7S hands
    are compared only where the case does not arise: the deck is arranged so that no 4th-street
    card pairs any 3rd-street upcard (whoever folds), and a hand where one shows anyway is
    stopped when 4th street is dealt and counted here (should stay at zero).""")

STUD_RUNOUT = _doc(AVOIDED, "STUD_RUNOUT", """
    Stud with 8 players when the deck runs short on 7th street. RULES §1: the burned cards
    are shuffled with the undealt ones; if those cannot give the burn plus one card to every
    live player, one common card is turned up, and the best showing hand counting it acts
    first. pokerkit (State._begin_dealing, get_dealable_cards) also counts the mucked (folded)
    cards as dealable and does not count the burn, so it deals 7th-street hole cards where
    the rule book turns up a common card; and with a common card it picks the opener from the
    up cards alone. The hand is stopped at that street.""")

_doc(AVOIDED, "ACTOR:<cause>", """
    The engines disagree on who acts (or whether anyone acts) for a documented cause
    (SHORT_FORCED_BET: pokerkit skips a player facing only a short big blind; PK_HU_EQUAL_BLINDS;
    STUD_RUNOUT). The rest of the hand is not the same game: counted under the cause, stopped.""")

_doc(AVOIDED, "NO_COMMON_ACTION:<causes>", """
    Every disagreement at a decision has a documented cause but no action is legal in both
    engines (e.g. SHORT_FORCED_BET: after a short big blind we owe a call where pokerkit has
    nothing to call, and pokerkit refuses a fold when checking is free). Stopped and counted.""")

_doc(AVOIDED, "ENGINE:<bug>", """
    An ENGINE_BUGS case that makes the rest of the hand incomparable (ENGINE_DEAD_MONEY_POTS:
    our pots exclude live players). Stopped and counted.""")

# ------------------------------------------------------------------------------------------
# pokerkit games
# ------------------------------------------------------------------------------------------

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


# ------------------------------------------------------------------------------------------
# RULES.md §4, independently: what the player on turn may do
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
    """

    def __init__(self, options: TableOptions):
        self.o = options
        self.street = -1

    def start_round(self, hand: HandState) -> None:
        o = self.o
        self.street = hand.street
        self.unit = o.small_bet if hand.street < 2 else o.big_bet
        blind_game = not o.game.is_stud
        preflop = blind_game and hand.street == 0
        self.nominal = o.big_blind if preflop else 0
        self.full_inc = o.big_blind  # no/pot limit: the minimum bet or raise increment
        self.full_level = o.big_blind if preflop and self.fixed else 0
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
            self.nominal = max(self.nominal, self.o.bring_in)
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
                out.min_to = min(cur + self.full_inc, out.max_to)
        return out


# ------------------------------------------------------------------------------------------
# One hand through both engines
# ------------------------------------------------------------------------------------------

def rules_pots(hand: HandState, dead: dict[int, int]) -> list[tuple[int, frozenset]]:
    """Main and side pots per RULES §3/§5, written from the rule book: a player all in is
    eligible only for the pot up to their contribution, each further level is contested by
    its contributors, folded players' chips stay in the pots they fed; dead money (a
    big-blind ante, a dead small blind: "not part of any bet") goes into the main pot, which
    every live hand contests; beyond it, a player who put nothing in (a call returned
    uncalled) claims nothing."""
    c = {p.seat: p.contributed - dead.get(p.seat, 0) for p in hand.players}
    live = [p for p in hand.players if not p.folded and p.contributed > 0]
    if not live:  # nothing at stake (e.g. a stud bring-in without antes, returned uncalled)
        total = sum(c.values()) + sum(dead.values())
        return [(total, frozenset(p.seat for p in hand.players if not p.folded))] if total else []
    top = max(c[p.seat] for p in live)
    levels = sorted({c[p.seat] for p in live if p.all_in and c[p.seat] < top} | {top})
    pots: list[list] = []
    prev = 0
    for level in levels:
        amount = sum(min(x, level) - min(x, prev) for x in c.values())
        eligible = frozenset(p.seat for p in live if c[p.seat] >= level)
        prev = level
        if pots and pots[-1][1] == eligible:
            pots[-1][0] += amount
        elif amount or not pots:
            pots.append([amount, eligible])
    pots[-1][0] += sum(max(0, x - top) for x in c.values())  # folded above every live hand
    # dead money: contested by every live hand (as ruled in tests/unit/test_rules_examples.py,
    # test_big_blind_all_in_from_its_ante_contests_the_ante_only)
    everyone = frozenset(p.seat for p in hand.players if not p.folded)
    dead_total = sum(dead.values())
    if dead_total and pots[0][1] == everyone:
        pots[0][0] += dead_total
    elif dead_total:
        pots.insert(0, [dead_total, everyone])
    return [(a, e) for a, e in pots if a]


def _no_policy(state, legal):  # pragma: no cover - decisions are taken by HandRun._act
    raise AssertionError("HandRun takes every decision itself")


class Divergence(AssertionError):
    """The engines disagree in a way that is not documented."""


class Stop(Exception):
    """The hand cannot be compared any further (a documented reason)."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.detail = detail


@dataclass
class Result:
    outcome: str = "identical"  # identical, known (documented award-rule difference), stopped
    causes: Counter = field(default_factory=Counter)
    stopped: str = ""
    decisions: int = 0
    examples: dict = field(default_factory=dict)


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


class HandRun:
    """One hand through both engines; raises Divergence on an undocumented disagreement."""

    def __init__(self, setup: Setup, ch: Chooser):
        self.setup = setup
        self.v = setup.variant
        self.ch = ch
        self.index = {s: i for i, s in enumerate(setup.order)}
        self.seat_of = setup.order
        self.result = Result()
        self.log: list[str] = []
        self.oracle = RulesOracle(setup.options)
        self.short_forced = False  # a big blind or bring-in was posted short (all in)
        self.dead: dict[int, int] = {}  # dead money posted (big-blind ante, dead small blind)
        reshuffles = random.Random(setup.reshuffle_seed)
        first = [True]

        def shuffle(cs):
            if first[0]:
                first[0] = False
                return tuple(setup.deck)
            cs = list(cs)
            reshuffles.shuffle(cs)
            return tuple(cs)

        self.dealer = Dealer(shuffle=shuffle, salt=lambda: "0" * 32)

    # --- reporting ---------------------------------------------------------------------

    def repro(self, what: str) -> str:
        return (f"{what}\n  setup: {self.setup.describe()}\n  actions: " + "; ".join(self.log))

    def count(self, cause: str | None, what: str, detail: str) -> str:
        if cause is None:
            raise Divergence(self.repro(f"undocumented disagreement on {what}: {detail}"))
        self.result.causes[cause] += 1
        self.result.examples.setdefault(cause, self.repro(f"{what}: {detail}"))
        return cause

    # --- the hand ----------------------------------------------------------------------

    def run(self) -> Result:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pokerkit warns about cards dealt by hand
            try:
                self._run()
            except Stop as s:
                self.result.outcome = "stopped"
                self.result.stopped = s.reason
                self.result.examples.setdefault("stopped:" + s.reason,
                                                self.repro(s.detail or s.reason))
        return self.result

    def _run(self) -> None:
        s = self.setup
        table = new_table(s.options)
        events = D.start_hand(table, 1, s.button, sorted(s.stacks.items()))
        for e in events:
            table = apply(table, e)
        self.pk = s.pokerkit_state()
        while True:
            hand = table.hand
            step = D.next_step(hand)
            if isinstance(step, D.HandComplete):
                break
            if isinstance(step, D.Act):
                new = self._act(hand, step)
            else:
                if self.pk.actor_index is not None:
                    self._pk_extra_check(hand, step)
                # every other step exactly as driver.run_hand takes it
                new = _decide_step(hand, step, _no_policy, self.dealer, None)
                for e in new:
                    if isinstance(e, E.ForcedBetPosted):
                        self._note_forced(hand, e)
                    elif isinstance(e, E.CardsDealt):
                        self._deal_pk(hand, e)
                    elif isinstance(e, E.PotsFormed):
                        self._check_pots(hand, e)
            for e in new:
                table = apply(table, e)
            events.extend(new)
        self._compare_final(table.hand, events)

    # --- forced bets, dealing, pots ----------------------------------------------------

    def _note_forced(self, hand: HandState, p: E.ForcedBetPosted) -> None:
        nominal = {f.seat: f.amount for f in hand.forced_bets if f.kind is ForcedKind.BIG_BLIND}
        if p.kind is ForcedKind.BIG_BLIND and p.amount < nominal[p.seat]:
            self.short_forced = True
        if ((p.kind is ForcedKind.ANTE and self.setup.options.ante_type.value == "big_blind")
                or p.kind is ForcedKind.DEAD_SMALL_BLIND):
            self.dead[p.seat] = self.dead.get(p.seat, 0) + p.amount
        self.log.append(f"post {p.seat}:{p.kind.value}={p.amount}"
                        + ("(all in)" if p.all_in else ""))

    def _deal_pk(self, hand: HandState, e: E.CardsDealt) -> None:
        pk = self.pk
        self.log.append(f"deal[{e.street}] " + " ".join(
            f"{h.seat}:{''.join(map(str, h.cards))}" for h in e.hole)
            + (f" board:{''.join(map(str, e.board))}" if e.board else ""))
        if self.v.name == "F7S" and e.street == 1:
            for h in e.hole:
                ups = hand.player(h.seat).upcards + h.cards
                if len({c.rank for c in ups}) < len(ups):
                    raise Stop(STUD_OPEN_PAIR, f"open pair on 4th street: seat {h.seat}")
        if self.v.stud and e.street == 4:
            pk_common = bool(pk.board_dealing_count)
            if bool(e.board) != pk_common:
                raise Stop(STUD_RUNOUT, f"7th street: ours deals "
                           f"{'a common card' if e.board else 'hole cards'}, pokerkit "
                           f"{'a common card' if pk_common else 'hole cards'}")
        try:
            for c in e.burned:
                pk.burn_card((PK_CARD[c],))
            rounds = max((len(h.cards) for h in e.hole), default=0)
            for r in range(rounds):
                for h in e.hole:
                    i = self.index[h.seat]
                    if pk.hole_dealee_index != i:
                        raise Divergence(self.repro(
                            f"deal order: our card {h.cards[r]} goes to seat {h.seat}, pokerkit "
                            f"deals to seat {self.seat_of[pk.hole_dealee_index]}"))
                    pk.deal_hole((PK_CARD[h.cards[r]],))
            if e.board:
                pk.deal_board(tuple(PK_CARD[c] for c in e.board))
        except ValueError as exc:
            raise Divergence(self.repro(
                f"pokerkit refused our street {e.street} cards: {exc}")) from None

    def _check_pots(self, hand: HandState, e: E.PotsFormed) -> None:
        """Our pots against RULES §5 (``rules_pots``); ENGINE_DEAD_MONEY_POTS stops the hand."""
        want = rules_pots(hand, self.dead)
        got = [(pot.amount, frozenset(pot.eligible)) for pot in e.pots if pot.amount]
        if got != want:
            cause = _open_bug(ENGINE_DEAD_MONEY_POTS) if sum(self.dead.values()) else None
            self.count(cause, "pots", f"ours {got}, RULES {want}")  # None: Divergence
            raise Stop(f"ENGINE:{cause}", f"pots: ours {got}, RULES {want}")

    # --- decisions ---------------------------------------------------------------------

    def _act(self, hand: HandState, step: D.Act) -> list:
        self.result.decisions += 1
        ours: LegalActions = step.legal
        theirs = pk_legal(self.pk)
        seat = step.seat
        if theirs.actor is None or self.seat_of[theirs.actor] != seat:
            other = None if theirs.actor is None else self.seat_of[theirs.actor]
            detail = f"ours seat {seat}, pokerkit seat {other}"
            cause = self.count(self._classify_actor(hand), "actor", detail)
            raise Stop("ACTOR:" + cause, detail)
        expected = None
        engine_off: dict[str, str] = {}
        if not ours.bring_in:
            expected = self.oracle.expected(hand, seat)
            engine_off = self._check_rules(hand, ours, expected)
        causes = self._compare(hand, ours, theirs, expected, engine_off)
        action, to = self._choose(ours, theirs, causes)
        new = D.act(hand, seat, action, to)
        self._note_action(hand, new[0])
        self._pk_act(action, to)
        return new

    def _pk_act(self, action: ActionKind, to: int | None) -> None:
        try:
            if action is ActionKind.FOLD:
                self.pk.fold()
            elif action in (ActionKind.CHECK, ActionKind.CALL):
                self.pk.check_or_call()
            elif action is ActionKind.BRING_IN:
                self.pk.post_bring_in()
            else:
                self.pk.complete_bet_or_raise_to(to)
        except ValueError as exc:  # pragma: no cover - only actions legal in both are chosen
            raise Divergence(self.repro(f"pokerkit refused {action.value} {to}: {exc}")) from None

    def _pk_extra_check(self, hand: HandState, step: D.Step) -> None:
        """Our round is over but pokerkit still asks a player to act (PK_EXTRA_CHECK)."""
        theirs = pk_legal(self.pk)
        seat = self.seat_of[theirs.actor]
        p = hand.player(seat)
        detail = (f"our round is over ({type(step).__name__}); pokerkit asks seat {seat} to act:"
                  f" {theirs}")
        others = [q for q in hand.players if q.seat != seat and not q.folded]
        if (theirs.can_check_or_call and theirs.call == 0 and not theirs.can_raise
                and all(q.all_in for q in others) and not p.all_in):
            self.count(PK_EXTRA_CHECK, "round end", detail)
            self.pk.check_or_call()
            if self.pk.actor_index is not None:
                self._pk_extra_check(hand, step)
            return
        raise Divergence(self.repro(detail))

    def _note_action(self, hand: HandState, e: E.ActionTaken) -> None:
        self.oracle.on_action(hand, e)
        if e.action is ActionKind.BRING_IN and e.to < self.setup.options.bring_in:
            self.short_forced = True
        sized = e.action in (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE)
        self.log.append(f"{e.seat} {e.action.value}" + (f" {e.to}" if sized else "")
                        + (" (all in)" if e.all_in else ""))

    @staticmethod
    def _fields(ours: LegalActions) -> dict[str, object]:
        raise_ = ours.raise_kind is not None
        return {"call": ours.call, "check": ours.can_check, "raise": raise_,
                "min_to": ours.min_to if raise_ else None,
                "max_to": ours.max_to if raise_ else None}

    def _check_rules(self, hand: HandState, ours: LegalActions, exp: Expected) -> dict[str, str]:
        """Our options against RulesOracle; returns field -> engine bug for each deviation."""
        got = self._fields(ours)
        want = {"call": exp.call, "check": exp.can_check, "raise": exp.can_raise,
                "min_to": exp.min_to if exp.can_raise else None,
                "max_to": exp.max_to if exp.can_raise else None}
        off = {}
        if exp.raise_optional and not got["raise"]:
            return off  # either reading of the rule book is accepted (PK_NO_RAISE_UNCOVERED)
        for k in got:
            sizes = k in ("min_to", "max_to")
            if got[k] != want[k] and not (sizes and got["raise"] != want["raise"]):
                bug = None
                if (k == "raise" and got[k] and exp.why_no_raise == "acted, not reopened"
                        and self.oracle.short_allin):
                    bug = _open_bug(ENGINE_SHORT_ALLIN_REOPENS)
                self.count(bug, f"rules:{k}", f"seat {ours.seat} street {hand.street}: ours "
                           f"{got[k]}, RULES {want[k]} ({exp.why_no_raise or 'raise allowed'}); "
                           f"ours {ours.describe_raise()}")
                off[k] = bug
        return off

    def _compare(self, hand: HandState, ours: LegalActions, theirs: PKLegal,
                 exp: Expected | None, engine_off: dict[str, str]) -> list[str]:
        pk_call = theirs.call if theirs.can_check_or_call else 0
        pk_check = theirs.can_check_or_call and theirs.call == 0
        checks = []
        if ours.can_fold != theirs.can_fold:
            checks.append(("fold", f"ours {ours.can_fold}, pokerkit {theirs.can_fold}"))
        if ours.can_check != pk_check:
            checks.append(("check", f"ours {ours.can_check}, pokerkit {pk_check}"))
        if ours.call != pk_call:
            checks.append(("call", f"ours {ours.call}, pokerkit {pk_call}"))
        if ours.bring_in != theirs.bring_in:
            checks.append(("bring_in", f"ours {ours.bring_in}, pokerkit {theirs.bring_in}"))
        our_raise = ours.raise_kind is not None
        if our_raise != theirs.can_raise:
            checks.append(("raise", f"ours {ours.describe_raise()}, pokerkit "
                           + (f"{theirs.min_to}..{theirs.max_to}" if theirs.can_raise
                              else "no raise")))
        elif our_raise:
            if ours.min_to != theirs.min_to:
                checks.append(("min_to", f"ours {ours.min_to}, pokerkit {theirs.min_to}"))
            if ours.max_to != theirs.max_to:
                checks.append(("max_to", f"ours {ours.max_to}, pokerkit {theirs.max_to}"))
        causes = []
        for what, detail in checks:
            if what in engine_off:
                cause = engine_off[what]
            else:
                cause = self._classify(hand, ours, theirs, exp, what)
            causes.append(self.count(cause, what, f"seat {ours.seat} street {hand.street}: "
                                                  f"{detail}"))
        return causes

    def _choose(self, ours: LegalActions, theirs: PKLegal,
                causes: list[str]) -> tuple[ActionKind, int | None]:
        options: list[tuple[ActionKind, int | None]] = []
        weights: list[int] = []
        pk_call = theirs.call if theirs.can_check_or_call else 0
        if ours.bring_in and theirs.bring_in == ours.bring_in:
            options.append((ActionKind.BRING_IN, None))
            weights.append(6)
        if ours.can_check and theirs.can_check_or_call and pk_call == 0:
            options.append((ActionKind.CHECK, None))
            weights.append(6)
        if ours.call and theirs.can_check_or_call and pk_call == ours.call:
            options.append((ActionKind.CALL, None))
            weights.append(6)
        if ours.can_fold and theirs.can_fold:
            options.append((ActionKind.FOLD, None))
            weights.append(3)
        if ours.raise_kind is not None and theirs.can_raise:
            if ours.raise_sizes:
                sizes = [x for x in ours.raise_sizes if theirs.min_to <= x <= theirs.max_to]
            else:
                lo, hi = max(ours.min_to, theirs.min_to), min(ours.max_to, theirs.max_to)
                sizes = []
                if lo <= hi:
                    sizes = sorted({lo, hi, self.ch.randint(lo, hi),
                                    min(hi, lo + (hi - lo) // 4)})
            for to in sizes:
                options.append((ours.raise_kind, to))
                weights.append(max(1, 5 // len(sizes)))
        if not options:
            detail = f"seat {ours.seat}: ours {ours}, pokerkit {theirs}"
            if causes:
                raise Stop("NO_COMMON_ACTION:" + "+".join(sorted(set(causes))), detail)
            raise Divergence(self.repro("no action legal in both engines: " + detail))
        return self.ch.weighted(options, weights)

    # --- causes --------------------------------------------------------------------------

    def _classify(self, hand: HandState, ours: LegalActions, theirs: PKLegal,
                  exp: Expected | None, what: str) -> str | None:
        """The documented cause of a disagreement where our engine follows the rule book
        (RulesOracle); None if there is none."""
        v = self.v
        if what == "fold":
            if ours.can_fold and ours.can_check and not theirs.can_fold:
                return PK_NO_FOLD_WHEN_CHECK
            if (hand.street == 0 and self.short_forced and ours.can_fold and not theirs.can_fold
                    and ours.call and not theirs.call):
                return SHORT_FORCED_BET
            if (v.stud and ours.bring_in and ours.can_fold and not theirs.can_fold
                    and hand.bring_in_seat != ours.seat
                    and hand.player(hand.bring_in_seat).all_in):
                return STUD_STAND_IN_FOLD
            return None
        if (what == "raise" and v.stud and ours.bring_in and ours.raise_kind is None
                and theirs.can_raise and theirs.min_to == theirs.max_to == ours.bring_in):
            return PK_ALLIN_BRING_IN_COMPLETES
        if exp is None:  # a bring-in decision
            if hand.street == 0 and self.short_forced and what in ("call", "check"):
                return SHORT_FORCED_BET
            return None
        if hand.street == 0 and self.short_forced:
            return SHORT_FORCED_BET
        if what == "raise" and exp.raise_optional and not theirs.can_raise:
            return PK_NO_RAISE_UNCOVERED
        if (what == "raise" and not exp.can_raise and theirs.can_raise
                and exp.why_no_raise == "capped" and v.fixed and not v.stud
                and hand.street == 0):
            return PK_FL_BLIND_NOT_COUNTED
        if what in ("raise", "min_to", "max_to") and (self.oracle.short_allin
                                                      or self.oracle.allin_below_unit):
            return SHORT_ALLIN_REOPENS
        return None

    def _classify_actor(self, hand: HandState) -> str | None:
        o = self.setup.options
        if hand.street == 0 and (self.short_forced or self.oracle.forced_short(hand)):
            return SHORT_FORCED_BET
        if (not self.v.stud and len(hand.players) == 2 and hand.street == 0
                and o.small_blind == o.big_blind):
            return PK_HU_EQUAL_BLINDS
        if self.v.stud and hand.board:
            return STUD_RUNOUT
        return None

    # --- final stacks --------------------------------------------------------------------

    def _compare_final(self, hand: HandState, events: list) -> None:
        pk = self.pk
        if pk.status:
            raise Divergence(self.repro("our hand is over, pokerkit's is not"))
        ours = {p.seat: p.stack for p in hand.players}
        theirs = {self.seat_of[i]: x for i, x in enumerate(pk.stacks)}
        if ours == theirs:
            return
        model, causes = self._pokerkit_award_model(hand, events)
        if model != theirs or not causes:
            raise Divergence(self.repro(
                f"final stacks differ: ours {ours}, pokerkit {theirs}; model of pokerkit's "
                f"award code {model} (causes {sorted(causes)})"))
        self.result.outcome = "known"
        for c in causes:
            self.count(c, "final stacks", f"ours {ours}, pokerkit {theirs}")

    def _pokerkit_award_model(self, hand: HandState,
                              events: list) -> tuple[dict[int, int], set[str]]:
        """Final stacks under pokerkit's award code, from our chips and our hand values.

        As State.pots / _begin_chips_pushing / push_chips: pots are formed from every player's
        stake (dead money into the first pot) over the hands still live at the end (losing
        hands are killed first), consecutive pots with the same claimants merged; each pot is
        halved when any live hand has a qualifying low (odd chip to the high half); each part
        goes to the best hand among its claimants, ties split with the whole remainder to the
        first claimant by index, and a half with no qualifying low among its claimants is split
        among all of them. Returns the stacks and the documented rules that made a difference
        possible (the caller accepts a difference only if the model equals pokerkit)."""
        model = {p.seat: p.stack for p in hand.players}
        ours_split_rem = False
        for ev in events:
            if isinstance(ev, E.PotAwarded):
                amounts = [sh.amount for sh in ev.shares]
                ours_split_rem |= len(set(amounts)) > 1
                for sh in ev.shares:
                    model[sh.seat] -= sh.amount
        causes: set[str] = {ODD_CHIP} if ours_split_rem else set()
        alive = [s for i, s in enumerate(self.seat_of) if self.pk.statuses[i]]
        if len(alive) == 1:
            for pot in hand.pots:
                model[alive[0]] += pot.amount
            return model, causes
        # State.pots: levels of every player's stake (dead money apart, into the first pot),
        # claimed by the hands still live; consecutive pots with the same claimants merged
        stake = {p.seat: p.contributed - self.dead.get(p.seat, 0) for p in hand.players}
        pots: list[list] = []
        amount, prev = sum(self.dead.values()), 0
        for level in sorted(set(stake.values())):
            amount += sum(level - prev for x in stake.values() if x >= level)
            claim = tuple(sorted((s for s in alive if stake[s] >= level), key=self.index.get))
            while pots and pots[-1][1] == claim:
                amount += pots.pop()[0]
            if amount:
                pots.append([amount, claim])
            amount, prev = 0, level
        if [a for a, _ in pots] != [pot.amount for pot in hand.pots]:
            causes.add(ODD_CHIP)  # merged pots: their odd units fall differently
        if any(hand.player(s).contributed == 0 for _, claim in pots for s in claim):
            causes.add(PK_FREEROLL)
        values = {s: high_low_values(hand, hand.player(s).hole) for s in alive}
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
# Running many hands
# ------------------------------------------------------------------------------------------

def play_hand(v: Variant, ch: Chooser) -> Result:
    return HandRun(random_setup(v, ch), ch).run()


@dataclass
class Summary:
    variant: str
    hands: int = 0
    identical: int = 0
    known_final: int = 0
    stopped: Counter = field(default_factory=Counter)
    causes: Counter = field(default_factory=Counter)
    decisions: int = 0
    examples: dict = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, r: Result) -> None:
        self.hands += 1
        self.decisions += r.decisions
        self.identical += r.outcome == "identical"
        self.known_final += r.outcome == "known"
        if r.stopped:
            self.stopped[r.stopped] += 1
        self.causes.update(r.causes)
        for k, x in r.examples.items():
            self.examples.setdefault(k, x)

    @property
    def compared(self) -> int:
        return self.identical + self.known_final

    @property
    def stopped_by_engine_bugs(self) -> int:
        return sum(n for r, n in self.stopped.items() if r.startswith("ENGINE:"))

    def line(self) -> str:
        return (f"{self.variant:6} hands={self.hands} compared-to-the-end={self.compared} "
                f"(identical {self.identical}, documented award difference "
                f"{self.known_final}) stopped={dict(self.stopped)} "
                f"decisions={self.decisions} {self.seconds:.1f}s\n"
                f"       causes={dict(sorted(self.causes.items()))}")


def run_variant(name: str, hands: int, seed: int) -> Summary:
    rng = random.Random(f"{seed}:{name}")
    summary = Summary(name)
    t0 = time.perf_counter()
    for k in range(hands):
        hand_seed = rng.getrandbits(64)
        try:
            summary.add(play_hand(VARIANTS[name], Chooser(random.Random(hand_seed))))
        except Divergence as d:
            raise Divergence(f"[{name} hand {k} of seed {seed}; replay with "
                             f"DIFF_REPLAY={name}:{hand_seed}] {d}") from None
    summary.seconds = time.perf_counter() - t0
    return summary


SEED = int(os.environ.get("DIFF_SEED", "20240607"))
HANDS = {"NT": 800, "FT": 600, "PO": 400, "FO/8": 350, "F7S": 600, "F7S/8": 600}
if "DIFF_HANDS" in os.environ:
    HANDS = {k: int(os.environ["DIFF_HANDS"]) for k in HANDS}
_AVOIDED_PREFIXES = {a.split(":")[0] for a in AVOIDED}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_differential(name: str) -> None:
    summary = run_variant(name, HANDS[name], SEED)
    print("\n" + summary.line())
    for k, x in sorted(summary.examples.items()):
        print(f"  first {k}: {x}")
    documented = set(KNOWN_DIVERGENCES) | set(ENGINE_BUGS)
    assert set(summary.causes) <= documented
    assert {r.split(":")[0] for r in summary.stopped} <= _AVOIDED_PREFIXES
    # the comparison must cover the variant: nearly every hand runs to the end in both, apart
    # from the hands our own engine bugs stop (reported above; they vanish once fixed)
    assert summary.compared >= 0.9 * (summary.hands - summary.stopped_by_engine_bugs), \
        summary.line()
    assert summary.compared >= 0.75 * summary.hands, summary.line()


def test_differential_hypothesis() -> None:
    """The same comparison driven by hypothesis, which shrinks a failing hand."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    @settings(derandomize=True, max_examples=60, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(list(VARIANTS)), st.data())
    def check(name, data):
        play_hand(VARIANTS[name], DrawChooser(data))

    check()


# ------------------------------------------------------------------------------------------
# pokerkit facts the harness relies on, and regression tests for the engine bugs found
# (FIXED_ENGINE_BUGS; an open ENGINE_BUGS entry gets an xfail test here)
# ------------------------------------------------------------------------------------------

def test_pokerkit_fo8_class_is_pot_limit() -> None:
    """Why FO/8 uses fixed_limit_omaha_hilo_state: pokerkit's class is pot limit."""
    cls = FixedLimitOmahaHoldemHighLowSplitEightOrBetter
    assert cls.betting_structure is BettingStructure.POT_LIMIT
    assert cls.max_completion_betting_or_raising_count is None
    ours = fixed_limit_omaha_hilo_state(AUTOMATIONS, 0, True, (1, 2), 2, 4, (100, 100, 100), 3)
    assert ours.betting_structure is BettingStructure.FIXED_LIMIT
    assert [s.min_completion_betting_or_raising_amount for s in ours.streets] == [2, 2, 4, 4]


def test_pokerkit_fixed_limit_preflop_cap() -> None:
    """PK_FL_BLIND_NOT_COUNTED: pokerkit allows a fifth bet pre-flop ($10/$20: up to $50)."""
    state = FixedLimitTexasHoldem((Automation.ANTE_POSTING, Automation.BET_COLLECTION,
                                   Automation.BLIND_OR_STRADDLE_POSTING), True, 0, (5, 10),
                                  10, 20)((1000,) * 3, 3)
    for hole in ("AcAd", "KcKd", "QcQd"):
        state.deal_hole(hole)
    for to in (20, 30, 40, 50):
        state.complete_bet_or_raise_to(to)
    assert state.bets == [30, 40, 50]  # small blind, big blind, button
    assert not state.can_complete_bet_or_raise_to()


def test_rules_oracle_short_allin_example() -> None:
    """RulesOracle on the rule book's fixed-limit example: "a $15 all-in on a $20 round makes
    the next raise $35"."""
    opts = table_options("holdem", "fixed_limit", small_bet=10, big_bet=20, rake_basis_points=0)
    o = RulesOracle(opts)
    table = new_table(opts)
    for e in D.start_hand(table, 1, 3, [(1, 500), (2, 15), (3, 500)]):
        table = apply(table, e)
    hand = table.hand.evolve(street=2)
    o.start_round(hand)
    assert o.expected(hand, 1).min_to == 20
    o.on_action(hand, E.ActionTaken(2, ActionKind.BET, 15, 15, True))
    hand = hand.evolve(players=tuple(p.evolve(round_bet=15, stack=0) if p.seat == 2 else p
                                     for p in hand.players))
    assert o.expected(hand, 3).min_to == 35


def _play(opts, button, stacks, script, deck=None):
    """Play ``script`` [(seat, action, to)] with the check/call policy after it."""
    t = new_table(opts)
    dealer = Dealer(shuffle=lambda cs: tuple(deck or DECK))
    it = iter(script)
    pending = [next(it, None)]
    seen = []

    def policy(state, legal):
        seen.append((legal.seat, legal))
        step = pending[0]
        if step is None:
            return check_call_policy(state, legal)
        pending[0] = next(it, None)
        return ActionKind(step[1]), step[2]

    t, events = run_hand(t, 1, button, stacks, policy, dealer)
    return events, seen


def test_engine_bug_short_allin_reopens() -> None:
    """FIXED_ENGINE_BUGS['ENGINE_SHORT_ALLIN_REOPENS']."""
    opts = table_options("holdem", "no_limit", small_blind=1, big_blind=2, rake_basis_points=0)
    script = [(3, "call", None), (1, "call", None), (2, "check", None),
              (1, "bet", 10), (2, "raise", 14), (3, "call", None)]
    _, seen = _play(opts, 3, [(1, 100), (2, 16), (3, 100)], script)
    seat, legal = seen[len(script)]  # seat 1 facing the short all-in
    assert seat == 1
    assert legal.raise_kind is None, legal.describe_raise()


def test_engine_bug_big_blind_ante_pots() -> None:
    """FIXED_ENGINE_BUGS['ENGINE_DEAD_MONEY_POTS'] (a)."""
    opts = table_options("holdem", "no_limit", small_blind=1, big_blind=2, ante=2,
                         ante_type="big_blind", rake_basis_points=0)
    top = cards("7c As 2d Ah Qs Kc 9h 5d Qd 3s Qh 8c")
    deck = top + tuple(c for c in DECK if c not in top)
    events, _ = _play(opts, 1, [(1, 100), (2, 100)], [], deck)
    pots = next(e for e in events if isinstance(e, E.PotsFormed)).pots
    assert all(1 in pot.eligible for pot in pots), pots
    assert next(e for e in events if isinstance(e, E.HandEnded)).stacks == (
        E.SeatStack(1, 104), E.SeatStack(2, 96))


def test_engine_bug_big_blind_all_in_from_ante_pots() -> None:
    """FIXED_ENGINE_BUGS['ENGINE_DEAD_MONEY_POTS'] (b)."""
    opts = table_options("holdem", "no_limit", small_blind=2, big_blind=4, ante=3,
                         ante_type="big_blind", rake_basis_points=0)
    events, _ = _play(opts, 3, [(1, 100), (2, 1), (3, 100)], [])
    pots = next(e for e in events if isinstance(e, E.PotsFormed)).pots
    assert 2 in pots[0].eligible and sum(p.amount for p in pots) == 9, pots


# ------------------------------------------------------------------------------------------
# Minimal reproductions of the documented pokerkit divergences (scripted hands, both engines)
# ------------------------------------------------------------------------------------------

class ScriptedRun(HandRun):
    """Plays ``script`` [(seat, action, to)] in both engines, then stops at the next decision
    (``at_end`` holds our options, pokerkit's and the rule book's) or plays on to the end."""

    def __init__(self, setup: Setup, script, stop: bool = True):
        super().__init__(setup, Chooser(random.Random(0)))
        self.script = list(script)
        self.stop = stop
        self.at_end = None

    def _act(self, hand: HandState, step: D.Act) -> list:
        if not self.script:
            exp = None if step.legal.bring_in else self.oracle.expected(hand, step.seat)
            self.at_end = (step.seat, step.legal, pk_legal(self.pk), exp)
            if self.stop:
                raise Stop("end of script")
            self.script = [(step.seat, *check_call_policy(hand, step.legal))]
        seat, action, to = self.script.pop(0)
        assert step.seat == seat, (step.seat, seat)
        new = D.act(hand, seat, ActionKind(action), to)
        self._note_action(hand, new[0])
        self._pk_act(ActionKind(action), to)
        return new


def scripted(variant: str, stacks: dict[int, int], button: int, script, top: str = "",
             stop: bool = True, **options) -> ScriptedRun:
    v = VARIANTS[variant]
    opts = table_options(v.game, v.structure, suit_order="bridge", rake_basis_points=0,
                         **options)
    first = cards(top) if top else ()
    deck = first + tuple(c for c in DECK if c not in first)
    run = ScriptedRun(Setup(v, opts, sorted(stacks), button, stacks, deck), script, stop)
    run.run()
    return run


def test_repro_pk_no_fold_when_check() -> None:
    # NL 1/2 heads-up: the small blind (button) calls; the big blind may check, or fold
    run = scripted("NT", {1: 100, 2: 100}, 1, [(1, "call", None)],
                   small_blind=1, big_blind=2)
    seat, ours, theirs, _ = run.at_end
    assert seat == 2 and ours.can_check and ours.can_fold
    assert theirs.can_check_or_call and not theirs.can_fold


def test_repro_pk_fl_blind_not_counted() -> None:
    # $10/$20: 20, 30, 40 is the cap with the big blind counted (ours); pokerkit offers 50
    run = scripted("FT", {1: 500, 2: 500, 3: 500}, 3,
                   [(3, "raise", 20), (1, "raise", 30), (2, "raise", 40)],
                   small_bet=10, big_bet=20)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.raise_kind is None and not exp.can_raise
    assert theirs.can_raise and theirs.min_to == 50


def test_repro_short_forced_bet() -> None:
    # NL 1/2, the big blind has 1 chip: the button still owes the full big blind (RULES §3)
    run = scripted("NT", {1: 100, 2: 1, 3: 100}, 3, [], small_blind=1, big_blind=2)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.call == exp.call == 2 and ours.min_to == exp.min_to == 4
    assert theirs.call == 1 and theirs.min_to == 3


def test_repro_short_allin_reopens() -> None:
    # NL 5/10: two limp, the big blind goes all in for 13 (+3, not a full raise): the limpers
    # may only call or fold (RULES §4); pokerkit lets them raise
    run = scripted("NT", {1: 13, 3: 1000, 4: 1000}, 3, [(3, "call", None), (4, "call", None),
                                                        (1, "raise", 13)],
                   small_blind=5, big_blind=10)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.raise_kind is None and not exp.can_raise
    assert theirs.can_raise and theirs.min_to == 23
    # fixed limit $10/$20, flop: 10 bet, all in for 14 (under half a bet over 10): the next
    # player may complete to 20 (RULES §4); pokerkit makes it 24
    run = scripted("FT", {1: 500, 2: 24, 3: 500}, 3,
                   [(3, "call", None), (1, "call", None), (2, "check", None),
                    (1, "bet", 10), (2, "raise", 14)], small_bet=10, big_bet=20)
    seat, ours, theirs, exp = run.at_end
    assert seat == 3 and ours.raise_sizes == (20,) and exp.min_to == 20
    assert theirs.min_to == theirs.max_to == 24


def test_repro_pk_no_raise_uncovered() -> None:
    # NL 1/2: the button moves in for 200; the big blind (30 chips) can still act but could
    # not answer a raise. pokerkit refuses the small blind a raise; RULES §4 is silent (the
    # engine allowed it at 53a8804..cab41de; the working tree now refuses it too)
    run = scripted("NT", {1: 1000, 2: 30, 3: 200}, 3, [(3, "raise", 200)],
                   small_blind=1, big_blind=2)
    seat, ours, theirs, exp = run.at_end
    assert seat == 1 and exp.raise_optional and not theirs.can_raise


def test_repro_stud_stand_in_fold() -> None:
    # stud $10/$20, ante 2, bring-in 1: seat 2 has the lowest upcard (2c) and is all in from
    # the ante; seat 3 stands in and may fold (RULES §3); pokerkit refuses the fold
    run = scripted("F7S", {1: 100, 2: 2, 3: 100}, 3, [],
                   top="Ah Kh Qh  As Ks Qs  Ad 2c 9d", small_bet=10, big_bet=20, ante=2,
                   bring_in=1)
    seat, ours, theirs, _ = run.at_end
    assert seat == 3 and ours.bring_in and ours.can_fold
    assert theirs.bring_in and not theirs.can_fold


def test_repro_pk_allin_bring_in_completes() -> None:
    # stud $10/$20, ante 1, bring-in 3: seat 2 (2c) has 3 chips after the ante: bring-in only
    run = scripted("F7S", {1: 100, 2: 4, 3: 100}, 3, [],
                   top="Ah Kh Qh  As Ks Qs  Ad 2c 9d", small_bet=10, big_bet=20, ante=1,
                   bring_in=3)
    seat, ours, theirs, _ = run.at_end
    assert seat == 2 and ours.bring_in == 3 and ours.raise_kind is None
    assert theirs.bring_in == 3 and theirs.can_raise and theirs.min_to == theirs.max_to == 3


def test_repro_pk_hu_equal_blinds() -> None:
    # NL 2/2 heads-up: the button (small blind) acts first pre-flop (RULES §3); pokerkit asks
    # the big blind
    run = scripted("NT", {1: 100, 2: 100}, 1, [], small_blind=2, big_blind=2)
    seat, ours, theirs, _ = run.at_end
    assert seat == 1 and run.seat_of[theirs.actor] == 2


def test_repro_pk_extra_check() -> None:
    # NL 2/4: the small blind is all in for 3, the button folds: nothing is left to bet
    # (ours deals on); pokerkit gives the big blind a turn, to check
    run = scripted("NT", {1: 3, 2: 100, 3: 100}, 3, [(3, "fold", None)], stop=False,
                   small_blind=2, big_blind=4)
    assert run.result.causes[PK_EXTRA_CHECK] == 1 and run.result.outcome == "identical"


def replay(spec: str) -> None:
    """Replay one hand printed by a failure: ``python -m tests.property.test_differential_pokerkit
    NT:<seed>`` (or DIFF_REPLAY=NT:<seed>)."""
    name, seed = spec.rsplit(":", 1)
    print(play_hand(VARIANTS[name], Chooser(random.Random(int(seed)))))


if __name__ == "__main__":
    import sys
    replay(sys.argv[1] if len(sys.argv) > 1 else os.environ["DIFF_REPLAY"])
