"""Bots that play through the TableService API: legal, varied actions (folds, calls, raises of
several sizes, all-ins), the same policy as the in-process driver's bots.

Each bot is a player of its own: it calls with its own token (from the :class:`Sponsor`'s
identity provider) and buys in from its own wallet, which the sponsor funds first. What a bot
does at its seat is :class:`Bot`'s, whichever way the table is played: :func:`play` acts for
every seat in one loop that reads the table with GetState (the default: quick, and every other
test and `make demo` use it); :func:`play_watching` runs each bot as a player's app does, in a
task of its own that watches its own seat (TableService.Watch) and acts on the views it
receives, at a person's pace (:class:`ThinkTime`). :func:`play_table` adds spectators, each on
a Watch of its own.

Clients reach the table service through table_addresses.py's ``table_channel``: one address,
or a comma-separated list of them (POKER_TABLE_ADDR, ``--table-addr``; read by
``parse_addresses``, the one place a client's list is read), balanced call by call over the
instances; a bot's pace is thinktime.py's ``ThinkTime``. Every call
a bot makes is idempotent (a command id of its own, the same on every attempt) and retried
through an instance that goes away (:func:`retrying`): the services deduplicate by command
id, so an action retried after its first attempt landed is applied once."""

from __future__ import annotations

import asyncio
import random
import secrets
from collections.abc import Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, field, replace

import grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from shared.infra import retry
from shared.infra.bearer import bearer_metadata
from shared.infra.devissuer import DevIssuer
from shared.infra.identity import OPERATOR, PLAYER
from shared.infra.limits import retry_after_s
from shared.infra.protomap import ACTION_KIND, legal_from
from shared.infra.retry import PLAYER_RETRY, RetryPolicy
from shared.infra.seattokens import new_seat_token
from shared.poker.handrunner import Policy, random_policy

from .thinktime import NO_THINKING, ThinkTime

# --- retries ---------------------------------------------------------------------------------

def retry_policy(retry_s: float | None) -> RetryPolicy:
    """A player's retries (shared/infra/retry.py ``PLAYER_RETRY``) for ``retry_s`` (None: its
    default; 0: one attempt)."""
    return PLAYER_RETRY if retry_s is None else replace(PLAYER_RETRY, total_s=retry_s)


async def retrying(fn: Callable[..., Awaitable], request, metadata: tuple = (),
                   retry_s: float | None = None):
    """A bot's call: shared/infra/retry.py's :func:`~shared.infra.retry.retrying` for
    ``retry_s`` (the very same request on every attempt, so a command that landed gets its
    first outcome, never a second decision)."""
    return await retry.retrying(fn, request, metadata, retry_policy(retry_s))


async def joining(fn: Callable[..., Awaitable], request, metadata: tuple = (),
                  retry_s: float | None = None):
    """A CreateTable or SitDown: :func:`retrying`, and sent again, the very same request,
    after the wait the table service names when the caller is over its rate of new tables
    and seats (shared/infra/limits.py: a lobby seating many players at once waits its turn
    instead of failing). The limiter's bucket refills, so the wait always ends."""
    while True:
        try:
            return await retrying(fn, request, metadata, retry_s)
        except grpc.aio.AioRpcError as exc:
            wait = retry_after_s(exc)
            if wait is None:
                raise
        await asyncio.sleep(wait)




# --- who the bots are --------------------------------------------------------------------------


@dataclass
class Sponsor:
    """Who the bots are and where their chips come from: ``issuer`` signs their tokens (the
    embedded setup's dev identity provider), ``wallet`` (the cashier, as admin) deposits
    what they buy in for."""

    issuer: DevIssuer
    wallet: wallet_pb2_grpc.WalletServiceStub
    ttl_s: int = 12 * 3600

    def token(self, subject: str, *roles: str) -> str:
        return self.issuer.token(subject, roles or (PLAYER,), ttl_s=self.ttl_s)

    def operator(self) -> tuple[tuple[str, str], ...]:
        return bearer_metadata(self.token("bots-operator", OPERATOR))

    async def fund(self, player: str, amount: int) -> None:
        """Deposit ``amount`` for ``player`` (retried with its key while the wallet is
        away: one deposit)."""
        await retry.retrying(self.wallet.Deposit, wallet_pb2.Transfer(
            account=wallet_pb2.Account(player_id=player), amount=amount,
            idempotency_key=f"bots/{player}/{secrets.token_hex(8)}", reference="pokerctl bots"))


