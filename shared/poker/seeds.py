"""The players' seeds (issue 29; the derivation: shared/poker/shuffle.py): when a seat may
commit to a seed for a hand, and when it may reveal it.

For hand ``M`` the order is fixed, so that nobody can choose a seed knowing another's:

1. a seated player commits to the SHA-256 of a seed for hand ``M`` any time before hand
   ``M - 1`` starts (:func:`commit_seed`): all the commitments are in the log first;
2. hand ``M - 1``'s ``DeckCommitted`` holds the server's commitment to its own seed of hand
   ``M`` (``next_seed_sha256``): the server is bound before any player seed is known;
3. from then until hand ``M`` starts, each player reveals their seed (:func:`reveal_seed`),
   which must hash to their commitment; a reveal once hand ``M`` has started is refused;
4. hand ``M``'s deck is derived from the server's seed and exactly the seeds revealed
   (shared/poker/decide.py ``commit_deck`` checks the list): a player who did not reveal is
   left out, and nothing waits for anyone.
"""

from __future__ import annotations

from . import events as E
from .errors import IllegalAction
from .shuffle import is_seed_hex, seed_digest
from .state import TableState


def _seated(table: TableState, seat: int) -> None:
    if table.seat(seat) is None:
        raise IllegalAction(f"seat {seat} is empty: only a seated player adds a seed")


def commit_seed(table: TableState, seat: int, hand_no: int,
                seed_sha256: str) -> list[E.SeedCommitted]:
    """Seat ``seat`` commits to a seed for hand ``hand_no``: the hand after next (the one
    after the hand that starts next), before that next hand starts."""
    _seated(table, seat)
    if not is_seed_hex(seed_sha256):
        raise IllegalAction("a seed's commitment is its SHA-256: 64 lowercase hex digits")
    if table.closing:
        raise IllegalAction("the table is closing: no more hands will be dealt")
    due = table.last_hand_no + 2
    if hand_no != due:
        raise IllegalAction(f"a seed is committed for hand {due} now (before hand {due - 1} "
                            f"starts), not for hand {hand_no}")
    if table.pending_seed(hand_no, seat) is not None:
        raise IllegalAction(f"seat {seat} has committed to a seed for hand {hand_no} already")
    return [E.SeedCommitted(seat, hand_no, seed_sha256)]


def reveal_seed(table: TableState, seat: int, hand_no: int,
                seed: str) -> list[E.SeedRevealed]:
    """Seat ``seat`` reveals its seed for hand ``hand_no``: after the server committed to its
    own seed for it (in the deck commitment of the hand before), before the hand starts."""
    _seated(table, seat)
    if not is_seed_hex(seed):
        raise IllegalAction("a seed is 32 bytes: 64 lowercase hex digits")
    if hand_no <= table.last_hand_no:
        raise IllegalAction(f"hand {hand_no} has started: a seed revealed after its hand "
                            f"started is refused (the deck was made without it)")
    if hand_no != table.last_hand_no + 1 or not table.next_seed_sha256:
        raise IllegalAction(f"the seed for hand {hand_no} is revealed once the server has "
                            f"committed to its own (hand {hand_no - 1}'s deck commitment)")
    pending = table.pending_seed(hand_no, seat)
    if pending is None:
        raise IllegalAction(f"seat {seat} committed to no seed for hand {hand_no}")
    if seed_digest(seed) != pending.seed_sha256:
        raise IllegalAction(f"the seed does not match seat {seat}'s commitment for hand "
                            f"{hand_no}")
    if pending.seed:
        return []  # (revealed already: nothing to record)
    return [E.SeedRevealed(seat, hand_no, seed)]
