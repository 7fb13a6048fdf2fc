"""Process bootstrap shared by `python -m services.<name>`: the configuration, read from the
environment once (:meth:`Config.from_env`) and handed to everything else, JSON logs, the event
store, the gRPC server, and a graceful stop on SIGTERM."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable

import grpc

from . import failpoints, tablecache
from .config import Config
from .eventstore import EventStore, ShardsChanged, StreamSettings
from .logs import configure
from .metrics import start_metrics_server
from .repository import TableRepository
from .rpc import Server, run_until_signalled
from .services import SERVICES, names
from .tls import TlsError

#: the gRPC service each process serves (for reflection)
SERVICE_NAMES = {s.name: s.grpc_service for s in SERVICES if s.grpc_service is not None}

#: services that keep their own stream and never touch the table log: they do not ask for
#: the POKER stream (nor its shards) at start (their NATS users may not; the wallet's:
#: shared/infra/natsauth.py)
OWN_STREAM = frozenset(names(lambda s: s.own_stream))

#: registers the service's servicers on the server; returns an optional async cleanup
Setup = Callable[[grpc.aio.Server, TableRepository, EventStore, Config],
                 Awaitable[Callable[[], Awaitable] | None]]


async def start(name: str, setup: Setup, config: Config,
                now_ms: Callable[[], int] | None = None,
                access: grpc.aio.ServerInterceptor | None = None) -> tuple[Server, Callable]:
    """Connect, build and start the service; returns the server and its cleanup.
    ``now_ms``: the service's time source (commit times, the action clock); default the wall
    clock, a fake one in tests. ``access``: who may call what (the client-facing table
    service's callers' tokens: shared/infra/identity.py)."""
    log_user = name not in OWN_STREAM
    tablecache.configure(config.cache)
    # the shards the log must have (POKER_STREAM_SHARDS): a log split otherwise is refused
    # here, before the service serves anything
    store = await EventStore.connect(config.nats_url, name=f"poker-{name}",
                                     settings=StreamSettings(replicas=config.stream_replicas),
                                     create=log_user, ca=config.nats_ca,
                                     shards=config.stream_shards if log_user else None)
    repo = TableRepository(store, producer=name, now_ms=now_ms)
    server = Server(name, config.host, config.port, tls=config.tls, access=access)
    server.repo = repo
    extra_cleanup = await setup(server.server, repo, store, config)
    if name in SERVICE_NAMES:
        server.enable_reflection([SERVICE_NAMES[name]])

    async def cleanup() -> None:
        if extra_cleanup is not None:
            await extra_cleanup()
        await store.close()

    return server, cleanup


def main(name: str, setup: Setup,
         access: Callable[[Config], grpc.aio.ServerInterceptor] | None = None) -> None:
    """Run the service until SIGTERM, configured by this process's environment, read once
    here. ``access``: makes the service's access rules from its Config (the table service's:
    services/table/server.access_from_config). A value that is wrong or missing (a
    ValueError or TlsError saying which): the message on stderr, exit 2."""
    try:
        config = Config.from_env(name)
        rules = access(config) if access is not None else None
    except (TlsError, ValueError) as exc:  # e.g. neither certificates nor POKER_INSECURE=1
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    configure(name, config.log_level)
    # only a service that is a process of its own arms them (a kill ends the process)
    failpoints.arm(config.failpoints)

    async def run() -> None:
        # Prometheus /metrics (POKER_METRICS_PORT; 0, the default, serves none)
        start_metrics_server(config.metrics_port, config.host)
        server, cleanup = await start(name, setup, config, access=rules)
        await run_until_signalled(server, cleanup)

    try:
        asyncio.run(run())
    except ShardsChanged as exc:  # a configuration that does not fit the log: say which
        print(f"{name}: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
