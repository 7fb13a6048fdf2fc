"""Process bootstrap shared by `python -m services.<name>`: configuration from the
environment, JSON logs, the event store, the gRPC server, and a graceful stop on SIGTERM."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc

from .config import Config
from .eventstore import EventStore, StreamSettings
from .logs import configure
from .repository import TableRepository
from .rpc import Server, run_until_signalled

#: registers the service's servicers on the server; returns an optional async cleanup
Setup = Callable[[grpc.aio.Server, TableRepository, EventStore, Config],
                 Awaitable[Callable[[], Awaitable] | None]]


async def start(name: str, setup: Setup, config: Config,
                now_ms: Callable[[], int] | None = None) -> tuple[Server, Callable]:
    """Connect, build and start the service; returns the server and its cleanup.
    ``now_ms``: the service's time source (commit times, the action clock); default the wall
    clock, a fake one in tests."""
    store = await EventStore.connect(config.nats_url, name=f"poker-{name}",
                                     settings=StreamSettings(replicas=config.stream_replicas))
    repo = TableRepository(store, producer=name, now_ms=now_ms)
    server = Server(name, config.host, config.port)
    extra_cleanup = await setup(server.server, repo, store, config)

    async def cleanup() -> None:
        if extra_cleanup is not None:
            await extra_cleanup()
        await store.close()

    return server, cleanup


def main(name: str, setup: Setup) -> None:
    config = Config.from_env(name)
    configure(name, config.log_level)

    async def run() -> None:
        server, cleanup = await start(name, setup, config)
        await run_until_signalled(server, cleanup)

    asyncio.run(run())
