"""The lobby's tournaments page (services/web/tournaments.py) against the real director: a
tournament created and registered for is listed with its structure, entrants and state;
the lobby links to the page; without a director the API says there is none."""

from __future__ import annotations

import json
import urllib.request

from poker.tournament.v1 import tournament_pb2 as tpb
from poker.tournament.v1 import tournament_pb2_grpc

from services.pokerctl import tournament_bots as TB
from services.web.app import create_app
from shared.infra.bearer import bearer_metadata
from shared.infra.identity import OPERATOR
from tests.helpers.web import backend, served
from tests.system.test_tournaments import fast_structure


async def _get(address: str, path: str) -> tuple[int, bytes]:
    import asyncio

    def fetch():
        try:
            with urllib.request.urlopen(f"http://{address}{path}", timeout=10) as reply:
                return reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()
    return await asyncio.to_thread(fetch)


async def test_the_lobby_lists_tournaments(nats_server, store):
    from services.stack import start_local
    stack = await start_local(nats_server.url, env={"POKER_CLOCK_TICK_MS": "20"})
    try:
        await stack.start_service("tournament")
        tch, chan = stack.channel("tournament"), stack.channel("table")
        stub = tournament_pb2_grpc.TournamentServiceStub(tch)
        ops = bearer_metadata(stack.token("ops", OPERATOR))
        structure = fast_structure(4)
        structure.rebuy_levels, structure.rebuy_chips, structure.rebuy_price = 2, 500, 100
        structure.max_rebuys, structure.add_on_chips, structure.add_on_price = 3, 1000, 50
        await stub.CreateTournament(tpb.CreateTournamentRequest(
            tournament_id="web1", name="Friday", structure=structure,
            command_id="c"), metadata=ops)
        await TB.register_bots(stub, stack.sponsor(), "web1", 2)
        with_director = backend(stack, store, chan)
        with_director.tournaments = stub
        async with served(create_app(with_director)) as address:
            status, body = await _get(address, "/api/tournaments")
            assert status == 200
            (row,) = json.loads(body)
            assert row["id"] == "web1" and row["name"] == "Friday"
            assert row["status"] == "registering" and row["kind"] == "sit-and-go"
            assert (row["entries"], row["max_players"], row["buy_in"]) == (2, 4, 100)
            assert (row["rebuy_levels"], row["rebuy_chips"], row["rebuy_price"],
                    row["max_rebuys"], row["add_on_chips"], row["add_on_price"]) == (
                2, 500, 100, 3, 1000, 50)
            status, page = await _get(address, "/tournaments")
            assert status == 200 and b"/static/tournaments.js" in page
            status, lobby = await _get(address, "/")
            assert b'href="/tournaments"' in lobby
        async with served(create_app(backend(stack, store, chan))) as address:
            status, body = await _get(address, "/api/tournaments")
            assert status == 404 and b"no tournament director" in body
        await tch.close()
        await chan.close()
    finally:
        await stack.stop()
