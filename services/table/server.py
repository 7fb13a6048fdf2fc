"""TableService: the client-facing API (create table, sit, leave, sit out, top up, act,
disconnect, reconnect, state, watch).

Player actions go to the betting service, which owns their events; everything else that a
hand needs is run by the driver after each command. The clock keeper (keeper.py) times out late
players at the tables whose lease this instance holds (lease: shared/infra/lease.py).

A command is answered once it is in the log: if a step the driver runs after it fails, the
reply is the table as it stands (OK) and the driver carries on from the log later.

Who may call what is :data:`ACCESS`, one rule per RPC, enforced before any handler runs by
shared/infra/identity.py (the caller's JWT: UNAUTHENTICATED, PERMISSION_DENIED). A seat is
bound to the player who took it (the token's subject), and the seat token to that seat:
commands for a seat need both. Seat tokens: the client's own (SitDown names its SHA-256), or
one made here at random and returned in the first reply only; the log keeps only the
digest. Callers are held to the limits of shared/infra/limits.py (POKER_LIMIT_*).

Money: every table's chips come from the players' wallets. SitDown and TopUp open a saga
(BuyInRequested) that the cashier (cashier.py) settles with the wallet before the reply;
leaving cashes out; rake goes to the house account. A saga a crash left open is finished by
the next command, the driver or the clock keeper, with the same idempotency key.

Environment: POKER_INSTANCE_ID (the lease holder's name; default host-pid-random),
POKER_LEASE_TTL_MS (default 5000), POKER_CLOCK_TICK_MS (default 200; 0: the keeper only ticks
when told, for tests).
"""

from __future__ import annotations

import asyncio
import hmac
import uuid
import weakref

import grpc
import structlog
from poker.betting.v1 import betting_pb2
from poker.engine.v1 import step_pb2
from poker.table.v1 import table_pb2, table_pb2_grpc

from shared.history.log import finished_hand
from shared.infra.authz import Access, caller
from shared.infra.config import Config
from shared.infra.identity import RELAY, Verifier
from shared.infra.lease import Leases
from shared.infra.limits import Limits, RateLimiter, caller_of
from shared.infra.repository import LoadedTable, TableRepository, digest
from shared.infra.rpc import (
    BadRequest,
    Denied,
    Unavailable,
    check_table_id,
    client_command_id,
    log_full,
    rpc,
)
from shared.infra.seattokens import check_holder, new_seat_token, token_digest
from shared.poker import seeds as S
from shared.poker import table as T
from shared.poker.clock import running_hand
from shared.poker.errors import IllegalAction
from shared.poker.state import TableState
from shared.poker.steprules import table_step

from . import tournament
from .access import ACCESS
from .driver import TAIL_KEPT, Driver, Peers
from .hub import Hubs, Watcher, may_spectate
from .keeper import ClockKeeper
from .receipts import Receipts
from .requests import check_seed_request, chosen_digest, options_from
from .views import Views

log = structlog.get_logger()
#: how long a command's answer waits for the automated steps after it (a deal, a showdown):
#: a peer that stalls (a dealer whose random source fails) delays no answer beyond this; the
#: steps go on in the background and the player's next view has them
CARRY_ON_S = 3.0

