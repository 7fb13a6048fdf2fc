"""Which decision answers which step: the one table from a step type to the service that
owns it, the call that takes it, its decision, its command's fingerprint and how the audit
decides it again. Hand steps (steps.py) and table steps (a hand's start, a seat freed, a
leaver's hand folded: table.py) alike.

Everything that takes or checks a step reads this table and nothing else: the table
service's driver (which service and method to call, or the table's own decision), the step
streams of the services that own the steps (shared/infra/stepstream.py: a house step is
served from here alone), the dealer service (its decisions, with the deck in its vault), the
in-process driver (shared/poker/handrunner.py), the sample generator (shared/audit/sample.py),
the auditor and the PHH replay (which decision a recorded event must be the outcome of).

A new kind of step is a class, a decision and one entry here. A step of a hand that is not
one of a phase's (``steps.next_step``) says when it is due (``due``) and which step it comes
before (``before``); a table step says when it is due between hands (``before`` None) or
instead of a player's action (``before`` Act). Its owner's step stream serves it from
here when it is the house's; a dealer's or a player's step needs its owner's method.

Kinds of decision:

- ``house``: needs nothing but the hand (forced bets, closing a round, pots, rake, awards).
- ``dealer``: needs the dealer's secrets, the shuffled deck(s) and salts (``DeckHolder``: the
  dealer service's vault, the in-process :class:`~shared.poker.handrunner.Dealer`, a replay's).
- ``table``: a table step's decision, on the table (the table service takes it itself).
- none of these: a player's choice (acting, showing), made by a person, a bot's policy or,
  for a player who does not act, the rule for them (``default``).

``again`` makes the decision a second time from the first event a service recorded for the
step: the audit and a replay check that the log holds exactly what the rules decide.
:data:`COMMANDS` does the same for the table's decisions that are not steps (a player's,
an operator's, the wallet's answer, a tournament director's).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

from . import decide as D
from . import events as E
from . import seeds as SD
from . import steps as S
from . import table as T
from .cards import Card
from .memo import Memo
from .shuffle import NO_ENTROPY, Entropy
from .state import HandState, TableState
from .steps import (
    Act,
    AwardPots,
    CloseRound,
    CommitDeck,
    Deal,
    FormPots,
    HandComplete,
    PostForcedBets,
    Reshuffle,
    RevealDeck,
    Show,
    Step,
    TakeRake,
)
from .table import FoldLeaver, FreeSeat, StartHand
from .tournament import tables as TT

Events = list[Any]


class DeckHolder(Protocol):
    """The dealer's secrets for one hand, as a decision needs them (read only here)."""

    @property
    def decks(self) -> Sequence[Sequence[Card]]: ...

    @property
    def salts(self) -> Sequence[str]: ...

    def new_deck(self, cards: Sequence[Card] | None = None) -> str:
        """Shuffle ``cards`` (all 52 when None), keep the deck and a new salt; the commitment."""
        ...

    def root(self) -> str:
        """The positions root of the deck last made (shared/tlog/receipt.py; "" for none)."""
        ...

    @property
    def entropy(self) -> Entropy:
        """The seeds the hand's decks are derived from (shared/poker/shuffle.py)."""
        ...

    @property
    def server_seed(self) -> str:
        """The server's seed of the hand, revealed with its decks ("" for none)."""
        ...


class NoDeck:
    """The dealer of a hand with no deck (an imported hand history: it names the cards dealt,
    and no deck is committed to or revealed)."""

    decks: tuple[tuple[Card, ...], ...] = ()
    salts: tuple[str, ...] = ()
    entropy: Entropy = NO_ENTROPY
    server_seed: str = ""

    def new_deck(self, cards: Sequence[Card] | None = None) -> str:
        return ""

    def root(self) -> str:
        return ""


NO_DECK = NoDeck()


#: (step, hand number, table version) -> the parts of the step's command digest
#: (shared/infra/repository.py ``digest``), for a step the house, the dealer or the table takes
Fingerprint = Callable[[Any, int, int], tuple[object, ...]]


def _tag(name: str) -> Fingerprint:
    return lambda step, hand_no, version: (name, hand_no)


