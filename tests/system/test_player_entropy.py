"""Players add entropy (issue 29) against the real stack (NATS, every service over gRPC with
TLS, the notary): a player commits to a seed for the hand after next and reveals it once the
server has committed to its own; the hand's deck is the one derived from the server's seed and
the seeds revealed (the audit re-derives it); a player who does not reveal is left out and the
hand starts without waiting for them; a reveal after its hand started, a reveal that does not
match, a commitment out of its window, a malformed seed and a stranger's call are refused with
nothing appended; once the table has closed the player's receipt holds the server's seed and
`pokerctl receipt verify --seed` recomputes the deck and finds their seed in it."""

from __future__ import annotations

import asyncio
import hashlib
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.stack import start_local
from shared.audit.auditor import audit_table
from shared.history.log import table_hands
from shared.infra.waiting import until
from shared.poker import events as E
from shared.poker.events import ActionKind
from shared.poker.shuffle import ALGORITHM, derive_deck, seed_digest
from shared.tlog.receipt import Receipt, ReceiptError, verify
from shared.tlog.seedcheck import check_shuffle
from tests.helpers.tables import Table, table_stub

ROOT = Path(__file__).resolve().parents[2]
TABLE = "seeded"
SEED_1 = hashlib.sha256(b"seat 1's seed").hexdigest()
SEED_2 = hashlib.sha256(b"seat 2's seed").hexdigest()


@pytest.fixture
async def fast_stack(nats_server):
    s = await start_local(nats_server.url, env={"POKER_CHECKPOINT_S": "0.2"})
    yield s
    await s.stop()


def pokerctl(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "services.pokerctl", *args], env=env,
                          capture_output=True, text=True, timeout=60)


def seed_request(t: Table, seat: int, hand: int, digest: str = "", seed: str = ""):
    return tpb.SeedRequest(seat=t.seat_request(seat), hand_no=hand, seed_sha256=digest,
                           seed=seed)


async def refused(call, request, code: grpc.StatusCode, words: str, store) -> None:
    """``call(request)`` is refused with ``code``, saying ``words``, and appends nothing."""
    before = len(await store.read(TABLE))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call(request)
    assert err.value.code() is code, err.value.details()
    assert words in err.value.details(), err.value.details()
    assert len(await store.read(TABLE)) == before


async def receipt_of(stack, hand: int) -> Receipt | None:
    """Player p1's receipt of ``hand``; None while no checkpoint covers the hand."""
    async with stack.channel("table", token=stack.token("p1")) as ch:
        try:
            text = (await table_pb2_grpc.TableServiceStub(ch).GetReceipt(
                tpb.ReceiptRequest(table_id=TABLE, hand_no=hand))).receipt
        except grpc.aio.AioRpcError as exc:
            if exc.code() is grpc.StatusCode.FAILED_PRECONDITION and \
                    "checkpoint" in exc.details():
                return None
            raise
    return Receipt.parse(text)


async def next_hand(t: Table, hand: int) -> None:
    """The player on turn folds; hand ``hand`` is dealt and someone is on turn."""
    await t.act(ActionKind.FOLD)

    async def dealt():
        v = await t.view()
        return v.hand_no == hand and bool(v.to_act)
    await until(dealt, 20, f"hand {hand} dealt")


FP = grpc.StatusCode.FAILED_PRECONDITION


def cli_env(stack, t: Table, seat: int) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p),
        "POKER_TLS_DIR": str(stack.tls_dir), "POKER_TOKEN": stack.token(f"p{seat}"),
        "POKER_SEAT_TOKEN": t.tokens[seat]}


async def commitments_during_hand_1(stack, t: Table, store) -> None:
    """Both seats commit for hand 3 (seat 2 with the CLI); everything else is refused."""
    commit, reveal = t.stub.CommitSeed, t.stub.RevealSeed
    # during hand 1: the commitments are for hand 3 (hand 2's closed when hand 1 started)
    await refused(commit, seed_request(t, 1, 2, seed_digest(SEED_1)), FP, "for hand 3 now",
                  store)
    await commit(seed_request(t, 1, 3, seed_digest(SEED_1)))
    # seat 2 commits with the CLI, which sends only the seed's hash
    env = cli_env(stack, t, 2)
    seat = ["--table", TABLE, "--seat", "2", "--hand", "3",
            "--table-addr", stack.addresses["table"]]
    cli = await asyncio.to_thread(pokerctl, env, "seat", "commit-seed", *seat, "--seed", SEED_2)
    assert cli.returncode == 0, cli.stderr
    assert [e for e in await t.events(E.SeedCommitted) if e.seat == 2] == [
        E.SeedCommitted(2, 3, seed_digest(SEED_2))]
    assert SEED_2 not in str(await t.log())  # the seed itself stays with the player
    cli = await asyncio.to_thread(pokerctl, env, "seat", "reveal-seed", *seat)
    assert cli.returncode == 2 and "--seed is 32 bytes" in cli.stderr
    await refused(commit, seed_request(t, 1, 3, seed_digest(SEED_2)), FP, "already", store)
    # bad input: malformed, both fields, a hand 0; another player's seat
    bad = grpc.StatusCode.INVALID_ARGUMENT
    await refused(commit, seed_request(t, 1, 3, "AB" * 32), bad, "64 lowercase hex", store)
    await refused(commit, seed_request(t, 1, 3, "ab" * 33), bad, "64 lowercase hex", store)
    await refused(commit, seed_request(t, 1, 3, seed_digest(SEED_1), SEED_1), bad, "empty",
                  store)
    await refused(reveal, seed_request(t, 1, 0, seed=SEED_1), bad, "hand number", store)
    mallory = table_stub(stack, "p2")
    await refused(mallory.RevealSeed, seed_request(t, 1, 3, seed=SEED_1),
                  grpc.StatusCode.PERMISSION_DENIED, "", store)
    # the server has not committed to its seed of hand 3 yet: no reveal
    await refused(reveal, seed_request(t, 1, 3, seed=SEED_1), FP, "committed to its own",
                  store)


