"""The dealer's part of a player's hand receipt (shared/tlog/receipt.py): the proofs of the
cards the player saw in a finished hand, against the positions roots it committed to.

Only the dealer holds a hand's key (its vault, for a day: shared/infra/vault.py), from which
the positions' salts come. After the refusals its fold of the table answers (no such hand,
one still running, a deck gone from the vault), it reads the table's log, opens that hand's
cards with the key (from the hand's first commit to its last, when the table service names
the first from the hand's leaf and the vault lists who was dealt in),
and answers for the seat the player held in the hand the cards that seat saw at the table
(shared/history/render.py ``seen_cards``): nothing else leaves.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace

from poker.dealer.v1 import dealer_pb2

from shared.history.log import finished_hand, table_hands
from shared.history.record import HandRecord, hands
from shared.history.render import seen_cards
from shared.infra.eventstore import EventStore
from shared.infra.repository import UnknownTable, read_commit
from shared.infra.rpc import BadRequest, Denied, check_table_id
from shared.infra.secrecy import DealerKeyring, HandKey
from shared.infra.vault import DeckVault, HandDecks
from shared.poker import events as E
from shared.poker.errors import IllegalAction
from shared.poker.state import TableState
from shared.tlog.receipt import card_proofs

from .seeding import Seeds


def _the_hand(records: list[HandRecord], table_id: str, hand_no: int) -> HandRecord:
    for r in records:
        if r.hand_no == hand_no:
            return r
    raise UnknownTable(f"table {table_id} has no hand {hand_no}")


async def _hand_record(store: EventStore, table: TableState, held: HandDecks | None,
                       request: dealer_pb2.HandCardsRequest) -> HandRecord:
    """The hand's record, its cards opened with its key if the vault still holds it. Given
    the hand's first commit and the vault's list of who was dealt in, the log is read from
    that commit on; else from its start (who sat where comes from the seating events)."""
    keyring = DealerKeyring(1)
    if held is not None:
        keyring.add(HandKey(request.table_id, request.hand_no, held.key))
    if request.first_seq > 0 and held is not None and held.players:
        events: list[object] = []
        async for commit in store.commits(request.table_id, request.first_seq - 1):
            events += read_commit(commit).events(keyring)
            if isinstance(events[-1], E.DeckRevealed):  # the hand's last event: read no
                break  # further (a batch past it at most, however long the table played on)
        record = _the_hand(hands(events, options=table.options, table_id=request.table_id),
                           request.table_id, request.hand_no)
        return replace(record, players=dict(held.players))
    stored = await store.read(request.table_id)  # who was dealt in: the log alone says
    # folded in a worker thread: a long table's whole log would hold the loop, and with it
    # every table this dealer deals, for seconds
    return await asyncio.to_thread(_hand_of, stored, keyring, request.table_id,
                                   request.hand_no)


def _hand_of(stored: list, keyring: DealerKeyring, table_id: str, hand_no: int) -> HandRecord:
    """The hand ``hand_no`` of a table's whole log."""
    return _the_hand(table_hands(stored, keyring), table_id, hand_no)


async def hand_cards(store: EventStore, vault: DeckVault, seeds: Seeds, table: TableState,
                     request: dealer_pb2.HandCardsRequest) -> dealer_pb2.HandCardsReply:
    """The cards the player saw in the hand, with their proofs; and, once the table has
    closed, the server's seed of a hand derived from seeds (seeding.py). ``table``: the
    dealer's fold of the table, which answers the cheap refusals (no such hand, a hand
    running, a deck gone from the vault) before the table's log is read."""
    check_table_id(request.table_id)
    if request.hand_no < 1:
        raise BadRequest("a hand is a hand number from 1")
    finished_hand(table, request.table_id, request.hand_no)
    held = await vault.get(request.table_id, request.hand_no)
    if held is None and not table.closed:
        raise IllegalAction(f"hand {request.hand_no}'s deck has left the dealer's vault "
                            f"(kept a day): no receipt can be made for it any more")
    record = await _hand_record(store, table, held[0] if held is not None else None, request)
    seat = next((s for s, p in sorted(record.players.items()) if p == request.player_id), None)
    if seat is None:
        raise Denied(f"hand {request.hand_no} of table {request.table_id} was not dealt to "
                     f"you: a receipt is for a player who was dealt in")
    commits = record.of(E.DeckCommitted)
    published = ""
    if table.closed and commits and commits[0].shuffle:
        published = await seeds.published(request.table_id, request.hand_no)
    if held is None and not published:
        raise IllegalAction(f"hand {request.hand_no}'s deck has left the dealer's vault "
                            f"(kept a day): no receipt can be made for it any more")
    reply = dealer_pb2.HandCardsReply(seat=seat, deck_sizes=[e.deck_size for e in commits],
                                      server_seed=published)
    if held is not None:  # (after a day, the seed alone: the cards' proofs need the hand key)
        decks = held[0]
        for c in card_proofs(decks.decks, decks.key, seen_cards(record, seat)):
            reply.cards.add(deck=c.deck, position=c.position, card=str(c.card), salt=c.salt,
                            proof=list(c.proof), seen=c.seen)
    return reply
