"""TournamentService: the director's API (protos/poker/tournament/v1). Each RPC loads the
tournament, decides (shared/poker/tournament/decide.py), appends, and answers its view; the
money it opens (a buy-in, a refund) is settled with the wallet before the reply, as a
table's sit-down is. The director's loop (director.py) drives the tournaments whose lease this
process holds (POKER_TOURNAMENT_LEASES, ``tournament.<id>``): another director takes over within the
lease's TTL when one dies.

Callers' tokens as at the table service: operators create, start and cancel; players
register, unregister, rebuy and add on (the caller's token subject), at most
POKER_LIMIT_TOURNAMENT_ENTRIES_BURST at once, then POKER_LIMIT_TOURNAMENT_ENTRIES_PER_S a
second each (shared/infra/limits.py: RESOURCE_EXHAUSTED, with when to retry); anyone reads.

Environment: as every service (shared/infra/config.py), and POKER_DIRECTOR_TOKEN: the token
(roles director and operator) the director presents to the table service;
POKER_CLOCK_TICK_MS: how often the loop looks at its tournaments' tables (default 200).
"""

from __future__ import annotations

import asyncio
import uuid
import weakref
from collections.abc import Callable

from poker.tournament.v1 import tournament_pb2 as pb
from poker.tournament.v1 import tournament_pb2_grpc
from poker.wallet.v1 import wallet_pb2_grpc

from shared.infra.authz import Access, Rule, caller
from shared.infra.bearer import bearer
from shared.infra.config import Config
from shared.infra.identity import OPERATOR, PLAYER
from shared.infra.lease import Leases
from shared.infra.limits import LimitSettings, RateLimiter, caller_of
from shared.infra.repository import digest
from shared.infra.rpc import BadRequest, client_command_id, rpc
from shared.infra.tls import channel
from shared.poker.tournament import decide as D
from shared.poker.tournament.decide import TOKEN_SHA256, TOURNAMENT_ID

from .director import LEASES, Director, open_seeds
from .log import TournamentLog, ensure_stream
from .names import player_digest
from .views import structure_from, view

_OPERATORS, _PLAYERS, _ANY = (Rule(frozenset({OPERATOR})), Rule(frozenset({PLAYER})),
                              Rule(frozenset()))
ACCESS: dict[str, Rule] = {
    "CreateTournament": _OPERATORS, "Start": _OPERATORS, "Cancel": _OPERATORS,
    "Register": _PLAYERS, "Unregister": _PLAYERS, "Rebuy": _PLAYERS, "AddOn": _PLAYERS,
    "GetTournament": _ANY, "ListTournaments": _ANY}


def _tid(tournament_id: str) -> str:
    if not TOURNAMENT_ID.fullmatch(tournament_id or ""):
        raise BadRequest("a tournament id is 1 to 48 letters, digits, '-' or '_'")
    return tournament_id


