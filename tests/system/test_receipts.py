"""Hand receipts against the real stack (NATS, every service over gRPC with TLS, the notary):
a player who was dealt in gets a receipt for a finished hand that verifies offline (also
with `pokerctl receipt verify`), holding exactly the cards that seat saw at the table (its
own, the board, the hands shown) and no other seat's unshown card; another player, an
operator or no token is refused and nothing is appended; a running hand, an unknown hand and
a hand no checkpoint covers yet are refused with what to do. The dealer reads a hand's
commits for its receipt, not every commit the table made after it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from poker.dealer.v1 import dealer_pb2, dealer_pb2_grpc
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.stack import start_local
from shared.history.log import table_hands
from shared.infra import metrics
from shared.infra.eventstore import READ_BATCH
from shared.infra.waiting import until
from shared.poker import events as E
from shared.poker.cards import card
from shared.poker.events import ActionKind
from shared.tlog.note import SignedCheckpoint
from shared.tlog.receipt import Receipt, verify
from shared.tlog.store import latest_checkpoint, read_leaves
from tests.helpers.tables import Table
from tests.helpers.web import Http, sign_in, web_app

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.asyncio


@pytest.fixture
async def fast_stack(nats_server):
    s = await start_local(nats_server.url, env={"POKER_CHECKPOINT_S": "0.2",
                                                "POKER_LIMIT_RECEIPTS_PER_S": "0.01"})
    yield s
    await s.stop()


async def receipt_of(stack, player: str | None, table: str, hand: int, *roles: str) -> str:
    token = stack.token(player, *roles) if player else None
    async with stack.channel("table", token=token) as ch:
        reply = await table_pb2_grpc.TableServiceStub(ch).GetReceipt(
            tpb.ReceiptRequest(table_id=table, hand_no=hand))
    return reply.receipt


async def seen_own(t: Table) -> dict[int, set]:
    """Each seat's own cards as its view shows them now."""
    out = {}
    for seat in t.tokens:
        view = await t.view(seat)
        mine = next(s for s in view.seats if s.seat == seat)
        out[seat] = {card(c) for c in mine.cards if c != "??"}
    return out


async def play_two_hands(t: Table) -> dict[tuple[int, int], set]:
    """Hand 1: the first to act folds; hand 2: checked and called down to the showdown.
    What each seat saw of each hand at the table: its own cards (its view), the board and
    the hands shown (public)."""
    own = {}
    v = await t.view()
    assert v.hand_no == 1
    own[1] = await seen_own(t)
    await t.act(ActionKind.FOLD)
    await until(lambda: _at_hand(t, 2), 20, "hand 2")
    own[2] = await seen_own(t)
    while (await t.view()).hand_no == 2:
        await t.call_or_check()
    seen = {}
    for hand in (1, 2):
        public = {c for e in await t.events(E.CardsDealt, hand) for c in e.board}
        public |= {c for e in await t.events(E.HandShown, hand) for c in e.cards}
        for seat in t.tokens:
            seen[(hand, seat)] = own[hand][seat] | public
    return seen


async def _at_hand(t: Table, hand: int) -> bool:
    v = await t.view()
    return v.hand_no == hand and bool(v.to_act)


