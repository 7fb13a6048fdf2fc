"""Domain events: facts in the past tense, frozen. The state of a table is their fold.

Amounts are chips (int). Seats are the table's seat numbers (1-based), never list indexes.
One decision produces one or more events, appended together as one commit.
"""

from __future__ import annotations

import enum

from .cards import Card
from .evolve import Value, value
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


@value
class ForcedBet(Value):
    seat: int
    kind: ForcedKind
    amount: int  # the nominal amount; a short stack posts what it has


@value
class SeatStack(Value):
    seat: int
    stack: int


@value
class HoleDeal(Value):
    seat: int
    cards: tuple[Card, ...]
    face_up: tuple[bool, ...]


@value
class Pot(Value):
    amount: int
    eligible: tuple[int, ...]  # seats


@value
class Share(Value):
    seat: int
    amount: int


# --- table -------------------------------------------------------------------------------

@value
class TableCreated(Value):
    table_id: str
    options: TableOptions


@value
class PlayerSeated(Value):
    """A player took a seat with ``stack`` chips. ``token_digest``: SHA-256 of the seat token
    handed to the player (the token itself is never logged)."""

    seat: int
    player_id: str
    stack: int
    token_digest: str
    # A newcomer at a running table posts a big blind to be dealt in at once (True) or waits
    # until the big blind reaches the seat (False).
    post_big_blind: bool = False
    #: what is printed for the player (""): the player id, which is then a valid name)
    name: str = ""


@value
class PlayerLeft(Value):
    seat: int


@value
class PlayerSatOut(Value):
    seat: int
    sitting_out: bool  # False: the player came back
    post_big_blind: bool = False  # coming back: post the missed blinds now (else wait)


@value
class PlayerToppedUp(Value):
    """Chips added to a stack between hands (table stakes: never during a hand)."""

    seat: int
    amount: int


@value
class PlayerLeaving(Value):
    """The player left during a hand: their hand is folded when it is their turn, and the seat
    frees when the hand ends."""

    seat: int


@value
class PlayerDisconnected(Value):
    seat: int


@value
class PlayerReconnected(Value):
    """Back while still on the clock: 20 more seconds, once per decision (RULES §7)."""

    seat: int


@value
class SeatTokenReplaced(Value):
    """The player holding ``seat`` proved who they are and was given a new seat token (its
    ``token_digest``): the old token no longer proves the seat."""

    seat: int
    player_id: str
    token_digest: str


@value
class SeedCommitted(Value):
    """The player holding ``seat`` committed to a seed for hand ``hand_no`` (the SHA-256 of
    its 32 bytes): accepted only before hand ``hand_no - 1`` starts (shared/poker/table.py)."""

    seat: int
    hand_no: int
    seed_sha256: str


@value
class SeedRevealed(Value):
    """The seat revealed the seed it committed to for hand ``hand_no``: accepted only once
    the server committed to its own seed for that hand and before the hand starts."""

    seat: int
    hand_no: int
    seed: str


@value
class ClockRestarted(Value):
    """The log refused the table's appends (out of space) while ``seat`` was on the clock,
    from ``refused_at_unix_ms`` (the table service's time); the decision starts again at
    this commit: the clock does not run while the table cannot act (RULES §7,
    shared/poker/clock.py)."""

    seat: int
    refused_at_unix_ms: int


# --- money: the wallet saga (RULES §7; services/table/cashier.py runs it) -------------------
# At a table whose chips come from a wallet (``TableOptions.wallet``) chips reach a seat only
# after the wallet has taken them, and leave it only to be given back: each movement is a
# saga keyed by ``key`` (the command id that began it), which the wallet sees as its
# idempotency key, so a saga finished again after a crash moves the money once.

@value
class BuyInRequested(Value):
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
    name: str = ""  # as in :class:`PlayerSeated`


@value
class BuyInConfirmed(Value):
    """The wallet debited the buy-in ``key``: its chips reach the seat."""

    key: str


@value
class BuyInRefused(Value):
    """The wallet refused the buy-in ``key`` (``reason``): no chips; a held seat is free."""

    key: str
    reason: str


@value
class CashOutRequested(Value):
    """A player's ``amount`` chips leave the seat for their wallet (they left, or the table
    closed); the seat itself frees with the :class:`PlayerLeft` of the same commit."""

    key: str
    seat: int
    player_id: str
    amount: int


@value
class CashOutConfirmed(Value):
    """The wallet credited the cash-out ``key``."""

    key: str


@value
class RakeCredited(Value):
    """The wallet credited a hand's rake (the saga ``key``) to the house account."""

    key: str


@value
class TablePaused(Value):
    """An operator paused the table (no new hand starts; the running one plays out) or, with
    ``paused`` False, resumed it."""

    paused: bool


@value
class TableConfigured(Value):
    """An operator changed the table's options between hands (stakes, rake, clock, buy-in
    limits; the game and the structure stay): the next hand is played under ``options``."""

    options: TableOptions


@value
class TableClosing(Value):
    """An operator closed the table: no new hand starts, every player is cashed out once the
    running hand ends, and the table takes no one after."""

    reason: str = ""