@dataclass
class BotTable:
    table_id: str
    tokens: dict[int, str] = field(default_factory=dict)  # seat tokens
    buy_in: int = 0
    actions: int = 0
    hands_seen: int = 0
    players: dict[int, str] = field(default_factory=dict)
    auth: dict[int, tuple] = field(default_factory=dict)  # seat -> its player's call metadata
    sponsor: Sponsor | None = None
    #: how long each call is retried through a table service that is away (:func:`retrying`)
    retry_s: float = PLAYER_RETRY.total_s
    #: views each seat's bot received over its own Watch (:func:`play_watching`)
    views: dict[int, int] = field(default_factory=dict)
    #: views each spectator received (:func:`spectate`), one count per spectator
    spectator_views: list[int] = field(default_factory=list)

    def watcher(self) -> tuple:
        """Metadata to spectate the table (any player may watch a public table)."""
        return next(iter(self.auth.values()), ())


async def seat_bots(stub: table_pb2_grpc.TableServiceStub, table_id: str, seats: int,
                    buy_in: int, sponsor: Sponsor, retry_s: float | None = None) -> BotTable:
    """``seats`` bots at the table, each funded and sat down (``retry_s``: how long each of
    their calls is retried, default shared/infra/retry.py's PLAYER_RETRY)."""
    bots = BotTable(table_id, buy_in=buy_in, sponsor=sponsor,
                    retry_s=PLAYER_RETRY.total_s if retry_s is None else retry_s)
    for seat in range(1, seats + 1):
        player = f"bot-{table_id}-{seat}"
        await sponsor.fund(player, buy_in)
        auth = bearer_metadata(sponsor.token(player))
        # The bot's own seat token: only its digest goes to the table, and the command id is
        # random, so nobody who knows the table can replay this SitDown for the token.
        token, token_sha256 = new_seat_token()
        await joining(stub.SitDown, table_pb2.SitDownRequest(
            table_id=table_id, seat=seat, buy_in=buy_in,
            command_id=f"sit-{seat}-{secrets.token_hex(8)}", seat_token_sha256=token_sha256),
            auth, bots.retry_s)
        bots.tokens[seat], bots.players[seat], bots.auth[seat] = token, player, auth
    return bots


# --- one seat's player ---------------------------------------------------------------------


def _running(view: table_pb2.TableView) -> bool:
    """A hand is under way (not between hands)."""
    return view.phase not in ("waiting", "done")


