"""Bots that play through the TableService API: legal, varied actions (folds, calls, raises of
several sizes, all-ins), the same policy as the in-process driver's bots.

Each bot is a player of its own: it calls with its own token (from the :class:`Sponsor`'s
identity provider) and buys in from its own wallet, which the sponsor funds first."""

from __future__ import annotations

import asyncio
import random
import secrets
from dataclasses import dataclass, field

import grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from services.table.calls import call_with_retry
from shared.infra.identity import OPERATOR, PLAYER, DevIssuer, bearer_metadata
from shared.infra.limits import retry_after_s
from shared.infra.protomap import ACTION_KIND
from shared.infra.seattokens import new_seat_token
from shared.poker.betting import LegalActions
from shared.poker.driver import random_policy


def legal_from(seat: int, legal: table_pb2.Legal) -> LegalActions:
    return LegalActions(
        seat=seat, can_fold=legal.can_fold, can_check=legal.can_check, call=legal.call,
        bring_in=legal.bring_in, raise_kind=ACTION_KIND.from_pb(legal.raise_kind) if legal.raise_kind else None,
        raise_sizes=tuple(legal.raise_sizes), min_to=legal.min_to, max_to=legal.max_to)


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
        await call_with_retry(self.wallet.Deposit, wallet_pb2.Transfer(
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

    def watcher(self) -> tuple:
        """Metadata to spectate the table (any player may watch a public table)."""
        return next(iter(self.auth.values()), ())


async def seat_bots(stub: table_pb2_grpc.TableServiceStub, table_id: str, seats: int,
                    buy_in: int, sponsor: Sponsor) -> BotTable:
    bots = BotTable(table_id, buy_in=buy_in, sponsor=sponsor)
    for seat in range(1, seats + 1):
        player = f"bot-{table_id}-{seat}"
        await sponsor.fund(player, buy_in)
        auth = bearer_metadata(sponsor.token(player))
        # The bot's own seat token: only its digest goes to the table, and the command id is
        # random, so nobody who knows the table can replay this SitDown for the token.
        token, token_sha256 = new_seat_token()
        await stub.SitDown(table_pb2.SitDownRequest(
            table_id=table_id, seat=seat, buy_in=buy_in,
            command_id=f"sit-{seat}-{secrets.token_hex(8)}", seat_token_sha256=token_sha256),
            metadata=auth)
        bots.tokens[seat], bots.players[seat], bots.auth[seat] = token, player, auth
    return bots


async def play(stub: table_pb2_grpc.TableServiceStub, bots: BotTable, hands: int,
               rng: random.Random, latencies: list[float] | None = None,
               leave: bool = False) -> BotTable:
    """Act for whichever bot is on turn. When hand ``hands`` starts every bot sits out (from
    the next hand), so the table stops once that hand is over; ``leave``: then every bot
    leaves, its chips cashed out to its wallet."""
    policy = random_policy(rng)
    loop = asyncio.get_running_loop()
    leaving = False
    watch = bots.watcher()
    view = await stub.GetState(table_pb2.ViewRequest(table_id=bots.table_id), metadata=watch)
    while True:
        if view.hand_no >= hands and not leaving:
            await _sit_out_all(stub, bots)
            leaving = True
        if view.to_act == 0:
            view = await stub.GetState(table_pb2.ViewRequest(table_id=bots.table_id),
                                       metadata=watch)
            if view.to_act == 0:
                if leaving:
                    break
                if view.phase in ("waiting", "done"):
                    # Between hands: bots that went broke buy back in; else the next hand
                    # comes once the table's driver gets to it, unless the table is over.
                    if await _rebuy(stub, bots, view):
                        view = await stub.GetState(
                            table_pb2.ViewRequest(table_id=bots.table_id), metadata=watch)
                    else:
                        later = await _next_hand(stub, bots, view, watch)
                        if later is None:
                            break
                        view = later
                continue
        seat = view.to_act  # every view carries the options of the player on turn
        token = bots.tokens[seat]
        action, to = policy(None, legal_from(seat, view.legal))
        request = table_pb2.ActRequest(
            table_id=bots.table_id, seat=seat, seat_token=token, hand_no=view.hand_no,
            # A fresh id per decision: a retry of this very request keeps it, a new decision
            # (after a refusal on a stale view) gets its own.
            action=ACTION_KIND.to_pb(action),
            command_id=f"bot-{view.version}-{seat}-{secrets.token_hex(4)}")
        if to is not None:
            request.amount = to
        started = loop.time()
        try:
            reply = await stub.Act(request, metadata=bots.auth[seat])
        except grpc.aio.AioRpcError as exc:
            if exc.code() is grpc.StatusCode.FAILED_PRECONDITION:
                view = await stub.GetState(table_pb2.ViewRequest(table_id=bots.table_id),
                                           metadata=watch)
                continue
            wait = retry_after_s(exc)
            if wait is not None:  # over the seat's rate: wait as told, then decide again
                await asyncio.sleep(wait)
                continue
            raise
        if latencies is not None:
            latencies.append(loop.time() - started)
        bots.actions += 1
        view = reply.view
    bots.hands_seen = view.hand_no
    if leave:
        for seat, token in bots.tokens.items():
            await stub.Leave(table_pb2.SeatRequest(
                table_id=bots.table_id, seat=seat, seat_token=token,
                command_id=f"leave-{seat}-{secrets.token_hex(4)}"), metadata=bots.auth[seat])
    return bots


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
        view = await stub.GetState(table_pb2.ViewRequest(table_id=bots.table_id),
                                   metadata=watch)
        if view.to_act or view.phase not in ("waiting", "done"):
            return view
    return None


async def _rebuy(stub: table_pb2_grpc.TableServiceStub, bots: BotTable,
                 view: table_pb2.TableView) -> bool:
    """Every bot that went broke buys back in for its first buy-in (between hands)."""
    broke = [s for s in view.seats if s.stack == 0 and s.seat in bots.tokens]
    if not broke or not bots.buy_in:
        return False
    for s in broke:
        if bots.sponsor is not None:
            await bots.sponsor.fund(bots.players[s.seat], bots.buy_in)
        await stub.TopUp(table_pb2.TopUpRequest(seat=table_pb2.SeatRequest(
            table_id=bots.table_id, seat=s.seat, seat_token=bots.tokens[s.seat],
            command_id=f"rebuy-{view.version}-{s.seat}"), amount=bots.buy_in),
            metadata=bots.auth[s.seat])
    return True


async def _sit_out_all(stub: table_pb2_grpc.TableServiceStub, bots: BotTable) -> None:
    for seat, token in bots.tokens.items():
        try:
            await stub.SitOut(table_pb2.SitOutRequest(
                seat=table_pb2.SeatRequest(table_id=bots.table_id, seat=seat, seat_token=token,
                                           command_id=f"out-{seat}"), sit_out=True),
                metadata=bots.auth[seat])
        except grpc.aio.AioRpcError as exc:
            if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
                raise
