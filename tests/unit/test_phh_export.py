"""Hands played by bots, exported as PHH (shared.phh.export):

- replayed by our own replay (every game and structure, all hands) to the same stacks, and
- loaded and replayed by pokerkit (an independent engine) to the same stacks.

pokerkit has no class for some of our games and a pot-limit class under the fixed-limit Omaha
hi/lo code (``FixedLimitOmahaHoldemHighLowSplitEightOrBetter`` mixes in ``PotLimitPokerMixin``
in 0.7.7), so the classes below are built from pokerkit's own mixins and registered under our
variant codes. Where pokerkit's rules differ from RULES.md the bots avoid the situation, or the
hand is left out of the pokerkit comparison (never out of our round trip):

- stud high 4th street with an open pair (RULES §4: small or big bet): pokerkit allows only the
  small bet, so the bots bet the small bet there;
- a raise when no other player has chips beyond the current bet: pokerkit refuses it, so the
  bots call instead;
- fixed limit, raising after an all-in this round: pokerkit has no half-bet rule (RULES §4: an
  all-in of at least half a bet reopens the betting, under half a bet the next raise is a full
  bet over the last full one), so fixed-limit bots do not raise once someone is all in with a
  bet this round (no and pot limit keep it: there both engines agree that a short all-in does
  not reopen the betting for players who already acted);
- blinds, antes and bring-ins a stack cannot cover: pokerkit lowers the bet to call to what was
  posted (RULES §3: the others still call the full amount), so short stacks rebuy first;
- odd chips: RULES §6 gives remainder units one each in turn, pot by pot; pokerkit gives the
  whole remainder to one player and merges pots whose claimants match once hands are mucked or
  dead; hands where a pot (or, with several pots, a hi/lo pot's halves) split with a remainder
  are not compared;
- hi/lo side pots: pokerkit halves a pot for low when any player has a low, even if nobody
  eligible for that pot does (the low half is then split among its claimants); hands with a
  contested hi/lo pot won whole next to a pot with a low half are not compared.
"""

from __future__ import annotations

import random
from collections import deque

import pokerkit
import pytest
from pokerkit import (
    FixedLimitPokerMixin,
    HandHistory,
    NoLimitPokerMixin,
    OmahaEightOrBetterLowHand,
    OmahaHoldemHand,
    OmahaHoldemMixin,
    PotLimitPokerMixin,
    TexasHoldemMixin,
)
from pokerkit.games import Holdem, UnfixedLimitHoldem

from shared.phh.export import export
from shared.phh.parse import loads_one
from shared.phh.replay import VARIANTS, replay
from shared.poker.deck import shuffled
from shared.poker.events import (
    ActionKind,
    HandMucked,
    Portion,
    PotAwarded,
    PotsFormed,
    TableCreated,
)
from shared.poker.handrunner import Dealer, new_table, random_policy, run_hand
from shared.poker.options import Game, Structure, table_options

HANDS = 40  # per variant and kind of run


def _game(name, bases, hand_types, like):
    return type(name, bases, {"hand_types": hand_types, "create_state": like.create_state})


_O = (OmahaHoldemHand,)
_O8 = (OmahaHoldemHand, OmahaEightOrBetterLowHand)
_NT, _PO, _FO8 = (pokerkit.NoLimitTexasHoldem, pokerkit.PotLimitOmahaHoldem,
                  pokerkit.FixedLimitOmahaHoldemHighLowSplitEightOrBetter)
PK_GAMES = {
    "PT": _game("PotLimitTexasHoldem", (PotLimitPokerMixin, TexasHoldemMixin,
                                        UnfixedLimitHoldem), TexasHoldemMixin.hand_types, _NT),
    "NO": _game("NoLimitOmaha", (NoLimitPokerMixin, OmahaHoldemMixin, UnfixedLimitHoldem),
                _O, _PO),
    "FO": _game("FixedLimitOmaha", (FixedLimitPokerMixin, OmahaHoldemMixin, Holdem), _O, _FO8),
    "FO/8": _game("FixedLimitOmaha8", (FixedLimitPokerMixin, OmahaHoldemMixin, Holdem),
                  _O8, _FO8),
    "PO/8": _game("PotLimitOmaha8", (PotLimitPokerMixin, OmahaHoldemMixin, UnfixedLimitHoldem),
                  _O8, _PO),
    "NO/8": _game("NoLimitOmaha8", (NoLimitPokerMixin, OmahaHoldemMixin, UnfixedLimitHoldem),
                  _O8, _PO),
}
_FIELDS = HandHistory.required_field_names


class OurHandHistory(HandHistory):
    """pokerkit's HandHistory knowing our variant codes (and a fixed-limit FO/8)."""

    game_types = {**HandHistory.game_types, **PK_GAMES}
    required_field_names = {**_FIELDS, "PT": _FIELDS["NT"], "NO": _FIELDS["NT"],
                            "FO": _FIELDS["FT"], "PO/8": _FIELDS["NT"], "NO/8": _FIELDS["NT"]}


def test_pokerkit_fo8_class_is_pot_limit():
    """Why FO/8 needs our own class: pokerkit 0.7.7 plays its FO/8 code pot limit."""
    assert _FO8.betting_structure is pokerkit.BettingStructure.POT_LIMIT


def stakes(game: Game, structure: Structure) -> dict:
    if game.is_stud:
        return {"small_bet": 10, "big_bet": 20, "ante": 1, "bring_in": 3}
    if structure is Structure.FIXED_LIMIT:
        return {"small_bet": 2, "big_bet": 4, "small_blind": 1, "big_blind": 2}
    return {"small_blind": 1, "big_blind": 2, "ante": 1}  # a per-seat ante too


