"""Views fan out per table (services/table/hub.py), through every service on real gRPC servers
and a real nats-server:

- many watchers of many seats and roles on one table, checked view by view against the fold
  of the log: each view is what its viewer may see (a seat's cards reach that seat only; a
  private view is never served to another seat or a spectator), views only go forward, and
  watchers cost no log reads (each commit is folded once from the live feed);
- a watcher that resumes from ``after_version`` gets no view it had and misses none after;
- a watcher that stops reading is dropped with ABORTED naming the version to resume from,
  and the table and the other watchers are not held up;
- a seat that changes hands ends its old holder's private stream before any view of the new
  holder's hand; a spectator of a private table who no longer has a seat there is ended;
- the caps: one account's 64 streams and four accounts' 256 leave a table watchable by others
  (the attack that filled a table's spectator cap), a relay is held to its own cap;
- the clock keeper holds no look at a table whose clock is not running.
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.botclient import play
from services.pokerctl.bots_cmd import TablePlan, create_and_seat
from services.table import server as table_server
from shared.infra import metrics
from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import EventStore
from shared.infra.identity import OPERATOR, RELAY
from shared.infra.limits import retry_after_s
from shared.infra.protomap import ACTION_KIND
from shared.infra.tls import channel as tls_channel
from shared.infra.waiting import until
from shared.poker import events as E
from shared.poker.events import ActionKind
from tests.helpers.tables import Table, clocked_stack
from tests.helpers.views import LogIndex, check_view

NL = TablePlan("", "holdem", "no_limit", {"small_blind": 1, "big_blind": 2})


def plan(table_id: str) -> TablePlan:
    return TablePlan(table_id, NL.game, NL.structure, dict(NL.stakes))


class Stream:
    """One Watch stream read in the background: every view it was given, and how it ended."""

    def __init__(self, stub, request: tpb.ViewRequest, auth: tuple, label: object) -> None:
        self.label = label
        self.request = request
        self.views: list[tpb.TableView] = []
        self.error: grpc.aio.AioRpcError | None = None
        self.call = stub.Watch(request, metadata=auth)
        self.task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        try:
            async for view in self.call:
                self.views.append(view)
        except grpc.aio.AioRpcError as exc:
            if exc.code() is not grpc.StatusCode.CANCELLED:
                self.error = exc

    @property
    def versions(self) -> list[int]:
        return [v.version for v in self.views]

    async def stop(self) -> None:
        self.call.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


async def settled(value):
    """``value`` as an awaitable (the conditions ``until`` waits on)."""
    return value


def hub_of(stack, table_id: str):
    return stack.keeper.hubs.get(table_id)


def table_store(stack):
    """The table service's own connection to the log (its reads are counted)."""
    return stack.keeper.repo.store


