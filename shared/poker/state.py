"""The state of a hand and of a table: frozen values, produced only by folding events."""

from __future__ import annotations

import enum
from itertools import compress

from .cards import Card
from .events import ForcedBet, Pot
from .evolve import Value, value
from .options import Game, Structure, TableOptions


class Phase(enum.Enum):
    COMMIT = "commit"  # the dealer must commit to a shuffled deck
    FORCED = "forced"  # antes and blinds are due
    DEAL = "deal"  # the cards of `street` are due
    BET = "bet"  # a betting round is open; `to_act` is on the clock
    POTS = "pots"  # betting is over: pots are to be formed
    SHOWDOWN = "showdown"  # hands are shown or mucked, in `show_order`
    RAKE = "rake"
    AWARD = "award"
    REVEAL = "reveal"  # the dealer reveals the deck(s) behind its commitments
    DONE = "done"

    # Members are equal only to themselves, so hashing by identity is consistent, and it is a
    # C slot: Enum.__hash__ is a Python call (hash of the name) on every dict or cache lookup
    # keyed by a member (the showdown's hand-value cache, the step table).
    __hash__ = object.__hash__


@value
class Player(Value):
    seat: int
    stack: int  # chips behind
    start_stack: int
    round_bet: int = 0  # live chips bet in the current round (blinds included, antes not)
    contributed: int = 0  # every chip put in this hand, net of returned bets
    dead: int = 0  # of which posted for the table, not as a stake (big-blind ante, dead blind)
    folded: bool = False
    all_in: bool = False
    acted: bool = False  # acted since the betting last reopened for them
    reopen_at: int = 0  # the bet this player must face before they may raise again
    hole: tuple[Card, ...] = ()
    face_up: tuple[bool, ...] = ()
    shown: bool = False
    mucked: bool = False

    @property
    def live(self) -> bool:
        """Still holds a hand (has not folded)."""
        return not self.folded

    @property
    def can_bet(self) -> bool:
        return not self.folded and not self.all_in

    @property
    def upcards(self) -> tuple[Card, ...]:
        return tuple(compress(self.hole, self.face_up))


@value
class BettingRound(Value):
    """A betting round's own fields (RULES §4). The betting rules open it and change it after
    each action (betting.open_round, betting.after_action); the fold only stores it. It stays
    on the hand after the round closes: the showdown starts from the last round's aggressor."""

    current_bet: int = 0  # the bet to match (the full blind even when the blind was short)
    full_level: int = 0  # fixed limit: the level of the last bet that counts toward the cap
    min_raise: int = 0  # no/pot limit: the size of the last full bet or raise
    bets_count: int = 0  # fixed limit: bets and raises this round (the big blind counts)
    big_bet_made: bool = False  # stud 4th street open pair: a big-bet-size bet was made
    uncapped: bool = False  # heads-up uncapped raising applies this round
    last_aggressor: int | None = None
    first: int | None = None  # first to act this round (None: nobody could act)
    bring_in_seat: int | None = None  # stud: the lowest upcard, who must bring in


NO_ROUND = BettingRound()


@value
class HandState(Value):
    options: TableOptions
    hand_no: int
    button: int
    players: tuple[Player, ...]  # dealt-in players, clockwise by seat
    forced_bets: tuple[ForcedBet, ...]
    positions: tuple[int, ...] = ()  # seat number -> index in players (-1: not dealt in)
    phase: Phase = Phase.COMMIT
    street: int = 0  # street being dealt or bet (0 = pre-flop / 3rd street)
    board: tuple[Card, ...] = ()
    burned: tuple[Card, ...] = ()  # burned cards of the current deck
    deck_size: int = 52
    dealt_from_deck: int = 0  # cards taken from the current deck (burns included)
    commitments: tuple[str, ...] = ()
    # the betting round
    to_act: int | None = None
    round: BettingRound = NO_ROUND  # the open round, or the last one once it closed
    forced_posted: int = 0  # forced bets posted so far (of `forced_bets`)
    reshuffled: bool = False  # stud: the deck was reshuffled for the current street
    betting_streets: int = 0  # rounds in which betting took place
    final_round_bet: bool = False  # the last street had a betting round
    # settlement
    pots: tuple[Pot, ...] = ()
    show_order: tuple[int, ...] = ()  # seats still to show or muck, in order
    rake: int = 0
    rake_from: tuple[int, ...] = ()
    paid_out: int = 0  # chips awarded from the pots so far
    # the players' entropy (shared/poker/shuffle.py): the server's seed commitment for this
    # hand (from the hand before), the seeds revealed for it (sorted), the algorithm of the
    # first deck, and the server's commitment for the next hand
    seed_sha256: str = ""
    player_seeds: tuple[str, ...] = ()
    shuffle: str = ""
    next_seed_sha256: str = ""

    # --- small queries used throughout the core ---------------------------------------------

    @property
    def game(self) -> Game:
        return self.options.game

    @property
    def structure(self) -> Structure:
        return self.options.structure

    def index(self, seat: int) -> int:
        try:
            i = self.positions[seat]
        except (IndexError, TypeError):
            raise KeyError(seat) from None
        if i < 0:
            raise KeyError(seat)
        return i

    def player(self, seat: int) -> Player:
        # index()'s body, not a call to it: asked about a hundred times a hand (bench_hands)
        try:
            i = self.positions[seat]
        except (IndexError, TypeError):
            raise KeyError(seat) from None
        if i < 0:
            raise KeyError(seat)
        return self.players[i]

    def with_player(self, p: Player) -> tuple[Player, ...]:
        i = self.index(p.seat)
        return self.players[:i] + (p,) + self.players[i + 1:]

    def clockwise_from(self, seat: int) -> tuple[Player, ...]:
        """Players in clockwise order starting with the first seat after ``seat``."""
        ps = self.players
        n = len(ps)
        start = 0
        for i, p in enumerate(ps):
            if p.seat > seat:
                start = i
                break
        else:
            start = 0
        return tuple(ps[(start + k) % n] for k in range(n))

    @property
    def live_players(self) -> tuple[Player, ...]:
        return tuple(p for p in self.players if not p.folded)

    @property
    def pot_total(self) -> int:
        """All chips in the middle: every pot, antes and dead blinds, and the bets on the table."""
        return sum(p.contributed for p in self.players) - self.rake - self.paid_out

    @property
    def chips_in_play(self) -> int:
        """Stacks + pots + rake: constant for the whole hand (conservation)."""
        return sum(p.stack for p in self.players) + self.pot_total + self.rake

    @property
    def streets(self) -> int:
        return 5 if self.options.game.is_stud else 4