@dataclass(frozen=True, slots=True)
class StepRule:
    owner: str  # the service whose decision it is
    rpc: str = ""  # the owner's call that the table service sends to take the step
    house: Callable[[HandState], Events] | None = None
    #: (hand, step, the dealer's decks, the caller's memo: shared/poker/memo.py) -> events
    dealer: Callable[[HandState, Any, DeckHolder, Memo | None], Events] | None = None
    #: a player who does not act: the rule for them (the table service asks the owner for it)
    default: Callable[[HandState, Any], Events] | None = None
    #: recorded first event's type -> the decision again, from that event (and the caller's
    #: memo)
    again: Mapping[type, Callable[[HandState, Any, Memo | None], Events]] = field(
        default_factory=dict)
    #: the owner's method that takes ``default`` when the table service asks for it (the
    #: clock keeper's time-out); "": ``rpc`` takes it (a show's default is a choice of it)
    default_rpc: str = ""
    #: the command's fingerprint (a player's step: the owner's, from the player's choice)
    fingerprint: Fingerprint | None = None
    #: a step that is not a phase's own: taken before a step of this type whenever ``due``
    #: gives it (from the hand, or from the table for a table step: ``on_table``)
    before: type | None = None
    #: (the hand or table, the step otherwise next or None between hands) -> this step, or
    #: None when it is not due
    due: Callable[[Any, Any], Any] | None = None
    #: a table step: ``due`` and ``table`` read the table
    on_table: bool = False
    #: a table step's decision: (table, step, the saga key a cash-out needs) -> events
    table: Callable[[TableState, Any, str], Events] | None = None
    #: the table step's decision may open a saga (a cash-out): it needs the saga's key
    keyed: bool = False
    #: a table step's ``again``: recorded first event's type -> the decision from it
    table_again: Mapping[type, Callable[[TableState, Any], Events]] = field(
        default_factory=dict)


class StepTable(dict[type, StepRule]):
    """The steps' rules by step type, with what the drivers read on every step worked out
    once: the steps taken before another (``before``), the table steps between hands."""

    def __init__(self, rules: Mapping[type, StepRule]) -> None:
        super().__init__(rules)
        self._index()

    def _index(self) -> None:
        #: step type -> the rules of the hand steps due before it (none in the rule book)
        self.inserted: dict[type, tuple[StepRule, ...]] = {}
        #: step type -> the table steps taken instead of it (a leaver's hand folded)
        self.instead: dict[type, tuple[StepRule, ...]] = {}
        for rule in self.values():
            if rule.before is not None:
                into = self.instead if rule.on_table else self.inserted
                into[rule.before] = (*into.get(rule.before, ()), rule)
        #: the table steps between hands, in the order they are taken
        self.between_hands = tuple(r for r in self.values() if r.on_table and r.before is None)
        #: recorded first event's type -> the table step rules that decide it again
        self.table_again: dict[type, StepRule] = {
            t: r for r in self.values() for t in r.table_again}

    @contextmanager
    def added(self, step: type, rule: StepRule) -> Iterator[None]:
        """The table with one more entry while the context lasts (a step a test defines)."""
        self[step] = rule
        self._index()
        try:
            yield
        finally:
            del self[step]
            self._index()


def _acted(hand: HandState, e: E.ActionTaken, memo: Memo | None) -> Events:
    return D.act(hand, e.seat, e.action, None if e.action in D.NO_AMOUNT else e.to, memo)


def _shown(hand: HandState, e: E.HandShown, memo: Memo | None) -> Events:
    return D.show(hand, e.seat, e.cards)


def _committed(hand: HandState, step: CommitDeck, deck: DeckHolder,
               memo: Memo | None) -> Events:
    return D.commit_deck(hand, deck.new_deck(), 52, deck.root(), deck.entropy)


def _reshuffled(hand: HandState, step: Reshuffle, deck: DeckHolder,
                memo: Memo | None) -> Events:
    # (a replayed hand has no deck: the cards to shuffle are then no one's concern)
    cards = D.cards_to_reshuffle(hand, deck.decks[-1]) if deck.decks else hand.burned
    commitment = deck.new_deck(cards)
    return D.reshuffle(hand, commitment, step.deck_size, deck.root(), deck.entropy)