async def test_one_hub_serves_every_seat_and_spectator_only_what_each_may_see(
        stack, client_stub, sponsor, store):
    bots = await create_and_seat(client_stub, plan("hub-many"), 6, sponsor)
    rng = random.Random(7)
    # unwatched first: the table service's log reads per commit without watchers
    reads0, seq0 = table_store(stack).reads, (await store.last(bots.table_id)).seq
    await play(client_stub, bots, 2, rng)
    reads1 = table_store(stack).reads
    commits_unwatched = len(await store.read(bots.table_id, after_seq=seq0))

    streams: list[Stream] = []
    for seat, token in bots.tokens.items():  # every seat twice (two devices)
        for _ in range(2):
            streams.append(Stream(client_stub, tpb.ViewRequest(
                table_id=bots.table_id, seat=seat, seat_token=token), bots.auth[seat], seat))
    for n in range(3):  # spectators of their own accounts, and an operator
        auth = bearer_metadata(sponsor.token(f"rail-{n}"))
        streams.append(Stream(client_stub, tpb.ViewRequest(table_id=bots.table_id), auth, 0))
    streams.append(Stream(client_stub, tpb.ViewRequest(table_id=bots.table_id),
                          bearer_metadata(sponsor.token("ops", OPERATOR)), 0))

    async def all_started():
        return all(s.views for s in streams)

    await until(all_started, timeout=10, what="a first view on every stream")
    assert len(hub_of(stack, bots.table_id).watchers) == len(streams)  # one hub for all
    made0, seq1 = metrics.VIEWS_MADE._value.get(), (await store.last(bots.table_id)).seq
    reads2 = table_store(stack).reads
    await sit_in(client_stub, bots)  # they sat out when their last hand began
    bots = await play(client_stub, bots, 6, rng)
    last = (await store.last(bots.table_id)).seq

    async def caught_up():
        return all(s.versions[-1] == last for s in streams)

    await until(caught_up, timeout=10, what="every stream at the table's last version")
    reads3, made = table_store(stack).reads, metrics.VIEWS_MADE._value.get() - made0
    for s in streams:
        await s.stop()
        assert s.error is None, s.error

    log = LogIndex(await store.read(bots.table_id), stack.keyring())
    commits_watched = len([v for v in log.states if v > seq1])
    hidden = 0
    for s in streams:
        assert s.versions == sorted(set(s.versions)), "views go forward, each once"
        for view in s.views:
            check_view(log, s.label, view)
            hidden += len(log.secret_from(s.label, view.hand_no, view.version))
        # every commit while it watched reached it (nobody fell behind here)
        assert set(s.versions) >= {v for v in log.states if v > seq1}
    assert hidden > 0  # there were cards to keep from each viewer
    # each view made once per commit and kind of viewer, not once per watcher
    assert made <= commits_watched * (1 + len(bots.tokens)) + len(streams)
    # and the watchers cost no log reads: the table service read as much per commit as with
    # nobody watching (the live feed folds each commit once)
    per_commit_unwatched = (reads1 - reads0) / commits_unwatched
    per_commit_watched = (reads3 - reads2) / commits_watched
    assert per_commit_watched <= per_commit_unwatched + 0.25, \
        (per_commit_watched, per_commit_unwatched)


async def sit_in(stub, bots) -> None:
    """Every bot back in (``play`` sits them out when their last hand begins)."""
    for seat, token in bots.tokens.items():
        try:
            await stub.SitOut(tpb.SitOutRequest(seat=tpb.SeatRequest(
                table_id=bots.table_id, seat=seat, seat_token=token,
                command_id=f"in-{seat}-{random.random()}"), sit_out=False),
                metadata=bots.auth[seat])
        except grpc.aio.AioRpcError as exc:  # (a seat that was never sat out)
            if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
                raise


async def test_a_watcher_resumes_from_after_version_without_gap_or_duplicate(
        stack, client_stub, sponsor, store):
    bots = await create_and_seat(client_stub, plan("hub-resume"), 4, sponsor)
    auth = bearer_metadata(sponsor.token("rail"))
    request = tpb.ViewRequest(table_id=bots.table_id)
    reference = Stream(client_stub, request, auth, 0)
    first = Stream(client_stub, request, auth, 0)
    rng = random.Random(3)
    await until(lambda: settled(bool(first.views)), timeout=10, what="a first view")
    bots = await play(client_stub, bots, 2, rng)
    await first.stop()
    had = first.versions[-1]
    await sit_in(client_stub, bots)
    await play(client_stub, bots, 3, rng)  # the table moves on while it is away
    resumed = Stream(client_stub, tpb.ViewRequest(table_id=bots.table_id, after_version=had),
                     auth, 0)
    await sit_in(client_stub, bots)
    bots = await play(client_stub, bots, 5, rng)
    last = (await store.last(bots.table_id)).seq

    async def caught_up():
        return resumed.views and resumed.versions[-1] == last and \
            reference.versions[-1] == last

    await until(caught_up, timeout=10, what="both streams at the table's last version")
    for s in (reference, resumed):
        await s.stop()
        assert s.error is None, s.error
    assert min(resumed.versions) > had  # nothing it had
    # its first view is the table as it was when it came back; from there it misses nothing
    # the reference stream was given
    start = resumed.versions[0]
    assert resumed.versions == [v for v in reference.versions if v >= start]
    assert resumed.versions == sorted(set(resumed.versions))
    with pytest.raises(grpc.aio.AioRpcError) as bad:
        await client_stub.Watch(tpb.ViewRequest(table_id=bots.table_id, after_version=-1),
                                metadata=auth).read()
    assert bad.value.code() is grpc.StatusCode.INVALID_ARGUMENT


