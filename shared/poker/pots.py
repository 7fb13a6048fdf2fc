"""Pots, side pots, uncalled bets, rake and splitting (RULES.md §5, §6, §8)."""

from __future__ import annotations

from collections.abc import Sequence

from .events import Pot
from .state import HandState, Player


def uncalled_bet(players: Sequence[Player]) -> tuple[int, int] | None:
    """The uncalled part of the round's highest bet: (seat, chips to return) or None.

    The highest bet is matched only up to the next highest bet anyone (folded players
    included) put in this round; the rest goes back to its owner.
    """
    top = second = 0
    top_seat = None
    for p in players:
        b = p.round_bet
        if b > top:
            top, second, top_seat = b, top, p.seat
        elif b > second:
            second = b
    if top_seat is None or top == second:
        return None
    return top_seat, top - second


def uncalled_stake(players: Sequence[Player]) -> tuple[int, int] | None:
    """After the betting: a live player's stake above everyone else's (an ante nobody else
    could match in full, say) was never called; it goes back. (seat, chips) or None."""
    stakes = sorted(((p.contributed - p.dead, p) for p in players), key=lambda x: x[0],
                    reverse=True)
    if len(stakes) < 2:
        return None
    (top, p), (second, _) = stakes[0], stakes[1]
    if top > second and not p.folded:
        return p.seat, top - second
    return None


def form_pots(players: Sequence[Player]) -> tuple[Pot, ...]:
    """Main pot and side pots from what each player put in.

    A player all in is eligible only for the pot up to their stake; further bets form side
    pots, each contested by its contributors. Folded players' chips stay in the pots they fed,
    and they are eligible for none. Money posted for the table rather than as a stake (a
    big-blind ante, a dead small blind) is dead: it goes to the main pot, which every live
    player contests, and makes its poster eligible for nothing more. Main pot first.
    """
    live = [p for p in players if not p.folded]
    stake = {p.seat: p.contributed - p.dead for p in players}
    top = max(stake[p.seat] for p in live)
    levels = sorted({stake[p.seat] for p in live if p.all_in and stake[p.seat] < top} | {top})
    pots: list[Pot] = []
    prev = 0
    for level in levels:
        amount = sum(min(c, level) - min(c, prev) for c in stake.values())
        eligible = tuple(p.seat for p in live if stake[p.seat] >= level)
        prev = level
        if amount == 0:
            continue
        if pots and eligible == pots[-1].eligible:
            pots[-1] = Pot(pots[-1].amount + amount, pots[-1].eligible)
        else:
            pots.append(Pot(amount, eligible))
    # Stakes above every live player's (a folded player's) stay in the last pot; dead money
    # goes to the main pot.
    over = sum(max(0, c - top) for c in stake.values())
    if over:
        pots[-1] = Pot(pots[-1].amount + over, pots[-1].eligible)
    dead = sum(p.dead for p in players)
    if dead:
        everyone = tuple(p.seat for p in live)
        if pots and pots[0].eligible == everyone:
            pots[0] = Pot(pots[0].amount + dead, everyone)
        else:  # a player all in from dead money alone contests only the dead money
            pots.insert(0, Pot(dead, everyone))
    return tuple(pots)


def rake_due(state: HandState) -> tuple[int, str]:
    """Rake = min(cap, percent x the total pot after uncalled bets are returned), rounded
    down to the chip unit; none if the hand ended before the flop (stud: on 3rd street) under
    ``no_flop_no_drop``. Returns the amount and the reason, for the record.
    """
    opts = state.options
    total = sum(p.amount for p in state.pots)
    if opts.no_flop_no_drop and state.street == 0:
        return 0, "no flop, no drop"
    amount = total * opts.rake_basis_points // 10_000
    cap = opts.rake_cap.for_players(len(state.players))
    if cap is not None and amount > cap:
        amount = cap
    amount -= amount % opts.chip_unit
    return amount, f"{opts.rake_basis_points / 100:g}% of {total}" + (
        f", capped at {cap}" if cap is not None and amount == cap else "")


def take_from_pots(pots: Sequence[Pot], amount: int) -> tuple[int, ...]:
    """Rake is taken from the main pot first, then the side pots in order."""
    taken = []
    for pot in pots:
        t = min(pot.amount, amount)
        taken.append(t)
        amount -= t
    return tuple(taken)


def split_evenly(amount: int, winners_in_odd_chip_order: Sequence[int],
                 unit: int) -> tuple[tuple[int, int], ...]:
    """Split ``amount`` among tied winners; remainder units go one each, in the given order.

    Chips smaller than a unit (only from stacks that were not whole units) go with the first.
    """
    k = len(winners_in_odd_chip_order)
    units, dust = divmod(amount, unit)
    base, extra = divmod(units, k)
    shares = []
    for i, seat in enumerate(winners_in_odd_chip_order):
        share = (base + (1 if i < extra else 0)) * unit + (dust if i == 0 else 0)
        shares.append((seat, share))
    return tuple(shares)


def halves(amount: int, unit: int) -> tuple[int, int]:
    """Hi/lo: each pot is halved; the odd unit between the halves goes to the high half."""
    low = (amount // unit // 2) * unit
    return amount - low, low