async def reveals_during_hand_2(stack, t: Table, store) -> str:
    """Seat 1 reveals for hand 3, seat 2 does not; hand 3 is dealt without waiting and is
    derived from the server's seed and seat 1's. The server's commitment to its seed."""
    reveal = t.stub.RevealSeed
    await next_hand(t, 2)
    (server_commitment,) = [e.next_seed_sha256 for e in await t.events(E.DeckCommitted, 2)]
    assert len(server_commitment) == 64
    await refused(reveal, seed_request(t, 1, 3, seed=SEED_2), FP, "does not match", store)
    await reveal(seed_request(t, 1, 3, seed=SEED_1))
    # seat 2 does not reveal: hand 3 starts without waiting for it, and its late reveal is
    # refused
    await next_hand(t, 3)
    await refused(reveal, seed_request(t, 2, 3, seed=SEED_2), FP,
                  "revealed after its hand started is refused", store)
    # the table is open: a receipt of hand 2 does not give the server's seed (it would show
    # the folded cards), so the player cannot recompute the deck yet
    early = await until(lambda: receipt_of(stack, 2), 30, "a receipt of hand 2")
    assert "server_seed" not in early.extra
    with pytest.raises(ReceiptError, match="once the table has closed"):
        check_shuffle(early)
    (committed,) = await t.events(E.DeckCommitted, 3)
    assert (committed.shuffle, committed.seed_sha256, committed.player_seeds) == (
        ALGORITHM, server_commitment, (SEED_1,))
    assert [type(e) for e in await t.events(E.SeedRevealed)] == [E.SeedRevealed]
    return server_commitment


async def test_a_revealed_seed_makes_the_deck_and_the_rest_are_refused(
        fast_stack, store, tmp_path):
    stack = fast_stack
    await stack.start_service("notary")
    t = await Table.open(stack, store, TABLE, seats=2)  # hand 1 starts at once
    assert (await t.view()).hand_no == 1
    await commitments_during_hand_1(stack, t, store)
    server_commitment = await reveals_during_hand_2(stack, t, store)

    # the table closes after hand 3; the audit re-derives every deck
    await t.stub.CloseTable(tpb.CloseRequest(table_id=TABLE, reason="done", command_id="c"))
    await t.act(ActionKind.FOLD)
    audit = audit_table(TABLE, await store.read(TABLE), stack.keyring())
    assert audit.ok, audit.failure
    (record,) = [r for r in table_hands(await store.read(TABLE), stack.keyring())
                 if r.hand_no == 3]
    (revealed,) = record.of(E.DeckRevealed)  # opened with the compliance key at once
    assert seed_digest(revealed.server_seed) == server_commitment
    assert revealed.decks[0] == derive_deck(revealed.server_seed, [SEED_1])
    await player_checks_the_deck(stack, t, tmp_path, revealed)


async def player_checks_the_deck(stack, t: Table, tmp_path: Path,
                                 revealed: E.DeckRevealed) -> None:
    """Once the table has closed, seat 1's receipt of hand 3 holds the server's seed: the
    deck recomputed offline (also with the CLI) is hand 3's, with seat 1's seed in it and
    not seat 2's (not revealed in time)."""

    async def published():
        receipt = await receipt_of(stack, 3)
        return receipt if receipt is not None and receipt.extra.get("server_seed") else None

    receipt = await until(published, 30, "a receipt of hand 3 with the server's seed")
    assert receipt.extra["server_seed"] == revealed.server_seed
    key = stack.notary_signer.verifier
    verify(receipt, key)
    assert "your seed is among them" in check_shuffle(receipt, SEED_1)
    path = tmp_path / "receipt.json"
    path.write_text(receipt.encode())
    vkey = tmp_path / "notary.vkey"
    vkey.write_text(key.vkey + "\n")
    env = cli_env(stack, t, 1)

    def verify_with(seed: str) -> subprocess.CompletedProcess:
        return pokerctl(env, "receipt", "verify", str(path), "--log-key", str(vkey), "--seed",
                        seed)

    ok = await asyncio.to_thread(verify_with, SEED_1)
    assert ok.returncode == 0, ok.stderr
    assert "your seed is among them" in ok.stdout
    assert " ".join(str(c) for c in revealed.decks[0]) in ok.stdout
    other = await asyncio.to_thread(verify_with, SEED_2)
    assert other.returncode == 1 and "not among the seeds" in other.stderr


async def test_a_players_seeds_do_not_use_up_their_presence_toggles(nats_server, store):
    """A seat's commitments and reveals count as its commands (the rules take one of each a
    hand), not against the toggles that keep presence changes off the log: a player who spent
    every toggle (sat out) still commits to a seed, and a toggle more is refused."""
    stack = await start_local(nats_server.url, env={"POKER_LIMIT_SEAT_TOGGLES_BURST": "1",
                                                    "POKER_LIMIT_SEAT_TOGGLES_PER_S": "0"})
    try:
        t = await Table.open(stack, store, TABLE, seats=2)
        await t.stub.SitOut(tpb.SitOutRequest(seat=t.seat_request(1), sit_out=True))
        await t.stub.CommitSeed(seed_request(t, 1, 3, seed_digest(SEED_1)))
        assert [e for e in await t.events(E.SeedCommitted) if e.seat == 1] == [
            E.SeedCommitted(1, 3, seed_digest(SEED_1))]
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await t.stub.SitOut(tpb.SitOutRequest(seat=t.seat_request(1), sit_out=False))
        assert err.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        await stack.stop()