async def test_a_watcher_that_stops_reading_is_dropped_and_holds_nobody_up(nats_server):
    from services.stack import start_local
    stack = await start_local(nats_server.url, env={"POKER_LIMIT_WATCH_QUEUE": "4"})
    # a client whose window does not grow: its unread views back up to the server soon
    channel = tls_channel(stack.addresses["table"], stack.tls("client"), service="table",
                          options=[("grpc.http2.bdp_probe", 0),
                                   ("grpc.http2.lookahead_bytes", 1024)])
    stub = table_pb2_grpc.TableServiceStub(channel)
    try:
        sponsor = stack.sponsor()
        bots = await create_and_seat(stub, plan("hub-slow"), 6, sponsor)
        auth = bearer_metadata(sponsor.token("rail"))
        request = tpb.ViewRequest(table_id=bots.table_id)
        fast = Stream(stub, request, auth, 0)
        slow = stub.Watch(request, metadata=auth)
        taken = [await slow.read()]  # then it stops reading

        async def dropped():
            return metrics.WATCHERS_DROPPED._value.get() > dropped0

        dropped0 = metrics.WATCHERS_DROPPED._value.get()
        # the bots play on until the unread views have filled every buffer on the way
        playing = asyncio.create_task(play(stub, bots, 10**6, random.Random(5)))
        try:
            await until(dropped, timeout=120, what="the slow watcher dropped")
        finally:
            playing.cancel()
            await asyncio.gather(playing, return_exceptions=True)
        log = await EventStore.connect(nats_server.url, create=False)
        try:
            last = (await log.last(bots.table_id)).seq
        finally:
            await log.close()
        await until(lambda: settled(fast.versions[-1] == last), timeout=10,
                    what="the fast watcher at the table's last version")
        # the slow one drains what was sent before it was dropped, then gets ABORTED
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            while True:
                view = await slow.read()
                if view is grpc.aio.EOF:
                    break
                taken.append(view)
        assert ended.value.code() is grpc.StatusCode.ABORTED
        assert "fell" in ended.value.details() and "after_version=" in ended.value.details()
        resume_from = int(ended.value.details().split("after_version=")[1].split()[0])
        assert resume_from == taken[-1].version  # the last view it took
        again = await stub.Watch(tpb.ViewRequest(table_id=bots.table_id,
                                                 after_version=resume_from),
                                 metadata=auth).read()
        assert again.version > resume_from
        assert fast.error is None
        assert fast.versions == sorted(set(fast.versions))
        await fast.stop()
    finally:
        await channel.close()
        await stack.stop()


async def finish_hand(t: Table) -> None:
    """Play the running hand out: everybody checks or calls."""
    view = await t.view()
    hand = view.hand_no
    while view.hand_no == hand and view.to_act:
        view = await t.call_or_check()


async def test_a_seat_that_changes_hands_ends_its_old_holders_stream(nats_server):
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "hub-seat", seats=3)
        watch = Stream(t.stub.of(3), tpb.ViewRequest(table_id=t.table_id, seat=3,
                                                     seat_token=t.tokens[3]), (), 3)
        await until(lambda: settled(bool(watch.views)), timeout=10,
                    what="the seat's first view")
        await t.stub.Leave(t.seat_request(3))
        await finish_hand(t)  # the seat frees after it
        t.players[3] = "newcomer"
        await stack.deposit("newcomer", 100)
        await t.stub.SitDown(tpb.SitDownRequest(table_id=t.table_id, seat=3, buy_in=100,
                                                command_id="sit-newcomer",
                                                post_big_blind=True))
        await until(lambda: settled(watch.task.done()), timeout=10,
                    what="the old holder's stream ended")
        assert watch.error is not None
        assert watch.error.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "no longer holds seat 3" in watch.error.details()
        newcomer = [s for v in watch.views for s in v.seats
                    if s.seat == 3 and s.player_id == "newcomer"]
        assert all(set(s.cards) <= {"??"} for s in newcomer), \
            "the old holder saw the newcomer's cards"