def _leaver(table: TableState, act: Act) -> FoldLeaver | None:
    """A player who left during the hand is on turn: their hand is folded (a stud bring-in,
    which cannot be folded, is posted)."""
    seat = table.seat(act.seat)
    if seat is None or not seat.leaving:
        return None
    forced = not act.legal.can_fold and act.legal.bring_in
    return FoldLeaver(act.seat, E.ActionKind.BRING_IN if forced else E.ActionKind.FOLD)


def _left(table: TableState, e: E.PlayerLeft | E.CashOutRequested) -> Events:
    """A seat emptied: freed by the table after the hand, left by its player between hands,
    or at a tournament's table, taken off by its director."""
    seat = table.seat(e.seat)
    if table.options.tournament and type(e) is E.PlayerLeft:
        return TT.unseat(table, e.seat, seat.player_id if seat is not None else "")
    key = getattr(e, "key", "")
    if seat is not None and T.waiting_to_be_freed(table, seat) and not table.hand_running:
        return T.free_seat(table, e.seat, key=key)
    return T.leave(table, e.seat, key=key)


def _running(table: TableState) -> HandState:
    assert table.hand is not None  # (a step of the running hand)
    return table.hand


def _first_leaver(table: TableState, pending: object) -> FreeSeat | None:
    seat = next((s.seat for s in table.seats if T.waiting_to_be_freed(table, s)), None)
    return FreeSeat(seat) if seat is not None else None


#: the step types of a hand and of a table, and how each is decided
STEPS = StepTable({
    CommitDeck: StepRule(
        "dealer", "CommitDeck", dealer=_committed, fingerprint=_tag("commit_deck"),
        again={E.DeckCommitted: lambda hand, e, memo: D.commit_deck(
            hand, e.commitment, e.deck_size, e.positions_root, Entropy.of(e))}),
    PostForcedBets: StepRule("betting", "PostForcedBets", house=D.post_forced_bets,
                             fingerprint=_tag("forced")),
    Reshuffle: StepRule(
        "dealer", "Reshuffle", dealer=_reshuffled, fingerprint=_tag("reshuffle"),
        again={E.DeckCommitted: lambda hand, e, memo: D.reshuffle(
            hand, e.commitment, e.deck_size, e.positions_root, Entropy.of(e))}),
    Deal: StepRule(
        "dealer", "DealStreet", fingerprint=_tag("deal"),
        dealer=lambda hand, step, deck, memo: D.deal_from(hand, deck.decks[-1], memo),
        again={E.CardsDealt: lambda hand, e, memo: D.deal(hand, D.deck_order(e), memo)}),
    Act: StepRule(
        "betting", "Act", default=lambda hand, step: D.time_out(hand, step.seat),
        default_rpc="TimeOut",
        again={E.ActionTaken: _acted,
               E.PlayerTimedOut: lambda hand, e, memo: D.time_out(hand, e.seat, memo)}),
    CloseRound: StepRule("betting", "CloseRound", house=D.close_round,
                         fingerprint=_tag("close")),
    FormPots: StepRule("showdown", "FormPots", house=D.form_pots, fingerprint=_tag("pots")),
    Show: StepRule(
        "dealer", "ShowOrMuck", default=lambda hand, step: D.showdown_default(hand, step.seat),
        again={E.HandShown: _shown, E.HandMucked: lambda hand, e, memo: D.muck(hand, e.seat)}),
    TakeRake: StepRule("rake", "TakeRake", house=D.take_rake, fingerprint=_tag("rake")),
    AwardPots: StepRule("showdown", "AwardPots", house=D.award_pots,
                        fingerprint=_tag("award")),
    RevealDeck: StepRule(
        "dealer", "RevealDeck", fingerprint=_tag("reveal"),
        dealer=lambda hand, step, deck, memo: D.reveal_deck(hand, deck.decks, deck.salts,
                                                            deck.server_seed),
        again={E.DeckRevealed: lambda hand, e, memo: D.reveal_deck(hand, e.decks, e.salts,
                                                                   e.server_seed)}),
    HandComplete: StepRule("table"),
    # the table's steps: a leaver's hand folded (the betting service's action), then between
    # hands a seat freed and the next hand started (the table service's own)
    FoldLeaver: StepRule(
        "betting", "Act", on_table=True, before=Act, due=_leaver,
        table=lambda table, step, key: D.act(_running(table), step.seat, step.action),
        fingerprint=lambda step, hand_no, version: ("act", hand_no, step.seat,
                                                    step.action.value, None)),
    FreeSeat: StepRule(
        "table", on_table=True, due=_first_leaver, keyed=True,
        table=lambda table, step, key: T.free_seat(table, step.seat, key=key),
        fingerprint=lambda step, hand_no, version: ("free", step.seat),
        table_again={E.PlayerLeft: _left, E.CashOutRequested: _left}),
    StartHand: StepRule(
        "table", on_table=True,
        due=lambda table, pending: StartHand() if T.can_start_hand(table) else None,
        table=lambda table, step, key: T.start_next_hand(table),
        fingerprint=lambda step, hand_no, version: ("start", version),
        table_again={E.HandStarted: lambda table, e: T.start_next_hand(table)}),
})


