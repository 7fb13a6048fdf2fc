"""The dealer's part of a receipt refuses what its fold of the table can tell before it reads
the table's log (issue 29's review: it read the whole log first for every request): a hand the
table has not reached, a hand still running, a hand whose deck left the vault at a table still
open, a hand number below 1. The log is read only to learn who was dealt in. Real
nats-server, a sample table's log."""

from __future__ import annotations

import pytest
from poker.dealer.v1 import dealer_pb2

from services.dealer.receipts import hand_cards
from services.dealer.seeding import Seeds
from shared.audit.sample import chain, play_decisions
from shared.infra.repository import UnknownTable
from shared.infra.rpc import BadRequest
from shared.infra.vault import DeckVault
from shared.poker import events as E
from shared.poker.errors import IllegalAction
from shared.poker.fold import fold
from shared.poker.options import table_options

TABLE = "cheap"


async def test_the_cheap_refusals_come_before_the_log_is_read(store):
    options = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
    decisions = list(play_decisions(TABLE, options, hands=3, seats=3, seed=4))
    last = 0
    for stored in chain(TABLE, decisions, options=options):
        last, _ = await store.append(TABLE, stored.data, last, stored.msg_id)
    events = [e for d in decisions for e in d]
    done = fold(events)
    running = fold(events[:next(i for i, e in enumerate(events)
                                if isinstance(e, E.HandStarted) and e.hand_no == 3) + 2])
    assert done.last_hand_no == 3 and not done.hand_running and running.hand_running
    vault = await DeckVault.open(store.js)
    reads = store.reads
    for table, hand, refusal, words in (
            (done, 4, UnknownTable, "no hand 4"),
            (running, 3, IllegalAction, "not finished"),
            (done, 2, IllegalAction, "left the dealer's vault"),  # (sample decks: none)
            (done, 0, BadRequest, "from 1")):
        with pytest.raises(refusal, match=words):
            await hand_cards(store, vault, Seeds(vault), table, dealer_pb2.HandCardsRequest(
                table_id=TABLE, hand_no=hand, player_id="p1"))
    assert store.reads == reads  # not one read of the log