async def test_a_private_tables_spectator_who_leaves_it_is_ended(nats_server):
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "hub-private", seats=3, private=True)
        rail = Stream(t.stub.of(3), tpb.ViewRequest(table_id=t.table_id), (), 0)
        await until(lambda: settled(bool(rail.views)), timeout=10,
                    what="the seated player's spectator view")
        await t.stub.Leave(t.seat_request(3))
        await finish_hand(t)
        await until(lambda: settled(rail.task.done()), timeout=10,
                    what="the spectator's stream ended")
        assert rail.error is not None
        assert rail.error.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "private" in rail.error.details()


async def test_four_accounts_of_64_streams_leave_the_table_watchable(stack, client_stub,
                                                                      sponsor):
    bots = await create_and_seat(client_stub, plan("hub-crowd"), 2, sponsor)
    request = tpb.ViewRequest(table_id=bots.table_id)
    crowd = []
    for n in range(4):
        auth = bearer_metadata(sponsor.token(f"crowd-{n}"))
        crowd += [Stream(client_stub, request, auth, 0) for _ in range(64)]
        extra = client_stub.Watch(request, metadata=auth)  # the 65th of one account
        with pytest.raises(grpc.aio.AioRpcError) as over:
            await extra.read()
        assert over.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "64" in over.value.details() and retry_after_s(over.value) is not None
    await until(lambda: settled(all(s.views for s in crowd)), timeout=30,
                what="256 streams open")
    # another spectator is served, and sees the table move
    other = Stream(client_stub, request, bearer_metadata(sponsor.token("another")), 0)
    await until(lambda: settled(bool(other.views)), timeout=10,
                what="another spectator's first view")
    await play(client_stub, bots, 1, random.Random(1))
    last = other.views[-1].version
    assert last > other.views[0].version and other.error is None
    for s in (*crowd, other):
        await s.stop()


async def test_a_relay_is_held_to_its_own_cap(nats_server):
    async with clocked_stack(nats_server.url, env={"POKER_LIMIT_WATCHES_PER_CALLER": "2",
                                                   "POKER_LIMIT_WATCHES_PER_RELAY": "3"}) \
            as (stack, clock, store):
        t = await Table.open(stack, store, "hub-relay", seats=2)
        stub = table_pb2_grpc.TableServiceStub(stack.channel("table"))
        relay = bearer_metadata(stack.token("web", RELAY))
        request = tpb.ViewRequest(table_id=t.table_id)
        streams = [Stream(stub, request, relay, 0) for _ in range(3)]  # over a caller's 2
        await until(lambda: settled(all(s.views for s in streams)), timeout=10,
                    what="the relay's three streams")
        with pytest.raises(grpc.aio.AioRpcError) as over:
            await stub.Watch(request, metadata=relay).read()
        assert over.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "relay" in over.value.details()
        for s in streams:
            await s.stop()


async def test_the_keeper_holds_no_look_at_a_table_whose_clock_is_not_running(nats_server):
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "idle-one", seats=1)  # one player: no hand
        busy = await Table.open(stack, store, "busy-one", seats=2)  # a hand: a clock runs
        await stack.keeper.tick()
        assert stack.keeper.next_look(t.table_id) is None
        assert stack.keeper.next_look(busy.table_id) is not None
        # the busy table's look is its countdown: no sooner
        view = await busy.view()
        assert view.to_act and view.countdown_unix_ms
        reads = table_store(stack).reads
        for _ in range(5):
            await stack.keeper.tick()
        assert table_store(stack).reads == reads  # looked at, from the live fold alone
        # the table whose player is on the clock is timed out when its deadline comes
        clock.advance(view.deadline_unix_ms - clock())
        await stack.keeper.tick()
        assert (await busy.view()).version > view.version
        assert [e.seat for e in await busy.events(E.PlayerTimedOut)] == [view.to_act]


