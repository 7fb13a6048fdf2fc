"""Properties of whole hands under random legal play, for every game and betting structure.

Each example draws a table (game, structure, blinds or bets, antes, chip unit, cap, rake,
suit order), 2 to max_seats players with stacks from one unit (all in from the forced bets)
to deep, a button, a deck shuffled by a seeded ``random.Random`` (the seed is part of the
example, so a failure replays) and a random legal policy, and plays the hand through the
decisions and the fold. A hand during which the engine raises fails every property (legal
play must never be refused). The properties:

- chips are conserved after every event (stacks + pots + rake == what came to the table);
- random legal play always finishes a hand, within a bound of steps;
- side pots add up to the contributions, each pot contested by exactly the live players who
  contributed up to its level (RULES §5);
- the rake is exactly RULES §8's (percent of the pot rounded down to the chip unit, capped,
  no flop no drop), computed independently (tests/helpers/rules_model.py);
- the final stacks are the rule book's award (RULES §5/§6/§8, ``rules_settlement``: pots by
  contribution levels, hi/lo halves, 8-or-better low, odd chips in the rule book's order);
- folding a prefix and then the rest equals folding everything, and every prefix folds to the
  state the driver had at that point; the driver's own fast path (``run_hand``) ends in the
  state its events fold to; playing the same hand again gives the same events;
- every ActionTaken was allowed by the betting rules of RULES §3/§4 as an independent model
  (``RulesOracle``) computes them: the call, the check, the raise bounds, the all-in flag.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import DECK
from shared.poker.events import ActionKind
from shared.poker.fold import apply, fold
from shared.poker.handrunner import Dealer, automatic_decision, new_table, random_policy, run_hand
from shared.poker.options import RakeCap, Structure, TableOptions, table_options
from shared.poker.state import HandState, TableState
from tests.helpers.rules_model import RulesOracle, rules_rake, rules_settlement

GAMES = [
    ("holdem", "fixed_limit"), ("holdem", "pot_limit"), ("holdem", "no_limit"),
    ("omaha", "fixed_limit"), ("omaha", "pot_limit"), ("omaha", "no_limit"),
    ("omaha_hilo", "fixed_limit"), ("omaha_hilo", "pot_limit"), ("omaha_hilo", "no_limit"),
    ("stud", "fixed_limit"), ("stud_hilo", "fixed_limit"),
]
STEP_BOUND = 2_000  # far above any real hand: 8 players x 5 streets x a few actions each
# Deterministic by default (CI); PROPERTY_EXAMPLES=5000 PROPERTY_RANDOM=1 for a deeper hunt.
PROPERTY_SETTINGS = settings(deadline=None,
                             max_examples=int(os.environ.get("PROPERTY_EXAMPLES", "200")),
                             derandomize=not os.environ.get("PROPERTY_RANDOM"),
                             suppress_health_check=[HealthCheck.too_slow])


@st.composite
def table_opts(draw, game_structure=None) -> TableOptions:
    game, structure = game_structure or draw(st.sampled_from(GAMES))
    unit = draw(st.sampled_from([1, 1, 1, 5]))
    kw: dict = dict(chip_unit=unit,
                    max_bets=draw(st.integers(1, 5)),
                    heads_up_uncapped=draw(st.booleans()),
                    suit_order=draw(st.sampled_from(["sources", "bridge"])),
                    rake_basis_points=draw(st.sampled_from([0, 250, 500, 500, 1000])),
                    no_flop_no_drop=draw(st.booleans()))
    cap = draw(st.one_of(st.none(), st.integers(0, 50).map(lambda c: c * unit),
                         st.builds(RakeCap, st.integers(0, 10), st.integers(0, 20),
                                   st.integers(0, 30))))
    if cap is not None:
        kw["rake_cap"] = cap
    if structure == "fixed_limit":
        kw["small_bet"] = unit * draw(st.integers(1, 20))
    else:
        bb = draw(st.integers(1, 20))
        kw["big_blind"] = unit * bb
        kw["small_blind"] = unit * draw(st.integers(1, bb))
    if game.startswith("stud"):
        if draw(st.booleans()):
            kw["ante"] = unit * draw(st.integers(0, 3))
    elif draw(st.booleans()):
        kw["ante"] = unit * draw(st.integers(1, 3))
        kw["ante_type"] = draw(st.sampled_from(["per_seat", "big_blind"]))
    return table_options(game, structure, **kw)


@dataclass
class PlayedHand:
    options: TableOptions
    stacks: list[tuple[int, int]]
    button: int
    total: int
    events: list[object]  # HandStarted onwards (TableCreated is events_all[0])
    before: list[HandState | None]  # the hand's state before each event
    final: TableState
    finished: bool
    steps: int
    error: str = ""  # an exception the engine raised mid-hand (a bug: legal play must not)
    seed: int = 0  # the seed of the deck, salts and policy: play(...) again replays the hand
    passive: bool = False

    def ok(self) -> PlayedHand:
        """Fail at once, readably, if the hand did not play to its end."""
        assert not self.error, f"the engine raised during legal play: {self.error}\n{self}"
        assert self.finished, f"no HandComplete after {STEP_BOUND} steps"
        return self

    @property
    def events_all(self) -> list[object]:
        return [E.TableCreated("t1", self.options)] + self.events


def auto(hand: HandState, step: D.Step, dealer: Dealer) -> list[object]:
    events = automatic_decision(hand, step, dealer)
    if events is None:
        raise AssertionError(f"unexpected step {step!r}")
    return events


def passive_policy(rng: random.Random):
    """Mostly checks, calls and brings in (so many players reach the showdown and stud decks
    run out); now and then a random legal bet or raise."""
    wild = random_policy(rng)

    def choose(state, legal):
        if legal.raise_kind is not None and rng.random() < 0.1:
            return wild(state, legal)
        if legal.bring_in:
            return ActionKind.BRING_IN, None
        if legal.can_check:
            return ActionKind.CHECK, None
        if legal.call:
            return ActionKind.CALL, None
        return wild(state, legal)

    return choose


def seeded(seed: int, passive: bool) -> tuple[random.Random, Dealer, object]:
    """The deck, salts and policy of one example, all from one seeded random.Random."""
    rng = random.Random(seed)
    dealer = Dealer(shuffle=lambda pool: tuple(rng.sample(list(pool), len(pool))),
                    salt=lambda: f"{rng.getrandbits(64):016x}")
    return rng, dealer, passive_policy(rng) if passive else random_policy(rng)


def play(options: TableOptions, stacks: list[tuple[int, int]], button: int, seed: int,
         passive: bool = False) -> PlayedHand:
    rng, dealer, policy = seeded(seed, passive)
    table = new_table(options)
    events: list[object] = []
    before: list[HandState | None] = []

    def push(new: list[object]) -> None:
        nonlocal table
        for e in new:
            before.append(table.hand)
            table = apply(table, e)
            events.append(e)

    total = sum(s for _, s in stacks)
    try:
        push(D.start_hand(table, 1, button, stacks))
        for steps in range(STEP_BOUND):
            hand = table.hand
            step = D.next_step(hand)
            if isinstance(step, D.HandComplete):
                return PlayedHand(options, stacks, button, total, events, before, table, True,
                                  steps, seed=seed, passive=passive)
            if isinstance(step, D.Act):
                action, to = policy(hand, step.legal)
                push(D.act(hand, step.seat, action, to))
            elif isinstance(step, D.Show):
                choice = rng.choice(["default", "show", "muck"])
                if choice == "show" or step.must_show:
                    push(D.show(hand, step.seat))
                elif choice == "muck":
                    push(D.muck(hand, step.seat))
                else:
                    push(D.showdown_default(hand, step.seat))
            else:
                push(auto(hand, step, dealer))
    except Exception as exc:  # noqa: BLE001 - fails every property (PlayedHand.ok), with the hand
        return PlayedHand(options, stacks, button, total, events, before, table, False, -1,
                          error=f"{type(exc).__name__}: {exc} at {events[-1:]}", seed=seed,
                          passive=passive)
    return PlayedHand(options, stacks, button, total, events, before, table, False, STEP_BOUND,
                      seed=seed, passive=passive)


@st.composite
def played_hands(draw, game_structure=None) -> PlayedHand:
    options = draw(table_opts(game_structure))
    unit = options.chip_unit
    n = draw(st.integers(2, options.max_seats))
    seat_numbers = sorted(draw(st.lists(st.integers(1, options.max_seats), min_size=n,
                                        max_size=n, unique=True)))
    deep = options.big_blind or options.big_bet
    stacks = [(s, unit * draw(st.one_of(st.integers(1, 5), st.integers(1, 20 + 60 * deep // unit))))
              for s in seat_numbers]
    button = draw(st.sampled_from(seat_numbers))
    seed = draw(st.integers(0, 2**32 - 1))
    return play(options, stacks, button, seed, passive=draw(st.booleans()))


def _of(hand: PlayedHand, kind: type) -> list:
    return [(i, e) for i, e in enumerate(hand.events) if isinstance(e, kind)]


# =============================================================================================

@PROPERTY_SETTINGS
@given(played_hands())
def test_random_legal_play_always_finishes_a_hand(h):
    """RULES §4-§6: legal play always reaches the end of the hand, with chips conserved."""
    h.ok()
    assert isinstance(h.events[-1], E.DeckRevealed)
    [ended] = [e for _, e in _of(h, E.HandEnded)]
    rake = sum(e.amount for _, e in _of(h, E.RakeTaken))
    assert sum(x.stack for x in ended.stacks) + rake == h.total
    assert all(x.stack >= 0 for x in ended.stacks)


@PROPERTY_SETTINGS
@given(played_hands())
def test_chips_are_conserved_after_every_event(h):
    """RULES §8: "stacks + pots + rake always equal what came to the table", after every
    event of a hand that played to its end (a hand the engine broke off fails)."""
    h.ok()
    table = None
    for e in h.events_all:
        table = apply(table, e)
        hand = table.hand
        if hand is None:
            continue
        assert hand.chips_in_play == h.total, f"after {e}"
        for p in hand.players:
            assert p.stack >= 0 and p.contributed >= 0, f"after {e}: {p}"
            assert p.round_bet <= p.contributed or isinstance(e, E.HandEnded)


def _level_of(amount_so_far: int, contributions: list[int]) -> int:
    """The smallest level L with sum(min(c, L)) == amount_so_far (pots are cumulative)."""
    lo, hi = 0, max(contributions)
    while lo < hi:
        mid = (lo + hi) // 2
        if sum(min(c, mid) for c in contributions) >= amount_so_far:
            hi = mid
        else:
            lo = mid + 1
    return lo


@PROPERTY_SETTINGS
@given(played_hands())
def test_side_pots_add_up_to_contributions_with_the_right_players_eligible(h):
    """Pots add up to everything put in. Each player's stake (what they put in less dead
    money posted for the table: a big-blind ante, a dead small blind) sets the pots they may
    win; dead money goes to the main pot, which every live player contests."""
    h.ok()
    [(i, formed)] = _of(h, E.PotsFormed)
    state = h.before[i]
    contributed = {p.seat: p.contributed for p in state.players}
    stake = {p.seat: p.contributed - p.dead for p in state.players}
    dead = sum(p.dead for p in state.players)
    live = {p.seat for p in state.players if not p.folded}
    assert sum(p.amount for p in formed.pots) == sum(contributed.values())
    assert all(p.amount > 0 for p in formed.pots)
    pots = [(p.amount, p.eligible) for p in formed.pots]
    if dead:
        amount, eligible = pots[0]
        assert set(eligible) == live, f"dead money is contested by every live player: {pots}"
        pots[0] = (amount - dead, eligible)
        if pots[0][0] == 0:
            pots.pop(0)
    cumulative = 0
    top_live = max(stake[s] for s in live)
    for k, (amount, eligible) in enumerate(pots):
        cumulative += amount
        assert set(eligible) <= live, f"pot {k} has folded players: {pots}"
        level = _level_of(cumulative, list(stake.values()))
        if k == len(pots) - 1:
            # the last pot may also hold stakes above every live player's
            level = min(level, top_live)
        expected = {s for s in live if stake[s] >= level}
        assert set(eligible) == expected, (
            f"pot {k} ({amount}, {eligible}) at level {level}: expected {sorted(expected)}; "
            f"stakes {stake}, live {sorted(live)}")
    # nested: each side pot's players are among the previous pot's
    for a, b in zip(formed.pots, formed.pots[1:]):
        assert set(b.eligible) < set(a.eligible)


@PROPERTY_SETTINGS
@given(played_hands())
def test_no_pot_holds_a_players_own_uncalled_chips(h):
    """Uncalled parts of a bet are returned (RULES §5): no pot's chips all come from the one
    player who alone is eligible for it (dead money posted for the table aside)."""
    h.ok()
    [(i, formed)] = _of(h, E.PotsFormed)
    state = h.before[i]
    stake = {p.seat: p.contributed - p.dead for p in state.players}
    dead = sum(p.dead for p in state.players)
    cumulative = prev_level = 0
    for k, pot in enumerate(formed.pots):
        amount = pot.amount - (dead if k == 0 else 0)
        cumulative += amount
        level = _level_of(cumulative, list(stake.values()))
        feeders = {s for s, c in stake.items() if c > prev_level}
        own = len(pot.eligible) == 1 and feeders == set(pot.eligible)
        assert not (own and amount > 0), (
            f"{pot} is seat {pot.eligible[0]}'s own uncalled money; pots {formed.pots}, "
            f"stakes {stake}")
        prev_level = level


@PROPERTY_SETTINGS
@given(played_hands())
def test_rake_is_exactly_the_rule_books(h):
    """RULES §8: rake = min(cap, percent x the total pot after uncalled bets are returned),
    rounded down to the chip unit, the cap by players dealt in, nothing under no_flop_no_drop
    when the hand ended before the flop (stud: on 3rd street); taken from the main pot first,
    then the side pots in order. The amount is computed here from the options, the pots and
    whether a flop (4th street) was dealt, not read from the engine."""
    h.ok()
    [(i, taken)] = _of(h, E.RakeTaken)
    state = h.before[i]
    pots = state.pots
    opts = h.options
    total = sum(p.amount for p in pots)
    reached_flop = any(e.street >= 1 for _, e in _of(h, E.CardsDealt))
    expected = rules_rake(opts, total, len(state.players), reached_flop)
    assert taken.amount == expected, (
        f"rake {taken.amount}, RULES §8 gives {expected}: {opts.rake_basis_points} bp of "
        f"{total}, cap {opts.rake_cap}, unit {opts.chip_unit}, flop dealt {reached_flop}")
    if opts.no_flop_no_drop and not reached_flop:
        assert taken.amount == 0
    assert len(taken.from_pots) == len(pots) and sum(taken.from_pots) == taken.amount
    assert all(0 <= t <= p.amount for t, p in zip(taken.from_pots, pots))
    # taken from the main pot first: a later pot is touched only once earlier ones are empty
    for k, t in enumerate(taken.from_pots):
        if t:
            assert all(taken.from_pots[j] == pots[j].amount for j in range(k))


@PROPERTY_SETTINGS
@given(played_hands())
def test_final_stacks_are_the_rule_books_award(h):
    """RULES §5, §6, §8: the final stacks are what the rule book awards, computed from the
    hand's events alone (tests/helpers/rules_model.py: the uncalled stake returned, pots by
    contribution levels, rake, each pot or half to its best eligible hand, 8-or-better lows,
    odd chips in the rule book's order), never from the engine's pots or awards."""
    h.ok()
    [ended] = [e for _, e in _of(h, E.HandEnded)]
    ours = {x.seat: x.stack for x in ended.stacks}
    book = rules_settlement(h.options, h.events)
    assert ours == book.stacks, f"ours {ours}, the rule book's {book}"


@PROPERTY_SETTINGS
@given(played_hands(), st.data())
def test_folding_a_prefix_then_the_rest_equals_folding_all(h, data):
    """Event sourcing (RULES §1: a replay always knows what happened): folding any prefix and
    then the rest gives the final state the driver reached, and the prefix alone gives the
    state the driver had after those events (``h.before``, recorded while playing)."""
    h.ok()
    evs = h.events_all
    k = data.draw(st.integers(0, len(evs)), label="k")
    prefix = fold(evs[:k])
    assert fold(evs[k:], prefix) == h.final
    if 1 <= k <= len(h.before):  # evs[:k] is TableCreated and the first k - 1 hand events
        assert prefix.hand == h.before[k - 1]


@PROPERTY_SETTINGS
@given(played_hands())
def test_replaying_a_hand_from_scratch_gives_the_same_final_state(h):
    """Event sourcing: the events alone give the final state; the same inputs (seed, table,
    stacks) give the same events again (no hidden clock or randomness); the driver's own
    fast path (run_hand folds hand events on their own) ends in the state its events fold
    to."""
    h.ok()
    assert fold(h.events_all) == h.final
    again = play(h.options, h.stacks, h.button, h.seed, h.passive)
    assert again.events == h.events and again.final == h.final
    _, dealer, policy = seeded(h.seed, h.passive)
    start = new_table(h.options)
    table, events = run_hand(start, 1, h.button, h.stacks, policy, dealer)
    assert fold(events, start) == table
    assert table.hand.phase.value == "done"


def _open_pair(state: HandState) -> bool:
    return any(len({c.rank for c in p.upcards}) < len(p.upcards) for p in state.live_players)


@PROPERTY_SETTINGS
@given(played_hands())
def test_every_action_taken_was_legal_at_that_point(h):
    """RULES §3/§4: every ActionTaken was allowed, by an independent model of the betting
    rules (RulesOracle: the amount to call after short forced bets and all-ins, the check,
    whether a raise is allowed after short all-ins and at the cap, its minimum and pot-limit
    maximum), not by the engine's own legal_actions. Where the model does not go (heads-up
    uncapped raising, stud's open-pair 4th street, a raise nobody could answer) only what it
    still fixes is checked."""
    h.ok()
    oracle = RulesOracle(h.options)
    fixed = h.options.structure is Structure.FIXED_LIMIT
    for i, e in _of(h, E.ActionTaken):
        state = h.before[i]
        p = state.player(e.seat)
        a = e.action
        assert state.to_act == e.seat, f"{e} out of turn"
        assert 0 <= e.added <= p.stack and e.to == p.round_bet + e.added
        assert e.all_in == (e.added == p.stack and e.added > 0), e
        if a is ActionKind.BRING_IN:  # RULES §3: the bring-in, or what the player has
            assert state.options.game.is_stud and state.street == 0
            assert e.added == min(h.options.bring_in, p.stack)
        elif a is ActionKind.FOLD:
            assert e.added == 0
        elif not (a is ActionKind.COMPLETE and state.street == 0
                  and not any(q.round_bet for q in state.players)):
            exp = oracle.expected(state, e.seat)
            if a is ActionKind.CHECK:
                assert e.added == 0 and exp.can_check, (e, exp)
            elif a is ActionKind.CALL:
                assert e.added == exp.call > 0, (e, exp)
            else:
                modelled = not (h.options.heads_up_uncapped or exp.raise_optional
                                or (state.street == 1 and _open_pair(state)))
                if modelled:
                    assert exp.can_raise, (e, exp)
                    if fixed:
                        assert e.to == exp.min_to, (e, exp)
                    else:
                        assert exp.min_to <= e.to <= exp.max_to, (e, exp)
        oracle.on_action(state, e)


# One focused run per game and structure, so none of them is left to chance.
@settings(deadline=None, max_examples=20, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_every_game_and_structure_finishes_and_conserves_chips(data):
    """RULES §2, §8: every game and structure plays to its end, chips conserved after every
    event, final stacks the rule book's award."""
    for gs in GAMES:
        h = data.draw(played_hands(gs), label=f"{gs}").ok()
        table = None
        for e in h.events_all:
            table = apply(table, e)
            if table.hand is not None:
                assert table.hand.chips_in_play == h.total
        ours = {p.seat: p.stack for p in h.final.hand.players}
        assert ours == rules_settlement(h.options, h.events).stacks, gs


def test_eight_stud_players_who_all_stay_run_out_of_cards_and_finish():
    """RULES §1: eight stud players who all stay run the deck out: a reshuffle, and the hand
    still finishes with every chip accounted for (seeded deck: a failure replays)."""
    from shared.poker.handrunner import check_call_policy
    for game in ("stud", "stud_hilo"):
        options = table_options(game, "fixed_limit", small_bet=10)
        rng = random.Random(7)
        deck = tuple(rng.sample(DECK, 52))
        dealer = Dealer(shuffle=lambda pool, d=deck: d if len(pool) == 52 else tuple(pool),
                        salt=lambda: "s")
        table, events = run_hand(new_table(options), 1, 8, [(s, 500) for s in range(1, 9)],
                                 policy=check_call_policy, dealer=dealer)
        assert table.hand.phase.value == "done"
        assert any(isinstance(e, E.DeckCommitted) and e.reshuffle for e in events)
        assert table.hand.chips_in_play == 4000
