"""Bots that play through the TableService API: legal, varied actions (folds, calls, raises of
several sizes, all-ins), the same policy as the in-process driver's bots.

Each bot is a player of its own: it calls with its own token (from the :class:`Sponsor`'s
identity provider) and buys in from its own wallet, which the sponsor funds first.

Clients reach the table service through :func:`table_channel`: one address, or a
comma-separated list of them (POKER_TABLE_ADDR, ``--table``; read by :func:`parse_addresses`,
the one place a client's list is read), balanced call by call over the instances. Every call
a bot makes is idempotent (a command id of its own, the same on every attempt) and retried
through an instance that goes away (:func:`retrying`): the services deduplicate by command
id, so an action retried after its first attempt landed is applied once."""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import random
import re
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace

import grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from shared.infra import retry
from shared.infra.identity import OPERATOR, PLAYER, DevIssuer, bearer_metadata
from shared.infra.limits import retry_after_s
from shared.infra.protomap import ACTION_KIND
from shared.infra.retry import PLAYER_RETRY, RetryPolicy
from shared.infra.seattokens import new_seat_token
from shared.infra.tls import TlsConfig, channel
from shared.poker.betting import LegalActions
from shared.poker.driver import random_policy

# --- addresses ---------------------------------------------------------------------------


class AddressError(ValueError):
    """An address list that does not parse; the message says what is wrong and what to give."""


#: gRPC target schemes a single address may carry (``dns:///table:50051``: a name that
#: resolves to several instances, balanced as a list is)
_SCHEMES = ("dns:", "ipv4:", "ipv6:", "unix:", "unix-abstract:", "vsock:")
_HOST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]")


def parse_addresses(text: str, what: str = "table service") -> list[str]:
    """The addresses of ``text``: ``host:port``, or a comma-separated list of them (spaces
    around an entry are dropped), as shared/infra/tls.channel balances them (round robin).

    A list is handed to gRPC as one ``ipv4:`` target, so each of its entries must be an IPv4
    address and port (``127.0.0.1:50051,127.0.0.1:50071``); a single entry may also be a host
    name (``table:50051``), ``[::1]:50051`` or a gRPC target (``dns:///table:50051``). The TLS
    check does not depend on the address: the server must prove the service's identity
    whichever instance answers. :class:`AddressError` for an empty list or entry, a
    duplicate, a port that is not 1..65535, or a host that cannot be in a list."""
    if not text or not text.strip():
        raise AddressError(f"no {what} address: give host:port, or a comma-separated list "
                           "of them (127.0.0.1:50051,127.0.0.1:50071)")
    entries = [entry.strip() for entry in text.split(",")]
    if any(not entry for entry in entries):
        raise AddressError(f"{what} address list {text!r} has an empty entry: give "
                           "host:port[,host:port...] with no empty item")
    if len(entries) == 1 and entries[0].lower().startswith(_SCHEMES):
        return entries
    out: list[str] = []
    for entry in entries:
        if entry.lower().startswith(_SCHEMES):
            raise AddressError(f"{what} address {entry!r} in a list: a gRPC target "
                               "(dns:///NAME:PORT, ...) must be the only address given")
        host, port = _host_port(entry, what)
        if len(entries) > 1:
            try:
                ipaddress.IPv4Address(host)
            except ValueError:
                raise AddressError(
                    f"{what} address {entry!r} in a list: every entry of a list must be an "
                    "IPv4 address and port (127.0.0.1:50051); for a name that resolves to "
                    "every instance give it alone (dns:///NAME:PORT)") from None
        address = f"{host}:{port}"
        if address in out:
            raise AddressError(f"{what} address {address} is twice in the list {text!r}")
        out.append(address)
    return out


def _host_port(entry: str, what: str) -> tuple[str, int]:
    host, colon, port = entry.rpartition(":")
    if not colon or not host:
        raise AddressError(f"{what} address {entry!r} is not host:port (127.0.0.1:50051)")
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise AddressError(f"{what} address {entry!r}: the port must be a number from 1 to "
                           "65535")
    if not _HOST.fullmatch(host) or (":" in host and not host.startswith("[")):
        raise AddressError(f"{what} address {entry!r}: {host!r} is not a host name or IP "
                           "address (an IPv6 address goes in brackets: [::1]:50051)")
    return host, int(port)


