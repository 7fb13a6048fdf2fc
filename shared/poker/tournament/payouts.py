"""Payout tables as percentages (basis points) by field size, and the prize pool.

The table is chosen by the number of entries when registration closes and locked then; the
pool is the buy-ins of every entry (re-entries included) and the rebuys, or the guarantee when that is more.
Amounts are integers: each place gets its share rounded down, and the units left over go one
each to the best places, first place first (so the prizes add up to the pool exactly).
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import InvalidOptions

#: (largest field, shares in basis points by place): the first row whose field is not below
#: the entries applies
PAYOUT_TABLES: tuple[tuple[int, tuple[int, ...]], ...] = (
    (4, (10000,)),
    (6, (6500, 3500)),
    (10, (5000, 3000, 2000)),
    (20, (4000, 3000, 2000, 1000)),
    (30, (3500, 2500, 1700, 1300, 1000)),
    (50, (3000, 2000, 1400, 1100, 900, 800, 800)),
    (100, (2500, 1600, 1200, 1000, 850, 750, 650, 550, 500, 400)),
)


def shares_for(entries: int) -> tuple[int, ...]:
    """The payout table (basis points by place) for a field of ``entries``."""
    for field, shares in PAYOUT_TABLES:
        if entries <= field:
            return shares
    raise InvalidOptions(f"no payout table for {entries} entries (at most "
                         f"{PAYOUT_TABLES[-1][0]})")


def prize_pool(entries: int, buy_in: int, guarantee: int, rebuy_money: int = 0) -> int:
    """The buy-ins of every entry and the rebuys' price, or the guarantee when more."""
    return max(entries * buy_in + rebuy_money, guarantee)


def prizes(pool: int, shares: Sequence[int]) -> tuple[int, ...]:
    """``pool`` split by ``shares`` (basis points adding up to 10000): rounded down, the rest
    one unit each to the best places.

    >>> prizes(1001, (5000, 3000, 2000))
    (501, 300, 200)
    """
    if sum(shares) != 10000:
        raise InvalidOptions("payout shares add up to 100%")
    amounts = [pool * s // 10000 for s in shares]
    for i in range(pool - sum(amounts)):
        amounts[i % len(amounts)] += 1
    return tuple(amounts)


def tied_prizes(prize_table: Sequence[int], best_place: int, players: Sequence[str]
                ) -> dict[str, int]:
    """Players eliminated in the same hand with the same starting stack share the prizes of
    the places they take (``best_place`` and the next ones), equally; the units left over go
    one each in the order of ``players`` (the director sorts them by id)."""
    places = range(best_place, best_place + len(players))
    total = sum(prize_table[p - 1] for p in places if p <= len(prize_table))
    each, rest = divmod(total, len(players))
    return {p: each + (1 if i < rest else 0) for i, p in enumerate(players)}
