"""The dealer's part of a receipt refuses what its fold of the table can tell before it reads
the table's log (issue 29's review: it read the whole log first for every request): a hand the
table has not reached, a hand still running, a hand whose deck left the vault at a table still
open, a hand number below 1. The log is read only to learn who was dealt in. Real
nats-server, a sample table's log."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import replace

import pytest
from poker.dealer.v1 import dealer_pb2

from services.dealer import receipts
from services.dealer.receipts import _hand_record, hand_cards
from services.dealer.seeding import Seeds
from shared.audit.sample import chain, play_decisions
from shared.infra.commits import read_envelopes
from shared.infra.repository import UnknownTable
from shared.infra.rpc import BadRequest
from shared.infra.vault import DeckVault, HandDecks
from shared.poker import events as E
from shared.poker.cards import DECK
from shared.poker.errors import IllegalAction
from shared.poker.fold import fold
from shared.poker.options import table_options
from shared.tlog.hands import HandLeaf, HandLeaves

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


async def test_a_hands_cards_are_read_from_its_first_commit(store, monkeypatch):
    """Given the hand's first commit (the table service reads it in the hand's leaf) and the
    vault's list of who was dealt in, the dealer reads the log from that commit on (the
    store's own read, watched for where it starts) and gets the hand as the whole log has
    it; without them it reads from the start, and folds that whole log in a worker thread (the
dealer's loop deals every table meanwhile)."""
    options = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
    decisions = list(play_decisions(TABLE, options, hands=4, seats=3, seed=5))
    last = 0
    leaves = HandLeaves(TABLE)
    for stored in chain(TABLE, decisions, options=options):
        last, _ = await store.append(TABLE, stored.data, last, stored.msg_id)
        commit, envelopes = read_envelopes(stored.data)
        leaves.feed(stored, commit.events, envelopes)
    table = fold([e for d in decisions for e in d])
    key = hashlib.sha256(f"{TABLE}|3|sample hand key".encode()).digest()
    held = HandDecks((DECK,), ("s",), key)
    starts: list[int] = []
    commits = store.commits  # (every read of a table's commits goes through it)

    def watched(table_id: str, after_seq: int = 0):
        starts.append(after_seq)
        return commits(table_id, after_seq)

    monkeypatch.setattr(store, "commits", watched)
    folded_in: list[threading.Thread] = []  # the whole log's fold runs off the loop's thread
    whole_log = receipts.table_hands

    def folding(*args):
        folded_in.append(threading.current_thread())
        return whole_log(*args)

    monkeypatch.setattr(receipts, "table_hands", folding)
    whole = await _hand_record(store, table, held, dealer_pb2.HandCardsRequest(
        table_id=TABLE, hand_no=3, player_id="p1"))  # no first commit given
    held = replace(held, players=tuple(sorted(whole.players.items())))  # as CommitDeck keeps
    (leaf,) = [HandLeaf.parse(x) for x in leaves.leaves if HandLeaf.parse(x).hand_no == 3]
    assert leaf.first_seq > 10
    ranged = await _hand_record(store, table, held, dealer_pb2.HandCardsRequest(
        table_id=TABLE, hand_no=3, player_id="p1", first_seq=leaf.first_seq))
    assert starts == [0, leaf.first_seq - 1]
    assert folded_in and threading.main_thread() not in folded_in
    assert ranged.events == whole.events and ranged.hand_no == 3
    assert ranged.players == whole.players
    assert any(c.known for e in ranged.of(E.CardsDealt) for h in e.hole for c in h.cards)
