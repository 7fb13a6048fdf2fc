"""Faults (THREATS.md 14, 15): services stopped, restarted and killed -9 in the middle of a
hand. The hand carries on; nothing acknowledged is lost; no command lands twice; the dealer
deals from the deck it committed to before it died.

In process (services/stack.py): a peer is stopped, the next action is *in flight* toward it
(shown by a bare TCP listener on the peer's port accepting the table service's connection),
and the peer is restarted on the same port (the table service keeps its peers' addresses from
start). As processes (services/pokerctl/up.py, `python -m services.<name>`): kill -9 of the
dealer right after its deck commitment was acknowledged.
"""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from poker.engine.v1 import step_pb2
from poker.events.v1 import events_pb2 as ev
from poker.events.v1 import events_pb2 as pb
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.bots_cmd import decode_commit
from services.pokerctl.up import LocalCluster
from shared.audit import audit_table
from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import EventStore
from shared.infra.repository import TableRepository, digest
from shared.infra.seattokens import token_digest
from shared.poker import events as E
from shared.poker import table as T
from shared.poker.decide import deck_order
from shared.poker.deck import commitment
from shared.poker.options import table_options
from tests.helpers.steps import StepStub

NL = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT, small_blind=1,
                       big_blind=2)


def command_ids(stored: list) -> list[str]:
    """The command id of every commit in the log (one per commit)."""
    out = []
    for s in stored:
        commit = pb.Commit()
        commit.ParseFromString(s.data)
        ids = set()
        for raw in commit.events:
            env = pb.EventEnvelope()
            env.ParseFromString(raw)
            ids.add(env.command_id)
        assert len(ids) == 1, ids
        out += ids
    return out


class StandIn:
    """A bare TCP listener on a stopped service's port: accepting a connection shows that a
    call to the service is in flight while it is down. Closing it drops the connection."""

    def __init__(self) -> None:
        self.connected = asyncio.Event()
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.AbstractServer | None = None

    async def open(self, port: int) -> None:
        async def on_connect(reader, writer):
            self.writers.append(writer)
            self.connected.set()

        self.server = await asyncio.start_server(on_connect, "127.0.0.1", port,
                                                 reuse_address=True)

    async def close(self) -> None:
        for w in self.writers:
            w.close()
        self.server.close()
        await self.server.wait_closed()


async def _view(stub, seat=0, token=""):
    return await stub.GetState(tpb.ViewRequest(table_id="t1", seat=seat, seat_token=token))


def _passive(view: tpb.TableView) -> int:
    return ev.ACTION_KIND_CHECK if view.legal.can_check else ev.ACTION_KIND_CALL


@pytest.mark.parametrize("peer", ["betting", "dealer"])
async def test_a_peer_restarted_between_two_actions(stack, table_stub, nats_server, peer):
    stub = table_stub  # seat N's calls as player pN
    await stub.CreateTable(tpb.CreateTableRequest(table_id="t1", settings=NL, command_id="c"))
    tokens = {}
    for seat in (1, 2):
        await stack.deposit(f"p{seat}", 200)
        tokens[seat] = (await stub.SitDown(tpb.SitDownRequest(
            table_id="t1", seat=seat, buy_in=200, command_id=f"sit-{seat}"))).seat_token

    async def act(n: int) -> tpb.ActRequest:
        v = await _view(stub)
        mine = await _view(stub, v.to_act, tokens[v.to_act])
        return tpb.ActRequest(table_id="t1", seat=v.to_act, seat_token=tokens[v.to_act],
                              hand_no=v.hand_no, action=_passive(mine), command_id=f"a{n}")

    first = await act(1)  # heads-up pre-flop: the small blind calls
    await stub.Act(first)

    port = stack.servers[peer].port
    await stack.stop_service(peer)
    stand_in = StandIn()
    await stand_in.open(port)
    # the big blind checks: betting is needed for the action, the dealer for the flop
    second = await act(2)
    in_flight = asyncio.ensure_future(stub.Act(second))
    await asyncio.wait_for(stand_in.connected.wait(), timeout=15)
    assert not in_flight.done()
    await stand_in.close()
    await stack.start_service(peer, port=port)
    reply = await asyncio.wait_for(in_flight, timeout=30)
    assert reply.view.street >= 1 and len(reply.view.board) >= 3  # the flop came

    again = await stub.Act(second)  # the client's retry of the same command: one effect
    assert again.version == reply.version

    n = 2
    view = reply.view
    while view.hand_no == 1 and view.to_act:  # check it down
        n += 1
        view = (await stub.Act(await act(n))).view

    store = await EventStore.connect(nats_server.url, create=False)
    try:
        stored = await store.read("t1")
    finally:
        await store.close()
    ids = command_ids(stored)
    doubled = [c for c, k in Counter(ids).items() if k > 1]
    assert not doubled, doubled
    assert {"a1", "a2"} <= {i.rsplit(".", 1)[-1] for i in ids}  # (kept under their seats)
    audit = audit_table("t1", stored, stack.keyring())
    assert audit.ok and audit.conserved and audit.hands >= 1, audit.failure
    hand_1 = [e for s in stored for e in decode_commit(s.data)]
    assert sum(isinstance(e, E.DeckRevealed) for e in hand_1) >= 1
    assert sum(isinstance(e, E.ActionTaken) and e.seat == second.seat for e in hand_1) >= 1


