"""Bad commands at the director (TournamentService) and at a tournament's tables
(TournamentTables): each is answered with its gRPC status and a reason a person can act on,
and nothing is appended: neither the tournaments' log nor the table log moves, and no money."""

from __future__ import annotations

import grpc
import pytest
from poker.table.v1 import table_pb2 as tab
from poker.tournament.v1 import tournament_pb2 as tpb
from poker.tournament.v1 import tournament_pb2_grpc
from poker.wallet.v1 import wallet_pb2

from services.tournament.log import STREAM
from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import STREAM as TABLES
from shared.infra.identity import DIRECTOR, OPERATOR
from tests.system.test_tournaments import fast_structure

C = grpc.StatusCode
DIGEST = "ab" * 32


@pytest.fixture
async def director(nats_server):
    from services.stack import start_local
    s = await start_local(nats_server.url, env={"POKER_CLOCK_TICK_MS": "20"})
    await s.start_service("tournament")
    channels = [s.channel("tournament"), s.channel("table")]
    yield s, tournament_pb2_grpc.TournamentServiceStub(channels[0]), \
        tournament_pb2_grpc.TournamentTablesStub(channels[1])
    for ch in channels:
        await ch.close()
    await s.stop()


async def _last(store, stream: str) -> int:
    return (await store.js.stream_info(stream)).state.last_seq


async def _refused(store, call, code: C, reason: str) -> None:
    before = (await _last(store, STREAM), await _last(store, TABLES))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert err.value.code() is code, err.value.details()
    assert reason in err.value.details()
    assert (await _last(store, STREAM), await _last(store, TABLES)) == before


async def test_bad_commands_change_nothing(director, store):
    stack, stub, tables = director
    issuer = stack.issuer
    ops = bearer_metadata(issuer.token("ops", (OPERATOR,)))
    alice = bearer_metadata(issuer.token("alice"))
    await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="bad1", structure=fast_structure(3), command_id="c"), metadata=ops)
    await stack.deposit("alice", 1000)

    await _refused(store, stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="x", command_id="c2"), metadata=alice), C.PERMISSION_DENIED, "operator")
    await _refused(store, stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="a b", command_id="c3"), metadata=ops), C.INVALID_ARGUMENT,
        "a tournament id is")
    wrong = fast_structure(3)
    wrong.levels[0].small_blind = 50
    await _refused(store, stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="bad2", structure=wrong, command_id="c4"), metadata=ops),
        C.INVALID_ARGUMENT, "small blind <= big blind")
    await _refused(store, stub.Register(tpb.RegisterRequest(
        tournament_id="bad1", seat_token_sha256="nope", command_id="r1"), metadata=alice),
        C.INVALID_ARGUMENT, "64 lowercase hex")
    await _refused(store, stub.Register(tpb.RegisterRequest(
        tournament_id="none", seat_token_sha256=DIGEST, command_id="r2"), metadata=alice),
        C.NOT_FOUND, "no tournament")
    poor = bearer_metadata(issuer.token("bob"))
    await _refused(store, stub.Register(tpb.RegisterRequest(
        tournament_id="bad1", seat_token_sha256=DIGEST, command_id="r3"), metadata=poor),
        C.FAILED_PRECONDITION, "your wallet holds 0")
    await _refused(store, stub.Unregister(tpb.TournamentCommand(
        tournament_id="bad1", command_id="u1"), metadata=alice), C.FAILED_PRECONDITION,
        "no paid entry")
    await _refused(store, stub.Start(tpb.TournamentCommand(
        tournament_id="bad1", command_id="s1"), metadata=alice), C.PERMISSION_DENIED,
        "operator")
    await _refused(store, stub.Start(tpb.TournamentCommand(
        tournament_id="bad1", command_id="s2"), metadata=ops), C.FAILED_PRECONDITION,
        "0 entries: it needs at least 3")

    await stub.Register(tpb.RegisterRequest(tournament_id="bad1", seat_token_sha256=DIGEST,
                                            command_id="r4"), metadata=alice)
    await _refused(store, stub.Register(tpb.RegisterRequest(
        tournament_id="bad1", seat_token_sha256=DIGEST, command_id="r5"), metadata=alice),
        C.FAILED_PRECONDITION, "already registered")
    # a command id reused for another command is refused, as at the tables; the same
    # command again is a retry, answered with the tournament as it stands
    await _refused(store, stub.Register(tpb.RegisterRequest(
        tournament_id="bad1", seat_token_sha256="cd" * 32, command_id="r4"), metadata=alice),
        C.INVALID_ARGUMENT, "already used for a different command")
    await _refused(store, stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="bad1", structure=fast_structure(4), command_id="c"), metadata=ops),
        C.INVALID_ARGUMENT, "already used for a different command")
    before = await _last(store, STREAM)
    again = await stub.Register(tpb.RegisterRequest(
        tournament_id="bad1", seat_token_sha256=DIGEST, command_id="r4"), metadata=alice)
    assert [e.entry_no for e in again.entries if e.player_id == "alice"] == [1]
    assert await _last(store, STREAM) == before
    balance = await stack.sponsor().wallet.Balance(wallet_pb2.BalanceRequest(
        account=wallet_pb2.Account(player_id="alice")))
    assert balance.balance == 1000 - 110  # one entry, one debit


