"""Identity and seats that hold up (issue 24), through every service on real gRPC servers, the
reference wallet and a real nats-server:

- two subjects that differ in case are two players: two accounts with two wallets, two seats,
  neither able to spend the other's chips or act from the other's seat; the pages and the
  history print each one's name, numbered when the names fold together;
- a seat is never stranded: a player whose seat token is lost (its sign-in expired, another
  device) resumes the seat by proving who they are (ResumeSeat): the old token stops working,
  the new one acts and leaves with every chip, and the log records the change;
- bad input at ResumeSeat gets a clear status and appends nothing;
- one account's sit-downs are limited across tables, so one player cannot grow the log and
  the ledger without bound (about 1.1 KB a sit-down and leave: about 13 KB a minute).
"""

from __future__ import annotations

import uuid

import grpc
import pytest
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.wallet.ledger import read_ledger
from shared.history import pokerstars
from shared.history.log import table_hands
from shared.infra.limits import retry_after_s
from shared.infra.seattokens import new_seat_token
from shared.infra.waiting import until
from shared.poker import events as E
from tests.helpers.tables import Table, clocked_stack
from tests.system.test_wallet_tables import balance, money_audit

NL = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1,
                       big_blind=2, rake_basis_points=0)


def as_player(stack, subject: str, name: str | None = None, ttl_s: int = 3600):
    """The table service as ``subject`` (their own token of the stack's provider)."""
    channel = stack.channel("table", token=stack.issuer.token(subject, ttl_s=ttl_s, name=name))
    stub = table_pb2_grpc.TableServiceStub(channel)
    stub.channel = channel
    return stub


async def create(stack, table_id: str) -> None:
    operator = table_pb2_grpc.TableServiceStub(stack.as_operator())
    await operator.CreateTable(tpb.CreateTableRequest(table_id=table_id, settings=NL,
                                                      command_id="create"))


async def sit(stub, table_id: str, seat: int, buy_in: int) -> str:
    token, digest = new_seat_token()
    await stub.SitDown(tpb.SitDownRequest(table_id=table_id, seat=seat, buy_in=buy_in,
                                          command_id=uuid.uuid4().hex,
                                          seat_token_sha256=digest))
    return token


async def test_subjects_that_differ_in_case_are_two_players_with_two_wallets(stack, store):
    await create(stack, "cases")
    await stack.deposit("rtcasex", 200)
    upper, lower = as_player(stack, "RTCASEX"), as_player(stack, "rtcasex")
    # RTCASEX has no chips of their own: rtcasex's wallet is not theirs
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await sit(upper, "cases", 1, 200)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert await balance(stack, "rtcasex") == 200 and await balance(stack, "RTCASEX") == 0
    lower_token = await sit(lower, "cases", 2, 200)
    await stack.deposit("RTCASEX", 150)
    upper_token = await sit(upper, "cases", 1, 150)  # a second seat: another player
    view = await lower.GetState(tpb.ViewRequest(table_id="cases"))
    seats = {s.seat: s for s in view.seats}
    assert (seats[1].player_id, seats[2].player_id) == ("RTCASEX", "rtcasex")
    assert {seats[1].name, seats[2].name} == {"rtcasex", "RTCASEX (2)"} or \
        {seats[1].name, seats[2].name} == {"RTCASEX", "rtcasex (2)"}
    assert await balance(stack, "rtcasex") == 0 and await balance(stack, "RTCASEX") == 0
    # neither may act or leave from the other's seat, even with its token
    for stub, seat, token in ((upper, 2, lower_token), (lower, 1, upper_token)):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.Leave(tpb.SeatRequest(table_id="cases", seat=seat, seat_token=token,
                                             command_id="steal"))
        assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    for stub, seat, token in ((upper, 1, upper_token), (lower, 2, lower_token)):
        await stub.Leave(tpb.SeatRequest(table_id="cases", seat=seat, seat_token=token,
                                         command_id="leave"))

    async def cashed_out():
        return await balance(stack, "RTCASEX") + await balance(stack, "rtcasex") == 350

    await until(cashed_out, timeout=10, what="both cashed out")
    assert (await money_audit(stack, store, "cases")).ok


async def test_the_history_prints_names_not_ids(nats_server):
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        await create(stack, "names")
        players = {1: ("auth0|1001", "Mary"), 2: ("auth0|1002", "mary")}
        tokens = {}
        for seat, (subject, name) in players.items():
            await stack.deposit(subject, 100)
            tokens[seat] = await sit(as_player(stack, subject, name=name), "names", seat, 100)
        t = Table(stack, store, "names")
        t.players.update({seat: subject for seat, (subject, _) in players.items()})
        t.tokens.update(tokens)
        t.stub._stubs.update({subject: as_player(stack, subject) for subject, _ in
                              players.values()})
        view = await t.view()
        while view.hand_no == 1 and view.to_act:
            view = await t.call_or_check()
        [hand] = [h for h in table_hands(await store.read("names")) if h.hand_no == 1]
        text = pokerstars(hand)
        assert "Mary" in text and "mary (2)" in text
        assert "auth0|" not in text  # the ids are never printed