def _seated(table: TableState, e: E.PlayerSeated) -> Events:
    if table.options.tournament:  # its director seats a player with a stack
        return TT.seat_entrant(table, e.seat, e.player_id, e.stack, e.token_digest)
    return T.sit_down(table, e.seat, e.player_id, e.stack, e.token_digest, e.post_big_blind,
                      name=e.name)


def _topped_up(table: TableState, e: E.PlayerToppedUp) -> Events:
    if table.options.tournament:  # a rebuy's chips, added by its director
        seat = table.seat(e.seat)
        return TT.add_chips(table, e.seat, seat.player_id if seat is not None else "", e.amount)
    return T.top_up(table, e.seat, e.amount)


def _buy_in(table: TableState, e: E.BuyInRequested) -> Events:
    if e.top_up:
        return T.top_up(table, e.seat, e.amount, key=e.key)
    return T.sit_down(table, e.seat, e.player_id, e.amount, e.token_digest, e.post_big_blind,
                      key=e.key, name=e.name)


#: the table's decisions that are not steps (a player's, an operator's, the wallet's answer
#: to a saga, a tournament director's), by the first event they record: the decision again
COMMANDS: dict[type, Callable[[TableState, Any], Events]] = {
    E.PlayerSeated: _seated,
    E.BuyInRequested: _buy_in,
    E.BuyInRefused: lambda table, e: T.settled(table, e.key, e.reason),
    E.BuyInConfirmed: lambda table, e: T.settled(table, e.key),
    E.CashOutConfirmed: lambda table, e: T.settled(table, e.key),
    E.RakeCredited: lambda table, e: T.settled(table, e.key),
    E.TablePaused: lambda table, e: T.pause(table, e.paused),
    E.TableClosing: lambda table, e: T.close(table, e.reason),
    E.TableConfigured: lambda table, e: T.configure(table, e.options),
    E.PlayerLeaving: lambda table, e: T.leave(table, e.seat),
    E.PlayerSatOut: lambda table, e: T.sit_out(table, e.seat, e.sitting_out,
                                               e.post_big_blind),
    E.PlayerToppedUp: _topped_up,
    E.PlayerDisconnected: lambda table, e: T.disconnect(table, e.seat),
    E.PlayerReconnected: lambda table, e: T.reconnect(table, e.seat),
    E.ClockRestarted: lambda table, e: T.restart_clock(table, e.seat, e.refused_at_unix_ms),
    E.SeatTokenReplaced: lambda table, e: T.replace_seat_token(table, e.seat, e.player_id,
                                                               e.token_digest),
    E.SeedCommitted: lambda table, e: SD.commit_seed(table, e.seat, e.hand_no, e.seed_sha256),
    E.SeedRevealed: lambda table, e: SD.reveal_seed(table, e.seat, e.hand_no, e.seed),
}


def next_step(hand: HandState, memo: Memo | None = None) -> Step:
    """What the hand needs now: its phase's step (steps.py), or a step this table puts before
    that one while it is due (``memo``: the caller's, shared/poker/memo.py)."""
    step = S.next_step(hand, memo)
    inserted = STEPS.inserted
    if inserted:
        for rule in inserted.get(type(step), ()):
            assert rule.due is not None  # (a rule with ``before`` has one)
            extra: Step | None = rule.due(hand, step)
            if extra is not None:
                return extra
    return step


