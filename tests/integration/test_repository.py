"""The repository (fold cache + idempotent execute) over a real nats-server: the fold of the log
is the state served; a command id is applied once, with the original outcome, also after
JetStream's duplicate window; a reused command id is refused; a broken log is detected."""

from __future__ import annotations

import asyncio
import hashlib
import random

import pytest
from poker.events.v1 import events_pb2 as pb

from shared.audit.sample import seeded_dealer
from shared.infra.eventstore import EventStore, StreamSettings
from shared.infra.repository import (
    CommandReused,
    CorruptLog,
    LoadedTable,
    TableRepository,
    UnknownTable,
    build_commit,
    digest,
    fold_commit,
    on_table,
)
from shared.poker import decide as D
from shared.poker import events as E
from shared.poker import table as T
from shared.poker.errors import IllegalAction
from shared.poker.handrunner import Dealer, check_call_policy
from shared.poker.options import table_options
from shared.poker.steprules import STEPS, table_step

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
TID = "t1"


async def create(repo: TableRepository, tid: str = TID, seats: int = 3) -> None:
    await repo.execute(tid, "create", digest("create", OPTIONS),
                       lambda t: T.create_table(t, tid, OPTIONS))
    for seat in range(1, seats + 1):
        await sit(repo, seat, tid=tid)


async def sit(repo: TableRepository, seat: int, player: str | None = None, tid: str = TID,
              command_id: str | None = None):
    player = player or f"p{seat}"
    return await repo.execute(tid, command_id or f"sit-{seat}", digest("sit", seat, player),
                              lambda t: T.sit_down(t, seat, player, 200, "digest"))


def next_decision(state, dealer: Dealer):
    """The decision the table needs next (a check/call player, the dealer's deck), or None."""
    if not state.hand_running:
        return T.start_next_hand if table_step(state) is not None else None
    hand = state.hand
    step = D.next_step(hand)
    if isinstance(step, D.Act):
        action, to = check_call_policy(hand, step.legal)
        return lambda t: D.act(t.hand, step.seat, action, to)
    if isinstance(step, D.CommitDeck):
        dealer.decks.clear()
        dealer.salts.clear()
        c = dealer.new_deck()
        return lambda t: D.commit_deck(t.hand, c)
    if isinstance(step, D.Deal):
        return lambda t: D.deal_from(t.hand, dealer.decks[-1])
    if isinstance(step, D.RevealDeck):
        return lambda t: D.reveal_deck(t.hand, dealer.decks, dealer.salts)
    if isinstance(step, D.Show):
        return lambda t: D.showdown_default(t.hand, step.seat)
    house = STEPS[type(step)].house
    return None if house is None else (lambda t: house(t.hand))


async def play(repo: TableRepository, dealer: Dealer, until_hand: int, steps: int = 10_000,
               tid: str = TID) -> int:
    """Run decisions through ``repo.execute`` until hand ``until_hand`` is done (or ``steps``
    decisions were made); returns the decisions made."""
    made = 0
    while made < steps:
        lt = await repo.get(tid)
        if lt.state.hands_played >= until_hand and not lt.state.hand_running:
            break
        decide = next_decision(lt.state, dealer)
        if decide is None:
            break
        await repo.execute(tid, f"step-{lt.seq}", digest("step", lt.seq), decide)
        made += 1
    return made


@pytest.fixture
async def repo(store):
    return TableRepository(store, producer="test")


async def fresh(url: str, **kw) -> tuple[EventStore, TableRepository]:
    store = await EventStore.connect(url, **kw)
    return store, TableRepository(store, producer="other")