async def test_the_dealer_killed_after_its_commitment_deals_from_the_same_deck(tmp_path):
    """Real processes. The table is set up through the log (so no driver runs), the dealer
    commits to a deck, and the moment the commitment is acknowledged the dealer is killed -9.
    The restarted dealer deals from the committed deck (the vault), and is killed again
    after the pre-flop deal; the rest of the hand is played through the table service, whose
    driver calls the twice-restarted dealer. The deck revealed matches the first commitment
    and every card dealt came from it, in order. (The table service's clock keeper does not
    tick on its own here: it would carry the hand on from the log while the test drives it.)"""
    async with LocalCluster(tmp_path / "cluster", base_port=None, log_level="WARNING",
                            replica_env={"table": {"POKER_CLOCK_TICK_MS": "0"}}) as cluster:
        store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
        repo = TableRepository(store, producer="test")
        options = table_options("holdem", "no_limit", small_blind=1, big_blind=2)
        tokens = {1: "token-one", 2: "token-two", 3: "token-three"}
        await repo.execute("t1", "c", digest("c"), lambda t: T.create_table(t, "t1", options))
        for seat, token in tokens.items():
            await repo.execute("t1", f"sit-{seat}", digest("sit", seat),
                               lambda t, s=seat, k=token: T.sit_down(t, s, f"p{s}", 200,
                                                                     token_digest(k)))
        await repo.execute("t1", "start-1", digest("start"), T.start_next_hand)

        def step(command_id: str) -> step_pb2.StepRequest:
            return step_pb2.StepRequest(table_id="t1", hand_no=1, command_id=command_id)

        # the test drives the dealer and betting itself, as the table service would
        async with cluster.channel("dealer", identity="table") as dch, \
                cluster.channel("betting", identity="table") as bch, \
                cluster.channel("table") as tch:
            dealer = StepStub(dch)  # the dealer's step stream
            table = table_pb2_grpc.TableServiceStub(tch)

            def auth(player: str) -> tuple:  # a player's token from the cluster's issuer
                return bearer_metadata(cluster.issuer.token(player))

            committed = await dealer.CommitDeck(step("commit-1"))
            assert committed.events == 1
            cluster.kill("dealer")  # the commitment is acknowledged; nothing dealt yet
            [c1] = [e.commitment for s in await store.read("t1")
                    for e in decode_commit(s.data) if isinstance(e, E.DeckCommitted)]
            await cluster.restart("dealer")

            retry = await dealer.CommitDeck(step("commit-1"), wait_for_ready=True)
            assert retry.duplicate and retry.events == 0 and retry.version == committed.version
            await StepStub(bch).PostForcedBets(step("forced-1"))
            dealt = await dealer.DealStreet(step("deal-1"))
            assert dealt.events == 1
            cluster.kill("dealer")  # and again, between the pre-flop deal and the flop
            await cluster.restart("dealer")

            n = 0
            view = await table.GetState(tpb.ViewRequest(table_id="t1"), metadata=auth("p1"))
            while view.hand_no == 1 and view.to_act:
                n += 1
                seat = view.to_act
                mine = await table.GetState(tpb.ViewRequest(table_id="t1", seat=seat,
                                                            seat_token=tokens[seat]),
                                            metadata=auth(f"p{seat}"))
                view = (await table.Act(tpb.ActRequest(
                    table_id="t1", seat=seat, seat_token=tokens[seat], hand_no=1,
                    action=_passive(mine), command_id=f"a{n}"), metadata=auth(f"p{seat}"))).view
        stored = await store.read("t1")
        await store.close()
        assert not cluster.dead()
        keyring = cluster.keyring()

    events = [e for s in stored for e in decode_commit(s.data, keyring)]
    hand_1 = events[:next(i for i, e in enumerate(events) if isinstance(e, E.DeckRevealed)) + 1]
    assert [e.commitment for e in hand_1 if isinstance(e, E.DeckCommitted)] == [c1]
    revealed = hand_1[-1]
    assert len(revealed.decks) == 1
    assert commitment(revealed.decks[0], revealed.salts[0]) == c1
    cards = [c for e in hand_1 if isinstance(e, E.CardsDealt) for c in deck_order(e)]
    assert len(cards) >= 3 * 2 + 3 + 1 + 1 + 3  # hole cards, flop, turn, river and burns
    assert tuple(cards) == revealed.decks[0][:len(cards)]
    audit = audit_table("t1", stored, keyring)
    assert audit.ok and audit.conserved, audit.failure
    ids = command_ids(stored)
    assert len(ids) == len(set(ids))