def pokerkit_compatible(rng: random.Random):
    """Random legal play that stays out of the rule differences listed in the docstring."""
    base = random_policy(rng)

    def choose(state, legal):
        kind, to = base(state, legal)
        if kind not in (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE):
            return kind, to
        others = [p for p in state.players if p.seat != legal.seat and not p.folded]
        fixed = state.structure is Structure.FIXED_LIMIT
        if (not any(p.stack + p.round_bet > state.round.current_bet for p in others)
                or fixed and any(p.all_in and p.round_bet for p in state.players)):
            return (ActionKind.CALL, None) if legal.call else (ActionKind.CHECK, None)
        if state.game is Game.STUD and state.street == 1 and legal.raise_sizes:
            to = legal.raise_sizes[0]
        return kind, to

    return choose


def play(code: str, seed: int, hands: int, players: int, compatible: bool):
    """Bots play ``hands`` hands; yields (events, PHH text) per hand."""
    game, structure = VARIANTS[code]
    rng = random.Random(seed)
    options = table_options(game, structure, suit_order="bridge", rake_basis_points=0,
                            **stakes(game, structure))
    table = new_table(options, code)
    unit = max(options.big_blind, options.small_bet)
    low, high = (10, 40) if compatible else (2, 40)
    stacks = {s: rng.randint(low, high) * unit for s in range(1, players + 1)}
    names = {s: f"bot{s}" for s in stacks}
    for hand_no in range(1, hands + 1):
        stacks = {s: st if st >= low * unit else rng.randint(low, high) * unit
                  for s, st in stacks.items()}
        dealer = Dealer(shuffle=lambda cs: shuffled(cs, rng.randrange),
                        salt=lambda: f"{rng.getrandbits(64):016x}")
        policy = pokerkit_compatible(rng) if compatible else random_policy(rng)
        button = (hand_no - 1) % players + 1
        table, events = run_hand(table, hand_no, button, sorted(stacks.items()), policy, dealer)
        stacks = {p.seat: p.stack for p in table.hand.players}
        yield events, export([TableCreated(code, options), *events], names)


def comparable_with_pokerkit(events) -> bool:
    pots = next((e.pots for e in events if isinstance(e, PotsFormed)), ())
    mucked = {e.seat for e in events if isinstance(e, HandMucked)}
    awards = [e for e in events if isinstance(e, PotAwarded)]
    if any(len({s.amount for s in e.shares}) > 1 for e in awards):
        return False  # an odd-chip split among tied hands
    halves: dict[int, set[int]] = {}
    for e in awards:
        if e.portion is not Portion.WHOLE:
            halves.setdefault(e.pot_index, set()).add(sum(s.amount for s in e.shares))
    if len(pots) > 1 and any(len(amounts) > 1 for amounts in halves.values()):
        return False  # an odd unit between the halves of one of several pots
    low_somewhere = any(e.portion is Portion.LOW for e in awards)
    for e in awards:
        contested = len(set(pots[e.pot_index].eligible) - mucked) > 1
        if low_somewhere and e.portion is Portion.WHOLE and contested:
            return False  # a hi/lo pot without a low while another pot has one
    return True


def pokerkit_stacks(text: str) -> list[int]:
    state = deque(OurHandHistory.loads(text), maxlen=1).pop()  # the state after every action
    assert not state.status, "pokerkit did not finish the hand"
    return list(state.stacks)


CODES = sorted(VARIANTS)


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("players", [6, 2], ids=["6max", "heads-up"])
def test_round_trip_through_our_replay(code, players):
    for _, text in play(code, seed=7, hands=HANDS, players=players, compatible=False):
        hh = loads_one(text)
        r = replay(hh)
        assert r.ok, f"{r.error}\n{text}"
        assert r.finishing_stacks == hh.finishing_stacks
        assert hh.variant == code


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("players", [6, 2], ids=["6max", "heads-up"])
def test_pokerkit_replays_to_the_same_stacks(code, players):
    compared = 0
    for events, text in play(code, seed=11, hands=HANDS, players=players, compatible=True):
        if not comparable_with_pokerkit(events):
            continue
        compared += 1
        expected = [int(x) for x in loads_one(text).finishing_stacks]
        assert pokerkit_stacks(text) == expected, text
    assert compared >= HANDS // 2  # most hands are compared


def test_export_names_seats_and_players():
    code = "NT"
    events, text = next(play(code, seed=3, hands=1, players=3, compatible=False))
    hh = loads_one(text)
    # button seat 1 in hand 1: p1 is seat 2 (small blind), p3 the button
    assert hh.field("seats") == [2, 3, 1]
    assert hh.players == ("bot2", "bot3", "bot1")
    assert hh.blinds_or_straddles == (1, 2, 0) and hh.antes == (1, 1, 1)
    assert hh.ante_trimming_status


def test_export_needs_the_options():
    events, _ = next(play("NT", seed=3, hands=1, players=3, compatible=False))
    with pytest.raises(ValueError, match="table options"):
        export(events)
    options = table_options("holdem", "no_limit", small_blind=1, big_blind=2, ante=1,
                            suit_order="bridge", rake_basis_points=0)
    assert replay(loads_one(export(events, options=options))).ok


def test_options_phh_cannot_express_are_user_fields():
    options = table_options("stud", "fixed_limit", small_bet=10, max_bets=5,
                            rake_basis_points=0)  # suit_order: the sources' default
    table = new_table(options)
    rng = random.Random(5)
    for hand_no in range(1, 30):
        table, events = run_hand(table, hand_no, 4, [(1, 500), (2, 500), (3, 500), (4, 500)],
                                 random_policy(rng))
        text = export(events, options=options)
        hh = loads_one(text)
        assert hh.field("_suit_order") == "sources" and hh.field("_max_bets") == 5
        assert replay(hh).ok, text
