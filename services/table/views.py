"""What a caller of the table service sees of a table: the protobuf view of a fold, for a
spectator or for one seat (its own hole cards, from the dealer: the log holds them sealed).

One maker for every path that shows a table: a command's reply, GetState and the hubs that
fan views out to watchers (hub.py). What may be seen is the pure core's rule
(shared/poker/view.py); this module only turns it into the API's message.
"""

from __future__ import annotations

from dataclasses import dataclass

import grpc
import structlog
from poker.dealer.v1 import dealer_pb2
from poker.table.v1 import table_pb2

from shared.infra.protomap import ACTION_KIND, GAME, STRUCTURE
from shared.infra.repository import LoadedTable
from shared.infra.retry import RetryPolicy, retrying
from shared.poker.cards import Card, card
from shared.poker.clock import TurnClock
from shared.poker.options import buy_in_limits, stakes_of
from shared.poker.state import TableState
from shared.poker.view import TableView, own_cards_of, public_view

from .driver import Driver

log = structlog.get_logger()

#: a view's own cards from the dealer: a quick try, else the view shows them unknown
OWN_CARDS = RetryPolicy(total_s=0.3, attempt_s=1.0, wait_for_ready=True)


def view_message(view: TableView, version: int, table: TableState,
                 clock: TurnClock | None = None, now_ms: int = 0) -> table_pb2.TableView:
    """The protobuf view; ``clock``: the decision being timed (``LoadedTable.clock``),
    ``now_ms``: the server's time as the view is made."""
    msg = table_pb2.TableView(
        table_id=view.table_id, version=version,
        game=GAME.to_pb(table.options.game), structure=STRUCTURE.to_pb(table.options.structure),
        hand_no=view.hand_no, phase=view.phase, button=view.button, street=view.street,
        board=[str(c) for c in view.board], pot=view.pot, current_bet=view.current_bet,
        to_act=view.to_act, rake=view.rake, paused=table.paused, closing=table.closing,
        closed=table.closed,
        stakes=stakes_of(table.options), max_seats=table.options.max_seats)
    msg.min_buy_in, msg.max_buy_in = buy_in_limits(table.options)
    for pot in view.pots:
        msg.pots.add(amount=pot.amount, eligible=pot.eligible)
    for s in view.seats:
        msg.seats.add(seat=s.seat, player_id=s.player_id, name=s.name, stack=s.stack, bet=s.bet,
                      in_hand=s.in_hand, folded=s.folded, all_in=s.all_in,
                      sitting_out=s.sitting_out, cards=[str(c) for c in s.cards],
                      shown=s.shown, connected=_connected(table, s.seat),
                      pending=_pending(table, s.seat))
    if view.legal is not None:
        legal = view.legal
        msg.legal.CopyFrom(table_pb2.Legal(
            can_fold=legal.can_fold, can_check=legal.can_check, call=legal.call,
            bring_in=legal.bring_in,
            raise_kind=ACTION_KIND.to_pb(legal.raise_kind) if legal.raise_kind else None,
            raise_sizes=legal.raise_sizes, min_to=legal.min_to, max_to=legal.max_to))
    if clock is not None and view.to_act == clock.seat and view.hand_no == clock.hand_no:
        msg.deadline_unix_ms = clock.deadline_ms(table.options)
        msg.countdown_unix_ms = clock.countdown_ms(table.options)
        msg.clock_bonus = clock.bonus
    msg.server_unix_ms = now_ms
    return msg


def _pending(table: TableState, seat: int) -> int:
    saga = table.seat_saga(seat)
    return saga.amount if saga is not None else 0


def _connected(table: TableState, seat: int) -> bool:
    s = table.seat(seat)
    return s is not None and s.connected


@dataclass(frozen=True, slots=True)
class Public:
    """A version's public view: the core's, and its message."""

    view: TableView
    message: table_pb2.TableView


class Views:
    """Views of the folds of one table-service process: a spectator's, or seat ``viewer``'s
    with the cards the dealer handed to that seat (kept by the driver from each deal's reply,
    asked for with ``SeatCards`` when a view needs them first)."""

    def __init__(self, driver: Driver, now_ms) -> None:
        self.driver = driver
        self.now_ms = now_ms

    async def own_cards(self, lt: LoadedTable, viewer: int | None,
                        player: str) -> tuple[Card, ...] | None:
        """Seat ``viewer``'s cards in the running hand (``player``: the seat's holder, as
        verified by the caller of this: the dealer checks it too)."""
        table = lt.state
        hand = table.hand if table is not None else None
        if viewer is None or hand is None or table is None:
            return None
        held = next((p for p in hand.players if p.seat == viewer), None)
        if held is None or all(c.known for c in held.hole):
            return None
        table_id = table.table_id
        own = self.driver.own_cards.get(table_id, hand.hand_no, viewer)
        if own is None or len(own) != len(held.hole):
            try:
                reply = await retrying(
                    self.driver.peers.dealer.SeatCards, dealer_pb2.SeatCardsRequest(
                        table_id=table_id, hand_no=hand.hand_no, seat=viewer,
                        player_id=player, version=lt.seq), policy=OWN_CARDS)
            except grpc.aio.AioRpcError as exc:
                # The hand moved on meanwhile, or the dealer is away: this view shows the
                # seat's cards as unknown rather than wait; the next view has them.
                log.warning("own cards unavailable", table_id=table_id, seat=viewer,
                            code=exc.code().name, reason=exc.details())
                return None
            own = tuple(card(c) for c in reply.cards)
            self.driver.own_cards.put(table_id, hand.hand_no, viewer, own)
        return own

    def public(self, lt: LoadedTable) -> Public:
        """The table of ``lt`` as a spectator sees it (made once for every watcher of a
        version, hub.py)."""
        assert lt.state is not None
        view = public_view(lt.state)
        return Public(view, view_message(view, lt.seq, lt.state, lt.clock, self.now_ms()))

    async def seat(self, lt: LoadedTable, public: Public, viewer: int,
                   player: str) -> table_pb2.TableView:
        """Seat ``viewer``'s view from the public one: the same message but for the seat's
        own cards (shared/poker/view.py ``own_cards_of``, as ``seat_view`` has them);
        ``player``: the seat's holder, checked by the caller."""
        assert lt.state is not None
        own = await self.own_cards(lt, viewer, player)
        cards = own_cards_of(lt.state, viewer, own)
        i = next((i for i, s in enumerate(public.view.seats) if s.seat == viewer), -1)
        if cards is None or i < 0 or cards == public.view.seats[i].cards:
            return public.message  # nothing of its own to see (yet)
        msg = table_pb2.TableView()
        msg.CopyFrom(public.message)
        msg.seats[i].cards[:] = [str(c) for c in cards]
        return msg

    def now(self, view: table_pb2.TableView) -> table_pb2.TableView:
        """A copy of a view (perhaps shared, made a moment ago) with the server's time now:
        what a client draws the clock from."""
        out = table_pb2.TableView()
        out.CopyFrom(view)
        out.server_unix_ms = self.now_ms()
        return out