class TournamentService(tournament_pb2_grpc.TournamentServiceServicer):
    def __init__(self, tlog: TournamentLog, director: Director,
                 limits: LimitSettings | None = None) -> None:
        self.log = tlog
        self.director = director
        limits = limits or LimitSettings()
        #: Register, Unregister and Rebuy per player (each asks the wallet, and may append)
        self.entries = RateLimiter(limits.tournament_entries_per_s,
                                   limits.tournament_entries_burst,
                                   "registrations, unregistrations, rebuys and add-ons "
                                   "by this player")

    async def _reply(self, tid: str) -> pb.TournamentView:
        lt = await self.log.get(tid)
        assert lt.state is not None
        return view(lt.state, lt.seq)

    @rpc
    async def CreateTournament(self, request, context):
        tid = _tid(request.tournament_id or uuid.uuid4().hex[:12])
        structure = structure_from(
            request.structure if request.HasField("structure") else None)
        if len(request.name) > 100 or not request.name.isprintable():
            raise BadRequest("a name is at most 100 printable characters")
        command_id = client_command_id("create", request.command_id)
        name = request.name or tid
        await self.log.execute(tid, command_id, lambda s: D.create(
            s, tid, structure, name, self.log.now_ms()), digest("create", structure, name))
        return await self._reply(tid)

    @rpc
    async def Register(self, request, context):
        tid = _tid(request.tournament_id)
        self.entries.take(caller_of(context))
        if not TOKEN_SHA256.fullmatch(request.seat_token_sha256):
            raise BadRequest("seat_token_sha256 is the SHA-256 of your seat token as 64 "
                             "lowercase hex digits")
        who = caller()
        command_id = client_command_id(f"reg.{player_digest(who.subject)}", request.command_id)
        lt = await self.log.get(tid)
        if command_id not in lt.commands:  # the rules, then the balance, before any append
            assert lt.state is not None
            D.register(lt.state, who.subject, request.seat_token_sha256, who.name)
            await self.director.check_funds(who.subject, lt.state.structure.buy_in
                                            + lt.state.structure.fee)
        await self.log.execute(tid, command_id, lambda s: D.register(
            s, who.subject, request.seat_token_sha256, who.name) if s else [],
            digest("register", request.seat_token_sha256))
        await self.director.settle_money(tid)
        return await self._reply(tid)

    @rpc
    async def Unregister(self, request, context):
        tid = _tid(request.tournament_id)
        self.entries.take(caller_of(context))
        who = caller().subject
        await self.log.get(tid)
        await self.log.execute(
            tid, client_command_id(f"unreg.{player_digest(who)}", request.command_id),
            lambda s: D.unregister(s, who) if s else [], digest("unregister"))
        await self.director.settle_money(tid)
        return await self._reply(tid)

    @rpc
    async def Rebuy(self, request, context):
        return await self._buy_chips(request, context, "rebuy")

    @rpc
    async def AddOn(self, request, context):
        return await self._buy_chips(request, context, "addon")

    async def _buy_chips(self, request, context, kind: str) -> pb.TournamentView:
        """A rebuy or the add-on, the caller's: the rules and the balance, then the append
        and the debit (its chips reach the stack between hands: the director's loop)."""
        tid = _tid(request.tournament_id)
        self.entries.take(caller_of(context))
        who = caller().subject
        decide, price = ((D.rebuy, "rebuy_price") if kind == "rebuy"
                         else (D.add_on, "add_on_price"))
        command_id = client_command_id(f"{kind}.{player_digest(who)}", request.command_id)
        lt = await self.log.get(tid)
        assert lt.state is not None
        stack = await self.director.stack_of(lt.state, who)
        if command_id not in lt.commands:  # the rules, then the balance, before any append
            decide(lt.state, who, stack)
            await self.director.check_funds(who, getattr(lt.state.structure, price),
                                            "a rebuy" if kind == "rebuy" else "the add-on")
        await self.log.execute(tid, command_id, lambda s: decide(s, who, stack) if s else [],
                               digest(kind))
        await self.director.settle_money(tid)
        return await self._reply(tid)

    @rpc
    async def Start(self, request, context):
        tid = _tid(request.tournament_id)
        await self.log.get(tid)
        await self.director.start(tid)
        return await self._reply(tid)

    @rpc
    async def Cancel(self, request, context):
        tid = _tid(request.tournament_id)
        if len(request.reason) > 200 or not request.reason.isprintable():
            raise BadRequest("a reason is at most 200 printable characters")
        await self.log.get(tid)
        await self.log.execute(tid, client_command_id("cancel", request.command_id),
                               lambda s: D.cancel(s, request.reason) if s else [],
                               digest("cancel", request.reason))
        await self.director.settle_money(tid)
        return await self._reply(tid)

    @rpc
    async def GetTournament(self, request, context):
        return await self._reply(_tid(request.tournament_id))

    @rpc
    async def ListTournaments(self, request, context):
        out = []
        for tid in await self.log.ids():
            out.append(await self._reply(tid))
        return pb.ListTournamentsReply(tournaments=out)


def access_from_config(config: Config) -> Access:
    if config.identity is None:
        raise ValueError("the tournament director checks every caller's token: set "
                         "POKER_JWKS_FILE (or POKER_JWKS_URL) and POKER_JWT_ISSUER")
    return Access(ACCESS, config.identity, "tournament")


async def open_director(repo, store, config: Config) -> tuple[Director, Callable]:
    """A director over the stream and the seed bucket (made if missing), with the table
    service (the director's token) and the wallet as peers and its leases held as
    ``config.instance_id``; and what closes its leases and channels."""
    from poker.tournament.v1 import tournament_pb2_grpc as tgrpc
    await ensure_stream(store.js, config.stream_replicas)
    tlog = TournamentLog(store.nc, store.js, repo.now_ms)
    token = config.director_token
    if not token:
        raise ValueError("POKER_DIRECTOR_TOKEN: the director's token for the table service "
                         "(roles director and operator) is not set")
    tables_channel = channel(config.addresses["table"], config.tls, "table",
                             interceptors=bearer(token))
    wallet_channel = channel(config.addresses["wallet"], config.tls, "wallet")
    leases = await Leases.open(store.js, bucket=LEASES, ttl_ms=config.lease_ttl_ms,
                               instance_id=config.instance_id, replicas=config.stream_replicas)
    director = Director(tlog, repo, tgrpc.TournamentTablesStub(tables_channel),
                        wallet_pb2_grpc.WalletServiceStub(wallet_channel),
                        await open_seeds(store.js, config.stream_replicas), leases,
                        repo.now_ms)

    async def close() -> None:
        await leases.release_all()
        await tables_channel.close()
        await wallet_channel.close()

    return director, close


async def setup(server, repo, store, config: Config):
    """boot's setup: the director (:func:`open_director`), the servicer, and the loop."""
    director, close = await open_director(repo, store, config)
    tournament_pb2_grpc.add_TournamentServiceServicer_to_server(
        TournamentService(director.log, director, config.limits), server)
    _DIRECTORS[server] = director
    stop = asyncio.Event()
    task = asyncio.get_running_loop().create_task(
        director.run(max(config.clock_tick_ms, 10) / 1000, stop))

    async def cleanup() -> None:
        stop.set()
        try:
            await asyncio.wait_for(task, 5.0)
        except (TimeoutError, asyncio.CancelledError):
            pass
        await close()

    return cleanup


#: the director of each tournament server set up in this process (tests reach it here)
_DIRECTORS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def director_for(server) -> Director:
    """The director of a tournament service's gRPC server (``Server.server``)."""
    return _DIRECTORS[server]
