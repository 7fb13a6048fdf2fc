"""Every service, started in this process on ports chosen by the OS: for tests and tools.

`pokerctl up` runs the same services as separate processes (`python -m services.<name>`).
Each service here is configured as such a process is, by :meth:`Config.from_env`, from a
mapping (:meth:`LocalStack.service_env`, with the stack's ``env`` on top), never from this
process's environment.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any

import grpc
import structlog

from shared.infra.bearer import bearer
from shared.infra.boot import Setup, start
from shared.infra.config import Config
from shared.infra.devissuer import DevIssuer
from shared.infra.identity import PLAYER
from shared.infra.rpc import Server
from shared.infra.secrecy import ComplianceKey, ComplianceKeyring
from shared.infra.services import SERVICE, SERVICES, names
from shared.infra.tls import TlsConfig, channel, generate

log = structlog.get_logger()

#: each service's package's server module (``services/<name>/server.py``): its ``setup``
#: and, for a service that checks tokens, its ``access_from_config``
SERVERS = {s.name: import_module(f"services.{s.name}.server") for s in SERVICES}
SETUPS: dict[str, Setup] = {name: module.setup for name, module in SERVERS.items()}
#: the services :func:`start_local` starts, in the registry's order (shared/infra/services.py:
#: the table service calls the others, so it starts last and stops first)
START_ORDER = names(lambda s: not s.on_demand)
#: services a test starts when it needs them (``start_service``; ``stop`` stops them too):
#: the notary (the hands' Merkle log and its checkpoints), the tournament director
ON_DEMAND = names(lambda s: s.on_demand)


@dataclass
class LocalStack:
    nats_url: str
    #: every service's time source (commit times, the action clock); None: the wall clock
    now_ms: Callable[[], int] | None = None
    #: a service's own time source instead of ``now_ms`` (tests skew one service's clock)
    clocks: Mapping[str, Callable[[], int]] = field(default_factory=dict)
    servers: dict[str, Server] = field(default_factory=dict)
    cleanups: dict[str, Callable[[], Awaitable[None]]] = field(default_factory=dict)
    #: the compliance role's key pair: the dealer seals every hand to its public key
    compliance: ComplianceKey = field(default_factory=ComplianceKey.generate)
    key_dir: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="poker-keys-"))
    #: mutual TLS between the services, with a CA of its own in ``key_dir/tls``; False:
    #: plaintext (what POKER_INSECURE=1 does)
    mtls: bool = True
    #: variables on top of the stack's own, as a deployment sets them (shared/infra/config.py):
    #: POKER_CLOCK_TICK_MS=0 (the keeper ticks only when a test calls ``tick()``),
    #: POKER_LIMIT_*, ...
    env: Mapping[str, str] = field(default_factory=dict)
    _cashier: grpc.aio.Channel | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.key_file, self.public_key_file = (str(p) for p in self.compliance.write(self.key_dir))
        #: the notary's signing key (its vkey: ``notary_signer.verifier.vkey``)
        from shared.tlog.note import Signer
        self.notary_signer = Signer.generate("poker-tables.test/hands")
        self.notary_key_file = Path(self.key_dir) / "notary.key"
        self.notary_key_file.write_text(self.notary_signer.skey + "\n")
        self.tls_dir = generate(Path(self.key_dir) / "tls") if self.mtls else None
        #: the platform's identity provider, as `pokerctl up` makes it: players' tokens
        self.issuer = DevIssuer.create(Path(self.key_dir) / "identity")

    def tls(self, identity: str | None) -> TlsConfig | None:
        """The files of ``identity`` (None: the CA only, as a player has); None in plaintext."""
        return None if self.tls_dir is None else TlsConfig.in_dir(self.tls_dir, identity)

    def channel(self, name: str, identity: str | None = "client",
                token: str | None = None) -> grpc.aio.Channel:
        """A channel to service ``name`` presenting ``identity``'s certificate (tests that
        call an internal service directly act as ``table``, the only caller it accepts) and,
        on every call, ``token`` (see :meth:`token`)."""
        return channel(self.addresses[name], self.tls(identity), service=name,
                       interceptors=bearer(token) if token else None)

    def token(self, subject: str, *roles: str, ttl_s: int = 3600) -> str:
        """A token of the stack's identity provider for ``subject`` (roles: player)."""
        return self.issuer.token(subject, roles or (PLAYER,), ttl_s=ttl_s)

    def as_player(self, player: str) -> grpc.aio.Channel:
        """A channel to the table service as ``player``."""
        return self.channel("table", token=self.token(player))

    def as_operator(self, name: str = "ops") -> grpc.aio.Channel:
        return self.channel("table", token=self.token(name, "operator"))

    def sponsor(self):
        """Tokens and deposits for bots (services/pokerctl/botclient.Sponsor)."""
        from poker.wallet.v1 import wallet_pb2_grpc

        from .pokerctl.botclient import Sponsor
        if self._cashier is None:
            self._cashier = self.channel("wallet", identity="admin")
        return Sponsor(self.issuer, wallet_pb2_grpc.WalletServiceStub(self._cashier))

    async def deposit(self, player: str, amount: int, key: str | None = None) -> int:
        """Put ``amount`` chips in ``player``'s wallet (the cashier, as admin); the balance."""
        import uuid

        from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc
        async with self.channel("wallet", identity="admin") as ch:
            receipt = await wallet_pb2_grpc.WalletServiceStub(ch).Deposit(wallet_pb2.Transfer(
                account=wallet_pb2.Account(player_id=player), amount=amount,
                idempotency_key=key or uuid.uuid4().hex, reference="test"))
        return receipt.balance

    def keyring(self) -> ComplianceKeyring:
        """A compliance keyring that opens every hand this stack dealt."""
        return ComplianceKeyring([self.compliance])

    @property
    def addresses(self) -> dict[str, str]:
        return {name: s.address for name, s in self.servers.items()}

    def service_env(self, name: str, port: int = 0) -> dict[str, str]:
        """The variables service ``name`` is configured with: this stack's NATS, ``port``
        (0: one the OS picks), the running services' addresses, the stack's certificates
        (or POKER_INSECURE=1), compliance key and identity provider; then :attr:`env`."""
        env = {"POKER_NATS_URL": self.nats_url, "POKER_BIND": "127.0.0.1",
               "POKER_PORT": str(port), "POKER_LOG_LEVEL": "WARNING",
               "POKER_STREAM_REPLICAS": "1",
               "POKER_COMPLIANCE_PUBLIC_KEY": str(self.public_key_file),
               "POKER_NOTARY_KEY": str(self.notary_key_file),
               "POKER_DIRECTOR_TOKEN": self.issuer.token(
                   "director", ("director", "operator"), ttl_s=24 * 3600),
               **self.issuer.env()}
        env.update({f"POKER_{peer.upper()}_ADDR": address
                    for peer, address in self.addresses.items()})
        if self.tls_dir is None:
            env["POKER_INSECURE"] = "1"
        else:
            env["POKER_TLS_DIR"] = str(self.tls_dir)  # each service uses its own name's files
        env.update(self.env)
        return env

    async def start_service(self, name: str, port: int = 0) -> Server:
        """Start one service; ``port`` brings a stopped peer back where the table service
        expects it."""
        config = Config.from_env(name, self.service_env(name, port))
        access = (SERVERS[name].access_from_config(config) if SERVICE[name].checks_tokens
                  else None)
        server, cleanup = await start(name, SETUPS[name], config,
                                      now_ms=self.clocks.get(name, self.now_ms),
                                      access=access)
        await server.start()
        self.servers[name] = server
        self.cleanups[name] = cleanup
        return server

    async def stop_service(self, name: str, grace: float = 0.5) -> None:
        """Stop one service: its server (``grace`` for calls in flight), then its cleanup.
        A stop that has not finished by :data:`STOP_DEADLINE_S` is left behind, loudly,
        with the stacks of the tasks still running, so that it cannot hang its caller."""
        server = self.servers.pop(name)
        cleanup = self.cleanups.pop(name)

        async def stop() -> None:
            await server.stop(grace)
            await cleanup()

        await _bounded(stop(), f"stopping the {name} service")

    @property
    def keeper(self):
        """The table service's clock keeper (its ``tick()`` enforces the clocks)."""
        from .table.server import keeper_for
        return keeper_for(self.servers["table"].server)

    @property
    def notary(self):
        """The notary started by ``start_service("notary")`` (services/notary/server.py)."""
        from .notary.server import notary_for
        return notary_for(self.servers["notary"].server)

    async def stop(self) -> None:
        if self._cashier is not None:
            await _bounded(self._cashier.close(), "closing the cashier's channel")
        for name in (*ON_DEMAND, *reversed(START_ORDER)):
            if name in self.servers:
                await self.stop_service(name)
        shutil.rmtree(self.key_dir, ignore_errors=True)


