"""Where the chips come from: every buy-in and top-up is debited from the player's wallet
before the chips reach the seat, leaving credits it back, rake goes to the house, and an
operator's CloseTable cashes everyone out after the running hand (the saga of
services/table/cashier.py, against the real reference wallet, NATS and gRPC). The money
audit (shared/audit/money.py) balances to the chip after all of it."""

from __future__ import annotations

import grpc
import pytest
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from services.wallet.ledger import fold_ledger, read_ledger
from shared.audit import audit_table
from shared.audit.money import audit_money
from shared.infra.waiting import until
from shared.poker import events as E
from tests.helpers.tables import Table, table_stub

pytestmark = pytest.mark.asyncio


async def balance(stack, player: str | None = None) -> int:
    account = wallet_pb2.Account(house=True) if player is None else \
        wallet_pb2.Account(player_id=player)
    async with stack.channel("wallet", identity="admin") as ch:
        reply = await wallet_pb2_grpc.WalletServiceStub(ch).Balance(
            wallet_pb2.BalanceRequest(account=account))
    return reply.balance


async def money_audit(stack, store, *table_ids: str):
    audits = [audit_table(t, await store.read(t), stack.keyring()) for t in table_ids]
    return audit_money(audits, fold_ledger(await read_ledger(store.js)))


async def debits(store, player: str) -> list:
    return [e for _, e in await read_ledger(store.js)
            if e.account.player_id == player and e.movement == wallet_pb2.MOVEMENT_DEBIT]


async def test_a_buy_in_above_the_balance_is_refused_and_nothing_is_appended(stack, store):
    t = await Table.open(stack, store, "short", seats=0)
    await stack.deposit("alice", 50)
    alice = table_stub(stack, "alice")
    before = len(await store.read("short"))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await alice.SitDown(tpb.SitDownRequest(table_id="short", seat=1, buy_in=100,
                                               command_id="s1"))
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "50" in refused.value.details() and "100" in refused.value.details()
    assert len(await store.read("short")) == before
    assert await balance(stack, "alice") == 50 and not (await t.view()).seats


async def test_the_same_sit_down_twice_debits_once(stack, store):
    await Table.open(stack, store, "twice", seats=0)
    await stack.deposit("alice", 300)
    alice = table_stub(stack, "alice")
    request = tpb.SitDownRequest(table_id="twice", seat=1, buy_in=100, command_id="sit-once")
    first = await alice.SitDown(request)
    again = await alice.SitDown(request)
    assert first.seat_token and not again.seat_token and again.version == first.version
    assert await balance(stack, "alice") == 200
    assert len(await debits(store, "alice")) == 1
    view = await alice.GetState(tpb.ViewRequest(table_id="twice", seat=1,
                                                seat_token=first.seat_token))
    assert view.seats[0].stack == 100 and view.seats[0].pending == 0


async def test_with_the_wallet_down_a_sit_down_is_unavailable_and_resumes_later(stack, store):
    await Table.open(stack, store, "down", seats=0)
    await stack.deposit("alice", 100)
    alice = table_stub(stack, "alice")
    request = tpb.SitDownRequest(table_id="down", seat=1, buy_in=100, command_id="sit-d")
    port = int(stack.servers["wallet"].address.rsplit(":", 1)[1])
    before = len(await store.read("down"))
    await stack.stop_service("wallet")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await alice.SitDown(request)
    assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
    assert "wallet" in refused.value.details() and "try again" in refused.value.details()
    assert len(await store.read("down")) == before  # nothing half-done
    await stack.start_service("wallet", port)
    reply = await alice.SitDown(request)
    assert reply.seat_token
    assert await balance(stack, "alice") == 0 and len(await debits(store, "alice")) == 1


