"""The differential test's driver: one hand through our engine and pokerkit 0.7.7 in lockstep.

How the two engines are driven
------------------------------
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
* ``RulesOracle`` (tests/helpers/rules_model.py, RULES §3-§4 written independently) checks
  our engine at every decision, whatever pokerkit says, and says which engine deviates.
* Every disagreement gets a cause, under the exact condition tests/helpers/divergences.py
  gives for it; anything else fails with a reproduction (setup, deck, actions).
* Our pots are checked against ``rules_pots`` (RULES §3/§5) and, in every hand, our final
  stacks against ``rules_settlement`` (RULES §5/§6/§8: pots, hi/lo halves, 8-or-better low,
  odd chips in the rule book's order, written independently of shared/poker/pots.py and
  showdown.py). Only then are they compared with pokerkit's: a difference is accepted only
  when a model of pokerkit's own award code reproduces pokerkit's stacks exactly and names a
  documented award rule (ODD_CHIP, STUD_HILO_DOUBLE_TIE, PK_SIDE_POT_LOW, PK_FREEROLL).

Hands stopped before their end are counted per reason (``AVOIDED``); the variant tests fail on
a reason not listed, or when fewer than 90% of a variant's hands are compared to the end.

Many hands, the variant checks, scripted hands and replays: tests/helpers/differential_runs.py.
"""

from __future__ import annotations

import random
import warnings
from collections import Counter
from dataclasses import dataclass, field

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.betting import LegalActions
from shared.poker.events import ActionKind, ForcedKind
from shared.poker.fold import apply
from shared.poker.handrunner import (
    Dealer,
    decide_step,  # every step as run_hand takes it
    new_table,
    players_choices,
)
from shared.poker.state import HandState
from tests.helpers.divergences import (
    ENGINE_DEAD_MONEY_POTS,
    ENGINE_SHORT_ALLIN_REOPENS,
    PK_EXTRA_CHECK,
    STUD_OPEN_PAIR,
    STUD_RUNOUT,
    _open_bug,
    classify,
    classify_actor,
    extra_check,
)
from tests.helpers.pokerkit_oracle import (
    PK_CARD,
    Chooser,
    PKLegal,
    PokerkitBetting,
    Setup,
    Variant,
    pk_legal,
    pokerkit_award_model,
    random_setup,
)
from tests.helpers.rules_model import Expected, RulesOracle, hand_rules_pots, rules_settlement


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
        # the reading of RULES §3 pokerkit follows (a short forced bet counts at what was
        # posted): SHORT_FORCED_BET is exempted only where pokerkit gives its numbers
        self.posted_oracle = RulesOracle(setup.options, forced_as_posted=True)
        # pokerkit's measure of raises (SHORT_ALLIN_REOPENS is exempted only where pokerkit
        # gives its numbers)
        self.pk_betting = PokerkitBetting(setup.options)
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
        self.events = events
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
                new = decide_step(hand, step, players_choices(_no_policy), self.dealer)
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
        want = hand_rules_pots(hand, self.dead)
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
            cause = self.count(classify_actor(self, hand, seat, other), "actor", detail)
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
        detail = (f"our round is over ({type(step).__name__}); pokerkit asks seat {seat} to act:"
                  f" {theirs}")
        if extra_check(self, hand, seat, theirs):  # RULES §4 round end
            self.count(PK_EXTRA_CHECK, "round end", detail)
            self.pk.check_or_call()
            if self.pk.actor_index is not None:
                self._pk_extra_check(hand, step)
            return
        raise Divergence(self.repro(detail))

    def _note_action(self, hand: HandState, e: E.ActionTaken) -> None:
        self.oracle.on_action(hand, e)
        self.posted_oracle.on_action(hand, e)
        self.pk_betting.on_action(hand, e)
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
        fields = list(got)
        if exp.raise_optional and not got["raise"]:
            # RULES §4 is silent on a raise nobody could answer: refusing it is accepted too
            # (PK_NO_RAISE_UNCOVERED); the call and the check are still the rule book's
            fields = ["call", "check"]
        for k in fields:
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
                cause = classify(self, hand, ours, theirs, exp, what)
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

    # --- final stacks --------------------------------------------------------------------

    def _compare_final(self, hand: HandState, events: list) -> None:
        """Our final stacks against the rule book's award (``rules_settlement``, RULES §5,
        §6, §8, in every hand), then against pokerkit's: a difference from pokerkit is
        accepted only where the model of pokerkit's award code reproduces pokerkit exactly
        and names a documented award rule."""
        pk = self.pk
        if pk.status:
            raise Divergence(self.repro("our hand is over, pokerkit's is not"))
        ours = {p.seat: p.stack for p in hand.players}
        book = rules_settlement(self.setup.options, events).stacks
        if ours != book:
            raise Divergence(self.repro(
                f"our final stacks {ours} are not the rule book's award {book}"))
        theirs = {self.seat_of[i]: x for i, x in enumerate(pk.stacks)}
        if ours == theirs:
            return
        alive = [s for i, s in enumerate(self.seat_of) if pk.statuses[i]]
        model, causes = pokerkit_award_model(hand, events, self.dead, self.seat_of, alive)
        if model != theirs or not causes:
            raise Divergence(self.repro(
                f"final stacks differ: ours {ours}, pokerkit {theirs}; model of pokerkit's "
                f"award code {model} (causes {sorted(causes)})"))
        self.result.outcome = "known"
        for c in causes:
            self.count(c, "final stacks", f"ours {ours}, pokerkit {theirs}")


# ------------------------------------------------------------------------------------------
# Running many hands
# ------------------------------------------------------------------------------------------

def play_hand(v: Variant, ch: Chooser) -> Result:
    return HandRun(random_setup(v, ch), ch).run()
