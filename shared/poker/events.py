"""Domain events: facts in the past tense, frozen. The state of a table is their fold.

Amounts are chips (int). Seats are the table's seat numbers (1-based), never list indexes.
One decision produces one or more events, appended together as one commit.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .cards import Card
from .evolve import fast_init
from .options import TableOptions


class ForcedKind(enum.Enum):
    ANTE = "ante"  # dead money, not part of any bet
    SMALL_BLIND = "small_blind"
    BIG_BLIND = "big_blind"  # live: the poster gets the option
    DEAD_SMALL_BLIND = "dead_small_blind"  # a returning player's missed small blind: dead

    @property
    def live(self) -> bool:
        """A live forced bet counts as the poster's bet in the first round."""
        return self in (ForcedKind.SMALL_BLIND, ForcedKind.BIG_BLIND)


class ActionKind(enum.Enum):
    FOLD = "fold"
    CHECK = "check"
    CALL = "call"
    BET = "bet"
    RAISE = "raise"
    BRING_IN = "bring_in"  # stud: post the forced bring-in
    COMPLETE = "complete"  # stud: bring-in to the small bet (not a raise)


class Portion(enum.Enum):
    WHOLE = "whole"
    HIGH = "high"
    LOW = "low"


@dataclass(frozen=True, slots=True)
class ForcedBet:
    seat: int
    kind: ForcedKind
    amount: int  # the nominal amount; a short stack posts what it has


@dataclass(frozen=True, slots=True)
class SeatStack:
    seat: int
    stack: int


@dataclass(frozen=True, slots=True)
class HoleDeal:
    seat: int
    cards: tuple[Card, ...]
    face_up: tuple[bool, ...]


