"""A signed-in player at a table through the web: sit down (or take back the seat they hold),
act, leave, and the table's live view as their seat sees it (fanout.py's seated stream).
Every call goes to the table service with the player's own token, so its rules decide and its
refusals come back as HTTP statuses (replies.refused).

The seat token is made here and kept in the player's session (sessions.py), never sent to the
page. When the session holds none for a seat the table shows as its subject's (a new sign-in,
another device, a token that expired), it gets a new one (sessions.resume_seat): when the
page follows the table and the session never held one there, when the player sits down, and
when they act (also after the table refused a token that another session replaced)."""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator

import grpc
from google.protobuf.json_format import MessageToDict
from poker.table.v1 import table_pb2
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from shared.infra.protomap import ACTION_KIND, GAME, STRUCTURE, UnknownEnumValue, legal_from
from shared.infra.retry import retrying
from shared.infra.seattokens import new_seat_token
from shared.poker.betting import raise_presets
from shared.poker.table import TABLE_ID

from .fanout import Fanout, Subscriber
from .replies import HEADERS, Refused, body_of, refused, whole
from .sessions import Session, Sessions, resume_if_seated, resume_seat, seat_of
from .words import view_words


def view_json(view: table_pb2.TableView) -> dict:
    """A table view for the page: the protobuf's fields (zero values included), the game and
    structure by name, the phase in a player's words (words.phase_words), and the amounts the
    amount box offers the player on turn (``presets``: the core's betting.raise_presets)."""
    out = MessageToDict(view, preserving_proto_field_name=True,
                        always_print_fields_with_no_presence=True)
    out["game"] = GAME.from_pb(view.game).value if view.game else ""
    out["structure"] = STRUCTURE.from_pb(view.structure).value if view.structure else ""
    out["phase_words"] = view_words(view, out["game"])
    out["presets"] = raise_presets(legal_from(view.to_act, view.legal), STRUCTURE.from_pb(
        view.structure), view.current_bet, view.pot) if view.to_act and view.structure else {}
    return out


def table_id_of(request: Request) -> str:
    """The request's table id, or Refused (400)."""
    table_id = request.path_params["table_id"]
    if not TABLE_ID.fullmatch(table_id):
        raise Refused(400, "a table id is 1 to 64 letters, digits, '_' or '-'")
    return table_id


def command_id() -> str:
    return f"web-{secrets.token_hex(8)}"


def _denied(exc: BaseException) -> bool:
    return isinstance(exc, grpc.aio.AioRpcError) and \
        exc.code() is grpc.StatusCode.PERMISSION_DENIED


