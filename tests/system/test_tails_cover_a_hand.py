"""Tails that cover a hand, and one owner's steps in one message: the table service sends each step service every commit it has not
folded, whatever the hand's length, so that no service reads the log in a normal hand. Ten
players raising to the cap on every street make a hand of well over the 32 commits the
table service used to keep (rake and showdown, asked once a hand, then read the log)."""

from __future__ import annotations

from collections import Counter

from poker.events.v1 import events_pb2 as ev

from shared.audit import audit_table
from shared.infra.protomap import ACTION_KIND
from shared.poker import events as E
from tests.helpers.tables import Table, clocked_stack

STEP_SERVICES = ("dealer", "betting", "showdown", "rake")


def reads(stack) -> dict[str, int]:
    return {name: stack.servers[name].repo.store.reads for name in STEP_SERVICES}


async def play_a_raised_hand(t: Table) -> None:
    """Every player raises while the cap allows, else calls, to the hand's end."""
    hand = (await t.view()).hand_no
    while True:
        v = await t.view()
        if v.hand_no != hand or not v.to_act:
            return
        if v.legal.raise_kind != ev.ACTION_KIND_UNSPECIFIED:
            await t.act(ACTION_KIND.from_pb(v.legal.raise_kind), v.legal.min_to)
        else:
            await t.call_or_check()


async def test_no_step_service_reads_the_log_in_a_long_hand(nats_server):
    async with clocked_stack(nats_server.url) as (stack, _clock, store):
        t = await Table.open(stack, store, "long-hands", structure=ev.STRUCTURE_FIXED_LIMIT,
                             small_bet=2, big_blind=2, small_blind=1, rake_basis_points=500)
        for seat in range(3, 11):  # dealt in from the next hand
            await t.sit(seat, post_big_blind=True)
        await play_a_raised_hand(t)  # the first hand: each service folds the table once
        hand = (await t.view()).hand_no
        before = reads(stack)
        first = (await store.last(t.table_id)).seq
        await play_a_raised_hand(t)
        commits = [s for s in await store.read(t.table_id, after_seq=first)]
        assert len(commits) > 64, len(commits)  # longer than any tail kept before
        assert (await t.view()).hand_no == hand + 1
        assert reads(stack) == before  # not one log read by any step service
        # and the table service keeps only what some service has not folded: less than a hand
        kept = stack.keeper.repo.tail(t.table_id, 0, commits[-1].seq)
        assert 0 < len(kept) < len(commits) / 2, len(kept)
        audit = audit_table(t.table_id, await store.read(t.table_id), stack.keyring())
        assert audit.ok, audit.failure


async def test_one_owners_consecutive_steps_travel_in_one_message(nats_server):
    """Every seat's show or muck after the first: each its own commit, but taken by the
    dealer in the message that asked for the first (StepRequest.chain)."""
    async with clocked_stack(nats_server.url) as (stack, _clock, store):
        t = await Table.open(stack, store, "chained", seats=4,
                             structure=ev.STRUCTURE_FIXED_LIMIT, small_bet=2, big_blind=2,
                             small_blind=1)
        sent: Counter[str] = Counter()
        for streams in stack.keeper.driver.peers.steps.streams.values():
            for s in streams:
                s.call = spy(s.call, sent)
        await play_a_raised_hand(t)  # a hand that should start with every seat dealt in
        await play_a_raised_hand(t)
        shown = await t.events(E.HandShown) + await t.events(E.HandMucked)
        hands = len(await t.events(E.HandEnded))
        assert len(shown) > hands >= 2, (shown, hands)  # a showdown of several seats
        assert sent["ShowOrMuck"] <= hands < len(shown), sent  # one message a showdown
        audit = audit_table(t.table_id, await store.read(t.table_id), stack.keyring())
        assert audit.ok, audit.failure


def spy(call, sent: Counter[str]):
    async def counted(name, request, *args, **kwargs):
        sent[name] += 1
        return await call(name, request, *args, **kwargs)
    return counted