async def test_only_the_director_commands_a_tournament_table(director, store):
    stack, _, tables = director
    ops = bearer_metadata(stack.issuer.token("ops", (OPERATOR,)))
    boss = bearer_metadata(stack.issuer.token("director", (DIRECTOR, OPERATOR)))
    await tables.OpenTable(tpb.OpenTableRequest(
        table_id="tt1", command_id="o", tournament_id="t", max_seats=6,
        level=tpb.Level(small_blind=10, big_blind=20, minutes=1)), metadata=boss)
    seat = tpb.SeatEntrantRequest(table_id="tt1", command_id="s", seat=1, player_id="alice",
                                  stack=500, seat_token_sha256=DIGEST)
    await _refused(store, tables.SeatEntrant(seat, metadata=ops), C.PERMISSION_DENIED,
                   "director")
    alice = bearer_metadata(stack.issuer.token("alice"))
    await _refused(store, tables.Release(tpb.TableCommandRequest(
        table_id="tt1", command_id="r"), metadata=alice), C.PERMISSION_DENIED, "director")
    # a cash table is no tournament's: the director's commands are refused there too
    from poker.events.v1 import events_pb2 as ev
    from poker.table.v1 import table_pb2_grpc
    cash = table_pb2_grpc.TableServiceStub(stack.channel("table"))
    await cash.CreateTable(tab.CreateTableRequest(table_id="cash1", command_id="c", settings=tab.TableSettings(
        game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1, big_blind=2)),
        metadata=ops)
    seat.table_id = "cash1"
    await _refused(store, tables.SeatEntrant(seat, metadata=boss), C.FAILED_PRECONDITION,
                   "not a tournament table")
    # and a tournament table takes no sit-down
    await stack.deposit("alice", 1000)
    await _refused(store, cash.SitDown(tab.SitDownRequest(
        table_id="tt1", seat=2, buy_in=100, command_id="sd", seat_token_sha256=DIGEST),
        metadata=alice), C.FAILED_PRECONDITION, "no sitting down")


@pytest.fixture
async def limited(nats_server):
    from services.stack import start_local
    s = await start_local(nats_server.url, env={
        "POKER_CLOCK_TICK_MS": "20", "POKER_LIMIT_TOURNAMENT_ENTRIES_BURST": "4",
        "POKER_LIMIT_TOURNAMENT_ENTRIES_PER_S": "0.01"})
    await s.start_service("tournament")
    channel = s.channel("tournament")
    yield s, tournament_pb2_grpc.TournamentServiceStub(channel)
    await channel.close()
    await s.stop()


async def test_one_players_flood_of_registrations_is_refused_and_others_still_register(
        limited, store):
    """Alice registers and unregisters in a loop: past her burst she is refused with
    RESOURCE_EXHAUSTED (when to retry), nothing appended and no money moved; Bob registers."""
    stack, stub = limited
    ops = bearer_metadata(stack.issuer.token("ops", (OPERATOR,)))
    alice = bearer_metadata(stack.issuer.token("alice"))
    await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="flood", structure=fast_structure(3), command_id="c"), metadata=ops)
    await stack.deposit("alice", 1000)
    await stack.deposit("bob", 1000)
    for n in range(2):
        await stub.Register(tpb.RegisterRequest(tournament_id="flood", seat_token_sha256=DIGEST,
                                                command_id=f"r{n}"), metadata=alice)
        await stub.Unregister(tpb.TournamentCommand(tournament_id="flood", command_id=f"u{n}"),
                              metadata=alice)
    await _refused(store, stub.Register(tpb.RegisterRequest(
        tournament_id="flood", seat_token_sha256=DIGEST, command_id="r9"), metadata=alice),
        C.RESOURCE_EXHAUSTED, "too many registrations, unregistrations, rebuys and add-ons by "
                              "this player")
    for call in (stub.Unregister, stub.Rebuy, stub.AddOn):  # the same limit
        await _refused(store, call(tpb.TournamentCommand(
            tournament_id="flood", command_id="u9"), metadata=alice), C.RESOURCE_EXHAUSTED,
            "; retry in ")
    bob = bearer_metadata(stack.issuer.token("bob"))
    view = await stub.Register(tpb.RegisterRequest(
        tournament_id="flood", seat_token_sha256=DIGEST, command_id="r1"), metadata=bob)
    assert [(e.player_id, e.status) for e in view.entries if e.player_id == "bob"] == [
        ("bob", "paid")]
    balance = await stack.sponsor().wallet.Balance(wallet_pb2.BalanceRequest(
        account=wallet_pb2.Account(player_id="alice")))
    assert balance.balance == 1000  # two entries, each refunded