async def test_the_fold_of_the_log_equals_the_state_served(repo, store, nats_server):
    await create(repo)
    dealer = seeded_dealer(random.Random(1))  # seeded: a failure replays
    await play(repo, dealer, until_hand=2)
    await play(repo, dealer, until_hand=3, steps=7)  # stop in the middle of hand 3
    served = await repo.get(TID)
    assert served.state.hands_played == 2 and served.state.hand_running

    # from scratch, commit by commit, with nothing cached
    replayed = LoadedTable()
    for stored in await store.read(TID):
        replayed = fold_commit(replayed, stored)
    assert replayed.state == served.state
    assert (replayed.seq, replayed.last_hash, replayed.events, replayed.commands) == \
        (served.seq, served.last_hash, served.events, served.commands)

    # another process's repository: loads the same, then catches up by sequence
    other_store, other = await fresh(nats_server.url)
    try:
        assert (await other.get(TID)).state == served.state
        await play(repo, dealer, until_hand=3)
        caught_up = await other.get(TID)
        assert caught_up.state == (await repo.get(TID)).state
        assert caught_up.seq == (await store.last(TID)).seq
        # the seats' stacks after the hands + rake = buy-ins
        rake = sum(e.amount for s in await store.read(TID)
                   for e in _events(s.data) if isinstance(e, E.RakeTaken))
        assert sum(s.stack for s in caught_up.state.seats) + rake == 3 * 200
    finally:
        await other_store.close()


def _events(data: bytes) -> list:
    from services.pokerctl.bots_cmd import decode_commit
    return decode_commit(data)


async def test_a_command_id_seen_before_returns_the_original_outcome(repo, store):
    await create(repo)
    calls = []

    def decide(t):
        calls.append(1)
        return T.sit_out(t, 2, True)

    first = await repo.execute(TID, "out-2", digest("out", 2), decide)
    assert first.events == 1 and not first.duplicate
    again = await repo.execute(TID, "out-2", digest("out", 2), decide)
    assert again.duplicate and again.events == 0 and again.version == first.version
    assert len(calls) == 1  # answered from the command index: not decided again
    assert (await store.last(TID)).seq == first.version


async def test_a_decision_on_a_table_that_is_not_there_is_unknown_table(repo, store):
    with pytest.raises(UnknownTable, match="there is no table 'nope'"):
        await repo.execute("nope", "start", digest("start"), on_table("nope", T.start_next_hand))
    assert await store.last("nope") is None  # nothing appended
    await create(repo)
    outcome = await repo.execute(TID, "out-2", digest("out", 2),
                                 on_table(TID, lambda t: T.sit_out(t, 2, True)))
    assert outcome.events == 1  # a table that is there: the decision decides


async def test_a_command_id_is_answered_after_the_duplicate_window(nats_server):
    """A stream with a 0.1 s duplicate window: JetStream's dedupe is no protection for a late
    retry. Another commit lands in between, so the subject has moved on; the retry (from a
    fresh process with nothing cached) is answered from the fold's command index and never
    reaches the store, whatever JetStream's window."""
    store, repo = await fresh(nats_server.url, settings=StreamSettings(duplicate_window_s=0.1))
    try:
        info = await store.nc.jsm().stream_info(store.stream)
        assert info.config.duplicate_window == pytest.approx(0.1)
        await create(repo, seats=1)
        original = await sit(repo, 2)
        moved_on = await sit(repo, 3)
        assert moved_on.version > original.version

        late_store, late = await fresh(nats_server.url, create=False)
        try:
            retry = await late.execute(TID, "sit-2", digest("sit", 2, "p2"),
                                       lambda t: pytest.fail("decided twice"))
            assert retry.duplicate and retry.events == 0
            assert retry.version == original.version  # where the original landed
            assert (await late_store.last(TID)).seq == moved_on.version
            seats = [(s.seat, s.player_id) for s in (await late.get(TID)).state.seats]
            assert seats == [(1, "p1"), (2, "p2"), (3, "p3")]
            # the command index records where the original landed
            assert (await late.get(TID)).commands["sit-2"][0] == original.version
        finally:
            await late_store.close()
    finally:
        await store.close()


async def test_the_same_command_id_with_a_different_payload_is_refused(repo, store,
                                                                        nats_server):
    await create(repo, seats=1)
    await sit(repo, 2, "alice", command_id="c-42")
    before = (await store.last(TID)).seq
    with pytest.raises(CommandReused):
        await sit(repo, 3, "bob", command_id="c-42")
    other_store, other = await fresh(nats_server.url)
    try:  # also from a process that has only the log
        with pytest.raises(CommandReused):
            await sit(other, 2, "mallory", command_id="c-42")
        assert (await other.execute(TID, "c-42", digest("sit", 2, "alice"), None)).duplicate
    finally:
        await other_store.close()
    assert (await store.last(TID)).seq == before


