"""Places and prizes (TDA rule 12: players eliminated in the same hand are ranked by the
chips each had at the start of that hand; equal stacks tie and share the prizes of the places
they take).

Places count from the field when registration closed: the first entries out take the last
places. Re-entries are entries: a player may hold a place for each.
"""

from __future__ import annotations

import hashlib

from ..evolve import Value, value
from .payouts import tied_prizes
from .state import EntryStatus, Rebuy, RebuyStatus, TournamentState


@value
class Placing(Value):
    player_id: str
    entry_no: int
    place: int
    prize: int


def placings(state: TournamentState) -> list[Placing]:
    """Every entry out so far with its place and prize (and the winner's, when finished);
    empty until registration closes (until then the field, and so the places, may grow)."""
    if not state.registration_closed:
        return []
    out: list[Placing] = []
    out_before = 0
    field = state.paid_entries()
    for hand in state.busts:
        busts = sorted(hand.busts, key=lambda b: -b.start_stack)
        best = field - out_before - len(busts) + 1
        i = 0
        while i < len(busts):
            tied = [b for b in busts[i:] if b.start_stack == busts[i].start_stack]
            shares = tied_prizes(state.prizes, best + i, sorted(b.player_id for b in tied))
            out += [Placing(b.player_id, b.entry_no, best + i, shares[b.player_id])
                    for b in tied]
            i += len(tied)
        out_before += len(busts)
    left = [e for e in state.entries if e.status is EntryStatus.PAID]
    if len(left) == 1:
        out.append(Placing(left[0].player_id, left[0].entry_no, 1,
                           state.prizes[0] if state.prizes else 0))
    return out


def prizes_payable(state: TournamentState) -> bool:
    """Prizes are paid from a funded pool: not before the house has paid the overlay."""
    return state.overlay_paid == state.house_due()[1]


@value
class MoneyAudit(Value):
    """A tournament's money (the wallet's units), from its log: buy-ins (buy-in and fee of
    every entry that paid and was not refunded) and the overlay the house paid in equal the
    prizes paid, the fees credited to the house and what the tournament holds (prizes not
    paid yet, fees not credited yet). What it holds of the pool is never below nothing: no
    prize is paid from an overlay the house has not paid."""

    buy_ins: int
    prizes: int  # prizes the wallet paid
    fees: int  # credited to the house
    held: int
    overlay: int  # debited of the house
    pool_held: int  # of ``held``: the pool (buy-ins less fees, and the overlay) not paid out
    rebuys: int = 0  # the price of the rebuys and add-ons the wallet paid

    @property
    def balanced(self) -> bool:
        """buy-ins + rebuys + overlay = prizes + fees + held, nothing held below 0."""
        return (self.buy_ins + self.rebuys + self.overlay
                == self.prizes + self.fees + self.held
                and self.held >= 0 and self.pool_held >= 0)


def money_audit(state: TournamentState) -> MoneyAudit:
    """The tournament's identity: buy-ins (and fees) + rebuys and add-ons + overlay = prizes
    + fees + held (a rebuy's or add-on's price goes to the pool whole)."""
    st = state.structure
    kept = sum(e.status in (EntryStatus.PAID, EntryStatus.BUSTED) for e in state.entries)
    rebuys = state.rebuy_money()
    paid = {(e.player_id, e.entry_no) for e in state.entries if e.prize_paid}
    prizes = sum(p.amount for p in state.prize_requests if (p.player_id, p.entry_no) in paid)
    pool_held = kept * st.buy_in + rebuys + state.overlay_paid - prizes
    held = pool_held + kept * st.fee - state.fees_paid
    return MoneyAudit(kept * (st.buy_in + st.fee), prizes, state.fees_paid, held,
                      state.overlay_paid, pool_held, rebuys)


def wallet_key(tournament_id: str, kind: str, player: str, n: int) -> str:
    """The wallet's idempotency key of one of a tournament's movements: ``kind`` entry (the
    buy-in and fee of entry ``n``), refund, or prize (of entry ``n``), or rebuy (the
    player's ``n``-th); the player as a digest
    (a key is printable ASCII)."""
    who = hashlib.sha256(player.encode()).hexdigest()[:16]
    return f"tournament/{tournament_id}/{kind}/{who}/{n}"


def rebuy_key(tournament_id: str, r: Rebuy) -> str:
    """The wallet's idempotency key of a rebuy's price (``rebuy``) or an add-on's
    (``addon``), by the player's number for it."""
    return wallet_key(tournament_id, "addon" if r.add_on else "rebuy", r.player_id,
                      r.rebuy_no)


def wallet_movements(state: TournamentState) -> list[tuple[str, str, bool, int]]:
    """What the wallet must hold for the tournament, from its log: (key, player, debit?,
    amount) of every buy-in settled, refund paid and prize paid, and the house's fees and
    overlay (player "": the house)."""
    st, out = state.structure, []
    cost = st.buy_in + st.fee
    for e in state.entries:
        if e.status in (EntryStatus.PAID, EntryStatus.BUSTED, EntryStatus.WITHDRAWN) and cost:
            out.append((wallet_key(state.tournament_id, "entry", e.player_id, e.entry_no),
                        e.player_id, True, cost))
        if e.refunded and cost:
            out.append((wallet_key(state.tournament_id, "refund", e.player_id, e.entry_no),
                        e.player_id, False, cost))
    for r in state.rebuys:
        if r.status is RebuyStatus.PAID and state.price_of(r):
            out.append((rebuy_key(state.tournament_id, r), r.player_id, True,
                        state.price_of(r)))
    for p in state.prize_requests:
        if state.entry(p.player_id, p.entry_no).prize_paid and p.amount:
            out.append((wallet_key(state.tournament_id, "prize", p.player_id, p.entry_no),
                        p.player_id, False, p.amount))
    if state.fees_paid:
        out.append((house_key(state.tournament_id, "fees"), "", False, state.fees_paid))
    if state.overlay_paid:
        out.append((house_key(state.tournament_id, "overlay"), "", True, state.overlay_paid))
    return out


def house_key(tournament_id: str, kind: str) -> str:
    """The wallet's idempotency key of the house's movement for a tournament: ``fees``
    (credited) or ``overlay`` (debited)."""
    return f"tournament/{tournament_id}/{kind}/house"
