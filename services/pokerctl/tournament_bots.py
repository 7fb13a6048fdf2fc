"""Bots that play a tournament through the public APIs: each registers with its own token and
seat token (only the digest goes to the director), and plays wherever the director seats it,
following it through moves, until the tournament ends.

One loop reads each running table as a spectator (TableService.GetState: the legal options
of the player on turn are public) and has the bot on turn act with its own token and seat
token (:class:`~services.pokerctl.botclient.Bot`'s policy: folds, calls, raises, all-ins)."""

from __future__ import annotations

import asyncio
import random
import secrets
from dataclasses import dataclass, field

import grpc
from poker.table.v1 import table_pb2, table_pb2_grpc
from poker.tournament.v1 import tournament_pb2 as tpb
from poker.tournament.v1 import tournament_pb2_grpc

from shared.infra.bearer import bearer_metadata
from shared.infra.protomap import ACTION_KIND
from shared.infra.seattokens import new_seat_token
from shared.poker.handrunner import random_policy

from .botclient import Sponsor, legal_from

#: how long the loop waits when no bot is on turn (a table dealing, the director between
#: hands) before it reads the tables again
IDLE_S = 0.01
#: the longest one call may take (a service that does not answer fails the bots' game)
CALL_S = 15.0


@dataclass
class TournamentBot:
    player: str
    token: str  # the seat token (secret); the director has its digest
    digest: str
    auth: tuple


@dataclass
class BotField:
    tournament_id: str
    bots: dict[str, TournamentBot] = field(default_factory=dict)
    actions: int = 0


async def register_bots(stub: tournament_pb2_grpc.TournamentServiceStub, sponsor: Sponsor,
                        tournament_id: str, count: int, prefix: str = "tbot") -> BotField:
    """``count`` bots, each funded with the buy-in and fee and registered."""
    view = await stub.GetTournament(tpb.GetTournamentRequest(tournament_id=tournament_id),
                                    metadata=sponsor.operator())
    cost = view.structure.buy_in + view.structure.fee
    out = BotField(tournament_id)
    for i in range(count):
        bot = await _new_bot(sponsor, f"{prefix}-{tournament_id}-{i + 1}", cost)
        await register(stub, out, bot)
    return out


async def _new_bot(sponsor: Sponsor, player: str, cost: int) -> TournamentBot:
    if cost:
        await sponsor.fund(player, cost)
    token, digest = new_seat_token()
    return TournamentBot(player, token, digest, bearer_metadata(sponsor.token(player)))


async def register(stub, botfield: BotField, bot: TournamentBot) -> tpb.TournamentView:
    reply = await stub.Register(tpb.RegisterRequest(
        tournament_id=botfield.tournament_id, seat_token_sha256=bot.digest,
        command_id=f"reg-{secrets.token_hex(8)}"), metadata=bot.auth)
    botfield.bots[bot.player] = bot
    return reply


async def play(stub: tournament_pb2_grpc.TournamentServiceStub,
               tables: table_pb2_grpc.TableServiceStub, botfield: BotField,
               rng: random.Random, watcher: tuple) -> tpb.TournamentView:
    """Play until the tournament is over; its last view. ``watcher``: metadata to read the
    tables with (any token)."""
    policy = random_policy(rng)
    while True:
        view = await stub.GetTournament(
            tpb.GetTournamentRequest(tournament_id=botfield.tournament_id), metadata=watcher,
            timeout=CALL_S)
        if view.status in ("finished", "cancelled"):
            return view
        acted = 0
        for table_id in {e.table_id for e in view.entries if e.table_id}:
            acted += await _act_at(tables, botfield, table_id, policy, watcher)
        if not acted:
            await asyncio.sleep(IDLE_S)


async def _act_at(tables, botfield: BotField, table_id: str, policy, watcher) -> int:
    try:
        tv = await tables.GetState(table_pb2.ViewRequest(table_id=table_id),
                                   metadata=watcher, timeout=CALL_S)
    except grpc.aio.AioRpcError as exc:
        if exc.code() is grpc.StatusCode.NOT_FOUND:
            return 0  # opened in the director's log, not at the table service yet
        raise
    if not tv.to_act:
        return 0
    seat = next((s for s in tv.seats if s.seat == tv.to_act), None)
    bot = botfield.bots.get(seat.player_id) if seat is not None else None
    if bot is None:
        return 0
    action, to = policy(None, legal_from(tv.to_act, tv.legal))
    request = table_pb2.ActRequest(
        table_id=table_id, seat=tv.to_act, seat_token=bot.token, hand_no=tv.hand_no,
        action=ACTION_KIND.to_pb(action), command_id=f"tb-{tv.version}-{secrets.token_hex(4)}")
    if to is not None:
        request.amount = to
    try:
        await tables.Act(request, metadata=bot.auth, timeout=CALL_S)
    except grpc.aio.AioRpcError as exc:
        if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
            raise
        return 0  # a stale view: read again
    botfield.actions += 1
    return 1


async def run_cli(tournament_addr: str, table_addr: str, wallet_addr: str, tournament_id: str,
                  players: int | None, seed: int | str | None, *, tls, wallet_tls,
                  issuer) -> int:
    """`pokerctl bots --tournament ID`: fill the field with bots (or ``players`` of them),
    start it if it is scheduled, play it to the end and print the result."""
    from poker.wallet.v1 import wallet_pb2_grpc

    from shared.infra.tls import channel

    from .table_addresses import table_channel
    async with channel(tournament_addr, tls, service="tournament") as tch, \
            table_channel(table_addr, tls) as tab, \
            channel(wallet_addr, wallet_tls, service="wallet") as wch:
        sponsor = Sponsor(issuer, wallet_pb2_grpc.WalletServiceStub(wch))
        stub = tournament_pb2_grpc.TournamentServiceStub(tch)
        ops = sponsor.operator()
        view = await stub.GetTournament(tpb.GetTournamentRequest(tournament_id=tournament_id),
                                        metadata=ops)
        taken = sum(e.status in ("requested", "paid") for e in view.entries)
        count = players if players is not None else view.structure.max_players - taken
        botfield = await register_bots(stub, sponsor, tournament_id, count,
                                       prefix=f"bot{secrets.token_hex(2)}")
        if view.structure.scheduled and view.status == "registering":
            await stub.Start(tpb.TournamentCommand(tournament_id=tournament_id,
                                                   command_id=f"bots-start-{tournament_id}"),
                             metadata=ops)
        final = await play(stub, table_pb2_grpc.TableServiceStub(tab), botfield,
                           random.Random(seed), ops)
    prizes = sorted((e.place, e.player_id, e.prize) for e in final.entries if e.prize)
    print(f"tournament {tournament_id}: {final.status}, {count} bots, "
          f"{botfield.actions} actions; won by {final.winner}; prizes "
          + ", ".join(f"{place}. {who} {prize}" for place, who, prize in prizes))
    return 0 if final.status == "finished" else 1