async def test_a_lost_seat_token_is_replaced_by_proving_who_you_are(stack, store):
    await create(stack, "resume")
    await stack.deposit("alice", 200)
    await stack.deposit("bob", 200)
    alice = as_player(stack, "alice")
    old = await sit(alice, "resume", 1, 200)
    await sit(as_player(stack, "bob"), "resume", 2, 200)
    watching = alice.Watch(tpb.ViewRequest(table_id="resume", seat=1, seat_token=old))
    await watching.read()

    # a new sign-in (hers expired, or another device): the same person, a new token of the
    # identity provider, and no seat token any more
    again = as_player(stack, "alice")
    token, digest = new_seat_token()
    before = len(await store.read("resume"))
    reply = await again.ResumeSeat(tpb.ResumeSeatRequest(
        table_id="resume", seat=1, seat_token_sha256=digest, command_id="resume-1"))
    assert reply.version and not reply.seat_token  # her own token: only its digest travelled
    replaced = [e for e in await events(store, "resume") if isinstance(e, E.SeatTokenReplaced)]
    assert replaced == [E.SeatTokenReplaced(1, "alice", digest)]
    assert len(await store.read("resume")) == before + 1
    # the old token proves nothing now; a stream opened with it ends
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await again.GetState(tpb.ViewRequest(table_id="resume", seat=1, seat_token=old))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.aio.AioRpcError):
        while True:
            await watching.read()
    # the new one plays and leaves with every chip
    view = await again.GetState(tpb.ViewRequest(table_id="resume", seat=1, seat_token=token))
    assert any(c != "??" for s in view.seats if s.seat == 1 for c in s.cards)
    await again.Leave(tpb.SeatRequest(table_id="resume", seat=1, seat_token=token,
                                      command_id="leave"))

    async def home():
        table = await again.GetState(tpb.ViewRequest(table_id="resume"))
        return all(s.seat != 1 for s in table.seats) and await balance(stack, "alice") > 0

    await until(home, timeout=20, what="alice's chips back in her wallet")
    audit = await money_audit(stack, store, "resume")
    assert audit.ok, audit.problems


async def events(store, table_id: str) -> list:
    from shared.infra.commits import parse_commit
    return [e for s in await store.read(table_id) for e in parse_commit(s.data).events()]


async def test_bad_resumes_are_refused_and_append_nothing(stack, store):
    await create(stack, "bad-resume")
    await stack.deposit("alice", 100)
    alice = as_player(stack, "alice")
    await sit(alice, "bad-resume", 1, 100)
    mallory = as_player(stack, "mallory")
    before = len(await store.read("bad-resume"))
    for stub, request, code, words in (
            (mallory, tpb.ResumeSeatRequest(table_id="bad-resume", seat=1, command_id="m"),
             grpc.StatusCode.FAILED_PRECONDITION, "not yours"),
            (alice, tpb.ResumeSeatRequest(table_id="bad-resume", seat=2, command_id="a"),
             grpc.StatusCode.FAILED_PRECONDITION, "not yours"),
            (alice, tpb.ResumeSeatRequest(table_id="bad-resume", seat=1, command_id="b",
                                          seat_token_sha256="ABC"),
             grpc.StatusCode.INVALID_ARGUMENT, "64"),
            (alice, tpb.ResumeSeatRequest(table_id="no such/table", seat=1, command_id="c"),
             grpc.StatusCode.INVALID_ARGUMENT, "table_id"),
            (alice, tpb.ResumeSeatRequest(table_id="nosuch", seat=1, command_id="d"),
             grpc.StatusCode.NOT_FOUND, "nosuch")):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.ResumeSeat(request)
        assert refused.value.code() is code, (request, refused.value)
        assert words in refused.value.details()
    operator = table_pb2_grpc.TableServiceStub(stack.as_operator())
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await operator.ResumeSeat(tpb.ResumeSeatRequest(table_id="bad-resume", seat=1,
                                                        command_id="op"))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    assert len(await store.read("bad-resume")) == before


async def test_one_accounts_sit_downs_are_limited_across_tables(nats_server):
    """Sitting down and leaving over and over appends log and ledger for ever: past a burst,
    one account's sit-downs are held to a rate (another player's are not), and the bytes a
    minute that allows stay under 50 KB."""
    async with clocked_stack(nats_server.url, env={"POKER_LIMIT_PLAYER_JOINS_BURST": "4",
                                                   "POKER_LIMIT_PLAYER_JOINS_PER_S": "0.2"}) \
            as (stack, clock, store):
        for n in range(6):
            await create(stack, f"churn-{n}")
        await stack.deposit("churner", 10_000)
        churner = as_player(stack, "churner")
        log0 = sum(len(s.data) for _, s in await store.read_all())
        ledger0 = sum(len(e.SerializeToString()) for _, e in await read_ledger(store.js))
        for n in range(4):  # the burst: sit down, leave
            token = await sit(churner, f"churn-{n}", 1, 100)
            await churner.Leave(tpb.SeatRequest(table_id=f"churn-{n}", seat=1,
                                                seat_token=token, command_id=f"l{n}"))

        async def settled():
            return await balance(stack, "churner") == 10_000

        await until(settled, timeout=10, what="every cash-out credited")
        per_cycle = (sum(len(s.data) for _, s in await store.read_all()) - log0 +
                     sum(len(e.SerializeToString()) for _, e in await read_ledger(store.js))
                     - ledger0) / 4
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await sit(churner, "churn-4", 1, 100)
        assert refused.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "sit-downs by this player" in refused.value.details()
        assert retry_after_s(refused.value) is not None
        await stack.deposit("someone", 100)
        await sit(as_player(stack, "someone"), "churn-5", 1, 100)  # another player sits
        # the default rate (0.2 a second) lets one account add this much a minute
        print(f"one sit-down and leave: {per_cycle:.0f} bytes of log and ledger")
        assert per_cycle * 0.2 * 60 < 50_000, per_cycle