def table_step(table: TableState) -> object | None:
    """What the table needs next without a player: a hand step, a table step (a leaver's
    hand folded, a seat freed, the next hand), or None (waiting for a player's decision, or
    for players)."""
    hand = table.hand
    if hand is not None and table.hand_running:
        step = next_step(hand)
        if type(step) is not Act:
            return step
        return _due(STEPS.instead.get(Act, ()), table, step)
    return _due(STEPS.between_hands, table, None)


def _due(rules: Sequence[StepRule], table: TableState, pending: object) -> object | None:
    for rule in rules:
        assert rule.due is not None  # (every table step has one)
        step: object | None = rule.due(table, pending)
        if step is not None:
            return step
    return None


def is_table_decision(first: object) -> bool:
    """The event a commit starts with records a decision on the table (a table step's or a
    command's), not the running hand's."""
    return type(first) in STEPS.table_again or type(first) in COMMANDS


def calls_of(owner: str) -> frozenset[str]:
    """The methods of service ``owner`` that take steps: what its step stream answers
    (shared/infra/stepstream.py)."""
    return frozenset(name for rule in STEPS.values() if rule.owner == owner
                     for name in (rule.rpc, rule.default_rpc) if name)


def house_calls(owner: str) -> dict[str, StepRule]:
    """The house steps of service ``owner`` by their call: its step stream decides them from
    here alone."""
    return {rule.rpc: rule for rule in STEPS.values()
            if rule.owner == owner and rule.house is not None}


def owners() -> frozenset[str]:
    """The services the table service sends steps to."""
    return frozenset(rule.owner for rule in STEPS.values() if rule.rpc)


def house(step: type) -> Callable[[HandState], Events]:
    """The house's decision of a step type; KeyError naming the step for one that is not
    the house's."""
    decision = STEPS[step].house
    if decision is None:
        raise KeyError(f"{step.__name__} is not a house step")
    return decision


def automatic(hand: HandState, step: Step, deck: DeckHolder,
              memo: Memo | None = None) -> Events | None:
    """The decision of a step that needs no player (the house's, or the dealer's with
    ``deck``); None for a player's step."""
    r = STEPS[type(step)]
    if r.house is not None:
        return r.house(hand)
    if r.dealer is not None:
        return r.dealer(hand, step, deck, memo)
    return None


def by_default(hand: HandState, step: Step) -> Events:
    """The rule for a player who does not take their step (a time-out, a show or muck)."""
    default = STEPS[type(step)].default
    if default is None:
        raise KeyError(f"{type(step).__name__} is not a player's step")
    return default(hand, step)


def is_players(step: type) -> bool:
    """A player's step: chosen by a person, a bot or the file replayed, else ``default``."""
    return STEPS[step].default is not None


class NotThisStep(Exception):
    """A recorded event that does not answer the hand's next step."""


def decide_again(hand: HandState, step: Step, first: object,
                 memo: Memo | None = None) -> Events:
    """The decision of ``step`` again, from the first event recorded for it: the events the
    rules give (the caller compares them with the log). A house step is decided from the
    state alone; any other needs ``first`` to be one of the events that answer it
    (NotThisStep otherwise). The decision's own IllegalAction says the recorded choice was
    not allowed."""
    r = STEPS[type(step)]
    if r.house is not None:
        return r.house(hand)
    again = r.again.get(type(first))
    if again is None:
        raise NotThisStep(f"the hand's next step is {type(step).__name__} ({r.owner}), "
                          f"not a {type(first).__name__}")
    return again(hand, first, memo)


def decide_table_again(table: TableState, first: object) -> Events:
    """A table decision again, from the first event recorded for it (a table step's, else a
    command's); NotThisStep for an event no table decision records first."""
    rule = STEPS.table_again.get(type(first))
    again = rule.table_again[type(first)] if rule is not None else COMMANDS.get(type(first))
    if again is None:
        raise NotThisStep(f"{type(first).__name__} is not a table decision")
    return again(table, first)
