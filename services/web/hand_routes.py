"""The routes of a hand that is over: its page, JSON, PokerStars text and PHH
(``/table/{id}/hands/{n}`` and under ``/api/tables/{id}/hands/{n}``: hands.py's caches, held
to a rate per visitor), and the compliance replay and evidence file for the compliance role
(``/compliance/...``, ``/api/compliance/...``: compliance.py, each view recorded in the access
log first)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from shared.audit.access import AccessNotRecorded
from shared.infra.identity import COMPLIANCE

from .compliance import Replays
from .hands import HandPages, NotShown, Rendered
from .limits import Rates
from .pages import download, page
from .replies import HEADERS, Refused, refused
from .seats import table_id_of
from .sessions import Sessions

HAND = "/table/{table_id}/hands/{hand_no:int}"
API = "/api/tables/{table_id}/hands/{hand_no:int}"
COMPLIANCE_API = "/api/compliance/tables/{table_id}/hands/{hand_no:int}"


class HandRoutes:
    """A finished hand's routes over the hand caches (``hands``), the visitors' rate of hand
    pages, the sessions and the compliance replays."""

    def __init__(self, hands: HandPages, rate: Rates, sessions: Sessions,
                 replays: Replays) -> None:
        self.hands, self.rate, self.sessions, self.replays = hands, rate, sessions, replays

    def routes(self) -> list[Route]:
        return [Route(HAND, self.page), Route(API, self.json),
                Route(API + "/pokerstars.txt", self.text), Route(API + "/hand.phh", self.phh)]

    def compliance_routes(self) -> list[Route]:
        return [Route("/compliance/tables/{table_id}/hands/{hand_no:int}",
                      self.compliance_page),
                Route(COMPLIANCE_API, self.compliance_json),
                Route(COMPLIANCE_API + "/evidence.json", self.evidence_file)]

    async def hand_of(self, request: Request) -> Rendered | Response:
        """The request's hand rendered (hands.py), or the refusal to send."""
        try:
            table_id = table_id_of(request)
            hand_no = request.path_params["hand_no"]
            if not 1 <= hand_no <= 10**12:
                raise Refused(400, "a hand number is a whole number from 1")
            self.rate.take(await self.sessions.visitor_of(request))
            return await self.hands.get(table_id, hand_no)
        except Refused as exc:
            return refused(exc)
        except NotShown as exc:
            return refused(Refused(exc.status, str(exc)))

    async def page(self, request: Request) -> Response:
        hand = await self.hand_of(request)
        if isinstance(hand, Response):
            return hand
        try:  # the compliance role is shown the way to the replay; nobody else
            session = await self.sessions.of(request)
        except Refused:
            session = None
        compliance = session is not None and session.principal.has(COMPLIANCE)
        return page(request, "hand.html", table_id=hand.table_id, hand_no=hand.hand_no,
                    text=hand.text, compliance=compliance)

    async def json(self, request: Request) -> Response:
        hand = await self.hand_of(request)
        if isinstance(hand, Response):
            return hand
        return Response(hand.json, media_type="application/json", headers=HEADERS)

    async def text(self, request: Request) -> Response:
        hand = await self.hand_of(request)
        if isinstance(hand, Response):
            return hand
        return download(hand.text + "\n", f"{hand.table_id}-{hand.hand_no}.txt", "text/plain")

    async def phh(self, request: Request) -> Response:
        hand = await self.hand_of(request)
        if isinstance(hand, Response):
            return hand
        return download(hand.phh, f"{hand.table_id}-{hand.hand_no}.phh", "application/toml")

    async def compliance_of(self, request: Request, evidence: bool = False):
        """The replay (or the evidence file) of the request's hand for a compliance
        session, recorded in the access log first; else the refusal to send."""
        try:
            table_id = table_id_of(request)
            session = await self.sessions.of(request)
            if session is None or not session.principal.has(COMPLIANCE):
                raise Refused(403, "the compliance replay is for the compliance role: sign in "
                                   "with a token that has it")
            how = self.replays.evidence if evidence else self.replays.replay
            return await how(table_id, request.path_params["hand_no"],
                             f"{session.subject} (web)")
        except Refused as exc:
            return refused(exc)
        except AccessNotRecorded as exc:
            return refused(Refused(503, str(exc)))

    async def compliance_json(self, request: Request) -> Response:
        view = await self.compliance_of(request)
        return view if isinstance(view, Response) else JSONResponse(view, headers=HEADERS)

    async def evidence_file(self, request: Request) -> Response:
        data = await self.compliance_of(request, evidence=True)
        if isinstance(data, Response):
            return data
        name = f"{request.path_params['table_id']}-{request.path_params['hand_no']}-evidence.json"
        return download(data, name, "application/json")

    async def compliance_page(self, request: Request) -> Response:
        try:
            table_id = table_id_of(request)
        except Refused as exc:
            return refused(exc)
        return page(request, "compliance.html", table_id=table_id,
                    hand_no=request.path_params["hand_no"])