async def test_the_keeper_wakes_for_the_next_look_not_for_one_that_moved(nats_server):
    """A player who acts before the deadline moves the table's look to the next decision's
    countdown; the keeper's loop then sleeps until that, not until the old one."""
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "moved-look", seats=2)
        await stack.keeper.tick()
        first = stack.keeper.next_look(t.table_id)
        assert first is not None and stack.keeper.next_wake() == first
        clock.advance(2_000)  # the player thinks for two seconds, then acts
        before = (await t.view()).version
        await t.call_or_check()
        await until(lambda: settled(stack.keeper.next_look(t.table_id) not in (None, first)),
                    timeout=10, what="the table's look moved by the action")
        moved = stack.keeper.next_look(t.table_id)
        assert (await t.view()).version > before and moved > first
        assert stack.keeper.next_wake() == moved  # the old look wakes nothing


async def test_an_action_answered_at_its_commit_leaves_the_steps_to_the_watch(nats_server,
                                                                            monkeypatch):
    # an answer that waited for the steps would wait for the dealer's return (not 3 s)
    monkeypatch.setattr(table_server, "CARRY_ON_S", 600.0)
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "hub-commit", seats=2)
        watch = Stream(t.stub.of(1), tpb.ViewRequest(table_id=t.table_id, seat=1,
                                                     seat_token=t.tokens[1]), (), 1)
        await t.call_or_check()  # heads-up pre-flop: the small blind calls
        # the dealer is away: the flop the big blind's check leads to cannot be dealt yet
        port = stack.servers["dealer"].port
        await stack.stop_service("dealer")
        view = await t.view()
        request = tpb.ActRequest(table_id=t.table_id, seat=view.to_act,
                                 seat_token=t.tokens[view.to_act], hand_no=view.hand_no,
                                 action=ACTION_KIND.to_pb(ActionKind.CHECK),
                                 command_id="check-at-commit", reply_at_commit=True)
        # answered at once, not after the flop (which waits for the dealer)
        reply = await asyncio.wait_for(t.stub.Act(request), timeout=10)
        last = await store.last(t.table_id)
        assert reply.version == last.seq  # the check's own commit: nothing after it yet
        assert reply.view.to_act == 0 and not reply.view.board  # the flop is still to come
        await stack.start_service("dealer", port=port)
        await t.stub.GetState(tpb.ViewRequest(table_id=t.table_id))  # (a nudge: carry on)

        async def flop_watched():
            return any(len(v.board) == 3 for v in watch.views)

        await until(flop_watched, timeout=20, what="the flop on the seat's Watch")
        await watch.stop()
        assert watch.error is None


async def test_a_seat_token_replaced_ends_the_old_tokens_stream(nats_server):
    """The same player leaves and sits again in the seat with a new token: a stream opened
    with the old token (another device, a token that leaked) sees nothing of the new hand."""
    async with clocked_stack(nats_server.url) as (stack, clock, store):
        t = await Table.open(stack, store, "hub-token", seats=3)
        old = Stream(t.stub.of(3), tpb.ViewRequest(table_id=t.table_id, seat=3,
                                                   seat_token=t.tokens[3]), (), 3)
        await until(lambda: settled(bool(old.views)), timeout=10, what="the seat's view")
        await t.stub.Leave(t.seat_request(3))
        await finish_hand(t)
        await stack.deposit("p3", 100)
        fresh = await t.stub.SitDown(tpb.SitDownRequest(
            table_id=t.table_id, seat=3, buy_in=100, command_id="sit-again",
            post_big_blind=True))
        assert fresh.seat_token and fresh.seat_token != t.tokens[3]
        await until(lambda: settled(old.task.done()), timeout=10,
                    what="the old token's stream ended")
        assert old.error is not None
        assert old.error.code() is grpc.StatusCode.PERMISSION_DENIED
        assert "no longer holds seat 3" in old.error.details()
