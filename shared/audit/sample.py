"""Sample logs for tests and benchmarks: tables played in process the way the services play
them (the same decisions, one decision per commit, the table's own seating plan, time-outs,
players leaving mid-hand, top-ups, newcomers), chained into commits by ``build_commit``, the dealer's decisions sealed as the dealer seals
them (to :data:`SAMPLE_KEY`, a fixed compliance key for samples: :func:`sample_keyring` opens
them).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from typing import TypedDict, Unpack

from shared.infra.commits import parse_commit
from shared.infra.eventstore import Stored
from shared.infra.repository import build_commit, digest
from shared.infra.secrecy import (
    ComplianceKey,
    ComplianceKeyring,
    CompliancePublicKey,
    HandKey,
    Sealing,
)
from shared.poker import decide as D
from shared.poker import table as T
from shared.poker.events import (
    CardsDealt,
    DeckCommitted,
    DeckRevealed,
    HandShown,
    HandStarted,
    PlayerTimedOut,
)
from shared.poker.fold import apply
from shared.poker.handrunner import Dealer, players_choices, random_policy, take_table_step
from shared.poker.options import TableOptions, buy_in_limits, table_options
from shared.poker.state import HandState, SagaKind, TableState
from shared.poker.steprules import next_step, table_step


class Stakes(TypedDict, total=False):
    """A game's stakes, as :func:`~shared.poker.options.table_options` takes them."""

    small_blind: int
    big_blind: int
    small_bet: int
    big_bet: int
    ante: int
    bring_in: int


#: what seeds a sample's ``random.Random``
Seed = int | float | str | bytes | bytearray | None

#: the games and structures a mixed sample cycles over, with their stakes
MIXED: tuple[tuple[str, str, Stakes], ...] = (
    ("holdem", "no_limit", {"small_blind": 1, "big_blind": 2}),
    ("holdem", "fixed_limit", {"small_bet": 10}),
    ("omaha", "pot_limit", {"small_blind": 1, "big_blind": 2}),
    ("omaha_hilo", "fixed_limit", {"small_bet": 10}),
    ("stud", "fixed_limit", {"small_bet": 10}),
    ("stud_hilo", "fixed_limit", {"small_bet": 10}),
)


#: the compliance key samples are sealed to (a sample's secrecy is a test's, not a casino's)
SAMPLE_KEY = ComplianceKey(hashlib.sha256(b"poker sample compliance key").digest())
_DEALERS = (DeckCommitted, CardsDealt, DeckRevealed, HandShown)


def sample_keyring() -> ComplianceKeyring:
    """Opens every sample sealed to :data:`SAMPLE_KEY`."""
    return ComplianceKeyring([SAMPLE_KEY])


def seeded_dealer(rng: random.Random) -> Dealer:
    return Dealer(shuffle=lambda cards: tuple(rng.sample(list(cards), len(cards))),
                  salt=lambda: f"{rng.getrandbits(128):032x}")


def play_decisions(table_id: str, options: TableOptions, hands: int, seats: int = 6,
                   seed: Seed = 1, churn: float = 0.02,
                   reseed: dict[int, Seed] | None = None) -> Iterator[list]:
    """The decisions (lists of events) of a table: created, ``seats`` players seated, then
    ``hands`` hands. ``churn``: the chance, per step, of a time-out, of a player leaving
    mid-hand, and between hands of a player leaving and another sitting down. At a table
    with a wallet (``options.wallet``) every saga is settled at once, and a buy-in or top-up
    is refused with the chance ``churn``. ``reseed``: hand number -> a seed the choices take
    from that hand on (the same table up to there, another history after: a replaced
    hand)."""
    return _SampleTable(table_id, options, seats, random.Random(seed), churn).play(
        hands, reseed or {})


