"""One table through the TableService API, and its log; and a fake clock that every service of
an in-process stack shares (commit times and the keeper's "now"), so that tests drive the
action clock without waiting in real time."""

from __future__ import annotations

import uuid
from contextlib import asynccontextmanager

from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from shared.infra.codec import decode_body
from shared.infra.eventstore import EventStore
from shared.infra.protomap import ACTION_KIND
from shared.poker.events import ActionKind

T0 = 1_700_000_000_000
DECISION_MS, COUNTDOWN_MS, BONUS_MS = 10_000, 20_000, 20_000
CLOCK_MS = DECISION_MS + COUNTDOWN_MS


class FakeClock:
    def __init__(self, ms: int = T0) -> None:
        self.ms = ms

    def __call__(self) -> int:
        return self.ms

    def advance(self, ms: int) -> None:
        self.ms += ms


@asynccontextmanager
async def clocked_stack(nats_url: str, env: dict[str, str] | None = None,
                        skew_ms: dict[str, int] | None = None):
    """Every service on a fake clock, and a store to read the log: (stack, clock, store).
    The keeper ticks only when a test calls ``tick()`` (POKER_CLOCK_TICK_MS=0); ``env``: more
    of the services' settings, as variables (POKER_LIMIT_*, ...); ``skew_ms``: services whose
    clock runs that far ahead of ``clock`` (negative: behind)."""
    from services.stack import start_local
    clock = FakeClock()
    clocks = {name: (lambda d=d: clock() + d) for name, d in (skew_ms or {}).items()}
    stack = await start_local(nats_url, now_ms=clock, clocks=clocks,
                              env={"POKER_CLOCK_TICK_MS": "0", **(env or {})})
    store = await EventStore.connect(nats_url, create=False)
    try:
        yield stack, clock, store
    finally:
        await store.close()
        await stack.stop()


def table_stub(stack, player: str | None = None) -> table_pb2_grpc.TableServiceStub:
    """The table service as ``player`` (None: an operator, who may create tables and watch)."""
    channel = stack.as_player(player) if player else stack.as_operator()
    stub = table_pb2_grpc.TableServiceStub(channel)
    stub.channel = channel  # a grpc.aio channel closes when nothing holds it
    return stub


def _seat_of(request) -> int:
    seat = getattr(request, "seat", 0)
    return seat if isinstance(seat, int) else seat.seat  # SitOut and TopUp nest it


class SeatStubs:
    """The table service as whoever a request's seat belongs to at one test table: seat N's
    calls carry player ``pN``'s token, seat 0's (and CreateTable's) an operator's. Every call
    is a real, authenticated call; this only picks the caller, as each player's own client
    would be."""

    def __init__(self, stack, players: dict[int, str]) -> None:
        self._stack = stack
        self._players = players
        self._stubs: dict[str | None, table_pb2_grpc.TableServiceStub] = {}

    def of(self, seat: int) -> table_pb2_grpc.TableServiceStub:
        player = self._players.get(seat, f"p{seat}") if seat else None
        if player not in self._stubs:
            self._stubs[player] = table_stub(self._stack, player)
        return self._stubs[player]

    def __getattr__(self, method: str):
        def call(request, **kwargs):
            return getattr(self.of(_seat_of(request)), method)(request, **kwargs)
        return call


class Table:
    """One table through the TableService API, and its log. Seat N is player ``pN`` (with
    chips in the wallet to buy in); ``stub`` calls as whoever a request's seat belongs to."""

    def __init__(self, stack, store: EventStore, table_id: str) -> None:
        self.stack = stack
        self.store = store
        self.table_id = table_id
        self.tokens: dict[int, str] = {}
        self.players: dict[int, str] = {}
        self.stub = SeatStubs(stack, self.players)

    @classmethod
    async def open(cls, stack, store, table_id: str, seats: int = 2,
                   **settings) -> Table:
        t = cls(stack, store, table_id)
        s = tpb.TableSettings(**{"game": ev.GAME_HOLDEM, "structure": ev.STRUCTURE_NO_LIMIT,
                                 "small_blind": 1, "big_blind": 2, "rake_basis_points": 0,
                                 **settings})
        await t.stub.CreateTable(tpb.CreateTableRequest(table_id=table_id, settings=s,
                                                        command_id="create"))
        for seat in range(1, seats + 1):
            await t.sit(seat)
        return t

    async def sit(self, seat: int, post_big_blind: bool = False, buy_in: int = 100) -> None:
        player = self.players.setdefault(seat, f"p{seat}")
        await self.stack.deposit(player, buy_in)
        reply = await self.stub.SitDown(tpb.SitDownRequest(
            table_id=self.table_id, seat=seat, buy_in=buy_in,
            command_id=f"sit-{seat}", post_big_blind=post_big_blind))
        self.tokens[seat] = reply.seat_token

    def seat_request(self, seat: int, command_id: str | None = None) -> tpb.SeatRequest:
        return tpb.SeatRequest(table_id=self.table_id, seat=seat, seat_token=self.tokens[seat],
                               command_id=command_id or uuid.uuid4().hex)

    async def view(self, seat: int = 0) -> tpb.TableView:
        return await self.stub.GetState(tpb.ViewRequest(
            table_id=self.table_id, seat=seat, seat_token=self.tokens.get(seat, "")))

    async def act(self, kind: ActionKind, amount: int | None = None,
                  command_id: str | None = None) -> tpb.TableView:
        """The player on turn acts."""
        v = await self.view()
        assert v.to_act, "nobody is on turn"
        req = tpb.ActRequest(table_id=self.table_id, seat=v.to_act,
                             seat_token=self.tokens[v.to_act], hand_no=v.hand_no,
                             action=ACTION_KIND.to_pb(kind),
                             command_id=command_id or uuid.uuid4().hex)
        if amount is not None:
            req.amount = amount
        return (await self.stub.Act(req)).view

    async def call_or_check(self) -> tpb.TableView:
        v = await self.view()
        return await self.act(ActionKind.CALL if v.legal.call else ActionKind.CHECK)

    async def log(self, hand_no: int | None = None) -> list[tuple[int, str, object]]:
        """Every event of the table (of hand ``hand_no``): (commit time, producer, event)."""
        out = []
        for stored in await self.store.read(self.table_id):
            commit = ev.Commit()
            commit.ParseFromString(stored.data)
            for raw in commit.events:
                env = ev.EventEnvelope()
                env.ParseFromString(raw)
                if hand_no is not None and env.hand_no != hand_no:
                    continue
                out.append((env.occurred_at_unix_ms, env.producer, decode_body(env)))
        return out

    async def events(self, kind: type, hand_no: int | None = None) -> list:
        return [e for _, _, e in await self.log(hand_no) if isinstance(e, kind)]