@dataclass(frozen=True, slots=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # seats


@dataclass(frozen=True, slots=True)
class Share:
    seat: int
    amount: int


# --- table -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class TableCreated:
    table_id: str
    options: TableOptions


@dataclass(frozen=True, slots=True)
class PlayerSeated:
    """A player took a seat with ``stack`` chips. ``token_digest``: SHA-256 of the seat token
    handed to the player (the token itself is never logged)."""

    seat: int
    player_id: str
    stack: int
    token_digest: str
    # A newcomer at a running table posts a big blind to be dealt in at once (True) or waits
    # until the big blind reaches the seat (False).
    post_big_blind: bool = False


@dataclass(frozen=True, slots=True)
class PlayerLeft:
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerSatOut:
    seat: int
    sitting_out: bool  # False: the player came back
    post_big_blind: bool = False  # coming back: post the missed blinds now (else wait)


@dataclass(frozen=True, slots=True)
class PlayerToppedUp:
    """Chips added to a stack between hands (table stakes: never during a hand)."""

    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class PlayerLeaving:
    """The player left during a hand: their hand is folded when it is their turn, and the seat
    frees when the hand ends."""

    seat: int


@dataclass(frozen=True, slots=True)
class PlayerDisconnected:
    seat: int


@dataclass(frozen=True, slots=True)
class PlayerReconnected:
    """Back while still on the clock: 20 more seconds, once per decision (RULES §7)."""

    seat: int


# --- money: the wallet saga (RULES §7; services/table/cashier.py runs it) -------------------
# At a table whose chips come from a wallet (``TableOptions.wallet``) chips reach a seat only
# after the wallet has taken them, and leave it only to be given back: each movement is a
# saga keyed by ``key`` (the command id that began it), which the wallet sees as its
# idempotency key, so a saga finished again after a crash moves the money once.

@dataclass(frozen=True, slots=True)
class BuyInRequested:
    """A player asked for ``amount`` chips from their wallet: to take a seat (the seat is held
    for them, with no chips, until the wallet answers) or, ``top_up``, to add to their stack
    between hands. ``token_digest``/``post_big_blind``: as in :class:`PlayerSeated`."""

    key: str
    seat: int
    player_id: str
    amount: int
    token_digest: str = ""
    post_big_blind: bool = False
    top_up: bool = False


@dataclass(frozen=True, slots=True)
class BuyInConfirmed:
    """The wallet debited the buy-in ``key``: its chips reach the seat."""

    key: str


@dataclass(frozen=True, slots=True)
class BuyInRefused:
    """The wallet refused the buy-in ``key`` (``reason``): no chips; a held seat is free."""

    key: str
    reason: str


@dataclass(frozen=True, slots=True)
class CashOutRequested:
    """A player's ``amount`` chips leave the seat for their wallet (they left, or the table
    closed); the seat itself frees with the :class:`PlayerLeft` of the same commit."""

    key: str
    seat: int
    player_id: str
    amount: int


@dataclass(frozen=True, slots=True)
class CashOutConfirmed:
    """The wallet credited the cash-out ``key``."""

    key: str


@dataclass(frozen=True, slots=True)
class RakeCredited:
    """The wallet credited a hand's rake (the saga ``key``) to the house account."""

    key: str


@dataclass(frozen=True, slots=True)
class TablePaused:
    """An operator paused the table (no new hand starts; the running one plays out) or, with
    ``paused`` False, resumed it."""

    paused: bool


@dataclass(frozen=True, slots=True)
class TableConfigured:
    """An operator changed the table's options between hands (stakes, rake, clock, buy-in
    limits; the game and the structure stay): the next hand is played under ``options``."""

    options: TableOptions


@dataclass(frozen=True, slots=True)
class TableClosing:
    """An operator closed the table: no new hand starts, every player is cashed out once the
    running hand ends, and the table takes no one after."""

    reason: str = ""


# --- hand: table service -------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class HandStarted:
    """A hand began: who is dealt in (seat order, clockwise), the button, the forced bets due."""

    hand_no: int
    button: int
    players: tuple[SeatStack, ...]
    forced_bets: tuple[ForcedBet, ...]
    # seats sitting out that the blinds passed this hand: they owe them to come back
    missed_big_blind: tuple[int, ...] = ()
    missed_small_blind: tuple[int, ...] = ()


# --- hand: dealer --------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DeckCommitted:
    """The dealer committed to a shuffled deck (hash of deck and salt) before dealing from it.

    ``reshuffle``: stud ran out of cards, and the undealt and burned cards were shuffled anew.
    """

    commitment: str
    deck_size: int
    reshuffle: bool = False


@dataclass(frozen=True, slots=True)
class CardsDealt:
    """One street's cards, in deck order: the burn, then hole cards round by round, then board.

    ``board`` in stud holds the one common card turned up when the deck ran short (RULES §1).
    """

    street: int
    burned: tuple[Card, ...]
    hole: tuple[HoleDeal, ...]
    board: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class DeckRevealed:
    """After the hand: the deck and salt behind each commitment, for the audit."""

    decks: tuple[tuple[Card, ...], ...]
    salts: tuple[str, ...]


# --- hand: betting -------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class ForcedBetPosted:
    seat: int
    kind: ForcedKind
    amount: int  # chips actually posted (less than nominal when the player is all in)
    all_in: bool


@dataclass(frozen=True, slots=True)
class ActionTaken:
    """A player's action. ``to``: their total bet this round after it; ``added``: chips moved."""

    seat: int
    action: ActionKind
    to: int
    added: int
    all_in: bool


@dataclass(frozen=True, slots=True)
class PlayerTimedOut:
    """The player on turn let the clock run out. ``all_in``: under the ``sources`` policy a
    player facing a bet who already put chips in is treated as all in for what they put in
    (eligible for the pot so far, out of later betting); otherwise an action follows (check,
    fold, or the forced bring-in)."""

    seat: int
    all_in: bool = False


@dataclass(frozen=True, slots=True)
class BetReturned:
    """The uncalled part of a bet went back to its owner."""

    seat: int
    amount: int


@dataclass(frozen=True, slots=True)
class BettingRoundClosed:
    street: int


# --- hand: showdown / pot ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PotsFormed:
    pots: tuple[Pot, ...]  # main pot first


@dataclass(frozen=True, slots=True)
class HandShown:
    seat: int
    cards: tuple[Card, ...]
    high: str = ""  # readable value, e.g. "full house, kings full of fours"
    low: str = ""


@dataclass(frozen=True, slots=True)
class HandMucked:
    seat: int


@dataclass(frozen=True, slots=True)
class PotAwarded:
    pot_index: int
    portion: Portion
    shares: tuple[Share, ...]
    hand: str = ""  # the winning hand's name; empty when won uncontested


@dataclass(frozen=True, slots=True)
class HandEnded:
    stacks: tuple[SeatStack, ...]


# --- hand: rake ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RakeTaken:
    """Rake taken before awarding: ``from_pots[i]`` chips from pot i (main pot first)."""

    amount: int
    from_pots: tuple[int, ...]
    reason: str = ""


HAND_EVENTS = (
    HandStarted, DeckCommitted, CardsDealt, DeckRevealed, ForcedBetPosted, ActionTaken,
    PlayerTimedOut,
    BetReturned, BettingRoundClosed, PotsFormed, HandShown, HandMucked, PotAwarded, HandEnded,
    RakeTaken,
)
TABLE_EVENTS = (TableCreated, PlayerSeated, PlayerLeft, PlayerSatOut, PlayerToppedUp,
                PlayerDisconnected, PlayerReconnected, PlayerLeaving)
MONEY_EVENTS = (BuyInRequested, BuyInConfirmed, BuyInRefused, CashOutRequested,
                CashOutConfirmed, RakeCredited)
OPERATOR_EVENTS = (TablePaused, TableConfigured, TableClosing)
fast_init(ForcedBet, SeatStack, HoleDeal, Pot, Share, *TABLE_EVENTS, *HAND_EVENTS, *MONEY_EVENTS,
          *OPERATOR_EVENTS)
Event = (
    TableCreated | PlayerSeated | PlayerLeft | PlayerSatOut | PlayerToppedUp
    | PlayerDisconnected | PlayerReconnected | PlayerTimedOut | PlayerLeaving | HandStarted | DeckCommitted | CardsDealt | DeckRevealed | ForcedBetPosted
    | ActionTaken | BetReturned | BettingRoundClosed | PotsFormed | HandShown | HandMucked
    | PotAwarded | HandEnded | RakeTaken | BuyInRequested | BuyInConfirmed | BuyInRefused
    | CashOutRequested | CashOutConfirmed | RakeCredited | TablePaused | TableConfigured
    | TableClosing
)