class TableService(table_pb2_grpc.TableServiceServicer):
    def __init__(self, repo: TableRepository, driver: Driver, hubs: Hubs,
                 limits: Limits | None = None, receipts: Receipts | None = None) -> None:
        self.repo = repo
        self.receipts = receipts
        self.driver = driver
        self.hubs = hubs
        self.views = hubs.views
        self.limits = limits or Limits()

    # --- helpers -------------------------------------------------------------------------

    def _check_token(self, table: TableState, seat: int, token: str) -> None:
        check_holder(table, seat, caller().subject)
        if not token:
            raise Denied("a seat token is required (the one SitDown returned)")
        s = table.seat(seat)
        if s is None or not hmac.compare_digest(s.token_digest, token_digest(token)):
            raise Denied(f"that token does not hold seat {seat} at this table")

    async def _seated(self, table_id: str, seat: int, token: str,
                      min_version: int | None = None) -> LoadedTable:
        check_table_id(table_id)
        lt = await self.repo.get(table_id, min_version)
        assert lt.state is not None  # (get: the table exists)
        try:
            self._check_token(lt.state, seat, token)
        except Denied:
            if min_version is None:
                raise
            lt = await self.repo.get(table_id)  # the seat may be newer than this cache
            assert lt.state is not None
            self._check_token(lt.state, seat, token)
        return lt

    async def _view(self, lt: LoadedTable, viewer: int | None) -> table_pb2.TableView:
        """The table as the caller sees it from ``viewer`` (its seat, checked; None: as a
        spectator): from the version's public view, shared with the table's watchers."""
        public = self.hubs.public(lt)
        view = public.message if viewer is None else \
            await self.views.seat(lt, public, viewer, caller().subject)
        return self.views.now(view)

    async def _reply(self, table_id: str, viewer: int | None,
                     version: int | None = None) -> table_pb2.TableReply:
        lt = await self.repo.get(table_id, version)
        return table_pb2.TableReply(version=lt.seq, view=await self._view(lt, viewer))

    async def _carry_on(self, table_id: str, version: int, wait: bool = True) -> int:
        """Drive the table on after a command that is in the log. The command's answer does
        not hang on the steps after it: if one fails, or they take over :data:`CARRY_ON_S`
        (or the caller does not ``wait``), the reply is the table as it stands and the driver
        carries on from the log (in the background, then at the next command, view or clock
        tick)."""
        steps = self.driver.advance_in_background(table_id, version)
        if not wait:
            return version
        done, _ = await asyncio.wait({steps}, timeout=CARRY_ON_S)
        after = steps.result() if done else None
        if not done:
            log.warning("the steps after a command are slow: answered with the table as it "
                        "stands; they go on", table_id=table_id, version=version)
        return version if after is None else after

    async def _settle(self, table_id: str, key: str, version: int) -> int:
        """Settle the table's money with the wallet now, for a command that opened saga
        ``key``: FAILED_PRECONDITION if the wallet refused it, UNAVAILABLE while the wallet does
        not answer (the saga stays open: a retry with the same command id finishes it)."""
        done = await self.driver.cashier.settle(table_id, version, raise_unavailable=True)
        if key in done.refused:
            raise IllegalAction(f"the wallet refused the chips: {done.refused[key]}")
        return done.version

    async def _seat_command(self, seat: table_pb2.SeatRequest, kind: str, decide, *args,
                            viewer: int | None = -1, limit: RateLimiter | None = None,
                            money: str = "") -> table_pb2.TableReply:
        """A seated player's command on the table (leave, sit out, top up, disconnect,
        reconnect): seat and token checked, the seat's limit taken, ``decide(table, seat,
        *args)`` appended, the table driven on, the new view returned (to the seat, unless
        ``viewer`` says otherwise). ``money``: the command opens a saga with the wallet (its
        key is the command id): "settle" settles it before the reply, "later" leaves it to the
        driver if the wallet is away (a cash-out: the player has left either way)."""
        command_id = client_command_id(f"s{seat.seat}", seat.command_id)
        check_table_id(seat.table_id)
        if viewer is not None or command_id not in (await self.repo.get(seat.table_id)).commands:
            # (a retry of a leave that freed the seat gets its public answer again)
            await self._seated(seat.table_id, seat.seat, seat.seat_token)
        limit, key = limit or self.limits.seat_commands, f"{seat.table_id}/{seat.seat}"
        limit.take(key)
        keyed = {"key": command_id} if money else {}
        try:
            outcome = await self.repo.execute(seat.table_id, command_id,
                                              digest(kind, seat.seat, *args),
                                              lambda t: decide(t, seat.seat, *args, **keyed))
        except Exception:
            limit.spent_nothing(key)
            raise
        if not outcome.events:
            limit.spent_nothing(key)
        version = outcome.version
        if money == "settle":
            version = await self._settle(seat.table_id, command_id, version)
        version = await self._carry_on(seat.table_id, version)
        return await self._reply(seat.table_id, seat.seat if viewer == -1 else viewer, version)

    async def _operator_command(self, table_id: str, command_id: str, kind: str, decide,
                                *args) -> table_pb2.TableReply:
        """An operator's command on a table (pause, close): appended, the table driven on
        (a closing table cashes its players out), the public view returned."""
        check_table_id(table_id)
        command_id = client_command_id("op", command_id)
        await self.repo.get(table_id)
        outcome = await self.repo.execute(table_id, command_id, digest(kind, *args),
                                          lambda t: decide(t, *args))
        version = await self._carry_on(table_id, outcome.version)
        return await self._reply(table_id, None, version)

    # --- RPCs ----------------------------------------------------------------------------

    @rpc
    async def CreateTable(self, request, context):
        command_id = client_command_id("create", request.command_id)
        table_id = request.table_id or uuid.uuid4().hex[:16]
        check_table_id(table_id)
        options = options_from(request.settings)
        self.limits.caller_joins.take(caller_of(context))
        outcome = await self.repo.execute(
            table_id, command_id, digest("create", options),
            lambda t: T.create_table(t, table_id, options))
        return table_pb2.CreateTableReply(table_id=table_id, version=outcome.version)

    @rpc
    async def SitDown(self, request, context):
        check_table_id(request.table_id)
        command_id = client_command_id(f"sit{request.seat}", request.command_id)
        player, name = caller().subject, caller().name  # the seat is the token's subject's
        chosen = chosen_digest(request.seat_token_sha256)
        self.limits.caller_joins.take(caller_of(context))
        joins = self.limits.player_joins  # log and ledger per account, across tables
        joins.take(player)
        # the digest the log keeps; a token made here is random: only the first reply has it
        token, kept = ("", chosen) if chosen else new_seat_token()

        def sit(t):
            return T.sit_down(t, request.seat, player, request.buy_in, kept,
                              request.post_big_blind, key=command_id, name=name)

        try:
            outcome = await self._sit(request.table_id, command_id, player, request.buy_in,
                                      sit, digest("sit", request.seat, player, request.buy_in,
                                                  request.post_big_blind, chosen))
        except Exception:
            joins.spent_nothing(player)
            raise
        if not outcome.events:
            joins.spent_nothing(player)
        version = await self._settle(request.table_id, command_id, outcome.version)
        held = (await self.repo.get(request.table_id, version)).state.seat(request.seat)
        if held is None or held.player_id != player:
            raise IllegalAction(f"this sit-down no longer holds seat {request.seat} (its buy-in "
                                f"was refused, or you left since)")
        await self._carry_on(request.table_id, version)
        # the version of this sit-down's own commit: the same in the reply to a retry
        return table_pb2.SitDownReply(seat_token="" if outcome.duplicate else token,
                                      version=outcome.version)

    async def _sit(self, table_id: str, command_id: str, player: str, buy_in: int, sit,
                   fingerprint: bytes):
        """Append a sit-down (``sit``: its decision), refused before anything is appended by
        the rules, then the balance (the wallet's debit decides in the end), unless the
        leader's log has it (a retry another replica applied, on a fold behind): then its
        outcome is the answer."""
        lt = await self.repo.get(table_id)
        if command_id not in lt.commands:
            try:
                sit(lt.state)
                await self.driver.cashier.check_funds(player, buy_in)
            except Exception:
                if command_id not in (await self.repo.load(table_id, leader=True)).commands:
                    raise
        return await self.repo.execute(table_id, command_id, fingerprint, sit)

    @rpc
    async def ResumeSeat(self, request, context):
        """A new seat token for the seat the caller holds (they lost theirs): the old one
        stops proving the seat."""
        check_table_id(request.table_id)
        command_id = client_command_id(f"resume{request.seat}", request.command_id)
        player = caller().subject
        chosen = chosen_digest(request.seat_token_sha256)
        await self.repo.get(request.table_id)  # NOT_FOUND for a table that is not there
        limit, key = self.limits.seat_toggles, f"{request.table_id}/{request.seat}"
        limit.take(key)  # each one a commit for ever
        token, kept = ("", chosen) if chosen else new_seat_token()
        try:
            outcome = await self.repo.execute(
                request.table_id, command_id, digest("resume", request.seat, player, chosen),
                lambda t: T.replace_seat_token(t, request.seat, player, kept))
        except Exception:
            limit.spent_nothing(key)
            raise
        if not outcome.events:
            limit.spent_nothing(key)
        return table_pb2.SitDownReply(seat_token="" if outcome.duplicate else token,
                                      version=outcome.version)

    @rpc
    async def Leave(self, request, context):
        return await self._seat_command(request, "leave", T.leave, viewer=None,
                                        limit=self.limits.seat_toggles, money="later")

    @rpc
    async def SitOut(self, request, context):
        return await self._seat_command(request.seat, "sit_out", T.sit_out, request.sit_out,
                                        request.post_big_blind, limit=self.limits.seat_toggles)

    @rpc
    async def TopUp(self, request, context):
        seat = request.seat
        lt = await self._seated(seat.table_id, seat.seat, seat.seat_token)
        command_id = client_command_id(f"s{seat.seat}", seat.command_id)
        if command_id not in lt.commands:
            T.top_up(lt.state, seat.seat, request.amount, key=command_id)  # the rules first
            await self.driver.cashier.check_funds(caller().subject, request.amount)
        return await self._seat_command(seat, "top_up", T.top_up, request.amount,
                                        money="settle")

    @rpc
    async def CommitSeed(self, request, context):
        check_seed_request(request, "seed_sha256", "the SHA-256 of your 32-byte seed")
        return await self._seat_command(request.seat, "commit_seed", S.commit_seed,
                                        request.hand_no, request.seed_sha256)

    @rpc
    async def RevealSeed(self, request, context):
        check_seed_request(request, "seed", "your 32-byte seed")
        return await self._seat_command(request.seat, "reveal_seed", S.reveal_seed,
                                        request.hand_no, request.seed)

    @rpc
    async def PauseTable(self, request, context):
        return await self._operator_command(request.table_id, request.command_id, "pause",
                                            T.pause, request.paused)

    @rpc
    async def ConfigureTable(self, request, context):
        return await self._operator_command(request.table_id, request.command_id, "configure",
                                            T.configure, options_from(request.settings))

    @rpc
    async def CloseTable(self, request, context):
        if len(request.reason) > 200 or not request.reason.isprintable():
            raise BadRequest("a reason is at most 200 printable characters")
        return await self._operator_command(request.table_id, request.command_id, "close",
                                            T.close, request.reason)

    @rpc
    async def Act(self, request, context):
        command_id = client_command_id(f"s{request.seat}", request.command_id)
        lt = await self._seated(request.table_id, request.seat, request.seat_token, 0)
        self.limits.seat_commands.take(f"{request.table_id}/{request.seat}")
        if command_id not in lt.commands and not self._for_the_hand(lt, request.hand_no):
            lt = await self.repo.get(request.table_id)  # this cache may be behind the player
            if command_id not in lt.commands:
                running_hand(lt.state, request.hand_no)  # refused: another hand's
        act = betting_pb2.ActRequest(  # betting decides: on turn, in time (unless held)
            step=step_pb2.StepRequest(table_id=request.table_id, hand_no=request.hand_no,
                                      command_id=command_id, version=lt.seq),
            seat=request.seat, action=request.action, player_id=caller().subject,
            clock_held=self.driver.outages.held(request.table_id, lt.clock) is not None)
        if request.HasField("amount"):
            act.amount = request.amount
        try:
            acted = await self.driver.call("betting", "Act", act)
        except grpc.aio.AioRpcError as exc:
            if log_full(exc):  # nothing landed: the player's clock is held (keeper.py)
                self.driver.outages.refused(request.table_id, lt.clock, self.repo.now_ms())
            raise
        version = await self._carry_on(request.table_id, acted.version,
                                       wait=not request.reply_at_commit)
        return await self._reply(request.table_id, request.seat, version)

    @rpc
    async def Disconnect(self, request, context):
        return await self._seat_command(request, "disconnect", T.disconnect,
                                        limit=self.limits.seat_toggles)

    @rpc
    async def Reconnect(self, request, context):
        return await self._seat_command(request, "reconnect", T.reconnect,
                                        limit=self.limits.seat_toggles)

    @staticmethod
    def _for_the_hand(lt: LoadedTable, hand_no: int) -> bool:
        """The action names the table's hand on this fold (shared/poker/clock.py)."""
        assert lt.state is not None  # (a fold _seated returned: the table exists)
        try:
            running_hand(lt.state, hand_no)
        except IllegalAction:
            return False
        return True

    @rpc
    async def GetState(self, request, context):
        viewer = await self._viewer(request)
        lt = await self.repo.get(request.table_id)
        if table_step(lt.state) is not None:
            self.driver.nudge(request.table_id)  # a step is pending: carry on
        return await self._view(lt, viewer)

    async def _viewer(self, request) -> int | None:
        check_table_id(request.table_id)
        if request.seat == 0:
            lt = await self.repo.get(request.table_id)
            assert lt.state is not None  # (get: the table exists)
            if lt.state.options.private and not may_spectate(lt.state, caller()):
                raise Denied(f"table {request.table_id} is private: spectators need an "
                             f"operator's or compliance's role, or a seat at it")
            return None
        await self._seated(request.table_id, request.seat, request.seat_token)
        return request.seat

    @rpc
    async def Watch(self, request, context):
        """A view after every commit after version ``after_version``, and when a countdown
        starts, until the caller goes or its token expires: from the table's hub in this
        process (hub.py), which makes each view once for all its watchers."""
        viewer = await self._viewer(request)
        if request.after_version < 0:
            raise BadRequest("after_version is the version of the last view you have (0: "
                             "none)")
        who = caller()
        digest = token_digest(request.seat_token) if viewer is not None else ""
        watcher = Watcher(viewer, digest, who, request.after_version,
                          self.limits.settings.watch_queue)
        # The table's cap counts spectators only: strangers filling it must not keep a seated
        # player (token checked) from following their own table.
        with self.limits.watching(caller_of(context), request.table_id,
                                  seated=viewer is not None, relay=who.has(RELAY)):
            async for view in self.hubs.watch(request.table_id, watcher, who.expires_at):
                await context.write(view)

    @rpc
    async def GetReceipt(self, request, context):
        check_table_id(request.table_id)
        if request.hand_no < 1:
            raise BadRequest("a hand is a hand number from 1")
        if self.receipts is None:
            raise Unavailable("this table service serves no receipts")
        self.limits.receipts.take(caller_of(context))
        lt = await self.repo.get(request.table_id)
        assert lt.state is not None  # (get: the table exists)
        finished_hand(lt.state, request.table_id, request.hand_no)
        return table_pb2.ReceiptReply(receipt=await self.receipts.receipt(
            request.table_id, request.hand_no, caller().subject))


