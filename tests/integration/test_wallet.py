"""The reference wallet on a real nats-server and real gRPC servers with mutual TLS: money moves
once per idempotency key, a short balance moves nothing, callers are told apart by their
certificates, the ledger is the stream (a restarted server reads it back), and two servers on
one stream never overdraw an account. `pokerctl wallet` against a running wallet."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
import structlog
from poker.wallet.v1 import wallet_pb2 as pb
from poker.wallet.v1 import wallet_pb2_grpc

from services.pokerctl import cli
from services.wallet.ledger import (
    CREDIT,
    DEBIT,
    DEPOSIT,
    WALLET_PREFIX,
    WALLET_STREAM,
    AccountId,
    LedgerStore,
    ensure_wallet_stream,
    fold_ledger,
    read_ledger,
)
from services.wallet.server import setup
from shared.infra import natsauth
from shared.infra.boot import start
from shared.infra.config import Config
from shared.infra.eventstore import EventStore
from shared.infra.repository import Aborted
from shared.infra.rpc import Server
from shared.infra.tls import TlsConfig, channel, generate
from shared.poker.errors import IllegalAction
from shared.poker.options import MAX_CHIPS

DEADLINE_S = 10.0
HOUSE = pb.Account(house=True)


def player(pid: str) -> pb.Account:
    return pb.Account(player_id=pid)


def transfer(account: pb.Account, amount: int, key: str, reference: str = "") -> pb.Transfer:
    return pb.Transfer(account=account, amount=amount, idempotency_key=key,
                       reference=reference)


@dataclass
class Wallet:
    server: Server
    cleanup: object

    @property
    def address(self) -> str:
        return self.server.address

    async def stop(self) -> None:
        await self.server.stop(0)
        await self.cleanup()


async def start_wallet(nats_url: str, certs: Path | None) -> Wallet:
    """A wallet server as `python -m services.wallet` runs it (boot.start), on port 0, with
    mutual TLS from ``certs`` (None: plaintext)."""
    config = Config(nats_url=nats_url, host="127.0.0.1", port=0, addresses={},
                    log_level="WARNING", stream_replicas=1,
                    tls=TlsConfig.in_dir(certs, "wallet") if certs else None)
    server, cleanup = await start("wallet", setup, config)
    await server.start()
    return Wallet(server, cleanup)


@pytest.fixture
def certs(tmp_path) -> Path:
    return generate(tmp_path / "tls")


@pytest_asyncio.fixture
async def wallet(nats_server, certs):
    w = await start_wallet(nats_server.url, certs)
    yield w
    await w.stop()


class Stubs:
    """A stub per identity (its certificate), opened on demand, closed at the end."""

    def __init__(self, certs: Path) -> None:
        self.certs = certs
        self.channels: list[grpc.aio.Channel] = []

    def __call__(self, address: str, identity: str = "table"
                 ) -> wallet_pb2_grpc.WalletServiceStub:
        ch = channel(address, TlsConfig.in_dir(self.certs, identity), service="wallet")
        self.channels.append(ch)
        return wallet_pb2_grpc.WalletServiceStub(ch)

    async def close(self) -> None:
        for ch in self.channels:
            await ch.close()


@pytest_asyncio.fixture
async def stubs(certs):
    s = Stubs(certs)
    yield s
    await s.close()


async def refused(call, code: grpc.StatusCode) -> str:
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await call
    assert info.value.code() == code, info.value.details()
    return info.value.details()


async def stream_messages(store: EventStore) -> int:
    return (await store.nc.jsm().stream_info(WALLET_STREAM)).state.messages


async def test_money_moves_once_per_key_and_a_short_debit_moves_nothing(wallet, stubs, store):
    admin, table = stubs(wallet.address, "admin"), stubs(wallet.address, "table")
    r = await admin.Deposit(transfer(player("alice"), 150, "dep-1", "cashier"))
    assert (r.account.player_id, r.amount, r.balance, r.duplicate) == ("alice", 150, 150, False)
    again = await admin.Deposit(transfer(player("alice"), 150, "dep-1"))  # once per key
    assert again.duplicate and (again.balance, again.sequence) == (150, r.sequence)

    why = await refused(table.Debit(transfer(player("alice"), 200, "buy-1", "t1 seat 3")),
                        grpc.StatusCode.FAILED_PRECONDITION)
    assert why == "the balance of alice is 150 chips: a debit of 200 needs 50 more"
    before = await stream_messages(store)
    assert before == 1  # the refusal recorded nothing
    await admin.Deposit(transfer(player("alice"), 50, "dep-2"))
    ok = await table.Debit(transfer(player("alice"), 200, "buy-1", "t1 seat 3"))  # the retry
    assert (ok.balance, ok.duplicate) == (0, False)

    why = await refused(table.Debit(transfer(player("alice"), 201, "buy-1")),
                        grpc.StatusCode.FAILED_PRECONDITION)
    assert why.startswith("idempotency key 'buy-1' was used for another transfer: a debit of "
                          "200 chips")
    why = await refused(table.Credit(transfer(player("alice"), 200, "buy-1")),
                        grpc.StatusCode.FAILED_PRECONDITION)
    assert "not a credit of 200" in why

    await table.Credit(transfer(player("alice"), 180, "cashout-1", "t1 hand 9"))
    await table.Credit(transfer(HOUSE, 20, "rake-t1-9", "t1 hand 9"))
    assert (await table.Balance(pb.BalanceRequest(account=player("alice")))).balance == 180
    # another case is another person's account
    assert (await table.Balance(pb.BalanceRequest(account=player("ALICE")))).balance == 0
    house = await table.Balance(pb.BalanceRequest(account=HOUSE))
    assert house.account.house and house.balance == 20
    out = await admin.Withdraw(transfer(HOUSE, 20, "rake-out-1"))
    assert out.balance == 0
    await admin.Withdraw(transfer(player("alice"), 80, "wd-1"))

    totals = await admin.Balances(pb.BalancesRequest())
    assert [(a.account.WhichOneof("kind"), a.balance) for a in totals.accounts] == \
        [("house", 0), ("player_id", 100)]
    assert (totals.deposits, totals.withdrawals) == (200, 100)
    ledger = fold_ledger(await read_ledger(store.js))
    assert (ledger.deposits, ledger.withdrawals, ledger.debits, ledger.credits) == \
        (200, 100, 200, 200)
    assert sum(ledger.balances.values()) == 200 - 100 - 200 + 200


async def test_bad_requests_are_invalid_arguments(wallet, stubs):
    admin = stubs(wallet.address, "admin")
    cases = [
        (admin.Deposit(pb.Transfer(amount=1, idempotency_key="k")), "an account is a player"),
        (admin.Deposit(transfer(player("a\nb"), 1, "k")), "control character"),
        (admin.Deposit(transfer(player("alice"), 0, "k")), "an amount is 1 to"),
        (admin.Deposit(transfer(player("alice"), MAX_CHIPS + 1, "k")), "an amount is 1 to"),
        (admin.Deposit(transfer(player("alice"), 5, "")), "idempotency_key must be"),
        (admin.Deposit(transfer(player("alice"), 5, "k" * 201)), "idempotency_key must be"),
        (admin.Deposit(transfer(player("alice"), 5, "clé")), "idempotency_key must be"),
        (admin.Deposit(transfer(HOUSE, 5, "k")), "the house takes no deposits"),
        (admin.Balance(pb.BalanceRequest()), "an account is a player"),
    ]
    for call, reason in cases:
        assert reason in await refused(call, grpc.StatusCode.INVALID_ARGUMENT)
    # the house is debited for a tournament's overlay, never below nothing
    why = await refused(admin.Debit(transfer(HOUSE, 5, "k")),
                        grpc.StatusCode.FAILED_PRECONDITION)
    assert "the balance of the house is 0 chips: a debit of 5 needs 5 more" in why
    over = await admin.Deposit(transfer(player("alice"), MAX_CHIPS, "max"))
    assert over.balance == MAX_CHIPS
    why = await refused(admin.Deposit(transfer(player("alice"), 1, "one-more")),
                        grpc.StatusCode.FAILED_PRECONDITION)
    assert f"would take it past {MAX_CHIPS}" in why


async def test_only_the_table_and_the_admin_call_and_the_cashier_is_the_admins(wallet, stubs):
    table, client = stubs(wallet.address, "table"), stubs(wallet.address, "client")
    why = await refused(client.Balance(pb.BalanceRequest(account=HOUSE)),
                        grpc.StatusCode.PERMISSION_DENIED)
    assert "accepts calls from" in why and "'client'" in why
    for call, method in ((table.Deposit(transfer(player("bob"), 10, "k")), "Deposit"),
                         (table.Withdraw(transfer(HOUSE, 10, "k")), "Withdraw"),
                         (table.Balances(pb.BalancesRequest()), "Balances")):
        why = await refused(call, grpc.StatusCode.PERMISSION_DENIED)
        assert why == (f"the wallet's {method} is the admin's only (the cashier: pokerctl "
                       "wallet); this certificate is 'table'")
    admin = stubs(wallet.address, "admin")
    assert (await admin.Balances(pb.BalancesRequest())).accounts == []  # nothing moved


async def test_the_web_reads_a_balance_and_moves_no_money(wallet, stubs):
    """The web pages' certificate ("web") may ask a player's Balance (their table page shows
    it), and nothing else: no debit, credit, deposit or withdrawal (METHOD_CALLERS)."""
    web = stubs(wallet.address, "web")
    assert (await web.Balance(pb.BalanceRequest(account=player("dan")))).balance == 0
    for call in (web.Debit(transfer(player("dan"), 10, "w1")),
                 web.Credit(transfer(player("dan"), 10, "w2")),
                 web.Deposit(transfer(player("dan"), 10, "w3")),
                 web.Withdraw(transfer(player("dan"), 10, "w4"))):
        why = await refused(call, grpc.StatusCode.PERMISSION_DENIED)
        assert "accepts calls from" in why and "'web'" in why
    admin = stubs(wallet.address, "admin")
    assert (await admin.Balances(pb.BalancesRequest())).accounts == []  # nothing moved


async def test_over_plaintext_every_caller_is_trusted(nats_server):
    w = await start_wallet(nats_server.url, None)
    try:
        async with grpc.aio.insecure_channel(w.address) as ch:
            stub = wallet_pb2_grpc.WalletServiceStub(ch)
            r = await stub.Deposit(transfer(player("bob"), 10, "k1"))
            assert r.balance == 10
            assert (await stub.Balances(pb.BalancesRequest())).deposits == 10
    finally:
        await w.stop()


CAROL = "\uff23arol"  # the identity provider's subject, exactly (a fullwidth C)


async def test_the_ledger_is_the_stream_one_subject_per_account(wallet, stubs, store,
                                                                nats_server, certs):
    admin = stubs(wallet.address, "admin")
    await admin.Deposit(transfer(player(CAROL), 70, "d1"))  # a fullwidth C, kept as it is
    await admin.Deposit(transfer(player("dave"), 30, "d2"))
    await stubs(wallet.address).Credit(transfer(HOUSE, 5, "rake-1"))
    info = await store.nc.jsm().stream_info(WALLET_STREAM, subjects_filter=WALLET_PREFIX + ">")
    assert info.config.subjects == [WALLET_PREFIX + ">"]
    assert info.config.deny_delete and info.config.deny_purge
    assert not info.config.allow_rollup_hdrs
    carol = "p." + hashlib.sha256(CAROL.encode()).hexdigest()[:32]
    assert set(info.state.subjects) == {WALLET_PREFIX + carol, WALLET_PREFIX + "house",
                                        WALLET_PREFIX + AccountId.player("dave").token}
    msg = await store.js.get_last_msg(WALLET_STREAM, WALLET_PREFIX + carol)
    assert msg.headers["Nats-Msg-Id"] and msg.headers["Nats-Expected-Last-Subject-Sequence"] \
        == "0"
    entries = await read_ledger(store.js)
    assert [(e.account.player_id, e.amount, e.balance_after) for _, e in entries] == \
        [(CAROL, 70, 70), ("dave", 30, 30), ("", 5, 5)]
    assert [seq for seq, _ in entries] == [1, 2, 3]

    # a new server (another process, a restart) reads each account back from its subject
    other = await start_wallet(nats_server.url, certs)
    try:
        fresh = stubs(other.address, "admin")
        assert (await fresh.Balance(pb.BalanceRequest(account=player(CAROL)))).balance == 70
        dup = await fresh.Deposit(transfer(player(CAROL), 70, "d1"))
        assert dup.duplicate and dup.sequence == 1 and dup.balance == 70
        await fresh.Withdraw(transfer(player(CAROL), 70, "w1"))
        # the first server's cache is behind: its refusal is decided on the log as it stands
        assert "needs 1 more" in await refused(
            admin.Withdraw(transfer(player(CAROL), 1, "w2")),
            grpc.StatusCode.FAILED_PRECONDITION)
        assert (await admin.Balance(pb.BalanceRequest(account=player(CAROL)))).balance == 0
    finally:
        await other.stop()


async def test_two_servers_never_overdraw_an_account(nats_server, certs, stubs, store):
    """Debits of one account through two servers at once, more than it holds: exactly the
    affordable ones succeed (a lost race is re-decided; an ABORTED call is retried with the
    same key, as a client does), and the totals are conserved."""
    a, b = (await start_wallet(nats_server.url, certs), await start_wallet(nats_server.url,
                                                                            certs))
    try:
        admin = stubs(a.address, "admin")
        await admin.Deposit(transfer(player("erin"), 1000, "seed"))
        tables = [stubs(a.address), stubs(b.address)]

        async def debit(i: int) -> str:
            for _ in range(20):
                try:
                    await tables[i % 2].Debit(transfer(player("erin"), 100, f"buy-{i}"))
                    return "ok"
                except grpc.aio.AioRpcError as exc:
                    if exc.code() != grpc.StatusCode.ABORTED:
                        return exc.code().name
            return "still aborted"

        outcomes = await asyncio.wait_for(asyncio.gather(*(debit(i) for i in range(30))),
                                          DEADLINE_S * 3)
        assert outcomes.count("ok") == 10
        assert outcomes.count("FAILED_PRECONDITION") == 20
        for w in (a, b):
            balance = await stubs(w.address).Balance(pb.BalanceRequest(account=player("erin")))
            assert balance.balance == 0
        ledger = fold_ledger(await read_ledger(store.js))
        assert (ledger.deposits, ledger.debits) == (1000, 1000)
        assert sum(ledger.balances.values()) == 0
        assert await stream_messages(store) == 11  # the seed and ten debits: nothing else
    finally:
        await a.stop()
        await b.stop()


async def test_a_stale_fold_loses_its_append_and_decides_again(store):
    """Two ledgers (two processes) on one stream, one of them behind: its decision is guarded
    by the account's last sequence, so it re-reads and decides on the log as it stands; a key
    the other used is recognised; past the bound, ABORTED."""
    await ensure_wallet_stream(store.js)
    one, two = LedgerStore(store.nc, store.js), LedgerStore(store.nc, store.js)
    frank = AccountId.player("frank")
    await one.transfer(frank, DEPOSIT, 100, "d1")
    assert await two.balance(frank) == 100  # two has read the account
    await one.transfer(frank, DEBIT, 70, "buy-1")  # two is behind now
    with pytest.raises(IllegalAction, match="the balance of frank is 30 chips"):
        await two.transfer(frank, DEBIT, 50, "buy-2")
    assert await stream_messages(store) == 2

    await one.transfer(frank, CREDIT, 20, "out-1")
    entry, duplicate = await two.transfer(frank, CREDIT, 20, "out-1")  # the key one used
    assert duplicate and (entry.seq, entry.balance_after) == (3, 50)
    await one.transfer(frank, CREDIT, 5, "out-2")
    with pytest.raises(IllegalAction, match="used for another transfer"):
        await two.transfer(frank, CREDIT, 6, "out-2")

    await one.transfer(frank, DEBIT, 5, "buy-3")
    hasty = LedgerStore(store.nc, store.js, max_attempts=1)
    await hasty.balance(frank)
    await one.transfer(frank, DEBIT, 5, "buy-4")
    with pytest.raises(Aborted, match="retry with the same key"):
        await hasty.transfer(frank, DEBIT, 5, "buy-5")
    assert (await hasty.transfer(frank, DEBIT, 5, "buy-5"))[0].balance_after == 40
    ledger = fold_ledger(await read_ledger(store.js))
    assert ledger.balances == {frank: 40} and await stream_messages(store) == 7


async def test_the_wallet_names_its_nats_user_and_the_stream_natsauth_grants():
    assert natsauth.SERVICE_USERS["wallet"] == natsauth.WALLET
    assert (natsauth.WALLET_STREAM, natsauth.WALLET_SUBJECTS) == (WALLET_STREAM,
                                                                  WALLET_PREFIX + ">")


# --- pokerctl wallet ---------------------------------------------------------------------------


@pytest.fixture
def quiet_logs():
    """The server's info lines (structlog prints to stdout unless configured) kept out of the
    command's output."""
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    yield
    structlog.reset_defaults()