async def test_receipts_hold_what_the_seat_saw_verify_offline_and_refuse_everyone_else(
        fast_stack, store, tmp_path):
    stack = fast_stack
    t = await Table.open(stack, store, "rcpt", seats=2)
    seen = await play_two_hands(t)
    # no notary yet: the hand is in no checkpoint, and the player is told when to retry
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await receipt_of(stack, "p1", "rcpt", 1)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "POKER_CHECKPOINT_S" in refused.value.details()
    await stack.start_service("notary")

    async def covered():
        text = await latest_checkpoint(store.js)
        return text and SignedCheckpoint.parse(text).checkpoint.size >= 2

    await until(covered, 30, "a checkpoint covering hands 1 and 2")
    opened = {}  # every seat's hole cards, opened with the compliance key
    for r in table_hands(await store.read("rcpt"), stack.keyring()):
        for e in r.of(E.CardsDealt):
            for h in e.hole:
                opened.setdefault((r.hand_no, h.seat), set()).update(h.cards)
    key = stack.notary_signer.verifier
    for (hand, seat), want in seen.items():
        receipt = Receipt.parse(await receipt_of(stack, f"p{seat}", "rcpt", hand))
        assert (receipt.seat, receipt.player_id) == (seat, f"p{seat}")
        verify(receipt, key)
        got = {c.card for c in receipt.cards}
        assert got == want, (hand, seat)  # every card it saw, and nothing else
        other = 3 - seat
        shown = {c for e in await t.events(E.HandShown, hand) if e.seat == other
                 for c in e.cards}
        assert not got & (opened[(hand, other)] - shown)
    assert len(seen[(1, 1)]) == 2  # hand 1: each saw only their own two cards

    # the refused: another player, an operator, no token; a running hand; an unknown hand
    commits, leaves = len(await store.read("rcpt")), len(await read_leaves(store))
    for who, roles, code in (("mallory", (), grpc.StatusCode.PERMISSION_DENIED),
                             ("ops", ("operator",), grpc.StatusCode.PERMISSION_DENIED),
                             (None, (), grpc.StatusCode.UNAUTHENTICATED)):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await receipt_of(stack, who, "rcpt", 1, *roles)
        assert refused.value.code() is code, who
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await receipt_of(stack, "p1", "rcpt", 3)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "not finished" in refused.value.details()
    async with stack.channel("dealer", "client") as ch:  # only the table service asks it
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await dealer_pb2_grpc.DealerServiceStub(ch).HandCards(dealer_pb2.HandCardsRequest(
                table_id="rcpt", hand_no=1, player_id="p1"))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    for table, hand in (("rcpt", 99), ("nosuch", 1)):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await receipt_of(stack, "p1", table, hand)
        assert refused.value.code() is grpc.StatusCode.NOT_FOUND
    assert (len(await store.read("rcpt")), len(await read_leaves(store))) == (commits, leaves)
    codes = []  # each asks the dealer to read the table's log: limited per player (30)
    for _ in range(31):
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await receipt_of(stack, "p9", "rcpt", 1)
        codes.append(refused.value.code())
    assert codes == [grpc.StatusCode.PERMISSION_DENIED] * 30 + [
        grpc.StatusCode.RESOURCE_EXHAUSTED]

    # the CLI: fetch as the player, verify offline; a changed card fails
    out = tmp_path / "receipt.json"
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    env = {**os.environ, "PYTHONPATH": path, "POKER_TLS_DIR": str(stack.tls_dir),
           "POKER_TOKEN": stack.token("p2")}
    fetched = await asyncio.to_thread(subprocess.run, [
        sys.executable, "-m", "services.pokerctl", "receipt", "--table", "rcpt", "--hand", "2",
        "--table-addr", stack.addresses["table"], "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=60)
    assert fetched.returncode == 0, fetched.stderr
    vkey = tmp_path / "notary.vkey"
    vkey.write_text(key.vkey + "\n")

    def check(path: Path) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "services.pokerctl", "receipt", "verify",
                               str(path), "--log-key", str(vkey)], env=env,
                              capture_output=True, text=True, timeout=60)

    ok = await asyncio.to_thread(check, out)
    assert ok.returncode == 0 and "the receipt verifies" in ok.stdout, ok.stderr
    first = Receipt.parse(out.read_text()).cards[0]
    swapped = "2c" if str(first.card) != "2c" else "3c"
    bad = tmp_path / "changed.json"
    bad.write_text(out.read_text().replace(f'"card": "{first.card}"', f'"card": "{swapped}"',
                                           1))
    failed = await asyncio.to_thread(check, bad)
    assert failed.returncode == 1 and "does NOT verify" in failed.stderr
    missing = await asyncio.to_thread(check, tmp_path / "none.json")
    assert missing.returncode == 2

    # the web: the hand page's button script, and the receipt for a signed-in player only
    async with web_app(stack, store) as (address, _):
        page = await Http(address).request("GET", "/table/rcpt/hands/1")
        assert b'src="/static/receipt.js"' in page.body
        path = "/api/tables/rcpt/hands/1/receipt"
        mine = await (await sign_in(address, stack.token("p1"))).request("GET", path)
        assert mine.status == 200, mine.body
        verify(Receipt.parse(mine.body), key)
        other = await (await sign_in(address, stack.token("mallory"))).request("GET", path)
        assert other.status == 403, other.body
        assert (await Http(address).request("GET", path)).status == 401