# --- hand: table service -------------------------------------------------------------------

@value
class HandStarted(Value):
    """A hand began: who is dealt in (seat order, clockwise), the button, the forced bets due."""

    hand_no: int
    button: int
    players: tuple[SeatStack, ...]
    forced_bets: tuple[ForcedBet, ...]
    # seats sitting out that the blinds passed this hand: they owe them to come back
    missed_big_blind: tuple[int, ...] = ()
    missed_small_blind: tuple[int, ...] = ()


# --- hand: dealer --------------------------------------------------------------------------

@value
class DeckCommitted(Value):
    """The dealer committed to a shuffled deck (hash of deck and salt) before dealing from it.

    ``reshuffle``: stud ran out of cards, and the undealt and burned cards were shuffled anew.
    ``positions_root``: the hex RFC 6962 root over the deck's salted positions, what a
    player's receipt proves its cards against (shared/tlog/receipt.py; "" before receipts).
    """

    commitment: str
    deck_size: int
    reshuffle: bool = False
    positions_root: str = ""
    # The players' entropy (shared/poker/shuffle.py), all empty for a deck shuffled by the
    # CSPRNG alone: the algorithm that derived the deck, the commitment to the server's seed of
    # this hand (the one the hand before committed to, if it did), the seeds the players
    # revealed for this hand (sorted), and the commitment to the server's seed of the next hand.
    shuffle: str = ""
    seed_sha256: str = ""
    player_seeds: tuple[str, ...] = ()
    next_seed_sha256: str = ""


@value
class CardsDealt(Value):
    """One street's cards, in deck order: the burn, then hole cards round by round, then board.

    ``board`` in stud holds the one common card turned up when the deck ran short (RULES §1).
    """

    street: int
    burned: tuple[Card, ...]
    hole: tuple[HoleDeal, ...]
    board: tuple[Card, ...]


@value
class DeckRevealed(Value):
    """After the hand: the deck and salt behind each commitment, for the audit, and the
    server's seed of a derived deck (shared/poker/shuffle.py; sealed with the rest)."""

    decks: tuple[tuple[Card, ...], ...]
    salts: tuple[str, ...]
    server_seed: str = ""


# --- hand: betting -------------------------------------------------------------------------

@value
class ForcedBetPosted(Value):
    seat: int
    kind: ForcedKind
    amount: int  # chips actually posted (less than nominal when the player is all in)
    all_in: bool


@value
class ActionTaken(Value):
    """A player's action. ``to``: their total bet this round after it; ``added``: chips moved."""

    seat: int
    action: ActionKind
    to: int
    added: int
    all_in: bool


@value
class PlayerTimedOut(Value):
    """The player on turn let the clock run out. ``all_in``: under the ``sources`` policy a
    player facing a bet who already put chips in is treated as all in for what they put in
    (eligible for the pot so far, out of later betting); otherwise an action follows (check,
    fold, or the forced bring-in)."""

    seat: int
    all_in: bool = False


@value
class BetReturned(Value):
    """The uncalled part of a bet went back to its owner."""

    seat: int
    amount: int


@value
class BettingRoundClosed(Value):
    street: int


# --- hand: showdown / pot ------------------------------------------------------------------

@value
class PotsFormed(Value):
    pots: tuple[Pot, ...]  # main pot first


@value
class HandShown(Value):
    seat: int
    cards: tuple[Card, ...]
    high: str = ""  # readable value, e.g. "full house, kings full of fours"
    low: str = ""


@value
class HandMucked(Value):
    seat: int


@value
class PotAwarded(Value):
    pot_index: int
    portion: Portion
    shares: tuple[Share, ...]
    hand: str = ""  # the winning hand's name; empty when won uncontested


@value
class HandEnded(Value):
    stacks: tuple[SeatStack, ...]


# --- hand: rake ------------------------------------------------------------------------------

@value
class RakeTaken(Value):
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
                PlayerDisconnected, PlayerReconnected, PlayerLeaving, ClockRestarted,
                SeatTokenReplaced, SeedCommitted, SeedRevealed)
MONEY_EVENTS = (BuyInRequested, BuyInConfirmed, BuyInRefused, CashOutRequested,
                CashOutConfirmed, RakeCredited)
OPERATOR_EVENTS = (TablePaused, TableConfigured, TableClosing)
Event = (
    TableCreated | PlayerSeated | PlayerLeft | PlayerSatOut | PlayerToppedUp
    | PlayerDisconnected | PlayerReconnected | PlayerTimedOut | PlayerLeaving | HandStarted | DeckCommitted | CardsDealt | DeckRevealed | ForcedBetPosted
    | ActionTaken | BetReturned | BettingRoundClosed | PotsFormed | HandShown | HandMucked
    | PotAwarded | HandEnded | RakeTaken | BuyInRequested | BuyInConfirmed | BuyInRefused
    | CashOutRequested | CashOutConfirmed | RakeCredited | TablePaused | TableConfigured
    | TableClosing | ClockRestarted | SeatTokenReplaced | SeedCommitted | SeedRevealed
)