async def test_a_cash_out_while_the_wallet_is_away_is_credited_once_when_it_is_back(
        stack, store):
    t = await Table.open(stack, store, "away", seats=2)
    await t.stub.SitOut(tpb.SitOutRequest(seat=t.seat_request(1), sit_out=True))
    while (await t.view()).to_act:  # the running hand plays out
        await t.call_or_check()
    port = int(stack.servers["wallet"].address.rsplit(":", 1)[1])
    await stack.stop_service("wallet")
    stack_before = next(s.stack for s in (await t.view()).seats if s.seat == 1)
    reply = await t.stub.Leave(t.seat_request(1))  # the player leaves; the credit waits
    assert all(s.seat != 1 for s in reply.view.seats)
    await stack.start_service("wallet", port)

    async def credited():  # the wallet's credit, then the table's confirmation of it
        return await balance(stack, "p1") == stack_before and \
            await t.events(E.CashOutConfirmed)
    await until(credited, 20, "the cash-out credited once the wallet is back")
    assert [type(e) for e in await t.events(E.CashOutConfirmed)] == [E.CashOutConfirmed]
    assert await balance(stack, "p1") == stack_before  # once
    money = await money_audit(stack, store, "away")
    assert money.ok, money.problems


async def test_top_ups_come_from_the_wallet(stack, store):
    t = await Table.open(stack, store, "topup", seats=2, max_buy_in=400)
    await t.stub.SitOut(tpb.SitOutRequest(seat=t.seat_request(1), sit_out=True))
    while (await t.view()).to_act:
        await t.call_or_check()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await t.stub.TopUp(tpb.TopUpRequest(seat=t.seat_request(1), amount=50))
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION  # nothing in the wallet
    await stack.deposit("p1", 50)
    before = next(s.stack for s in (await t.view()).seats if s.seat == 1)
    reply = await t.stub.TopUp(tpb.TopUpRequest(seat=t.seat_request(1), amount=50))
    assert next(s.stack for s in reply.view.seats if s.seat == 1) == before + 50
    assert await balance(stack, "p1") == 0


async def test_close_table_cashes_everyone_out_after_the_running_hand_and_rake_goes_home(
        stack, store):
    t = await Table.open(stack, store, "closing", seats=3, rake_basis_points=1000,
                         no_flop_no_drop=False, small_blind=5, big_blind=10, min_buy_in=100)
    house = await balance(stack)
    operator = table_stub(stack)
    view = await t.view()
    assert view.hand_no == 1 and view.to_act
    closed = await operator.CloseTable(tpb.CloseRequest(table_id="closing", reason="night",
                                                        command_id="close"))
    assert closed.view.closing and closed.view.hand_no == 1 and closed.view.to_act
    while (await t.view()).to_act:  # the running hand plays out
        await t.call_or_check()
    view = await t.view()
    assert view.closing and not view.seats and view.hand_no == 1
    audit = audit_table("closing", await store.read("closing"), stack.keyring())
    assert audit.ok and audit.rake > 0 and not audit.open_sagas
    assert sum([await balance(stack, f"p{n}") for n in (1, 2, 3)]) == 300 - audit.rake
    assert await balance(stack) == house + audit.rake
    await stack.deposit("late", 100)
    late = table_stub(stack, "late")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await late.SitDown(tpb.SitDownRequest(table_id="closing", seat=1, buy_in=100,
                                              command_id="late"))
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "closing" in refused.value.details()
    money = await money_audit(stack, store, "closing")
    assert money.ok and money.in_transit == 0, money.problems


async def test_a_paused_table_finishes_its_hand_and_starts_no_other_until_resumed(stack, store):
    t = await Table.open(stack, store, "paused", seats=2)
    operator = table_stub(stack)
    reply = await operator.PauseTable(tpb.PauseRequest(table_id="paused", paused=True,
                                                       command_id="pause"))
    assert reply.view.paused
    while (await t.view()).to_act:
        await t.call_or_check()
    assert (await t.view()).hand_no == 1 and (await t.view()).phase == "done"
    player = table_stub(stack, "p1")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await player.PauseTable(tpb.PauseRequest(table_id="paused", paused=False,
                                                 command_id="p"))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    await operator.PauseTable(tpb.PauseRequest(table_id="paused", paused=False,
                                               command_id="resume"))
    assert (await t.view()).hand_no == 2