@dataclass
class Bot:
    """The player at one seat: what it does on a view (the policy, at its pace), and the
    seat's own commands (sit out, buy back in, leave). Both ways of playing go through it:
    :func:`play` (one loop for every seat of the table, reading it with GetState) and
    :func:`play_watching` (a task per seat, on that seat's own Watch).

    Every call is retried while the instance it reached is away (UNAVAILABLE: the channel
    picks another of its addresses), for ``bots.retry_s``, with the same command id: the
    services apply a command once whatever the number of attempts."""

    stub: table_pb2_grpc.TableServiceStub
    bots: BotTable
    seat: int
    #: the choice of action (shared/poker/handrunner.py random_policy, the in-process bots')
    policy: Policy
    rng: random.Random
    think: ThinkTime = NO_THINKING
    #: where the latency of each action is recorded: Act sent to its reply, in seconds
    latencies: list[float] | None = None
    #: the table's version after this bot's last top-up (a view before it is stale)
    bought_at: int = -1
    #: it watches its seat: its actions are answered once in the log (the steps after them
    #: reach it on its Watch), not after the automated steps they lead to
    watching: bool = False

    @property
    def auth(self) -> tuple:
        return self.bots.auth[self.seat]

    def _seat_request(self, command_id: str) -> table_pb2.SeatRequest:
        return table_pb2.SeatRequest(table_id=self.bots.table_id, seat=self.seat,
                                     seat_token=self.bots.tokens[self.seat],
                                     command_id=command_id)

    async def act(self, view: table_pb2.TableView) -> table_pb2.TableReply | None:
        """Think (``think``), then act on ``view``, where this seat is on turn: the reply,
        or None when the action was refused as decided on a view that is stale
        (FAILED_PRECONDITION: not retried; decide again on a newer view). Over the seat's
        rate (RESOURCE_EXHAUSTED) it waits as told and decides again."""
        wait = self.think.seconds(self.rng)
        if wait:
            await asyncio.sleep(wait)
        loop = asyncio.get_running_loop()
        while True:
            action, to = self.policy(None, legal_from(self.seat, view.legal))
            request = table_pb2.ActRequest(
                table_id=self.bots.table_id, seat=self.seat,
                seat_token=self.bots.tokens[self.seat], hand_no=view.hand_no,
                action=ACTION_KIND.to_pb(action),
                # A fresh id per decision: a retry of this very request keeps it, a new
                # decision (after a refusal) gets its own.
                command_id=f"bot-{view.version}-{self.seat}-{secrets.token_hex(4)}",
                reply_at_commit=self.watching)
            if to is not None:
                request.amount = to
            started = loop.time()
            try:
                reply = await retrying(self.stub.Act, request, self.auth, self.bots.retry_s)
            except grpc.aio.AioRpcError as exc:
                if exc.code() is grpc.StatusCode.FAILED_PRECONDITION:
                    return None
                told = retry_after_s(exc)
                if told is None:
                    raise
                await asyncio.sleep(told)  # over the seat's rate: wait as told
                continue
            if self.latencies is not None:
                self.latencies.append(loop.time() - started)
            self.bots.actions += 1
            return reply

    async def sit_out(self) -> None:
        """Sit out from the next hand (already sitting out, timed out say: nothing to do)."""
        try:
            await retrying(self.stub.SitOut, table_pb2.SitOutRequest(
                seat=self._seat_request(f"out-{self.seat}"), sit_out=True),
                self.auth, self.bots.retry_s)
        except grpc.aio.AioRpcError as exc:
            if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
                raise

    async def leave(self) -> None:
        """Leave the table: the seat's chips are cashed out to its player's wallet."""
        await retrying(self.stub.Leave, self._seat_request(f"leave-{self.seat}-"
                                                           f"{secrets.token_hex(4)}"),
                       self.auth, self.bots.retry_s)

    def broke(self, view: table_pb2.TableView) -> bool:
        """This seat has no chips, none on their way from the wallet, and is not in a running
        hand (an all-in player's stack is 0 until the hand ends), in a view after its last
        top-up."""
        s = next((s for s in view.seats if s.seat == self.seat), None)
        return (s is not None and s.stack == 0 and s.pending == 0
                and view.version > self.bought_at and not (s.in_hand and _running(view)))

    async def rebuy(self, view: table_pb2.TableView) -> bool:
        """If :meth:`broke`: buy back in for the first buy-in (funded by the sponsor first).
        False if there was nothing to do, or the table refused the top-up (a view after this
        one decides again)."""
        bots = self.bots
        if not bots.buy_in or not self.broke(view):
            return False
        if bots.sponsor is not None:
            await bots.sponsor.fund(bots.players[self.seat], bots.buy_in)
        try:
            reply = await retrying(self.stub.TopUp, table_pb2.TopUpRequest(
                seat=self._seat_request(f"rebuy-{view.version}-{self.seat}"),
                amount=bots.buy_in), self.auth, bots.retry_s)
        except grpc.aio.AioRpcError as exc:
            if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
                raise
            return False
        self.bought_at = reply.version
        return True

    def out_of_play(self, view: table_pb2.TableView) -> bool:
        """This seat sits out and is not in a running hand: the table deals it no more."""
        s = next((s for s in view.seats if s.seat == self.seat), None)
        return s is None or s.sitting_out and not (s.in_hand and _running(view))


def last_hand(view: table_pb2.TableView, hands: int) -> bool:
    """Hand ``hands`` has started: the bots sit out from the next one, so the table stops
    once it is over, and then they leave (if asked to)."""
    return view.hand_no >= hands


# --- playing ---------------------------------------------------------------------------------