#: how long stopping one in-process service may take (a server's grace, its peers' channels,
#: its NATS connection's drain) before the stop is abandoned and reported
STOP_DEADLINE_S = 20.0


async def _bounded(work: Coroutine[Any, Any, None], what: str) -> None:
    """Run ``work`` for at most :data:`STOP_DEADLINE_S`; past that, log an error naming
    ``what`` and where every task of the loop is waiting, cancel it and go on."""
    task = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({task}, timeout=STOP_DEADLINE_S)
    if task in done:
        task.result()
        return
    waiting = {t.get_name(): [f"{f.f_code.co_filename}:{f.f_lineno} {f.f_code.co_name}"
                              for f in t.get_stack(limit=6)]
               for t in asyncio.all_tasks() if not t.done()}
    log.error("a stop did not finish in time: left behind", what=what,
              deadline_s=STOP_DEADLINE_S, tasks=waiting)
    task.cancel()


async def start_local(nats_url: str, now_ms: Callable[[], int] | None = None,
                      mtls: bool = True, env: Mapping[str, str] | None = None,
                      clocks: Mapping[str, Callable[[], int]] | None = None) -> LocalStack:
    """Every service in this process, with mutual TLS unless ``mtls`` is False. ``now_ms``: a
    time source for all of them (tests drive the action clock with it; pass
    ``env={"POKER_CLOCK_TICK_MS": "0"}`` and call ``stack.keeper.tick()`` so that nothing
    happens in real time). ``env``: settings of the services, as variables
    (:attr:`LocalStack.env`). ``clocks``: some services' own time sources instead
    (:attr:`LocalStack.clocks`)."""
    stack = LocalStack(nats_url, now_ms, clocks=dict(clocks or {}), mtls=mtls,
                       env=dict(env or {}))
    for name in START_ORDER:
        await stack.start_service(name)
    return stack
