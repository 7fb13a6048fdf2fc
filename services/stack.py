"""Every service, started in this process on ports chosen by the OS: for tests and tools.

`pokerctl up` runs the same services as separate processes (`python -m services.<name>`).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from shared.infra.boot import start
from shared.infra.config import Config
from shared.infra.rpc import Server
from shared.infra.secrecy import ComplianceKey, ComplianceKeyring
from shared.infra.tls import TlsConfig, channel, generate

from .betting.server import setup as betting_setup
from .dealer.server import setup as dealer_setup
from .rake.server import setup as rake_setup
from .showdown.server import setup as showdown_setup
from .table.server import setup as table_setup

SETUPS = {"dealer": dealer_setup, "betting": betting_setup, "showdown": showdown_setup,
          "rake": rake_setup, "table": table_setup}
#: the table service calls the others, so it starts last and stops first
START_ORDER = ("dealer", "betting", "showdown", "rake", "table")


@dataclass
class LocalStack:
    nats_url: str
    #: every service's time source (commit times, the action clock); None: the wall clock
    now_ms: Callable[[], int] | None = None
    servers: dict[str, Server] = field(default_factory=dict)
    cleanups: dict[str, object] = field(default_factory=dict)
    #: the compliance role's key pair: the dealer seals every hand to its public key
    compliance: ComplianceKey = field(default_factory=ComplianceKey.generate)
    key_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="poker-keys-"))
    #: mutual TLS between the services, with a CA of its own in ``key_dir/tls``; False:
    #: plaintext (what POKER_INSECURE=1 does)
    mtls: bool = True

    def __post_init__(self) -> None:
        self.key_file, self.public_key_file = (str(p) for p in self.compliance.write(self.key_dir))
        self.tls_dir = generate(Path(self.key_dir) / "tls") if self.mtls else None

    def tls(self, identity: str | None) -> TlsConfig | None:
        """The files of ``identity`` (None: the CA only, as a player has); None in plaintext."""
        return None if self.tls_dir is None else TlsConfig.in_dir(self.tls_dir, identity)

    def channel(self, name: str, identity: str | None = "client") -> grpc.aio.Channel:
        """A channel to service ``name`` presenting ``identity``'s certificate (tests that
        call an internal service directly act as ``table``, the only caller it accepts)."""
        return channel(self.addresses[name], self.tls(identity), service=name)

    def keyring(self) -> ComplianceKeyring:
        """A compliance keyring that opens every hand this stack dealt."""
        return ComplianceKeyring([self.compliance])

    @property
    def addresses(self) -> dict[str, str]:
        return {name: s.address for name, s in self.servers.items()}

    async def start_service(self, name: str, port: int = 0) -> Server:
        """Start one service; ``port`` brings a stopped peer back where the table service
        expects it."""
        config = Config(nats_url=self.nats_url, host="127.0.0.1", port=port,
                        addresses=self.addresses, log_level="WARNING", stream_replicas=1,
                        compliance_public_key=self.public_key_file, tls=self.tls(name))
        server, cleanup = await start(name, SETUPS[name], config, now_ms=self.now_ms)
        await server.start()
        self.servers[name] = server
        self.cleanups[name] = cleanup
        return server

    async def stop_service(self, name: str, grace: float = 0.5) -> None:
        server = self.servers.pop(name)
        await server.stop(grace)
        await self.cleanups.pop(name)()

    @property
    def keeper(self):
        """The table service's clock keeper (its ``tick()`` enforces the clocks)."""
        from .table.server import keeper_for
        return keeper_for(self.servers["table"].server)

    async def stop(self) -> None:
        for name in reversed(START_ORDER):
            if name in self.servers:
                await self.stop_service(name)
        shutil.rmtree(self.key_dir, ignore_errors=True)


async def start_local(nats_url: str, now_ms: Callable[[], int] | None = None,
                      mtls: bool = True) -> LocalStack:
    """Every service in this process, with mutual TLS unless ``mtls`` is False. ``now_ms``: a
    time source for all of them (tests drive the action clock with it; set
    POKER_CLOCK_TICK_MS=0 and call ``stack.keeper.tick()`` so that nothing happens in real
    time)."""
    stack = LocalStack(nats_url, now_ms, mtls=mtls)
    for name in START_ORDER:
        await stack.start_service(name)
    return stack