async def play(stub: table_pb2_grpc.TableServiceStub, bots: BotTable, hands: int,
               rng: random.Random, latencies: list[float] | None = None,
               leave: bool = False, think: ThinkTime = NO_THINKING) -> BotTable:
    """Act for whichever bot is on turn, reading the table with GetState (each action's
    reply carries the table after it). When hand ``hands`` starts every bot sits out (from
    the next hand), so the table stops once that hand is over; ``leave``: then every bot
    leaves, its chips cashed out to its wallet. ``think``: each bot's wait before each
    action. A refused action (a stale view) has the table read again and decided anew."""
    policy = random_policy(rng)
    players = {seat: Bot(stub, bots, seat, policy, rng, think, latencies)
               for seat in bots.tokens}
    leaving = False
    watch = bots.watcher()
    view = await _state(stub, bots, watch)
    while True:
        if not leaving and last_hand(view, hands):
            for bot in players.values():
                await bot.sit_out()
            leaving = True
        if view.to_act == 0:
            view = await _state(stub, bots, watch)
            if view.to_act == 0:
                if leaving:  # nobody else acts for these seats: the hand ends without them
                    break
                if not _running(view):
                    # Between hands: bots that went broke buy back in; else the next hand
                    # comes once the table's driver gets to it, unless the table is over.
                    rebought = False
                    for bot in players.values():
                        rebought |= await bot.rebuy(view)
                    if rebought:
                        view = await _state(stub, bots, watch)
                    else:
                        later = await _next_hand(stub, bots, view, watch)
                        if later is None:
                            break
                        view = later
                continue
        reply = await players[view.to_act].act(view)  # every view carries the options
        view = await _state(stub, bots, watch) if reply is None else reply.view
    bots.hands_seen = view.hand_no
    if leave:
        for bot in players.values():
            await bot.leave()
    return bots


async def play_watching(stub: table_pb2_grpc.TableServiceStub, bots: BotTable, hands: int,
                        rng: random.Random, latencies: list[float] | None = None,
                        leave: bool = False, think: ThinkTime = NO_THINKING) -> BotTable:
    """Every bot in a task of its own, as players' apps are: each watches its own seat (a
    Watch stream, resumed from the last version it saw when it breaks) and acts when a view
    says it is on turn, after its ``think`` time. The rest as :func:`play`: each bot sits
    out once hand ``hands`` has started and stops once it is out of play (``leave``: then
    leaves); a broke bot buys back in. The first bot to fail ends the others."""
    tasks = []
    for seat in bots.tokens:
        own = random.Random(rng.random())  # each bot its own choices
        bot = Bot(stub, bots, seat, random_policy(own), own, think, latencies, watching=True)
        tasks.append(asyncio.create_task(_play_seat(bot, hands, leave)))
    try:
        await asyncio.gather(*tasks)
    finally:
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return bots


async def _play_seat(bot: Bot, hands: int, leave: bool) -> None:
    """One bot of :func:`play_watching`. It acts once per decision: a view may come twice
    for one (the countdown's view repeats a version), so a (hand, version, seat on turn)
    acted on is not acted on again, and views older than its last action's reply (queued
    while it thought) are stale. Between hands, a table that sends no view for
    :data:`NEXT_HAND_WAIT_S` cannot deal another hand: the bot stops."""
    bots = bot.bots
    request = table_pb2.ViewRequest(table_id=bots.table_id, seat=bot.seat,
                                    seat_token=bots.tokens[bot.seat])
    decided: tuple[int, int, int] | None = None
    acted_at = 0  # the table's version in the reply to this bot's last action
    leaving = between = False
    bots.views.setdefault(bot.seat, 0)
    async with aclosing(retry.watching(bot.stub.Watch, request, bot.auth,
                                       retry_policy(bots.retry_s))) as views:
        while True:
            try:
                async with asyncio.timeout(NEXT_HAND_WAIT_S if between else None):
                    view = await anext(views)
            except (StopAsyncIteration, TimeoutError):
                break  # the stream ended, or no next hand came
            bots.views[bot.seat] += 1
            bots.hands_seen = max(bots.hands_seen, view.hand_no)
            if not leaving and last_hand(view, hands):
                await bot.sit_out()
                leaving = True
            if leaving and bot.out_of_play(view):
                break
            decision = (view.hand_no, view.version, view.to_act)
            if view.to_act == bot.seat and view.HasField("legal") and \
                    view.version >= acted_at and decision != decided:
                decided = decision
                reply = await bot.act(view)
                if reply is not None:
                    acted_at = reply.version
            elif not leaving:
                await bot.rebuy(view)
            between = view.to_act == 0 and not _running(view)
    if leave:
        await bot.leave()


