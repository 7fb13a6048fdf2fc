"""The stud showing-hand value (shared/poker/stud.py) against its plain definition, for every
multiset of up to five ranks (four upcards and a common card), unknown cards included."""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement

from shared.poker.cards import DECK, UNKNOWN_CARD
from shared.poker.stud import showing_value


def reference(cards) -> tuple:
    counts = Counter(c.rank for c in cards if c.known)
    groups = sorted(((n, r) for r, n in counts.items()), reverse=True)
    shape = tuple(n for n, _ in groups)
    if shape[:1] == (4,):
        cat = 5
    elif shape[:1] == (3,):
        cat = 4
    elif shape[:2] == (2, 2):
        cat = 3
    elif shape[:1] == (2,):
        cat = 2
    else:
        cat = 1
    return (cat, tuple(r for _, r in groups))


def test_every_showing_hand_of_up_to_five_cards():
    ranks = range(13)
    checked = 0
    for size in range(6):
        for combo in combinations_with_replacement(ranks, size):
            if max(Counter(combo).values(), default=0) > 4:
                continue
            seen: Counter = Counter()
            cards = []
            for r in combo:
                cards.append(DECK[r * 4 + seen[r]])
                seen[r] += 1
            assert showing_value(cards) == reference(cards), cards
            assert showing_value(cards + [UNKNOWN_CARD]) == reference(cards + [UNKNOWN_CARD])
            checked += 1
    assert checked > 6000
