"""A client given several table-service addresses (POKER_TABLE_ADDR=a,b, ``--table-addr a,b``, as
`pokerctl up --replicas N` prints them) balances its calls over every instance, and plays on
when one dies: its calls are retried on the other with the same command ids, so each action
is applied once. Real processes (nats-server, every service), mutual TLS on two 127.0.0.1
ports, kill -9; the address list is read in one place (table_addresses.parse_addresses)."""

from __future__ import annotations

import argparse
import asyncio
import urllib.request

import grpc
import pytest
from poker.table.v1 import table_pb2, table_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from services.pokerctl import bots_cmd, seat_cmd
from services.pokerctl.bots_cmd import audit_money_of, audit_tables, plan_tables, play_tables
from services.pokerctl.table_addresses import (
    AddressError,
    address_list,
    parse_addresses,
    table_channel,
)
from services.pokerctl.up import LocalCluster
from shared.infra.bearer import bearer_metadata
from shared.infra.identity import PLAYER
from shared.infra.natsauth import COMPLIANCE, READER
from shared.infra.retry import watching
from shared.infra.waiting import until

# --- the address list ------------------------------------------------------------------------


def test_an_address_list_is_read_in_one_place():
    assert parse_addresses("127.0.0.1:50051") == ["127.0.0.1:50051"]
    assert parse_addresses(" 127.0.0.1:50051 , 127.0.0.1:50071") == \
        ["127.0.0.1:50051", "127.0.0.1:50071"]
    # one address may be a name, an IPv6 address or a gRPC target
    assert parse_addresses("table:50051") == ["table:50051"]
    assert parse_addresses("[::1]:50051") == ["[::1]:50051"]
    assert parse_addresses("dns:///table.poker.svc:50051") == ["dns:///table.poker.svc:50051"]
    assert address_list("127.0.0.1:1, 127.0.0.1:2") == "127.0.0.1:1,127.0.0.1:2"


@pytest.mark.parametrize(("text", "says"), [
    ("", "no table service address"),
    ("   ", "no table service address"),
    ("127.0.0.1:50051,", "empty entry"),
    ("127.0.0.1:50051,,127.0.0.1:50071", "empty entry"),
    (",127.0.0.1:50051", "empty entry"),
    ("127.0.0.1", "not host:port"),
    (":50051", "not host:port"),
    ("127.0.0.1:", "port must be a number from 1 to 65535"),
    ("127.0.0.1:0", "port must be a number from 1 to 65535"),
    ("127.0.0.1:65536", "port must be a number from 1 to 65535"),
    ("127.0.0.1:5o051", "port must be a number"),
    ("tab le:50051", "not a host name or IP address"),
    ("::1:50051", "IPv6 address goes in brackets"),
    # a list is one ipv4: target for gRPC: names and schemes must stand alone
    ("localhost:50051,localhost:50071", "must be an IPv4 address and port"),
    ("127.0.0.1:50051,dns:///table:50051", "must be the only address"),
    ("127.0.0.1:50051,127.0.0.1:50051", "twice in the list"),
])
def test_a_bad_address_list_is_refused_saying_why(text, says):
    with pytest.raises(AddressError, match=says):
        parse_addresses(text)
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        address_list(text)


def _parser(module) -> argparse.ArgumentParser:
    """The command's own parser, as pokerctl registers it (read at call time: its
    --table-addr default is POKER_TABLE_ADDR of the moment)."""
    parser = argparse.ArgumentParser(prog="pokerctl")
    module.register(parser.add_subparsers(dest="command", required=True))
    return parser


@pytest.mark.parametrize(("module", "command"), [
    (bots_cmd, ["bots"]), (seat_cmd, ["seat", "leave", "--table", "t", "--seat", "1"])])
