"""The registry of services (shared/infra/services.py): its content pinned once, here, and
kept in step with what it describes: each service's package, its proto, its NATS user, the
order it starts in; and the views every other module derives from it."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from shared.infra import natsauth
from shared.infra.config import PORT_OFFSETS, TOKEN_CHECKED, WEB_PORT_OFFSET
from shared.infra.services import SERVICE, SERVICES, callers_of, names
from shared.infra.tls import CALLERS, DEFAULT_IDENTITIES

ROOT = Path(__file__).resolve().parents[2]
TABLE = frozenset({"table"})


def test_the_registry_holds_every_service_in_start_order():
    """The one list of the services written out by hand: (name, port offset, gRPC service,
    callers, checks tokens, NATS user, own stream, on demand)."""
    assert [(s.name, s.port_offset, s.grpc_service, s.callers, s.checks_tokens, s.nats_user,
             s.own_stream, s.on_demand) for s in SERVICES] == [
        ("wallet", 6, "poker.wallet.v1.WalletService",
         frozenset({"table", "tournament", "admin"}), False, "poker-wallet", True, False),
        ("dealer", 2, "poker.dealer.v1.DealerService", TABLE, False, "poker-dealer", False,
         False),
        ("betting", 3, "poker.betting.v1.BettingService", TABLE, False, "poker-service",
         False, False),
        ("showdown", 4, "poker.showdown.v1.ShowdownService", TABLE, False, "poker-service",
         False, False),
        ("rake", 5, "poker.rake.v1.RakeService", TABLE, False, "poker-service", False, False),
        ("notary", 7, None, None, False, "poker-notary", False, True),
        ("table", 1, "poker.table.v1.TableService", None, True, "poker-table", False, False),
        ("tournament", 9, "poker.tournament.v1.TournamentService", None, True,
         "poker-director", False, True),
    ]


def test_ports_are_distinct_and_clear_of_the_web_pages():
    offsets = [s.port_offset for s in SERVICES]
    assert len(set(offsets)) == len(offsets)
    assert WEB_PORT_OFFSET not in offsets
    assert PORT_OFFSETS == {s.name: s.port_offset for s in SERVICES}
    assert list(PORT_OFFSETS.values()) == sorted(offsets)  # `pokerctl up --help` lists them so


def test_a_service_starts_after_the_services_it_calls():
    """A service that another one accepts calls from (its caller) starts after it: the table
    service after its peers, the tournament director after the wallet."""
    order = names()
    for s in SERVICES:
        for caller in s.callers or ():
            if caller in SERVICE:
                assert order.index(caller) > order.index(s.name), (s.name, caller)
    assert callers_of("table") == ("wallet", "dealer", "betting", "showdown", "rake")


def _calls_main_with(package: Path) -> str:
    """The name ``services/<name>/__main__.py`` passes to shared.infra.boot.main."""
    for node in ast.walk(ast.parse((package / "__main__.py").read_text())):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "main":
            first = node.args[0]
            assert isinstance(first, ast.Constant)
            return str(first.value)
    raise AssertionError(f"{package}/__main__.py calls no main")


def test_each_service_has_its_package_and_its_proto():
    """services/<name>: a server module with ``setup`` (and ``access_from_config`` exactly
    when it checks tokens), run as ``main("<name>", ...)``; its gRPC service in protos/."""
    from services.stack import SERVERS
    for s in SERVICES:
        assert _calls_main_with(ROOT / "services" / s.name) == s.name
        assert callable(SERVERS[s.name].setup)
        assert hasattr(SERVERS[s.name], "access_from_config") == s.checks_tokens, s.name
        if s.grpc_service is not None:
            package, _, service = s.grpc_service.rpartition(".")
            proto = (ROOT / "protos" / package.replace(".", "/") /
                     f"{s.name}.proto").read_text()
            assert re.search(rf"^package {re.escape(package)};$", proto, re.M), s.name
            assert re.search(rf"^service {service} {{$", proto, re.M), s.name


def test_the_derived_views_follow_the_registry():
    assert set(DEFAULT_IDENTITIES) >= set(names())
    assert dict(CALLERS) == {s.name: s.callers for s in SERVICES if s.callers is not None}
    assert TOKEN_CHECKED == {s.name for s in SERVICES if s.checks_tokens}
    users = {u.name for u in natsauth.USERS}
    for s in SERVICES:
        assert natsauth.SERVICE_USERS[s.name] == s.nats_user
        assert s.nats_user in users, s.name  # the rendering gives it its permissions
