"""What the table page's browser tests share (tests/system/test_web_table*.py): the web app
over the in-process stack with the wallet's balance (as the "web" certificate), its calls of
the table service and reads of the log counted; Chromium; a no-limit table driven through the
table service; the operator; a hand as shared/history reads it."""

from __future__ import annotations

import collections
import dataclasses
from contextlib import asynccontextmanager

import pytest
from playwright.async_api import async_playwright
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from services.web.app import create_app
from shared.history.log import table_hands
from shared.infra.eventstore import EventStore
from tests.helpers.tables import Table
from tests.system.test_web_pages import ARGS, CHROMIUM, backend, served


class CountingStub:
    """The table service's stub, counting the calls the web makes of each method."""

    def __init__(self, stub) -> None:
        self.stub, self.calls = stub, {}

    def __getattr__(self, name: str):
        method = getattr(self.stub, name)

        def call(*args, **kwargs):
            self.calls[name] = self.calls.get(name, 0) + 1
            return method(*args, **kwargs)
        return call


@dataclasses.dataclass
class Web:
    url: str
    app: object
    stub: CountingStub
    store: EventStore
    wallet: wallet_pb2_grpc.WalletServiceStub  # as the web's certificate
    reads: collections.Counter  # the web's reads of each table's log


@asynccontextmanager
async def web_with_wallet(stack):
    """The web app, served, with the wallet's balance (as the "web" certificate, which the
    wallet accepts for Balance only)."""
    chan, wallet_chan = stack.channel("table"), stack.channel("wallet", identity="web")
    wallet = wallet_pb2_grpc.WalletServiceStub(wallet_chan)
    store = await EventStore.connect(stack.nats_url, create=False)

    async def balance(player_id: str) -> int:
        return (await wallet.Balance(wallet_pb2.BalanceRequest(
            account=wallet_pb2.Account(player_id=player_id)))).balance
    reads: collections.Counter = collections.Counter()

    async def read(table_id: str):
        reads[table_id] += 1
        return await store.read(table_id)
    b = backend(stack, store, chan, read)
    stub = CountingStub(b.stub)
    app = create_app(dataclasses.replace(b, stub=stub, balance=balance))
    try:
        async with served(app) as url:
            yield Web(url, app, stub, store, wallet, reads)
    finally:
        await store.close()
        await chan.close()
        await wallet_chan.close()


@asynccontextmanager
async def chromium():
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            await b.close()


async def new_table(stack, store, table_id: str, game=ev.GAME_HOLDEM,
                    structure=ev.STRUCTURE_NO_LIMIT, **settings) -> Table:
    """A table (blinds 1/2: buy-in 40 to 400 by the rule book's defaults) and its players."""
    t = Table(stack, store, table_id)
    await t.stub.CreateTable(tpb.CreateTableRequest(
        table_id=table_id, command_id="create", settings=tpb.TableSettings(
            game=game, structure=structure, small_blind=1, big_blind=2, small_bet=2,
            rake_basis_points=0, **settings)))
    return t


@asynccontextmanager
async def operator(stack):
    async with stack.as_operator() as chan:
        yield table_pb2_grpc.TableServiceStub(chan)


async def paused(ops, table_id: str, paused: bool, command_id: str) -> None:
    await ops.PauseTable(tpb.PauseRequest(table_id=table_id, paused=paused,
                                          command_id=command_id))


async def finished_hand(stack, store, table_id: str, hand_no: int):
    """Hand ``hand_no`` of the table as shared/history reads it (None until complete)."""
    for r in table_hands(await store.read(table_id), stack.keyring()):
        if r.hand_no == hand_no and r.complete:
            return r
    return None


async def moved(t: Table, version: int) -> bool:
    return (await t.view()).version > version


async def on_turn(t: Table):
    v = await t.view()
    return v if v.to_act else None


#: the two widths every table page is looked at (and screenshot) in
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}


@pytest.fixture(name="web")
async def web_fixture(stack):
    """The web app with the wallet (:func:`web_with_wallet`), as a test's ``web``: a module
    imports this fixture to use it."""
    async with web_with_wallet(stack) as w:
        yield w


@pytest.fixture(name="browser")
async def browser_fixture():
    """Chromium (:func:`chromium`), as a test's ``browser``."""
    async with chromium() as b:
        yield b