def test_the_client_commands_check_table_addr_and_poker_table_addr(module, command, monkeypatch,
                                                              capsys):
    def build_parser():
        return _parser(module)

    monkeypatch.setenv("POKER_TABLE_ADDR", "127.0.0.1:50051,127.0.0.1:50071")
    args = build_parser().parse_args(command)
    assert args.table_addr == "127.0.0.1:50051,127.0.0.1:50071"
    args = build_parser().parse_args([*command, "--table-addr", "127.0.0.1:1 ,127.0.0.1:2"])
    assert args.table_addr == "127.0.0.1:1,127.0.0.1:2"
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([*command, "--table-addr", "127.0.0.1:1,,127.0.0.1:2"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "argument --table-addr: table service address list" in err
    assert "(--table-addr, or POKER_TABLE_ADDR)" in err
    monkeypatch.setenv("POKER_TABLE_ADDR", "127.0.0.1:50051,")  # the default is checked too
    with pytest.raises(SystemExit):
        build_parser().parse_args(command)
    err = capsys.readouterr().err
    assert "empty entry" in err and "POKER_TABLE_ADDR" in err


def test_up_with_replicas_gives_clients_every_table_address(tmp_path):
    """What `pokerctl up --replicas 2` prints as POKER_TABLE_ADDR (LocalCluster, not
    started): every instance, a list the client commands accept as it is."""
    cluster = LocalCluster(tmp_path, base_port=41000, replica_count=2)
    listed = cluster.client_address("table")
    assert listed == "127.0.0.1:41001,127.0.0.1:41021"
    assert address_list(listed) == listed
    assert cluster.client_address("wallet") == "127.0.0.1:41006,127.0.0.1:41026"
    assert LocalCluster(tmp_path, base_port=41000).client_address("table") == \
        "127.0.0.1:41001"


# --- two table services, one killed --------------------------------------------------------


def _table_calls(cluster: LocalCluster, name: str, method: str) -> float:
    """The table service process ``name``'s count of ``method`` calls answered (its
    Prometheus poker_rpc_duration_seconds, any status)."""
    port = cluster.metrics_ports[name]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    return sum(s.value for family in text_string_to_metric_families(text)
               for s in family.samples
               if s.name == "poker_rpc_duration_seconds_count"
               and s.labels.get("service") == "TableService"
               and s.labels.get("method") == method)


async def _created(stub, table_id: str, metadata) -> bool:
    try:
        await stub.GetState(table_pb2.ViewRequest(table_id=table_id), metadata=metadata,
                            timeout=5)
    except grpc.aio.AioRpcError:
        return False
    return True


HANDS = 10
#: hands each table plays to the end after the kill, at least
AFTER_KILL = 3


async def test_bots_over_two_table_services_play_on_when_one_is_killed(tmp_path):
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING")
    await cluster.start()
    try:
        await cluster.add_replica("table", "table-2")
        addresses = cluster.client_address("table")
        assert addresses == f"{cluster.addresses['table']},{cluster.addresses['table-2']}"
        plans = plan_tables(2, game="holdem", structure="no_limit", run_id="addrs")
        sponsor = cluster.sponsor()
        watcher = bearer_metadata(cluster.issuer.token("watcher", (PLAYER,)))

        # the bots: one channel over both addresses, each server checked as `table` by TLS
        async with table_channel(addresses, cluster.tls()) as both, \
                cluster.channel("table-2") as survivor:
            looking = table_pb2_grpc.TableServiceStub(survivor)

            async def hands_now() -> dict[str, int]:
                return {p.table_id: (await looking.GetState(
                    table_pb2.ViewRequest(table_id=p.table_id), metadata=watcher,
                    timeout=5)).hand_no for p in plans}

            playing = asyncio.create_task(play_tables(
                table_pb2_grpc.TableServiceStub(both), plans, hands=HANDS, seats=3,
                sponsor=sponsor, seed=13))
            # Spectators over both addresses, two streams per table (round robin: some on the
            # instance about to die); each that breaks resumes from its last version.
            opened: list[str] = []
            seen: dict[int, list] = {}

            def watch(request, **kw):
                opened.append(request.table_id)
                return table_pb2_grpc.TableServiceStub(both).Watch(request, **kw)

            async def spectate(n: int, table_id: str) -> None:
                await until(lambda: _created(looking, table_id, watcher), 30, "the table")
                async for view in watching(watch, table_pb2.ViewRequest(table_id=table_id),
                                           watcher):
                    seen.setdefault(n, []).append(view)

            spectators = [asyncio.create_task(spectate(n, p.table_id))
                          for n, p in enumerate(plans * 2)]

            async def both_serve_and_hands_run():
                if playing.done():
                    return True  # the assertion below says it ended too soon
                acts = [await asyncio.to_thread(_table_calls, cluster, n, "Act")
                        for n in ("table", "table-2")]
                if min(acts) < 5:
                    return False
                try:
                    return min((await hands_now()).values()) >= 2 and acts
                except grpc.aio.AioRpcError:  # a table not created yet
                    return False

            acts = await until(both_serve_and_hands_run, 90, "Acts served by both "
                               "instances and two hands at each table", every=0.05)
            assert not playing.done(), "the kill must land mid-play"
            assert all(n >= 5 for n in acts), acts  # round robin: both served the bots

            cluster.kill("table")  # kill -9, mid-play
            survivor_acts = await asyncio.to_thread(_table_calls, cluster, "table-2", "Act")
            at_kill = await hands_now()  # every hand after these started after the kill
            assert all(hand <= HANDS - AFTER_KILL for hand in at_kill.values()), at_kill

            played = await asyncio.wait_for(playing, timeout=180)
            assert [p.error for p in played if p.error] == []
            for p in played:
                assert p.bots.hands_seen >= HANDS, (p.plan.table_id, p.bots.hands_seen)
                assert p.bots.hands_seen - at_kill[p.plan.table_id] >= AFTER_KILL
            # the survivor took every call after the kill
            assert await asyncio.to_thread(_table_calls, cluster, "table-2", "Act") > \
                survivor_acts

            # every spectator saw the table to its last version, views only forward and
            # none twice, though some of their streams broke with the killed instance
            final = {p.table_id: (await looking.GetState(table_pb2.ViewRequest(
                table_id=p.table_id), metadata=watcher, timeout=5)).version for p in plans}

            async def caught_up():
                return all(seen.get(n) and seen[n][-1].version == final[p.table_id]
                           for n, p in enumerate(plans * 2))
            await until(caught_up, 30, "every spectator at its table's last version")
            for task in spectators:
                task.cancel()
            await asyncio.gather(*spectators, return_exceptions=True)
            assert len(opened) > len(spectators), "no stream broke: the kill missed them"
            for views in seen.values():
                versions = [v.version for v in views]
                assert versions == sorted(versions)
                assert all(a != b for a, b in zip(views, views[1:], strict=False))
        assert cluster.dead() == {"table": -9}

        audits = await audit_tables(cluster.nats_url_for(COMPLIANCE), [p.table_id for p in plans],
                                    cluster.keyring(), ca=cluster.nats_ca)
        for audit in audits:
            assert audit.ok and audit.conserved, (audit.table_id, audit.failure)
            assert audit.hands >= HANDS
        money = await audit_money_of(cluster.nats_url_for(READER), audits, ca=cluster.nats_ca)
        assert money.ok, money.problems
    finally:
        await cluster.stop()