async def spectate(stub: table_pb2_grpc.TableServiceStub, bots: BotTable, index: int,
                   auth: tuple) -> None:
    """A spectator of the table (seat 0) on a Watch of its own, as ``auth``'s player: reads
    every view and discards it, counting it in ``bots.spectator_views[index]``; until
    cancelled or the stream ends."""
    request = table_pb2.ViewRequest(table_id=bots.table_id)
    async with aclosing(retry.watching(stub.Watch, request, auth,
                                       retry_policy(bots.retry_s))) as views:
        async for _ in views:
            bots.spectator_views[index] += 1


async def play_table(stub: table_pb2_grpc.TableServiceStub, bots: BotTable, hands: int,
                     rng: random.Random, latencies: list[float] | None = None,
                     leave: bool = False, think: ThinkTime = NO_THINKING, watch: bool = False,
                     spectators: int = 0) -> BotTable:
    """Play ``hands`` hands at a seated table: :func:`play_watching` (``watch``) else
    :func:`play`, with ``spectators`` spectators watching it meanwhile, each from a player
    account of its own (a token from ``bots.sponsor``), stopped when the bots stop. A
    spectator's stream that ended with an error raises it once the bots have stopped."""
    bots.spectator_views = [0] * spectators
    watching: list[asyncio.Task] = []
    if spectators:
        if bots.sponsor is None:
            raise ValueError("spectators need the sponsor's tokens: seat the bots with "
                             "seat_bots")
        for i in range(spectators):
            auth = bearer_metadata(bots.sponsor.token(f"spectator-{bots.table_id}-{i + 1}"))
            watching.append(asyncio.create_task(spectate(stub, bots, i, auth)))
    playing = play_watching if watch else play
    try:
        await playing(stub, bots, hands, rng, latencies, leave, think)
    finally:
        for t in watching:
            t.cancel()
        ended = await asyncio.gather(*watching, return_exceptions=True)
    # a spectator refused or cut off (a gRPC status) is the table's error, as a bot's is
    failed = [e for e in ended if isinstance(e, Exception)]
    if failed:
        raise failed[0]
    return bots


async def _state(stub: table_pb2_grpc.TableServiceStub, bots: BotTable,
                 watch: tuple) -> table_pb2.TableView:
    """The table as a spectator sees it (retried: a read)."""
    return await retrying(stub.GetState, table_pb2.ViewRequest(table_id=bots.table_id), watch,
                          bots.retry_s)


#: how long bots wait between hands for the table to deal the next one (a driver held up by
#: a service that is restarting retries with a backoff of its own)
NEXT_HAND_WAIT_S = 30.0


def _can_deal(view: table_pb2.TableView, bots: BotTable) -> bool:
    """At least two of the bots have chips (or chips on their way from the wallet) and are
    not sitting out: the table deals them another hand."""
    return sum(1 for s in view.seats if s.seat in bots.tokens and not s.sitting_out
               and (s.stack > 0 or s.pending > 0)) >= 2


async def _next_hand(stub: table_pb2_grpc.TableServiceStub, bots: BotTable,
                     view: table_pb2.TableView, watch) -> table_pb2.TableView | None:
    """Between hands, nobody broke: the view once the next hand is under way, or None when
    the table cannot deal one (or has not within :data:`NEXT_HAND_WAIT_S`)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + NEXT_HAND_WAIT_S
    delay = 0.02
    while _can_deal(view, bots) and loop.time() < deadline:
        await asyncio.sleep(delay)  # a client polling its table, backing off
        delay = min(2 * delay, 0.5)
        view = await _state(stub, bots, watch)
        if view.to_act or _running(view):
            return view
    return None
