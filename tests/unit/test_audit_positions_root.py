"""The audit checks each deck's positions root (what players' receipts prove against,
shared/tlog/receipt.py) against the revealed deck and the hand's key: the right root passes,
a root of another order fails at the reveal; a log without roots audits as before."""

from __future__ import annotations

import dataclasses
import hashlib

from shared.audit import audit_table
from shared.audit.sample import chain, play_decisions, sample_keyring
from shared.poker import events as E
from shared.poker.options import table_options
from shared.tlog.receipt import positions_root

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)


def with_root(decisions: list[list], order=lambda deck: deck) -> list[list]:
    """The first hand's commitment with the positions root of ``order(revealed deck)``."""
    c = next(i for i, d in enumerate(decisions) if isinstance(d[0], E.DeckCommitted))
    r = next(i for i, d in enumerate(decisions) if isinstance(d[0], E.DeckRevealed))
    hand_no = next(e.hand_no for d in decisions for e in d if isinstance(e, E.HandStarted))
    key = hashlib.sha256(f"t1|{hand_no}|sample hand key".encode()).digest()  # sample.chain's
    root = positions_root(order(decisions[r][0].decks[0]), key, 0)
    out = list(decisions)
    out[c] = [dataclasses.replace(decisions[c][0], positions_root=root)]
    return out


def test_the_positions_root_is_checked_against_the_revealed_deck():
    decisions = list(play_decisions("t1", OPTIONS, hands=3, seats=3, seed=3))
    assert audit_table("t1", list(chain("t1", decisions, options=OPTIONS)), sample_keyring()).ok
    good = audit_table("t1", list(chain("t1", with_root(decisions), options=OPTIONS)),
                       sample_keyring())
    assert good.ok, good.failure
    swapped = with_root(decisions, lambda d: d[:-2] + (d[-1], d[-2]))  # undealt cards
    bad = audit_table("t1", list(chain("t1", swapped, options=OPTIONS)), sample_keyring())
    assert not bad.ok and bad.failure.event_type == "DeckRevealed"
    assert "positions root" in bad.failure.reason