async def test_a_player_who_keeps_withdrawing_is_refused_further_entries(director, store):
    stack, stub, _ = director
    ops = bearer_metadata(stack.issuer.token("ops", (OPERATOR,)))
    alice = bearer_metadata(stack.issuer.token("alice"))
    await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="loop", structure=fast_structure(3), command_id="c"), metadata=ops)
    await stack.deposit("alice", 1000)
    for n in range(3):
        await stub.Register(tpb.RegisterRequest(tournament_id="loop", seat_token_sha256=DIGEST,
                                                command_id=f"r{n}"), metadata=alice)
        await stub.Unregister(tpb.TournamentCommand(tournament_id="loop", command_id=f"u{n}"),
                              metadata=alice)
    await _refused(store, stub.Register(tpb.RegisterRequest(
        tournament_id="loop", seat_token_sha256=DIGEST, command_id="r9"), metadata=alice),
        C.FAILED_PRECONDITION, "withdrawn or been refused 3 entries to loop")


async def test_a_decision_the_fold_refuses_never_reaches_the_log(director, store):
    """The log folds a decision's events before appending them: a reveal that is not the
    committed seed (a bug, were a decision to make one) raises and appends nothing."""
    from services.tournament.log import TournamentLog
    from shared.poker.errors import InvalidEvent
    from shared.poker.tournament import events as TE
    stack, stub, _ = director
    ops = bearer_metadata(stack.issuer.token("ops", (OPERATOR,)))
    await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="bug", structure=fast_structure(3), command_id="c"), metadata=ops)
    tlog = TournamentLog(store.nc, store.js, lambda: 0)
    before = await _last(store, STREAM)
    with pytest.raises(InvalidEvent, match="draw 1 was not the last committed"):
        await tlog.execute("bug", "wrong", lambda s: [TE.PlayersSeated(1, "00" * 32, ())])
    assert await _last(store, STREAM) == before
    assert (await tlog.get("bug")).state is not None  # the log still loads


async def test_a_tournament_log_changed_after_the_fact_breaks_its_hash_chain(director, store):
    """A tournament's commits copied to another tournament's subject load as they are; with
    one changed, the copy's chain breaks at the next commit: the log does not load
    (DATA_LOSS) and the audit names the tournament."""
    import json

    from services.tournament.audit import audit_tournaments, read_tournaments
    from services.tournament.log import TournamentLog
    from shared.infra.repository import CorruptLog
    stack, stub, _ = director
    ops = bearer_metadata(stack.issuer.token("ops", (OPERATOR,)))
    alice = bearer_metadata(stack.issuer.token("alice"))
    await stub.CreateTournament(tpb.CreateTournamentRequest(
        tournament_id="chain", structure=fast_structure(3), command_id="c"), metadata=ops)
    await stack.deposit("alice", 1000)
    await stub.Register(tpb.RegisterRequest(tournament_id="chain", seat_token_sha256=DIGEST,
                                            command_id="r"), metadata=alice)
    tlog = TournamentLog(store.nc, store.js, lambda: 0)
    commits = await tlog.store.read("chain")
    assert len(commits) == 3  # created, entry requested, entry paid

    async def copy(to: str, change=lambda data: data) -> None:
        seq = 0
        for k, c in enumerate(commits):
            seq, _ = await tlog.store.append(to, change(c.data) if k == 1 else c.data, seq,
                                             f"{to}:{k}")

    def another_token(data: bytes) -> bytes:
        raw = json.loads(data)
        raw["events"][0]["token_digest"] = "cd" * 32
        return json.dumps(raw, separators=(",", ":"), sort_keys=True).encode()

    await copy("copied")
    assert (await tlog.get("copied")).state.entries[0].player_id == "alice"
    await copy("changed", another_token)
    with pytest.raises(CorruptLog, match="hash chain breaks at commit"):
        await tlog.get("changed")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await stub.GetTournament(tpb.GetTournamentRequest(tournament_id="changed"),
                                 metadata=ops)
    assert err.value.code() is C.DATA_LOSS
    problems = await audit_tournaments(store, await read_tournaments(store))
    assert [p for p in problems if "hash chain" in p] == [
        f"tournament changed: its log does not hold: the tournament's hash chain breaks at "
        f"commit {(await tlog.store.read('changed'))[2].seq}: a commit was changed, removed, "
        f"inserted or reordered"]
