"""`pokerctl bots --watch --spectators 2 --think-ms 0-5`, as its functions run it
(services/pokerctl/bots_cmd.play_tables), through every service on real gRPC servers and a
real nats-server: each bot watches its own seat and acts on the views it receives, at a
(short) person's pace, beside two spectators per table, each a player account of its own.
The hands are played, every bot and every spectator received views, the latency of every
action acknowledged was recorded, and each table's log audits clean with its chips conserved.

And the rule a watching bot acts by, against a scripted Watch: once per decision, though the
countdown's view repeats a version, and never on a view older than its last action's reply.
"""

from __future__ import annotations

import asyncio
import random

import pytest
from poker.table.v1 import table_pb2 as tpb

from services.pokerctl.botclient import Bot, BotTable, _play_seat, play_table
from services.pokerctl.bots_cmd import create_and_seat, plan_tables, play_tables, print_report
from services.pokerctl.thinktime import ThinkTime
from shared.audit import audit_table
from shared.infra.eventstore import EventStore
from shared.poker.handrunner import random_policy

HANDS = 3
SPECTATORS = 2


async def test_bots_that_watch_their_seats_play_with_spectators_and_audit_clean(
        stack, client_stub, sponsor, nats_server, capsys):
    plans = plan_tables(2, "holdem", "fixed_limit", run_id="watch")
    played = await asyncio.wait_for(play_tables(
        client_stub, plans, HANDS, 6, sponsor, seed=23, watch=True, spectators=SPECTATORS,
        think=ThinkTime.parse("0-5")), timeout=120)
    assert [p.error for p in played] == ["", ""]
    store = await EventStore.connect(nats_server.url, create=False)
    try:
        audits = [audit_table(p.plan.table_id, await store.read(p.plan.table_id),
                              stack.keyring()) for p in played]
    finally:
        await store.close()
    for p, audit in zip(played, audits):
        bots = p.bots
        assert audit.ok, audit.failure
        assert audit.conserved, (audit.stacks, audit.rake, audit.left_with, audit.buy_ins)
        assert audit.hands >= HANDS and bots.hands_seen == audit.hands
        assert bots.actions > 0
        # every bot followed its own seat, and each spectator the table
        assert sorted(bots.views) == [1, 2, 3, 4, 5, 6]
        assert all(n > 0 for n in bots.views.values()), bots.views
        assert len(bots.spectator_views) == SPECTATORS
        assert all(n > 0 for n in bots.spectator_views), bots.spectator_views
    assert print_report(played, audits, 1.0)
    out = capsys.readouterr().out
    assert "audit passed" in out and f"by {2 * SPECTATORS} spectator(s)" in out


async def test_watching_bots_record_each_acknowledged_action(stack, client_stub, sponsor):
    plan = plan_tables(1, "holdem", "fixed_limit", run_id="lat")[0]
    bots = await create_and_seat(client_stub, plan, 3, sponsor)
    latencies: list[float] = []
    await asyncio.wait_for(play_table(client_stub, bots, HANDS, random.Random(5), latencies,
                                      leave=True, watch=True), timeout=120)
    assert bots.hands_seen >= HANDS and bots.actions > 0
    assert len(latencies) == bots.actions and all(0 < s < 30 for s in latencies)


@pytest.mark.parametrize(("argv", "says"), [
    (["--think-ms", "3000-1000"], "MIN 3000 is above MAX 1000"),
    (["--think-ms", "fast"], "is not MIN-MAX"),
    (["--spectators", "-1"], "give 0 or more spectators"),
])
def test_bad_watch_flags_are_one_line_and_exit_2(argv, says, capsys):
    from services.pokerctl.cli import build_parser
    args = build_parser("bots").parse_args(["bots", *argv])
    assert args.run(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("pokerctl bots: ") and says in err


# --- the decision rule, against a scripted Watch ---------------------------------------------


def _view(version: int, to_act: int, hand_no: int = 1, phase: str = "bet") -> tpb.TableView:
    view = tpb.TableView(table_id="t", version=version, hand_no=hand_no, phase=phase,
                         to_act=to_act)
    for seat in (1, 2):
        view.seats.add(seat=seat, player_id=f"p{seat}", stack=100, in_hand=phase == "bet")
    if to_act:
        view.legal.CopyFrom(tpb.Legal(can_fold=True, call=10))
    return view


class _Call:
    """A Watch call that yields the views given, then ends."""

    def __init__(self, views) -> None:
        self._views = list(views)

    def __aiter__(self):
        return self._gen()

    async def _gen(self):
        for v in self._views:
            yield v

    def cancel(self) -> None:
        pass


class _Stub:
    """Watch yields a script; Act answers with the version the action moved the table to."""

    def __init__(self, script, replies) -> None:
        self.script = script
        self.replies = list(replies)
        self.acts: list[tpb.ActRequest] = []

    def Watch(self, request, metadata=(), wait_for_ready=False):
        return _Call(self.script)

    async def Act(self, request, metadata=(), timeout=None, wait_for_ready=False):
        self.acts.append(request)
        version = self.replies.pop(0)
        return tpb.TableReply(version=version, view=_view(version, 0))


@pytest.mark.parametrize(("script", "replies", "acted_on"), [
    # the countdown's view repeats version 10: one action
    ([_view(10, 1), _view(10, 1), _view(12, 2)], [11], [10]),
    # a view queued while the bot thought (11: another seat sat out) is older than the
    # reply to its action (13); the next decision is its own (14)
    ([_view(10, 1), _view(11, 1), _view(13, 2), _view(14, 1)], [13, 15], [10, 14]),
    # not its turn, or no options: nothing to do
    ([_view(10, 2), _view(11, 0, phase="done")], [], []),
])
async def test_a_watching_bot_acts_once_per_decision(script, replies, acted_on):
    stub = _Stub(script, replies)
    table = BotTable("t", tokens={1: "tok"}, auth={1: ()})
    rng = random.Random(1)
    await _play_seat(Bot(stub, table, 1, random_policy(rng), rng), hands=99, leave=False)
    assert [a.command_id.split("-")[1] for a in stub.acts] == [str(v) for v in acted_on]
    assert table.actions == len(acted_on) and table.views == {1: len(script)}
