"""Seven-card stud specifics (RULES.md §3, §4): who brings in, who acts first, open pairs."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from .cards import Card, SuitOrder, card_strength
from .state import Player


def bring_in_seat(players: Iterable[Player], order: SuitOrder) -> int | None:
    """The lowest upcard brings in; ties by ``suit_order``; the ace is high for this.

    Unknown upcards (a hand history that did not record them) are never taken as the lowest.
    """
    best: tuple[tuple[int, int], int] | None = None
    for p in players:
        if p.folded:
            continue
        up = p.upcards
        if not up or not up[0].known:
            continue
        key = (card_strength(up[0], order), p.seat)
        if best is None or key[0] < best[0]:
            best = key
    return best[1] if best else None


def showing_value(cards: Sequence[Card]) -> tuple[int, tuple[int, ...]]:
    """Rank of the cards showing: quads > trips > two pair > pair > high card, with kickers.

    No straights or flushes, the ace high, suits ignored (RULES §4). Comparable tuples.
    """
    counts = Counter(c.rank for c in cards if c.known)
    groups = sorted([(n, r) for r, n in counts.items()], reverse=True)  # (count, rank)
    most = groups[0][0] if groups else 0
    if most == 4:
        cat = 5
    elif most == 3:
        cat = 4
    elif most == 2:
        cat = 3 if len(groups) > 1 and groups[1][0] == 2 else 2  # two pair, or a pair
    else:
        cat = 1
    return (cat, tuple([r for _, r in groups]))


def first_to_act_showing(players: Sequence[Player], board: Sequence[Card],
                         button: int) -> int | None:
    """Later streets: the best showing hand acts first (a common card counts for everyone);
    a tie goes to the first of them clockwise from the button. ``players`` must be given
    clockwise from the button's left.
    """
    best_seat, best_value = None, None
    for p in players:
        if p.folded:
            continue
        value = showing_value(p.upcards + tuple(board))
        if best_value is None or value > best_value:
            best_seat, best_value = p.seat, value
    return best_seat


def open_pair_showing(players: Iterable[Player]) -> bool:
    """Any live board showing a pair (stud high 4th street option)."""
    for p in players:
        ranks = [c.rank for c in p.upcards if c.known]
        if len(ranks) != len(set(ranks)):
            return True
    return False
