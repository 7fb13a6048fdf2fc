"""The lobby's tournaments (issue 30): ``/tournaments``, a page that lists every tournament
with its structure, entrants, level and clock, and each of its tables (links to the table
pages), and ``/api/tournaments``, what it shows as JSON. Read from the director
(TournamentService.ListTournaments, as the web service's own caller); without a director
(POKER_TOURNAMENT_ADDR unset) the API answers 404 saying so."""

from __future__ import annotations

import grpc
from poker.tournament.v1 import tournament_pb2 as pb
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .pages import page
from .replies import HEADERS


def tournament_row(v: pb.TournamentView) -> dict:
    """One tournament as the page shows it."""
    s = v.structure
    level = s.levels[v.level - 1] if 0 < v.level <= len(s.levels) else None
    return {
        "id": v.tournament_id, "name": v.name, "status": v.status,
        "kind": "scheduled" if s.scheduled else "sit-and-go",
        "buy_in": s.buy_in, "fee": s.fee, "starting_stack": s.starting_stack,
        "max_players": s.max_players, "late_levels": s.late_levels,
        "max_entries": s.max_entries, "guarantee": s.guarantee,
        "rebuy_levels": s.rebuy_levels, "rebuy_chips": s.rebuy_chips,
        "rebuy_price": s.rebuy_price, "max_rebuys": s.max_rebuys,
        "add_on_chips": s.add_on_chips, "add_on_price": s.add_on_price,
        "entries": sum(e.status in ("paid", "busted") for e in v.entries),
        "in": sum(e.status == "paid" for e in v.entries),
        "level": v.level,
        "blinds": ("break" if level.is_break else
                   f"{level.small_blind}/{level.big_blind}"
                   + (f" ante {level.ante}" if level.ante else "")) if level else "",
        "level_ends_unix_ms": v.level_ends_unix_ms,
        "registration_closed": v.registration_closed, "hand_for_hand": v.hand_for_hand,
        "prize_pool": v.prize_pool, "prizes": list(v.prizes), "winner": v.winner,
        "tables": [{"id": t.table_id, "players": len(t.players)} for t in v.tables
                   if t.players],
    }


def tournament_routes(backend) -> list[Route]:
    """The page and its API, reading ``backend.tournaments`` (None: no director)."""
    async def tournaments(request: Request) -> Response:
        return page(request, "tournaments.html")

    async def listing(request: Request) -> Response:
        stub = getattr(backend, "tournaments", None)
        if stub is None:
            return JSONResponse({"error": "no tournament director here "
                                          "(POKER_TOURNAMENT_ADDR)"}, 404, headers=HEADERS)
        try:
            reply = await stub.ListTournaments(pb.ListTournamentsRequest(),
                                               metadata=backend.own, timeout=5)
        except grpc.aio.AioRpcError as exc:
            return JSONResponse({"error": f"the director did not answer "
                                          f"({exc.code().name})"}, 503, headers=HEADERS)
        return JSONResponse([tournament_row(v) for v in reply.tournaments], headers=HEADERS)

    return [Route("/tournaments", tournaments), Route("/api/tournaments", listing)]