class Seats:
    """The seat routes (sit, act, leave) and a page's live view, over the table service
    (``stub``), the sessions and the fan-out; ``own``: the web's own call metadata (a
    spectator's)."""

    def __init__(self, stub, sessions: Sessions, fanout: Fanout, own: tuple) -> None:
        self.stub, self.sessions, self.fanout, self.own = stub, sessions, fanout, own

    async def signed_in(self, request: Request) -> Session:
        session = await self.sessions.of(request)
        if session is None:
            raise Refused(401, "sign in first")
        return session

    async def _held(self, session: Session, table_id: str) -> tuple[Session, tuple[int, str]]:
        """The session's seat and token at the table, resumed if it holds none; Refused (403)
        when the player holds no seat there."""
        held = session.seat_token(table_id)
        if held is None:
            session = await resume_seat(self.stub, self.sessions, session, table_id)
            held = session.seat_token(table_id)
        if held is None:
            raise Refused(403, "you hold no seat at this table: sit down first")
        return session, held

    async def as_seat(self, session: Session, table_id: str, call, make):
        """``call(make(seat, token))`` as the session's seat; when the table refuses the token
        (another session of the player took the seat over), the seat is resumed and the call
        made once more."""
        session, held = await self._held(session, table_id)
        try:
            return await retrying(call, make(*held), session.metadata)
        except grpc.aio.AioRpcError as exc:
            if not _denied(exc):
                raise
        session = await self.sessions.store.set_seat(session, table_id, (held[0], ""))
        session, again = await self._held(session, table_id)
        if again == held:
            raise Refused(403, "you hold no seat at this table: sit down first")
        return await retrying(call, make(*again), session.metadata)

    async def sit(self, request: Request) -> Response:
        try:
            table_id = table_id_of(request)
            session = await self.signed_in(request)
            body = await body_of(request)
            seat = whole(body, "seat")
            mine = await seat_of(self.stub, session, table_id)
            if mine is not None:  # the player's seat already: taken back here if need be
                held = session.seat_token(table_id)
                if held is not None and held[0] == mine:
                    raise Refused(409, f"you already hold seat {mine} at this table")
                session = await resume_seat(self.stub, self.sessions, session, table_id)
                held = session.seat_token(table_id)
                if held is None:
                    raise Refused(409, f"seat {mine} could not be taken back: try again")
                return JSONResponse({"seat": held[0], "resumed": True}, headers=HEADERS)
            buy_in = whole(body, "buy_in")
            token, digest = new_seat_token()
            await retrying(self.stub.SitDown, table_pb2.SitDownRequest(
                table_id=table_id, seat=seat, buy_in=buy_in, seat_token_sha256=digest,
                command_id=command_id()), session.metadata)
            await self.sessions.store.set_seat(session, table_id, (seat, token))
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return JSONResponse({"seat": seat}, headers=HEADERS)

    async def act(self, request: Request) -> Response:
        try:
            table_id = table_id_of(request)
            session = await self.sessions.of(request)
            if session is None:
                raise Refused(403, "you hold no seat at this table: sit down first")
            body = await body_of(request)
            try:
                action = ACTION_KIND.to_pb(ACTION_KIND.from_pb_name(
                    "ACTION_KIND_" + str(body.get("action", "")).upper()))
            except UnknownEnumValue:
                raise Refused(400, f"{body.get('action')!r} is not an action") from None
            hand_no = whole(body, "hand_no")
            amount = whole(body, "amount") if body.get("amount") is not None else None

            def make(seat: int, seat_token: str) -> table_pb2.ActRequest:
                request = table_pb2.ActRequest(
                    table_id=table_id, seat=seat, seat_token=seat_token, hand_no=hand_no,
                    action=action, command_id=command_id())
                if amount is not None:
                    request.amount = amount
                return request
            reply = await self.as_seat(session, table_id, self.stub.Act, make)
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return JSONResponse(view_json(reply.view), headers=HEADERS)

    async def leave(self, request: Request) -> Response:
        try:
            table_id = table_id_of(request)
            session = await self.signed_in(request)
            await body_of(request)  # (same origin, JSON: no other site makes a player leave)

            def make(seat: int, seat_token: str) -> table_pb2.SeatRequest:
                return table_pb2.SeatRequest(table_id=table_id, seat=seat,
                                             seat_token=seat_token, command_id=command_id())
            reply = await self.as_seat(session, table_id, self.stub.Leave, make)
            fresh = await self.sessions.store.load(session.key)
            if fresh is not None and table_id in fresh.seats:  # kept without its token: a
                # seat left during a hand is the player's until the hand ends, and is not
                # to be taken back by merely following the table
                await self.sessions.store.set_seat(fresh, table_id, (fresh.seats[table_id][0],
                                                                     ""))
        except (Refused, grpc.aio.AioRpcError) as exc:
            return refused(exc)
        return JSONResponse(view_json(reply.view), headers=HEADERS)

    async def follow(self, table_id: str, session: Session | None,
                     seen: table_pb2.TableView | None = None) -> Subscriber:
        """The table's live view for a page: the seat's own when the session holds a seat
        there (resumed if it never held a token here), else a spectator's (also when the
        seat's token turns out to be refused: the session then marks it held elsewhere).
        ``seen``: the latest spectator's view the fan-out holds, if any: a subject it does
        not seat is a spectator without asking the table service."""
        if session is not None and table_id not in session.seats and (
                seen is None or any(s.player_id == session.subject for s in seen.seats)):
            session = await resume_if_seated(self.stub, self.sessions, session, table_id)
        held = session.seat_token(table_id) if session is not None else None
        if held is not None and session is not None:
            try:
                return await self.fanout.subscribe(table_id, session.metadata, *held)
            except grpc.aio.AioRpcError as exc:
                if not await self.refused_seat(session, table_id, held, exc):
                    raise
        return await self.fanout.subscribe(table_id, self.own)

    async def refused_seat(self, session: Session | None, table_id: str,
                           held: tuple[int, str], error: BaseException | None) -> bool:
        """Whether ``error`` is the table service saying the seat token no longer holds its
        seat (the player left, or another session took the seat over); if so the session
        keeps the seat without the token (not resumed by merely following the table)."""
        if session is None or error is None or not _denied(error):
            return False
        fresh = await self.sessions.store.load(session.key)
        if fresh is not None and fresh.seats.get(table_id) == held:
            await self.sessions.store.set_seat(fresh, table_id, (held[0], ""))
        return True

    async def events_of(self, subscriber: Subscriber, session: Session | None,
                        table_id: str) -> AsyncIterator[bytes]:
        """A page's table events; a seat's view that ends refused has the session keep the
        seat without its token, so that the page's EventSource, which connects again by
        itself, follows the table as a spectator."""
        async for event in subscriber:
            yield event
        _, seat, seat_token = subscriber.upstream.key
        if session is not None and seat_token:
            try:
                await self.refused_seat(session, table_id, (seat, seat_token),
                                        subscriber.error)
            except Refused:
                pass  # (the sessions are away: the page connects again, and is told)
