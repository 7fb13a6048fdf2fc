"""TournamentTables (protos/poker/tournament/v1): the commands a tournament's table takes from
its director (services/tournament), each one a commit in the table's log, decided by
shared/poker/tournament/tables.py. Only a token with the ``director`` role may call them
(:data:`ACCESS`); players act and watch through TableService as at any table.

After a command the table is driven on (a released table starts its next hand)."""

from __future__ import annotations

from poker.tournament.v1 import tournament_pb2 as pb
from poker.tournament.v1 import tournament_pb2_grpc

from shared.infra.authz import Rule
from shared.infra.identity import DIRECTOR
from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import BadRequest, check_table_id, client_command_id, rpc
from shared.poker import table as T
from shared.poker.errors import InvalidOptions
from shared.poker.tournament import tables as TT
from shared.poker.tournament.structure import Level

from .driver import Driver

_SERVICE = "/poker.tournament.v1.TournamentTables/"
#: who may call each RPC: the director alone
ACCESS: dict[str, Rule] = {
    _SERVICE + m: Rule(frozenset({DIRECTOR}))
    for m in ("OpenTable", "SeatEntrant", "Unseat", "SetLevel", "Release",
              "AddChips")}


def level_from(msg: pb.Level) -> Level:
    try:
        return Level(msg.small_blind, msg.big_blind, msg.ante, msg.minutes or 1.0,
                     msg.is_break)
    except InvalidOptions as exc:
        raise BadRequest(exc.reason) from None


class TournamentTables(tournament_pb2_grpc.TournamentTablesServicer):
    def __init__(self, repo: TableRepository, driver: Driver) -> None:
        self.repo = repo
        self.driver = driver

    async def _command(self, request, kind: str, decide, *args) -> pb.TableCommandReply:
        check_table_id(request.table_id)
        command_id = client_command_id("director", request.command_id)
        outcome = await self.repo.execute(request.table_id, command_id, digest(kind, *args),
                                          lambda t: decide(t, *args))
        self.driver.nudge(request.table_id)
        return pb.TableCommandReply(version=outcome.version)

    @rpc
    async def OpenTable(self, request, context):
        if not request.tournament_id:
            raise BadRequest("a tournament table names its tournament")
        try:
            options = TT.tournament_table_options(
                request.tournament_id, level_from(request.level), request.max_seats or 9,
                request.decision_seconds or TT.DECISION_SECONDS)
        except InvalidOptions as exc:
            raise BadRequest(exc.reason) from None
        return await self._command(request, "open", T.create_table, request.table_id, options)

    @rpc
    async def SeatEntrant(self, request, context):
        return await self._command(request, "seat", TT.seat_entrant, request.seat,
                                   request.player_id, request.stack,
                                   request.seat_token_sha256)

    @rpc
    async def AddChips(self, request, context):
        return await self._command(request, "chips", TT.add_chips, request.seat,
                                   request.player_id, request.chips)

    @rpc
    async def Unseat(self, request, context):
        return await self._command(request, "unseat", TT.unseat, request.seat,
                                   request.player_id)

    @rpc
    async def SetLevel(self, request, context):
        return await self._command(request, "level", TT.set_level, level_from(request.level))

    @rpc
    async def Release(self, request, context):
        return await self._command(request, "release", TT.release)


def add_to_server(server, repo: TableRepository, driver: Driver) -> None:
    tournament_pb2_grpc.add_TournamentTablesServicer_to_server(
        TournamentTables(repo, driver), server)