def address_list(text: str) -> str:
    """An argparse ``type`` for ``--table-addr`` (its default, POKER_TABLE_ADDR, is checked
    the same way): the list as :func:`parse_addresses` reads it, comma-joined."""
    try:
        return ",".join(parse_addresses(text))
    except AddressError as exc:
        raise argparse.ArgumentTypeError(f"{exc} (--table-addr, or POKER_TABLE_ADDR)") from None


def table_channel(addresses: str, tls: TlsConfig | None,
                  options=()) -> grpc.aio.Channel:
    """A channel to the table service over every instance of ``addresses`` (round robin;
    the server must present the ``table`` certificate, whatever its address)."""
    return channel(",".join(parse_addresses(addresses)), tls, service="table",
                   options=options)


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
        await retrying(stub.SitDown, table_pb2.SitDownRequest(
            table_id=table_id, seat=seat, buy_in=buy_in,
            command_id=f"sit-{seat}-{secrets.token_hex(8)}", seat_token_sha256=token_sha256),
            auth, bots.retry_s)
        bots.tokens[seat], bots.players[seat], bots.auth[seat] = token, player, auth
    return bots


async def play(stub: table_pb2_grpc.TableServiceStub, bots: BotTable, hands: int,
               rng: random.Random, latencies: list[float] | None = None,
               leave: bool = False) -> BotTable:
    """Act for whichever bot is on turn. When hand ``hands`` starts every bot sits out (from
    the next hand), so the table stops once that hand is over; ``leave``: then every bot
    leaves, its chips cashed out to its wallet.

    Every call is retried while the instance it reached is away (UNAVAILABLE: the channel
    picks another of its addresses), for ``bots.retry_s``, with the same command id: the
    services apply a command once whatever the number of attempts. A refused action
    (FAILED_PRECONDITION: decided on a view that is stale) is not retried: the bot reads
    the table again and decides anew, with a new command id."""
    policy = random_policy(rng)
    loop = asyncio.get_running_loop()
    leaving = False
    watch = bots.watcher()
    view = await _state(stub, bots, watch)
    while True:
        if view.hand_no >= hands and not leaving:
            await _sit_out_all(stub, bots)
            leaving = True
        if view.to_act == 0:
            view = await _state(stub, bots, watch)
            if view.to_act == 0:
                if leaving:
                    break
                if view.phase in ("waiting", "done"):
                    # Between hands: bots that went broke buy back in; else the next hand
                    # comes once the table's driver gets to it, unless the table is over.
                    if await _rebuy(stub, bots, view):
                        view = await _state(stub, bots, watch)
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
            reply = await retrying(stub.Act, request, bots.auth[seat], bots.retry_s)
        except grpc.aio.AioRpcError as exc:
            if exc.code() is grpc.StatusCode.FAILED_PRECONDITION:
                view = await _state(stub, bots, watch)
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
            await retrying(stub.Leave, table_pb2.SeatRequest(
                table_id=bots.table_id, seat=seat, seat_token=token,
                command_id=f"leave-{seat}-{secrets.token_hex(4)}"), bots.auth[seat],
                bots.retry_s)
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
        await retrying(stub.TopUp, table_pb2.TopUpRequest(seat=table_pb2.SeatRequest(
            table_id=bots.table_id, seat=s.seat, seat_token=bots.tokens[s.seat],
            command_id=f"rebuy-{view.version}-{s.seat}"), amount=bots.buy_in),
            bots.auth[s.seat], bots.retry_s)
    return True


async def _sit_out_all(stub: table_pb2_grpc.TableServiceStub, bots: BotTable) -> None:
    for seat, token in bots.tokens.items():
        try:
            await retrying(stub.SitOut, table_pb2.SitOutRequest(
                seat=table_pb2.SeatRequest(table_id=bots.table_id, seat=seat, seat_token=token,
                                           command_id=f"out-{seat}"), sit_out=True),
                bots.auth[seat], bots.retry_s)
        except grpc.aio.AioRpcError as exc:
            if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
                raise