class SagaKind(enum.Enum):
    BUY_IN = "buy_in"  # a sit-down's chips: the seat is held, empty, until the wallet debits
    TOP_UP = "top_up"  # chips added between hands
    CASH_OUT = "cash_out"  # the chips of a player who left, owed back to their wallet
    RAKE = "rake"  # a hand's rake, owed to the house account


@value
class Saga(Value):
    """Money between the table and the wallet, not yet settled: ``key`` is the wallet's
    idempotency key (with the table id), ``seat``/``player_id`` whose money it is (0/"" for
    rake)."""

    key: str
    kind: SagaKind
    amount: int
    seat: int = 0
    player_id: str = ""


@value
class PendingSeed(Value):
    """A seat's seed for a hand not started yet: committed (its SHA-256), then revealed."""

    hand_no: int
    seat: int
    seed_sha256: str
    seed: str = ""


@value
class Seat(Value):
    seat: int
    player_id: str
    stack: int  # chips behind between hands (during a hand the hand's own stacks count)
    token_digest: str
    sitting_out: bool = False
    arrival: int = 0  # order of seating: the first player seated takes the button first
    owes_big_blind: bool = False  # joined a running table, or missed the big blind away
    owes_small_blind: bool = False  # missed the small blind while sitting out (posted dead)
    post_big_blind: bool = False  # chose to post what is owed now rather than wait
    connected: bool = True
    leaving: bool = False  # left during a hand: folded at their turn, freed after the hand
    name: str = ""  # what is printed for the player ("": the player id)

    @property
    def shown_name(self) -> str:
        """What pages and histories print for the player."""
        return self.name or self.player_id


@value
class TableState(Value):
    table_id: str
    options: TableOptions
    seats: tuple[Seat, ...] = ()  # by seat number
    hand: HandState | None = None
    hands_played: int = 0
    last_hand_no: int = 0
    button: int | None = None  # the last hand's button
    arrivals: int = 0
    last_small_blind: int | None = None  # who posted the blinds in the last hand
    last_big_blind: int | None = None
    sagas: tuple[Saga, ...] = ()  # money with the wallet not yet settled, oldest first
    paused: bool = False  # an operator paused the table: no new hand starts
    closing: bool = False  # an operator closed the table: everyone is cashed out
    seeds: tuple[PendingSeed, ...] = ()  # the players' seeds for the next hands

    def pending_seed(self, hand_no: int, seat: int) -> PendingSeed | None:
        for p in self.seeds:
            if p.hand_no == hand_no and p.seat == seat:
                return p
        return None

    @property
    def next_seed_sha256(self) -> str:
        """The server's commitment to the seed of the table's next hand ("": none made)."""
        hand = self.hand
        return hand.next_seed_sha256 if hand is not None else ""

    def saga(self, key: str) -> Saga | None:
        for g in self.sagas:
            if g.key == key:
                return g
        return None

    def seat_saga(self, number: int) -> Saga | None:
        """The open buy-in or top-up of seat ``number``."""
        for g in self.sagas:
            if g.seat == number and g.kind in (SagaKind.BUY_IN, SagaKind.TOP_UP):
                return g
        return None

    @property
    def vacant(self) -> bool:
        """Nobody seated, no hand running, no money with the wallet either way: nothing at
        the table waits for anyone (a process keeps nothing of it: shared/infra/tablecache.py)."""
        return not self.seats and not self.sagas and not self.hand_running

    @property
    def closed(self) -> bool:
        """Closed and done: nobody seated, no money owed either way."""
        return self.closing and self.vacant

    def seat(self, number: int) -> Seat | None:
        for s in self.seats:
            if s.seat == number:
                return s
        return None

    @property
    def hand_running(self) -> bool:
        return self.hand is not None and self.hand.phase is not Phase.DONE
