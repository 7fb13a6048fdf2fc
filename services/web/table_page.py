"""The table page a player plays at (issue 26): its page (templates/table.html), what it reads from the log, the
wallet balance it shows, and the seat controls beside sit, act and leave (seats.py).

- ``/table/{id}``: the felt, followed live by ``/api/tables/{id}/events`` (fanout.py's views,
  held to limits.py's stream limits; a table the web follows already is served from the
  fan-out's latest view, asking nothing of the table service or the log). A table the log does not hold is a 404 page that says "no such
  table", found from the log alone (hands.HandPages.latest): nothing is asked of the table
  service for it, so no Watch is opened and no clock lease taken.
- ``/api/tables/{id}/log``: the hand the page shows as the log tells it, as of the latest
  view the web's fan-out holds of the table (never a version a client names), folded once and
  incrementally by hands.py: its actions (as shared/history.to_json reads them) and its
  result once it is over. (The game, structure, stakes, seats and buy-in range are the
  view's.) That hand is the running one from its first action on; before
  it, the last one that finished, so a hand's result stays on screen until the next hand's
  first action. Read without a key: a card no seat showed is never in it.
- ``/api/wallet``: the signed-in player's wallet balance (the wallet's Balance, as the web).
- ``/api/tables/{id}/sitout`` (``{"sit_out": bool}``) and ``/api/tables/{id}/topup``
  (``{"amount": n}``): the table service's SitOut and TopUp as the session's seat.

The phases and actions are put in a player's words by words.py."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable

import grpc
from poker.table.v1 import table_pb2
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from shared.history import to_json
from shared.history.record import HandRecord
from shared.infra.tablecache import TableCache
from shared.poker import events as E

from .hands import HandPages, NotShown, TableHands
from .limits import Rates, StreamLimits, TooManyStreams
from .pages import EventStream, page, too_many
from .replies import HEADERS, Refused, body_of, refused, whole
from .seats import Seats, command_id, table_id_of
from .sessions import Sessions, visitor
from .words import action_line

#: the log reads a visitor's table pages may make (one per commit the page sees, at most)
LOG_READS_PER_VISITOR = (20.0, 60)
#: the tables whose latest summary is kept (about 2 KB each)
KEPT_TABLES = 1024
def _shown_record(hands: TableHands) -> HandRecord | None:
    """The hand the page shows: the running one once it has an action (or is over), else the
    last that finished (its result stays up until the next hand's first action)."""
    running = hands.running_record()
    if running is None or running.complete or running.of(E.ActionTaken) \
            or running.of(E.PlayerTimedOut):
        return running
    return hands.final(running.hand_no - 1) or running


def hand_summary(record: HandRecord) -> dict:
    """The hand the page shows: its actions in order, in words, and its result when over
    (the board, each show, who won what from which pot)."""
    hand = to_json(record)
    actions = [{**a, "street": st["name"], "text": action_line(a)}
               for st in hand["streets"] for a in st["actions"]]
    out: dict = {"hand_no": hand["hand_no"], "actions": actions, "result": None}
    if hand["complete"]:
        wins = [{"seat": s["seat"], "name": s["name"], "amount": s["amount"],
                 "pot": "main pot" if a["pot_index"] == 0 else f"side pot {a['pot_index']}",
                 "hand": a["hand"]} for a in hand["awards"] for s in a["shares"] if s["amount"]]
        out["result"] = {"board": hand["board"], "shows": hand["shows"], "wins": wins,
                         "pots": hand["pots"], "rake": hand["rake"]}
    return out


def table_summary(hands: TableHands) -> dict:
    """The log's version the page has read to, and the hand it shows."""
    record = _shown_record(hands)
    return {"table_id": hands.table_id, "version": hands.lt.seq,
            "hand": hand_summary(record) if record is not None else None}


class TablePages:
    """The table page's routes over the hand caches (``hands``), the sessions, the seat
    routes (``seats``) and the wallet's balance of a player (``balance``; None: no wallet
    configured here)."""

    def __init__(self, hands: HandPages, sessions: Sessions, seats: Seats,
                 balance: Callable[[str], Awaitable[int]] | None,
                 limits: StreamLimits) -> None:
        self.hands, self.sessions, self.seats = hands, sessions, seats
        self.balance, self.limits = balance, limits
        self.reads = Rates(*LOG_READS_PER_VISITOR, "table log reads from you")
        #: table -> (version, the summary's JSON): the latest summary of each table asked,
        #: forgotten when unused for POKER_CACHE_IDLE_S (shared/infra/tablecache.py)
        self.kept: TableCache[tuple[int, bytes]] = TableCache(
            "web table summaries", limit=KEPT_TABLES, released=False)
        self.flights: dict[str, asyncio.Future[tuple[int, bytes]]] = {}  # reads under way

    def routes(self) -> list[Route]:
        """The page, its live stream and the routes beside them."""
        return [Route("/table/{table_id}", self.page),
                Route("/api/tables/{table_id}/events", self.events),
                Route("/api/tables/{table_id}/log", self.log),
                Route("/api/wallet", self.wallet),
                Route("/api/tables/{table_id}/sitout", self.sit_out, methods=["POST"]),
                Route("/api/tables/{table_id}/topup", self.top_up, methods=["POST"])]

    async def visited(self, request: Request, table_id: str) -> TableHands:
        """:meth:`exists`, charged to the request's visitor first (the log may be read:
        nobody reads it faster than their own rate, whatever the table ids they try)."""
        self.reads.take(await self.sessions.visitor_of(request))
        return await self.exists(table_id)

    async def exists(self, table_id: str) -> TableHands:
        """The table's hands folded to the log's end; Refused (404) for a table the log does
        not hold, (403) for a private one."""
        try:
            return await self.hands.latest(table_id)
        except NotShown as exc:
            raise Refused(exc.status, str(exc)) from None

    async def page(self, request: Request) -> Response:
        try:
            table_id = table_id_of(request)
            await self.visited(request, table_id)
        except Refused as exc:
            if exc.status != 404:
                return refused(exc)
            return page(request, "no_table.html", 404, table_id=table_id)
        return page(request, "table.html", table_id=table_id)

    async def events(self, request: Request) -> Response:
        """The table's live views (fanout.py: the seat's own for a session seated there,
        else a spectator's), held to the stream limits per visitor and per process."""
        try:
            table_id = table_id_of(request)
            session = await self.sessions.of(request)
        except Refused as exc:
            return refused(exc)
        try:
            release = self.limits.take(visitor(request, session))
        except TooManyStreams as exc:
            return too_many(exc)
        # A table whose spectators this process follows is there and public: a page that
        # connects again is served from the fan-out's latest view, asking nothing upstream.
        # Else the log, read at the visitor's own rate: no Watch of a table not there.
        seen = self.seats.fanout.spectators_view(table_id)
        try:
            if seen is None:
                await self.visited(request, table_id)
            subscriber = await self.seats.follow(table_id, session, seen)
        except BaseException as exc:
            release()
            if isinstance(exc, (grpc.aio.AioRpcError, Refused)):
                return refused(exc)
            raise
        return EventStream(self.seats.events_of(subscriber, session, table_id),
                           [subscriber.close, release])

    async def log(self, request: Request) -> Response:
        """The table's summary as of the latest view this process holds of the table (its
        fan-out's; none: the log's end). Whatever the request says is never taken for a
        version: a visitor can neither make the log be read again nor have a version served
        that the table has not reached. Every page of a table asks once per view, and the
        log is read about once per commit for all of them."""
        try:
            table_id = table_id_of(request)
            self.reads.take(await self.sessions.visitor_of(request))
            latest = self.seats.fanout.version(table_id)
            kept = self.kept.get(table_id)
            if kept is None or latest is None or kept[0] < latest:
                flight = self.flights.get(table_id)
                if flight is None:  # one read of the log at a time per table, for every page
                    flight = self.flights[table_id] = asyncio.ensure_future(
                        self._refresh(table_id))
                    flight.add_done_callback(lambda _: self.flights.pop(table_id, None))
                kept = await asyncio.shield(flight)
            return Response(kept[1], media_type="application/json", headers=HEADERS)
        except Refused as exc:
            return refused(exc)

    async def _refresh(self, table_id: str) -> tuple[int, bytes]:
        """The table's summary read to the log's end, kept."""
        summary = table_summary(await self.exists(table_id))
        kept = (summary["version"], json.dumps(summary, separators=(",", ":")).encode())
        self.kept.put(table_id, kept)
        return kept

    async def wallet(self, request: Request) -> Response:
        try:
            session = await self.sessions.of(request)
            if session is None:
                raise Refused(401, "sign in to see your wallet")
            if self.balance is None:
                raise Refused(503, "no wallet is configured for the web (POKER_WALLET_ADDR)")
            balance = await self.balance(session.subject)
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return JSONResponse({"player_id": session.subject, "balance": balance},
                            headers=HEADERS)

    async def sit_out(self, request: Request) -> Response:
        """SitOut as the session's seat: ``{"sit_out": true}`` to sit out, false to come
        back (waiting for the big blind)."""
        try:
            table_id = table_id_of(request)
            session = await self.seats.signed_in(request)
            body = await body_of(request)
            if type(body.get("sit_out")) is not bool:
                raise Refused(400, "sit_out is true (sit out) or false (come back)")

            def make(seat: int, token: str) -> table_pb2.SitOutRequest:
                return table_pb2.SitOutRequest(seat=_seat(table_id, seat, token),
                                               sit_out=body["sit_out"])
            reply = await self.seats.as_seat(session, table_id, self.seats.stub.SitOut, make)
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return JSONResponse({"version": reply.version}, headers=HEADERS)

    async def top_up(self, request: Request) -> Response:
        """TopUp as the session's seat: ``{"amount": n}`` more chips from the wallet."""
        try:
            table_id = table_id_of(request)
            session = await self.seats.signed_in(request)
            amount = whole(await body_of(request), "amount")

            def make(seat: int, token: str) -> table_pb2.TopUpRequest:
                return table_pb2.TopUpRequest(seat=_seat(table_id, seat, token), amount=amount)
            reply = await self.seats.as_seat(session, table_id, self.seats.stub.TopUp, make)
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return JSONResponse({"version": reply.version}, headers=HEADERS)


def _seat(table_id: str, seat: int, token: str) -> table_pb2.SeatRequest:
    return table_pb2.SeatRequest(table_id=table_id, seat=seat, seat_token=token,
                                 command_id=command_id())