class _SampleTable:
    """One sample table as it is played: its fold, its random choices (one ``rng``, drawn
    in a fixed order, so a seed gives one history) and its counters."""

    def __init__(self, table_id: str, options: TableOptions, seats: int, rng: random.Random,
                 churn: float) -> None:
        self.options, self.seats, self.rng, self.churn = options, seats, rng, churn
        self.counter = iter(range(1, 10 ** 9))
        self.policy = random_policy(rng)
        self.choices = {**players_choices(self.policy), D.Show: self.show}
        self.low, self.high = buy_in_limits(options)
        self.created = T.create_table(None, table_id, options)
        self.table: TableState = apply(None, self.created[0])  # a new table's one event
        self.names = iter(range(1, 10 ** 9))
        self.dealer = seeded_dealer(rng)

    def key(self) -> str:
        return f"k{next(self.counter)}" if self.options.wallet else ""

    def show(self, hand: HandState, step: D.Show) -> list | None:
        """Show a hand that may be mucked now and then; else the rule for one who does not."""
        return (D.show(hand, step.seat) if not step.must_show and self.rng.random() < 0.3
                else None)

    def decide(self, events: list) -> list:
        for e in events:
            self.table = apply(self.table, e)
        return events

    def settle(self) -> Iterator[list]:
        while open_sagas := T.settleable(self.table):
            saga = open_sagas[0]
            refused = (saga.kind in (SagaKind.BUY_IN, SagaKind.TOP_UP)
                       and self.rng.random() < self.churn)
            yield self.decide(T.settled(self.table, saga.key,
                                        "the balance is short" if refused else None))

    def play(self, hands: int, reseed: dict[int, Seed]) -> Iterator[list]:
        yield self.created
        for n in range(1, self.seats + 1):
            yield self.decide(T.sit_down(self.table, n, f"p{next(self.names)}", self.high, "d",
                                         key=self.key()))
            yield from self.settle()
        played = stuck = 0
        while True:
            yield from self.settle()
            step = table_step(self.table)
            if step is None and not self.table.hand_running:
                if played >= hands:
                    return
                if stuck > 3:
                    raise RuntimeError(f"the sample table cannot start a hand: "
                                       f"{self.table.seats}")
                stuck += 1
                yield from self.between_hands()
                continue
            if step is None:
                yield from self.player_turn()
                continue
            stuck = 0
            if type(step) is T.StartHand:  # (the sample counts its hands, and may reseed)
                if played >= hands:
                    return
                played += 1
                if played in reseed:
                    self.rng.seed(reseed[played])
                self.dealer = seeded_dealer(self.rng)
            yield self.decide(take_table_step(self.table, step, self.choices, self.dealer,
                                              self.key))

    def between_hands(self) -> Iterator[list]:
        """Players come back, top up, leave, sit down."""
        high, unit = self.high, self.options.chip_unit
        for s in self.table.seats:
            if s.sitting_out:
                yield self.decide(T.sit_out(self.table, s.seat, False, post_big_blind=True))
            elif s.stack < high // 2:
                amount = (high - s.stack) // unit * unit
                if amount > 0:
                    yield self.decide(T.top_up(self.table, s.seat, amount, key=self.key()))
                    yield from self.settle()
        ready = [s for s in self.table.seats if not s.owes_big_blind and not s.sitting_out]
        if self.rng.random() < self.churn * 5 and len(ready) > 2:
            s = self.rng.choice(self.table.seats)
            yield self.decide(T.leave(self.table, s.seat, key=self.key()))
        taken = {s.seat for s in self.table.seats}
        free = [n for n in range(1, min(self.seats, self.options.max_seats) + 1)
                if n not in taken]
        if free and ready:  # (a table of newcomers only would never start)
            yield self.decide(T.sit_down(
                self.table, free[0], f"p{next(self.names)}",
                self.rng.randrange(self.low, high + 1, unit) // unit * unit or self.low, "d",
                post_big_blind=len(ready) < 2 or self.rng.random() < 0.5, key=self.key()))

    def player_turn(self) -> Iterator[list]:
        """The player on turn acts, times out now and then, or leaves."""
        hand = _hand(self.table)
        act = next_step(hand)
        assert isinstance(act, D.Act), act
        r = self.rng.random()
        if r < self.churn:
            yield self.decide(D.time_out(hand, act.seat))
        elif r < 2 * self.churn and len(self.table.seats) > 3:
            yield self.decide(T.leave(self.table, act.seat, key=self.key()))
        else:
            action, to = self.policy(hand, act.legal)
            yield self.decide(D.act(hand, act.seat, action, to))


def _hand(table: TableState) -> HandState:
    assert table.hand is not None  # asked only while a hand runs
    return table.hand


def chain(table_id: str, decisions, start_seq: int = 1, seq_step: int = 1,
          start_ms: int = 1_700_000_000_000, options: TableOptions | None = None,
          compliance: CompliancePublicKey | None = SAMPLE_KEY.public) -> Iterator[Stored]:
    """Commits of the decisions, chained as the repository writes them, one second apart (a
    time-out comes after the player's deadline); the dealer's sealed to ``compliance`` (None:
    in the clear, as no service writes them)."""
    prev = b""
    hand_no = 0
    sealing = None
    now = start_ms
    late = 120_000
    if options is not None:
        late = (options.decision_seconds + options.countdown_seconds
                + options.reconnect_bonus_seconds + 1) * 1000
    seq = start_seq
    for i, events in enumerate(decisions, start=1):
        now += late if isinstance(events[0], PlayerTimedOut) else 1000
        if compliance is not None and isinstance(events[0], _DEALERS):
            if sealing is None or sealing.hand.hand_no != hand_no:
                key = hashlib.sha256(f"{table_id}|{hand_no}|sample hand key".encode()).digest()
                sealing = Sealing(HandKey(table_id, hand_no, key), compliance)
        data = build_commit(table_id, hand_no, f"{table_id}-c{i}", digest(i), "sample",
                            events, prev, now_ms=now,
                            sealing=sealing if isinstance(events[0], _DEALERS) else None)
        hand_no = next((e.hand_no for e in events if isinstance(e, HandStarted)), hand_no)
        prev = last_hash(data)
        yield Stored(seq, data, f"{table_id}:{table_id}-c{i}")
        seq += seq_step


def last_hash(data: bytes) -> bytes:
    return hashlib.sha256(parse_commit(data).raws[-1]).digest()


def sample_table(table_id: str = "t1", game: str = "holdem", structure: str = "no_limit",
                 hands: int = 20, seats: int = 6, seed: Seed = 1,
                 **stakes: Unpack[Stakes]) -> list[Stored]:
    default: Stakes = {"small_blind": 1, "big_blind": 2}
    stakes = stakes or next((s for g, st, s in MIXED if g == game and st == structure), default)
    options = table_options(game, structure, **stakes)
    return list(chain(table_id, play_decisions(table_id, options, hands, seats, seed),
                      options=options))