async def test_two_writers_on_one_table_exactly_one_wins(repo, store, nats_server):
    await create(repo, seats=2)
    other_store, other = await fresh(nats_server.url)
    try:
        await other.get(TID)  # both folded the same version
        results = await asyncio.gather(sit(repo, 3, "alice", command_id="a"),
                                       sit(other, 3, "bob", command_id="b"),
                                       return_exceptions=True)
        wins = [r for r in results if not isinstance(r, BaseException)]
        losses = [r for r in results if isinstance(r, BaseException)]
        assert len(wins) == 1 and len(losses) == 1, results
        assert isinstance(losses[0], IllegalAction) and "taken" in str(losses[0])
        # compatible commands both land, one after the other, on an unbroken chain
        await asyncio.gather(sit(repo, 4, command_id="c"), sit(other, 5, command_id="d"))
        replayed = LoadedTable()
        for stored in await store.read(TID):
            replayed = fold_commit(replayed, stored)
        assert [s.seat for s in replayed.state.seats] == [1, 2, 3, 4, 5]
        assert replayed.state == (await other.get(TID)).state == (await repo.get(TID)).state
    finally:
        await other_store.close()


async def test_a_broken_hash_chain_is_detected(repo, store, nats_server):
    await create(repo, seats=2)
    last = await store.last(TID)
    forged = build_commit(TID, 0, "forged", digest("forged"), "attacker",
                          [E.PlayerSeated(3, "mallory", 200, "digest")],
                          prev_hash=hashlib.sha256(b"not the last event").digest())
    seq, _ = await store.append(TID, forged, last.seq, f"{TID}:forged")
    other_store, other = await fresh(nats_server.url)
    try:
        with pytest.raises(CorruptLog, match=f"hash chain breaks at commit {seq}"):
            await other.load(TID)
    finally:
        await other_store.close()
    with pytest.raises(CorruptLog):  # the repository that cached the good part notices too
        await sit(repo, 4)


async def test_an_event_that_does_not_apply_is_detected(repo, store, nats_server):
    await create(repo, seats=2)
    lt = await repo.get(TID)
    # chained correctly, but seat 2 is taken: the fold refuses it
    forged = build_commit(TID, 0, "forged", digest("forged"), "attacker",
                          [E.PlayerSeated(2, "mallory", 200, "digest")], prev_hash=lt.last_hash)
    await store.append(TID, forged, lt.seq, f"{TID}:forged")
    other_store, other = await fresh(nats_server.url)
    try:
        with pytest.raises(CorruptLog, match="already taken"):
            await other.load(TID)
    finally:
        await other_store.close()


async def test_an_undecodable_event_is_corrupt_log(repo, store, nats_server):
    await create(repo, seats=2)
    last = await store.last(TID)
    garbage = pb.Commit(events=[b"\xff\xff\xff"]).SerializeToString()
    await store.append(TID, garbage, last.seq, f"{TID}:garbage")
    other_store, other = await fresh(nats_server.url)
    try:
        with pytest.raises(CorruptLog):
            await other.load(TID)
    finally:
        await other_store.close()


async def test_a_retry_refused_on_a_stale_fold_gets_its_outcome_from_the_log(repo, store,
                                                                              nats_server):
    """Replica B's fold is behind: a retry of a command replica A applied, illegal on B's
    fold, is answered with its original outcome (threat 4), not refused."""
    await repo.execute(TID, "create", digest("create", OPTIONS),
                       lambda t: T.create_table(t, TID, OPTIONS))
    await sit(repo, 1)
    other_store, other = await fresh(nats_server.url, create=False)
    try:
        behind = await other.get(TID)  # B's cache: before seat 2 and the command

        def after_seat_2(t):  # legal once seat 2 is taken (as an action after another's)
            if all(s.seat != 2 for s in t.seats):
                raise IllegalAction("seat 2 is not taken yet")
            return T.sit_down(t, 3, "p3", 200, "digest")

        await sit(repo, 2)
        first = await repo.execute(TID, "x", digest("x"), after_seat_2)
        again = await other.execute(TID, "x", digest("x"), after_seat_2,
                                    min_version=behind.seq)
        assert again.duplicate and again.version == first.version
        with pytest.raises(IllegalAction):  # a real refusal is still one, after the check
            await other.execute(TID, "y", digest("y"),
                                lambda t: (_ for _ in ()).throw(IllegalAction("no")))
    finally:
        await other_store.close()
