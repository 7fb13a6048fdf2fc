"""The one registry of the gRPC services: each one's name, port, gRPC service, callers, NATS
user and how it starts. Everything that lists services reads it: the configuration
(shared/infra/config.py: ports, token checks), the bootstrap (shared/infra/boot.py:
reflection, the log's stream), mutual TLS (shared/infra/tls.py: identities, callers), the
NATS users (shared/infra/natsauth.py), `pokerctl up` (services/pokerctl/up.py: processes in
start order), the in-process stack (services/stack.py), the table service's peers
(services/table/driver.py), the benches and the tests.

A new service is one :class:`Service` entry here (plus its package ``services/<name>`` with
``server.setup``, its proto and its deploy/ files). This module imports nothing of the
project: every module of shared/infra may read it.

    SERVICES                          # every service, in start order
    SERVICE["wallet"].port_offset     # 6
    names(lambda s: not s.on_demand)  # ("wallet", "dealer", ..., "table")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

#: the NATS users the services connect as (their permissions: shared/infra/natsauth.py);
#: the stateless steps (betting, showdown, rake) share one
DEALER_USER, TABLE_USER, STEPS_USER, WALLET_USER, NOTARY_USER, DIRECTOR_USER = (
    "poker-dealer", "poker-table", "poker-service", "poker-wallet", "poker-notary",
    "poker-director")


@dataclass(frozen=True)
class Service:
    """One gRPC service: what `up`, the stack, the deployment and the tests know of it."""

    #: its name: the process (``python -m services.<name>``), its TLS identity (certificate
    #: common name), its address variable (``POKER_<NAME>_ADDR``)
    name: str
    #: its port: the base port (50050 by default) plus this
    port_offset: int
    #: the full name of the gRPC service it serves (reflection); None: it serves none of
    #: its own (the notary: health only)
    grpc_service: str | None
    #: the TLS identities it accepts calls from (shared/infra/rpc.py ``CallerIdentity``);
    #: None: any certificate of the CA, or none (a client-facing service)
    callers: frozenset[str] | None
    #: it checks its callers' tokens (only it builds ``Config.identity``; its package's
    #: ``server.access_from_config`` makes its access rules)
    checks_tokens: bool
    #: the NATS user it connects as
    nats_user: str
    #: it keeps a stream of its own and never touches the table log (it does not ask for the
    #: log's stream at start: its NATS user may not)
    own_stream: bool = False
    #: the in-process stack (services/stack.py) starts it only when a test asks for it
    on_demand: bool = False


def _table_only() -> frozenset[str]:
    return frozenset({"table"})


#: every service in start order: `up` starts them in this order (and stops them in reverse);
#: the table service calls the internal ones, so it starts after them
SERVICES: tuple[Service, ...] = (
    Service("wallet", 6, "poker.wallet.v1.WalletService",
            frozenset({"table", "tournament", "admin"}), False, WALLET_USER, own_stream=True),
    Service("dealer", 2, "poker.dealer.v1.DealerService", _table_only(), False, DEALER_USER),
    Service("betting", 3, "poker.betting.v1.BettingService", _table_only(), False, STEPS_USER),
    Service("showdown", 4, "poker.showdown.v1.ShowdownService", _table_only(), False,
            STEPS_USER),
    Service("rake", 5, "poker.rake.v1.RakeService", _table_only(), False, STEPS_USER),
    Service("notary", 7, None, None, False, NOTARY_USER, on_demand=True),
    Service("table", 1, "poker.table.v1.TableService", None, True, TABLE_USER),
    Service("tournament", 9, "poker.tournament.v1.TournamentService", None, True,
            DIRECTOR_USER, on_demand=True),
)
#: the services by name
SERVICE: Mapping[str, Service] = {s.name: s for s in SERVICES}


def names(keep: Callable[[Service], bool] = lambda s: True) -> tuple[str, ...]:
    """The names of the services ``keep`` holds for, in start order."""
    return tuple(s.name for s in SERVICES if keep(s))


def callers_of(caller: str) -> tuple[str, ...]:
    """The services that accept calls from identity ``caller`` by name (the table
    service's peers: ``callers_of("table")``), in start order."""
    return names(lambda s: s.callers is not None and caller in s.callers)
