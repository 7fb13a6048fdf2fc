"""The director's events: facts in the past tense, frozen. A tournament's state is their fold.

Money sagas (the wallet's debits and credits) are a pair each: the request, appended before
the wallet is asked (its idempotency key derives from the tournament, the player and the
entry or place), then its outcome. A director that dies between the two asks again with the
same key: the wallet moves the money once.
"""

from __future__ import annotations

from ..evolve import Value, value
from .balance import Move, Seating
from .structure import Structure


@value
class TournamentCreated(Value):
    tournament_id: str
    structure: Structure
    name: str
    created_ms: int


@value
class EntryRequested(Value):
    """A registration (or re-entry): buy-in and fee asked of the player's wallet."""

    player_id: str
    entry_no: int  # 1, then 2 for a re-entry, ...
    token_digest: str  # the SHA-256 of the seat token the player made: every seat uses it
    name: str


@value
class EntryPaid(Value):
    player_id: str
    entry_no: int


@value
class EntryRefused(Value):
    player_id: str
    entry_no: int
    reason: str


@value
class Unregistered(Value):
    """A paid entry withdrawn before its seat (or the tournament cancelled): refund owed."""

    player_id: str
    entry_no: int


@value
class RefundPaid(Value):
    player_id: str
    entry_no: int


@value
class RebuyRequested(Value):
    """A rebuy (or the add-on): its price asked of the player's wallet (key
    ``rebuy/<player>/<rebuy_no>``, ``addon/...``); ``stack``: the player's stack when they
    asked (for a rebuy, at most the starting stack)."""

    player_id: str
    entry_no: int
    rebuy_no: int  # the player's 1st, 2nd, ... rebuy or add-on in the tournament
    stack: int
    add_on: bool = False


@value
class RebuyPaid(Value):
    player_id: str
    rebuy_no: int


@value
class RebuyRefused(Value):
    player_id: str
    rebuy_no: int
    reason: str


@value
class RebuyChipsAdded(Value):
    """A paid rebuy's chips added to the player's stack at ``table_id``, between hands (the
    table's log holds them as a top-up, by a command named after the rebuy)."""

    player_id: str
    rebuy_no: int
    table_id: str
    chips: int


@value
class SeedCommitted(Value):
    draw_no: int
    commitment: str  # SHA-256 of the seed (hex)


@value
class TableOpened(Value):
    table_id: str
    max_seats: int


@value
class PlayersSeated(Value):
    """The random seating of a draw (first seating or a late registrant): the seed revealed."""

    draw_no: int
    seed: str  # hex
    seatings: tuple[Seating, ...]


@value
class TournamentStarted(Value):
    started_ms: int


@value
class LevelStarted(Value):
    level: int  # index into the structure's levels
    at_ms: int


@value
class RegistrationClosed(Value):
    """The payouts locked, once registration and the rebuy period are over: the field, the
    pool (buy-ins and rebuys, or the guarantee) and the prizes."""

    entries: int
    pool: int
    prizes: tuple[int, ...]
    rebuys: int = 0  # paid rebuys in the pool
    add_ons: int = 0  # paid add-ons in the pool


@value
class PlayersMoved(Value):
    """Balancing moves, or a table broken (``broken`` names it; ``seed`` revealed)."""

    moves: tuple[Move, ...]
    broken: str = ""
    draw_no: int = 0
    seed: str = ""
    #: each mover's stack, read from the table between hands: what they sit down with
    stacks: tuple[int, ...] = ()


@value
class Bust(Value):
    player_id: str
    entry_no: int
    start_stack: int  # at the start of the hand that eliminated them


@value
class PlayersEliminated(Value):
    """One hand's eliminations (hand-for-hand: one round's, across tables)."""

    table_id: str
    hand_no: int
    busts: tuple[Bust, ...]


@value
class PrizeRequested(Value):
    player_id: str
    entry_no: int
    place: int
    amount: int


@value
class PrizePaid(Value):
    player_id: str
    entry_no: int


@value
class FeesPaid(Value):
    """The house credited with the field's fees (once registration closed: no entry is
    refunded after it)."""

    amount: int


@value
class OverlayPaid(Value):
    """The house debited with the guarantee's overlay (the pool less the buy-ins), before
    any prize is paid."""

    amount: int


@value
class TournamentFinished(Value):
    winner: str
    at_ms: int


@value
class TournamentCancelled(Value):
    reason: str


TournamentEvent = (TournamentCreated | EntryRequested | EntryPaid | EntryRefused | Unregistered
                   | RefundPaid | RebuyRequested | RebuyPaid | RebuyRefused
                   | RebuyChipsAdded | SeedCommitted | TableOpened | PlayersSeated
                   | TournamentStarted | LevelStarted | RegistrationClosed | PlayersMoved
                   | PlayersEliminated | PrizeRequested | PrizePaid | FeesPaid | OverlayPaid
                   | TournamentFinished | TournamentCancelled)
