"""The audit behind `pokerctl bots` and the networked demo (services/pokerctl/bots_cmd.py):
a clean log passes; a log whose chips, decks or dealt cards were tampered with (and re-chained,
so the hash chain alone does not catch it) fails, naming the commit."""

from __future__ import annotations

import dataclasses
import hashlib
import random

from poker.events.v1 import events_pb2 as pb

from shared.infra.eventstore import Stored
from shared.infra.repository import build_commit, digest
from shared.poker import events as E
from shared.poker.driver import Dealer, random_policy, run_hand
from shared.poker.fold import fold
from shared.poker.options import table_options

from services.pokerctl.bots_cmd import audit_commits

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)


def played(hands: int = 3) -> list[list[object]]:
    """Decisions (lists of events) of a table: created, three seated, ``hands`` hands."""
    rng = random.Random(7)
    decisions: list[list[object]] = [[E.TableCreated("t1", OPTIONS)]]
    decisions += [[E.PlayerSeated(s, f"p{s}", 200, "d")] for s in (1, 2, 3)]
    table = fold([e for d in decisions for e in d])
    stacks = {1: 200, 2: 200, 3: 200}
    for hand_no in range(1, hands + 1):
        dealt_in = sorted((s, v) for s, v in stacks.items() if v)
        if len(dealt_in) < 2:
            break
        button = dealt_in[hand_no % len(dealt_in)][0]
        table, events = run_hand(table, hand_no, button, dealt_in, random_policy(rng), Dealer())
        decisions += [[e] for e in events]
        stacks.update({p.seat: p.stack for p in table.hand.players})
    return decisions


def commits(decisions: list[list[object]]) -> list[Stored]:
    """Chained commits, as the repository writes them."""
    out, prev = [], b""
    for i, events in enumerate(decisions, start=1):
        data = build_commit("t1", 0, f"c{i}", digest(i), "test", events, prev)
        commit = pb.Commit()
        commit.ParseFromString(data)
        prev = hashlib.sha256(commit.events[-1]).digest()
        out.append(Stored(i, data, f"t1:c{i}"))
    return out


def tampered(decisions, kind, change):
    """The first event of ``kind`` replaced by ``change(event)``."""
    out = []
    done = False
    for events in decisions:
        new = []
        for e in events:
            if not done and isinstance(e, kind):
                e, done = change(e), True
            new.append(e)
        out.append(new)
    assert done
    return out


def test_a_clean_log_passes():
    a = audit_commits("t1", commits(played()))
    assert a.ok and a.hands >= 1 and a.buy_ins == 600 and a.decks >= a.hands
    assert a.stacks + a.rake == 600


def test_a_deck_revealed_that_is_not_the_one_committed_fails():
    def swap(e):
        deck = list(e.decks[0])
        deck[-1], deck[-2] = deck[-2], deck[-1]
        return dataclasses.replace(e, decks=(tuple(deck),))
    a = audit_commits("t1", commits(tampered(played(), E.DeckRevealed, swap)))
    assert not a.ok and any("does not match its commitment" in x for x in a.errors)


def test_cards_dealt_that_are_not_the_decks_first_cards_fail():
    flop_seen = []

    def flop_reversed(e):  # the flop's cards in another order: a legal-looking hand
        if e.board and not flop_seen:
            flop_seen.append(1)
            return dataclasses.replace(e, board=tuple(reversed(e.board)))
        return e
    decisions = [[flop_reversed(e) if isinstance(e, E.CardsDealt) else e for e in d]
                 for d in played()]
    assert flop_seen
    a = audit_commits("t1", commits(decisions))
    assert any("not its first cards in order" in x for x in a.errors), a.errors


def test_the_rake_changed_is_caught():
    def more(e):
        return dataclasses.replace(e, amount=e.amount + 5)
    a = audit_commits("t1", commits(tampered(played(), E.RakeTaken, more)))
    assert not a.ok  # the fold refuses it, or the chips no longer add up


def test_a_broken_chain_stops_the_audit_at_that_commit():
    stored = commits(played())
    stored = stored[:5] + stored[6:]  # a commit removed
    a = audit_commits("t1", stored)
    assert not a.ok and a.errors[0].startswith("commit 7:") and "hash chain" in a.errors[0]