async def test_a_hand_no_checkpoint_covers_yet_is_refused_and_older_ones_prove(nats_server,
                                                                                 store):
    stack = await start_local(nats_server.url, env={"POKER_CHECKPOINT_S": "3600"})
    try:
        t = await Table.open(stack, store, "cover", seats=2)
        await t.act(ActionKind.FOLD)
        await until(lambda: _at_hand(t, 2), 20, "hand 2")
        await stack.start_service("notary")

        async def leaves(n: int):
            return len(await read_leaves(store)) >= n

        await until(lambda: leaves(1), 30, "hand 1's leaf")
        assert (await stack.notary.checkpoint()).checkpoint.size == 1  # hand 1 only
        await t.act(ActionKind.FOLD)
        await until(lambda: leaves(2), 30, "hand 2's leaf")
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await receipt_of(stack, "p1", "cover", 2)
        assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
        assert "no checkpoint covers hand 2" in refused.value.details()
        assert "3600" in refused.value.details()
        # hand 1 is proved in the tree of size 1, although the log has grown since
        older = Receipt.parse(await receipt_of(stack, "p2", "cover", 1))
        assert older.leaf_index == 0 and "\n1\n" in older.checkpoint
        verify(older, stack.notary_signer.verifier)
    finally:
        await stack.stop()


async def test_a_hand_not_in_the_merkle_log_yet_is_refused_before_any_read(fast_stack,
                                                                           store):
    """A receipt asked for before the hand's leaf is in the hands' log (no notary running
    here) is refused with when to retry, and nothing is read for it: the dealer, without the
    leaf's first commit, would read the table's whole log each time a client asked again."""
    stack = fast_stack
    t = await Table.open(stack, store, "early", seats=2)
    await t.act(ActionKind.FOLD)
    await until(lambda: _at_hand(t, 2), 20, "hand 2")
    logged = len(await store.read("early"))
    read = metrics.LOG_COMMITS_READ._value.get()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await receipt_of(stack, "p1", "early", 1)
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "not in the hands' Merkle log yet" in refused.value.details()
    assert "POKER_CHECKPOINT_S" in refused.value.details()
    # (the table service's fold reads on from where it is: the commits it lacks, if any)
    assert metrics.LOG_COMMITS_READ._value.get() - read < logged


async def test_a_receipt_reads_its_hand_not_the_table_played_since(fast_stack, store):
    """An early hand's receipt at a table that played on: the dealer reads the log from the
    hand's first commit to its last (a batch past it at most), not to the log's end."""
    stack = fast_stack
    t = await Table.open(stack, store, "long", seats=2)
    hand = 1
    while len(await store.read("long")) < 2 * READ_BATCH:  # folded hands, one after another
        await t.act(ActionKind.FOLD)
        hand += 1
        await until(lambda h=hand: _at_hand(t, h), 20, f"hand {hand}")
    await stack.start_service("notary")

    async def covered():
        text = await latest_checkpoint(store.js)
        return text and SignedCheckpoint.parse(text).checkpoint.size >= hand - 1

    await until(covered, 30, "a checkpoint covering the hands played")
    read = metrics.LOG_COMMITS_READ._value.get()
    receipt = Receipt.parse(await receipt_of(stack, "p1", "long", 1))
    verify(receipt, stack.notary_signer.verifier)
    assert 0 < metrics.LOG_COMMITS_READ._value.get() - read <= READ_BATCH