def _main(argv: list[str]) -> int:
    try:
        return cli.main(argv)
    except SystemExit as exc:  # argparse's usage errors
        return int(exc.code)


async def pokerctl(capsys, *argv: str) -> tuple[int, str, str]:
    """``pokerctl`` in a thread (it makes blocking gRPC calls to the server in this loop)."""
    code = await asyncio.to_thread(_main, list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


async def test_pokerctl_wallet_deposits_withdraws_and_shows_balances(wallet, certs, capsys,
                                                                    monkeypatch, quiet_logs):
    monkeypatch.setenv("POKER_TLS_DIR", str(certs))
    monkeypatch.setenv("POKER_WALLET_ADDR", wallet.address)
    code, out, err = await pokerctl(capsys, "wallet", "deposit", "--player", "alice",
                                    "--amount", "120", "--key", "cash-1")
    assert code == 0, err
    assert out.strip() == "deposit of 120 chips to alice: balance 120 (ledger sequence 1)"
    code, out, _ = await pokerctl(capsys, "wallet", "deposit", "--player", "alice",
                                  "--amount", "120", "--key", "cash-1")
    assert code == 0 and "already made with key cash-1" in out
    code, out, err = await pokerctl(capsys, "wallet", "withdraw", "--player", "alice",
                                    "--amount", "20")
    assert code == 0 and "balance 100" in out
    assert "idempotency key cli-" in err  # a fresh key, printed so a person can retry with it
    code, _, err = await pokerctl(capsys, "wallet", "withdraw", "--house", "--amount", "1")
    assert code == 1
    assert err.splitlines()[-1] == ("pokerctl wallet withdraw: FAILED_PRECONDITION: the "
                                    "balance of the house is 0 chips: a withdrawal of 1 "
                                    "needs 1 more")
    code, out, _ = await pokerctl(capsys, "wallet", "balance", "--player", "ALICE")
    assert code == 0 and out.strip() == "ALICE: 0 chips"  # another person's account
    code, out, _ = await pokerctl(capsys, "wallet", "balance", "--json")
    assert code == 0
    assert json.loads(out) == {"accounts": [{"player_id": "alice", "balance": 100}],
                               "deposits": 120, "withdrawals": 20, "balances": 100,
                               "on_tables": 0}
    code, out, _ = await pokerctl(capsys, "wallet", "balance")
    assert code == 0 and out.splitlines() == [
        "alice  100", "1 account; deposits 120, withdrawals 20, balances 100, on the tables 0"]

    # usage: exit 2, nothing sent
    for argv in (("deposit", "--player", "alice", "--amount", "0"),
                 ("deposit", "--house", "--amount", "5"),
                 ("withdraw", "--amount", "5"),
                 ("balance", "--player", "a", "--house")):
        code, out, err = await pokerctl(capsys, "wallet", *argv)
        assert code == 2 and not out and err, argv
    # a certificate other than the admin's is refused by the server
    monkeypatch.setenv("POKER_TLS_CERT", str(certs / "client.pem"))
    monkeypatch.setenv("POKER_TLS_KEY", str(certs / "client.key"))
    code, _, err = await pokerctl(capsys, "wallet", "balance")
    assert code == 1 and "PERMISSION_DENIED" in err


async def test_the_directors_debit_says_why_the_wallet_refused(wallet, stubs, store):
    """services/tournament/names.debit, as the director takes a buy-in or a rebuy: a debit the
    wallet refuses (a short balance) comes back as the wallet's reason, with nothing moved, so
    the director appends the refusal and never a payment; one that lands answers ""; one of
    nothing moves nothing."""
    from services.tournament.names import debit
    admin, director = stubs(wallet.address, "admin"), stubs(wallet.address, "tournament")
    await admin.Deposit(transfer(player("bob"), 100, "dep-b"))
    before = await stream_messages(store)
    why = await debit(director, transfer(player("bob"), 110, "tournament/t1/entry/bob/1"),
                      "the wallet refused the buy-in")
    assert why == "the balance of bob is 100 chips: a debit of 110 needs 10 more"
    assert await stream_messages(store) == before
    assert await debit(director, transfer(player("bob"), 0, "tournament/t1/rebuy/bob/1"),
                       "refused") == ""
    assert await stream_messages(store) == before
    assert await debit(director, transfer(player("bob"), 100, "tournament/t1/entry/bob/2"),
                       "refused") == ""
    assert (await director.Balance(pb.BalanceRequest(account=player("bob")))).balance == 0
