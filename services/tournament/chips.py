"""The director's part in rebuys and add-ons (shared/poker/tournament/decide.py ``rebuy``,
``add_on``): a player's stack for the rules, the price debited once, and the chips added at
the player's table between hands by a command named after the rebuy, so that a director
that takes over does each once."""

from __future__ import annotations

from functools import partial
from typing import Any, Protocol

from poker.tournament.v1 import tournament_pb2 as pb
from poker.wallet.v1 import wallet_pb2

from shared.poker.state import TableState
from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament.ranking import rebuy_key
from shared.poker.tournament.state import Rebuy, RebuyStatus, TournamentState

from . import names
from .log import TournamentLog
from .names import player_digest


class Director(Protocol):
    """What these steps use of the director (director.py's Director)."""

    log: TournamentLog
    tables: Any  # TournamentTablesStub, with the director's token
    wallet: Any  # WalletServiceStub

    async def table_state(self, table_id: str) -> TableState | None: ...


async def stack_of(d: Director, s: TournamentState, player: str) -> int | None:
    """``player``'s stack at the table the tournament seats them at (during a hand they
    play, the stack they started it with); None when no table seats them yet."""
    e = s.latest(player)
    view = await d.table_state(e.table_id) if e is not None and e.table_id else None
    seat = next((x for x in view.seats if x.player_id == player), None) if view else None
    if view is None or seat is None:
        return None
    if view.hand_running and view.hand is not None:
        started = {p.seat: p.start_stack for p in view.hand.players}
        return started.get(seat.seat, seat.stack)
    return seat.stack


async def debit(d: Director, tid: str, s: TournamentState, r: Rebuy) -> None:
    """A rebuy's (or add-on's) price, once (key ``rebuy/<player>/<n>``, ``addon/...``),
    then its outcome."""
    refusal = await names.debit(d.wallet, wallet_pb2.Transfer(
        account=wallet_pb2.Account(player_id=r.player_id), amount=s.price_of(r),
        idempotency_key=rebuy_key(tid, r),
        reference=f"tournament {tid} {'add-on' if r.add_on else 'rebuy'}"),
        "the wallet refused the rebuy")
    await d.log.execute(tid, f"rebuy.{player_digest(r.player_id)}.{r.rebuy_no}", lambda t: (
        D.settle_rebuy(t, r.player_id, r.rebuy_no, not refusal, refusal) if t else []))


async def add_chips(d: Director, tid: str, views: dict[str, TableState | None],
                    between: set[str]) -> bool:
    """Add each paid rebuy's (and add-on's) chips to its player's stack at a table between
    hands (before its busts are read: a player who rebought with no chips left plays on);
    whether any were added."""
    s = (await d.log.get(tid)).state
    assert s is not None
    added = False
    for r in s.rebuys:
        e = s.latest(r.player_id)
        if r.status is not RebuyStatus.PAID or r.added or e is None \
                or e.table_id not in between:
            continue
        view = views[e.table_id]
        seat = view.seat(e.seat) if view is not None else None
        if seat is None or seat.player_id != r.player_id:
            continue  # not at the seat the log gives yet: seated first, chips next
        who = player_digest(r.player_id)
        await d.tables.AddChips(pb.AddChipsRequest(
            table_id=e.table_id, seat=e.seat, player_id=r.player_id,
            chips=s.chips_of(r), command_id=f"{tid}.rebuy.{who}.{r.rebuy_no}"))
        await d.log.execute(tid, f"rebuychips.{who}.{r.rebuy_no}", partial(
            _added, r.player_id, r.rebuy_no, e.table_id))
        added = True
    return added


def _added(player: str, rebuy_no: int, table_id: str,
           t: TournamentState | None) -> list[E.TournamentEvent]:
    return D.rebuy_chips_added(t, player, rebuy_no, table_id) if t else []