async def test_the_money_audit_catches_a_debit_no_table_confirms(stack, store):
    t = await Table.open(stack, store, "ledger", seats=2)
    for _ in range(3):
        await t.call_or_check()
    assert (await money_audit(stack, store, "ledger")).ok
    # a debit nobody's table asked for: money taken from a player, never seen at a table
    async with stack.channel("wallet", identity="table") as ch:
        await stack.deposit("p1", 10)
        await wallet_pb2_grpc.WalletServiceStub(ch).Debit(wallet_pb2.Transfer(
            account=wallet_pb2.Account(player_id="p1"), amount=10,
            idempotency_key="ledger/c.sit9.forged", reference="ledger"))
    money = await money_audit(stack, store, "ledger")
    assert not money.ok and any("c.sit9.forged" in p for p in money.problems)


async def test_an_operator_reconfigures_a_paused_table_between_hands(stack, store):
    t = await Table.open(stack, store, "config", seats=2)
    operator, player = table_stub(stack), table_stub(stack, "p1")
    bigger = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                               small_blind=2, big_blind=4, min_buy_in=40, max_buy_in=400)
    request = tpb.ConfigureRequest(table_id="config", settings=bigger, command_id="cfg")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await operator.ConfigureTable(request)  # a hand is running
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "pause the table" in refused.value.details()
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await player.ConfigureTable(request)
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED
    await operator.PauseTable(tpb.PauseRequest(table_id="config", paused=True, command_id="p"))
    while (await t.view()).to_act:
        await t.call_or_check()
    await operator.ConfigureTable(tpb.ConfigureRequest(table_id="config", settings=bigger,
                                                       command_id="cfg2"))
    await operator.PauseTable(tpb.PauseRequest(table_id="config", paused=False,
                                               command_id="r"))
    posted = await t.events(E.ForcedBetPosted, hand_no=2)
    assert sorted(f.amount for f in posted) == [2, 4]  # the next hand's blinds are the new
    audit = audit_table("config", await store.read("config"), stack.keyring())
    assert audit.ok, audit.failure


async def test_a_buy_in_whose_debit_the_wallet_refuses_after_the_pre_check_leaves_no_chips(
        stack, store, monkeypatch):
    """The balance covers the buy-in at the table service's pre-check, then an admin takes
    money out before the debit (interleaved for real: the withdrawal is made from inside the
    live cashier's pre-check, once it has passed). The wallet's refusal of the debit decides:
    BuyInRefused, the seat free, no debit for the saga, and the money audit balances."""
    t = await Table.open(stack, store, "drained", seats=0)
    await stack.deposit("alice", 100)
    cashier = stack.keeper.driver.cashier  # the table service's own
    checked = []
    pre_check = cashier.check_funds

    async def pre_check_then_withdrawal(player: str, amount: int) -> None:
        await pre_check(player, amount)  # passes: 100 covers 100
        checked.append((player, amount))
        async with stack.channel("wallet", identity="admin") as ch:
            await wallet_pb2_grpc.WalletServiceStub(ch).Withdraw(wallet_pb2.Transfer(
                account=wallet_pb2.Account(player_id=player), amount=30,
                idempotency_key="drained-withdrawal", reference="test"))

    monkeypatch.setattr(cashier, "check_funds", pre_check_then_withdrawal)
    alice = table_stub(stack, "alice")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await alice.SitDown(tpb.SitDownRequest(table_id="drained", seat=1, buy_in=100,
                                               command_id="sit-drained"))
    assert checked == [("alice", 100)]  # the pre-check ran, and passed, before the debit
    assert refused.value.code() is grpc.StatusCode.FAILED_PRECONDITION
    assert "wallet refused" in refused.value.details()
    [requested] = await t.events(E.BuyInRequested)
    assert (requested.player_id, requested.seat, requested.amount) == ("alice", 1, 100)
    assert [e.key for e in await t.events(E.BuyInRefused)] == [requested.key]
    assert not await t.events(E.BuyInConfirmed)
    assert not (await t.view()).seats  # the seat held for the buy-in is free again
    assert await debits(store, "alice") == []  # no debit for the saga's key, nor any other
    assert await balance(stack, "alice") == 70
    money = await money_audit(stack, store, "drained")
    assert money.ok and money.in_transit == 0, money.problems