def access(verifier: Verifier) -> Access:
    """The table service's access rules (:data:`ACCESS`), checked against ``verifier``."""
    return Access(ACCESS, verifier, "table")


def access_from_config(config: Config) -> Access:
    """:func:`access` with the identity provider of the service's configuration
    (``config.identity``: POKER_JWKS_FILE or POKER_JWKS_URL, POKER_JWT_ISSUER,
    POKER_JWT_AUDIENCE, shared/infra/config.py); the service does not start without one
    (boot.main makes the rules with this)."""
    verifier = config.identity
    if verifier is None:
        raise ValueError("the table service checks every caller's token: set POKER_JWKS_FILE "
                         "(or POKER_JWKS_URL) and POKER_JWT_ISSUER to your identity "
                         "provider's keys and name (`pokerctl up` makes a dev issuer)")
    return access(verifier)


#: the clock keeper of each table server set up in this process (tests reach it here)
_KEEPERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def keeper_for(server) -> ClockKeeper:
    """The clock keeper of a table service's gRPC server (``Server.server``)."""
    return _KEEPERS[server]


async def setup(server, repo, store, config: Config):
    """boot's setup: the peers (``config.addresses``), the servicer with ``config.limits``,
    the leases (``config.lease_ttl_ms``, held as ``config.instance_id``) and the clock keeper
    (``config.clock_tick_ms``)."""
    peers = Peers.connect(config.addresses, config.tls)
    repo.keep_recent(TAIL_KEPT)  # sent to the services it calls (Driver.call)
    driver = Driver(repo, peers)
    hubs = Hubs(repo, Views(driver, repo.now_ms))
    store.on_reconnect(hubs.resync)  # commits may have gone by while NATS was away
    table_pb2_grpc.add_TableServiceServicer_to_server(
        TableService(repo, driver, hubs, Limits(config.limits),
                     Receipts(store, peers.dealer, config.checkpoint_s)), server)
    tournament.add_to_server(server, repo, driver)
    leases = await Leases.open(store.js, ttl_ms=config.lease_ttl_ms,
                               instance_id=config.instance_id,
                               replicas=config.stream_replicas)
    # The keeper takes the tables of the log (their leases), carries on any with a pending
    # step and enforces their clocks.
    keeper = ClockKeeper(repo, driver, leases, hubs, tick_ms=config.clock_tick_ms,
                         list_every_s=config.clock_list_s)
    _KEEPERS[server] = keeper
    keeper.start()
    log.info("keeping table clocks", instance=leases.instance_id,
             lease_ttl_ms=int(leases.ttl_s * 1000), tick_ms=keeper.tick_ms)

    async def cleanup() -> None:
        await keeper.close()
        await hubs.close()
        await driver.close()
        await peers.close()

    return cleanup
