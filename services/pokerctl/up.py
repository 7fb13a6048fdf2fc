"""The local cluster behind `pokerctl up`, `pokerctl demo` and the process-level tests:
nats-server from the wheel (JetStream, ``sync_interval: always``, store under the data
directory) and every service as its own process (``python -m services.<name>``), configured by
the same environment variables a deployment uses.

    cluster = LocalCluster(data_dir, base_port=50050)   # base_port=None: free ports
    await cluster.start()          # NATS, then the services; returns once all are healthy
    cluster.addresses              # {"nats": "nats://...", "table": "127.0.0.1:50051", ...}
    cluster.client_address("table")  # every table instance: "127.0.0.1:50051,127.0.0.1:50071"
    cluster.kill("dealer")         # kill -9 (tests)
    await cluster.add_replica("table", "table-b", env={...})  # another instance, free port
    await cluster.restart("dealer")  # same port, same environment, waits until healthy
    await cluster.stop()           # SIGTERM the table service, then the others, then NATS

    LocalCluster(data_dir, nats_nodes=3, replica_count=2)  # 3-node JetStream, R3 streams;
    # two processes of each service ("dealer", "dealer-2", ...), peers balance round robin
    # over them (POKER_<NAME>_ADDR lists); supervise() restarts any process that dies
    # (in every mode), until one dies 5 times in a minute
    LocalCluster(data_dir, shards=4)  # the log split over POKER_S0..POKER_S3
    # (POKER_STREAM_SHARDS=4 for every process, the NATS users' rights on each stream)

Service instance i (0-based) listens at base + 20*i + offset and serves Prometheus metrics
at base + 20*i + 10 + offset (free ports without a base port).

NATS requires TLS (its certificate from the CA in ``<data_dir>/tls``, made on first use by
shared/infra/tls.py) and a user: each service connects as its own (shared/infra/natsauth.py),
with its password in its POKER_NATS_URL and the CA in POKER_NATS_CA; the admin user only makes
the stream and buckets before the services start. The passwords are made on first use and
kept owner-only in ``<data_dir>/nats/passwords.json``, the client URL in ``<data_dir>/nats/url``:
client commands (audit, history, bots, mirror) find them there (datadir.py's
``default_nats_url`` and ``client_ca``) as they find the compliance key.

    cluster.nats_url               # as the admin user (tests, operators); addresses["nats"]:
    cluster.nats_url_for("poker-reader")   # the address alone, nothing secret in it

Children run in their own session (a Ctrl-C at the terminal reaches only the supervisor, which
stops them in order) and die with the supervisor if it is killed (Linux parent-death signal,
set by a tiny exec wrapper; it fires when the *thread* that started them ends, so start the
cluster from a long-lived thread such as the event loop's). Each child's output goes to
``<data_dir>/logs/<name>.log``.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from shared.infra.config import DEFAULT_BASE_PORT, PORT_OFFSETS, WEB_PORT_OFFSET, stream_shards
from shared.infra.devissuer import DevIssuer
from shared.infra.natsserver import NatsServer, free_port
from shared.infra.tls import TlsConfig, channel
from shared.infra.tls import generate as generate_certs

from .up_env import Environments
from .up_nats import DEFAULT_NATS_PORT, NatsNodes
from .up_processes import (
    HOST,
    SERVICES,
    WEB,
    ClusterError,
    DataDirInUse,
    Processes,
    port_in_use,
)
from .up_secrets import compliance_key_files, nats_passwords, notary_key_files

#: processes of each service `up` runs at most (--replicas)
MAX_REPLICAS = 8


@dataclass
class LocalCluster(NatsNodes, Environments, Processes):
    """NATS and every service as processes on this machine (see the module's docstring); its
    NATS (up_nats.py), its processes' environments (up_env.py) and the processes themselves
    (up_processes.py) are each a base class of their own."""

    data_dir: Path
    #: service ports are base_port + offset (table +1, dealer +2, ...); None: free ports
    base_port: int | None = DEFAULT_BASE_PORT
    #: None: 4222 with a base port, a free port without one
    nats_port: int | None = None
    log_level: str = "INFO"
    health_timeout: float = 30.0
    ports: dict[str, int] = field(default_factory=dict)
    procs: dict[str, subprocess.Popen] = field(default_factory=dict)
    nats: NatsServer | None = None
    #: extra instances (process name -> service) and the environment they add
    replicas: dict[str, str] = field(default_factory=dict)
    replica_env: dict[str, dict[str, str]] = field(default_factory=dict)
    #: nats-server nodes: 1, or a JetStream cluster (streams replicated min(nodes, 3) times)
    nats_nodes: int = 1
    #: processes per service, all in the peers' address lists
    replica_count: int = 1
    #: processes of the table service (at least ``replica_count``): the busiest process, whose
    #: one event loop serves every command, view and clock (`pokerctl up` runs two)
    table_services: int = 1
    metrics_ports: dict[str, int] = field(default_factory=dict)
    nodes: list[NatsServer] = field(default_factory=list)
    #: service -> its process names in address-list order
    instances: dict[str, list[str]] = field(default_factory=dict)
    _handed: set[int] = field(default_factory=set, repr=False)
    #: NATS user -> password (made on first use, kept in the data directory)
    nats_passwords: dict[str, str] = field(default_factory=dict, repr=False)
    #: plaintext gRPC between the services (POKER_INSECURE=1): debugging only
    insecure: bool = False
    #: streams the log's tables are split over (POKER_STREAM_SHARDS of every process)
    shards: int = 1
    #: also run the web pages (services/web) as process "web", on base port + 8
    web: bool = False
    _cashier: grpc.aio.Channel | None = field(default=None, repr=False)
    _lock: int | None = field(default=None, repr=False)  # the data directory's (flock)

    def __post_init__(self) -> None:
        if not 1 <= self.replica_count <= MAX_REPLICAS:
            raise ClusterError(f"--replicas is the number of processes of each service: 1 to "
                               f"{MAX_REPLICAS}, not {self.replica_count}")
        if not 1 <= self.table_services <= MAX_REPLICAS:
            raise ClusterError(f"--table-services is the number of table-service processes: "
                               f"1 to {MAX_REPLICAS}, not {self.table_services}")
        # the rule of POKER_STREAM_SHARDS (1 to 64), said in its words
        self.shards = stream_shards({"POKER_STREAM_SHARDS": str(self.shards)})
        self.data_dir = Path(self.data_dir)
        self.key_file, self.public_key_file = compliance_key_files(self.data_dir)
        #: the notary's signing key and its vkey (made on first use, kept after)
        self.notary_key_file, self.notary_vkey_file = notary_key_files(self.data_dir)
        #: the CA and every identity's certificate (made on first use, the CA kept after)
        self.tls_dir = None if self.insecure else generate_certs(self.data_dir / "tls")
        #: the dev identity provider players' and operators' tokens come from (`pokerctl
        #: token`): made on first use, kept after
        self.issuer = DevIssuer.create(self.data_dir / "identity")
        self.nats_passwords = nats_passwords(self.data_dir)
        if not self.ports:
            if self.base_port is None:
                self.ports = {name: self.unused_port() for name in SERVICES}
            else:
                self.ports = {name: self.base_port + PORT_OFFSETS[name] for name in SERVICES}
        if self.nats_port is None:
            self.nats_port = DEFAULT_NATS_PORT if self.base_port is not None else 0
        for name in SERVICES:
            self.instances.setdefault(name, [name])
            count = max(self.replica_count, self.table_services) if name == "table" else \
                self.replica_count
            for i in range(1, count):
                extra = f"{name}-{i + 1}"
                self.instances[name].append(extra)
                self.replicas[extra] = name
                self.ports[extra] = (self.unused_port() if self.base_port is None else
                                     self.base_port + 20 * i + PORT_OFFSETS[name])
        if self.web and WEB not in self.ports:
            self.ports[WEB] = (self.unused_port() if self.base_port is None
                               else self.base_port + WEB_PORT_OFFSET)
        for service, names in self.instances.items():
            for i, name in enumerate(names):
                self.metrics_ports.setdefault(name, (
                    self.unused_port() if self.base_port is None
                    else self.base_port + 20 * i + 10 + PORT_OFFSETS[service]))

    def unused_port(self) -> int:
        """A free port not handed out before by this cluster (ports are bound later)."""
        taken = set(self.ports.values()) | set(self.metrics_ports.values()) | \
            {n.port for n in self.nodes} | {self.nats_port or 0} | self._handed
        while (port := free_port(HOST)) in taken:
            pass
        self._handed.add(port)
        return port

    # --- what clients need ---------------------------------------------------------------

    @property
    def addresses(self) -> dict[str, str]:
        out = {"nats": self.nats_address} if self.nats is not None else {}
        out.update({name: f"{HOST}:{port}" for name, port in self.ports.items()})
        return out

    def client_address(self, service: str) -> str:
        """Every instance of ``service``, comma-separated (replicas added later included):
        what a client is given (POKER_TABLE_ADDR=a,b), and balances over round robin."""
        names = list(self.instances.get(service, [service]))
        names += [n for n, s in self.replicas.items() if s == service and n not in names]
        return ",".join(f"{HOST}:{self.ports[n]}" for n in names)

    def keyring(self):
        """The compliance keyring that opens the hands this cluster dealt."""
        from shared.infra.secrecy import ComplianceKeyring
        return ComplianceKeyring.from_files([str(self.key_file)])

    def tls(self, identity: str | None = "client") -> TlsConfig | None:
        """What a client of this cluster presents (``identity``'s certificate; None: the CA
        only); None when the cluster runs in plaintext."""
        return None if self.tls_dir is None else TlsConfig.in_dir(self.tls_dir, identity)

    def channel(self, name: str, identity: str | None = "client",
                options: Sequence[tuple[str, object]] = ()):
        """A grpc.aio channel to process ``name`` (a service or a replica's name)."""
        return channel(self.addresses[name], self.tls(identity),
                       service=self.replicas.get(name, name), options=options)

    # --- lifecycle -----------------------------------------------------------------------

    async def start(self) -> LocalCluster:
        """NATS, then every service; returns once each answers its health check SERVING.
        The data directory is locked first (DataDirInUse: another cluster runs on it); once
        all serve, its client environment is written (:meth:`write_client_env`)."""
        self._lock_data_dir()
        busy = [f"{name} {port}" for name, port in
                 [("nats", self.nats_port or 0), *self.ports.items(),
                  *(("metrics " + n, p) for n, p in self.metrics_ports.items())]
                if port and port_in_use(port)]
        if busy:
            raise ClusterError(f"ports in use on {HOST}: {', '.join(busy)} (another `pokerctl "
                               f"up`? choose --base-port/--nats-port)")
        try:
            # In its own session: Ctrl-C reaches only the supervisor, so NATS stops last.
            await self.start_nats()
            names = [n for svc in SERVICES for n in self.instances[svc]]
            for name in names:
                self.start_process(name)
            await self.wait_healthy(names)
            if self.web:  # a client of the table service: once it serves
                self.start_process(WEB)
                await self.wait_healthy([WEB])
            self.write_client_env()
        except BaseException:
            await self.stop()
            raise
        return self

    async def add_replica(self, service: str, name: str,
                          env: dict[str, str] | None = None) -> None:
        """Start another instance of ``service`` as process ``name`` on a free port, with
        ``env`` on top of the service's environment (POKER_INSTANCE_ID, say); wait until it
        is healthy. ``kill``, ``restart`` and ``pid`` take its name; ``stop`` stops it with
        its service. Clients find it in ``addresses[name]``; peers keep calling the first."""
        if service not in SERVICES or name in self.ports:
            raise ClusterError(f"cannot add {name!r} as an instance of {service!r}")
        self.ports[name] = self.unused_port()
        self.metrics_ports[name] = self.unused_port()
        self.replicas[name] = service
        self.replica_env[name] = dict(env or {})
        self.start_process(name)
        await self.wait_healthy([name])

    def sponsor(self):
        """Tokens (this cluster's dev issuer) and deposits (its wallet's cashier, as admin)
        for bots: services/pokerctl/botclient.Sponsor."""
        from poker.wallet.v1 import wallet_pb2_grpc

        from .botclient import Sponsor
        if self._cashier is None:
            self._cashier = self.channel("wallet", identity="admin")
        return Sponsor(self.issuer, wallet_pb2_grpc.WalletServiceStub(self._cashier))

    def _lock_data_dir(self) -> None:
        """Hold ``data_dir/up.lock`` (flock) while this cluster runs: two `up` on one data
        directory would run two nats-servers on one JetStream store."""
        if self._lock is not None:
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        path = self.data_dir / "up.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 200).decode(errors="replace").strip() or "a process"
            os.close(fd)
            raise DataDirInUse(f"{self.data_dir} is in use by another `pokerctl up` "
                               f"({holder}): stop it first, or give this one another "
                               "--data-dir") from None
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()}, NATS port {self.nats_port or 'free'}\n".encode())
        self._lock = fd

    async def stop(self) -> None:
        """SIGTERM the table service (it calls the others), then the rest; wait for each
        (SIGKILL after 10 s); then stop NATS. Safe to call twice."""
        if self._cashier is not None:
            await self._cashier.close()
            self._cashier = None
        tables = ["table", *(n for n, s in self.replicas.items() if s == "table")]
        await self.terminate(tables)
        await self.terminate([n for n in self.procs if n not in tables])
        for node in self.nodes or ([self.nats] if self.nats is not None else []):
            await asyncio.to_thread(node.stop)
        if self._lock is not None:
            os.close(self._lock)  # the data directory is free again
            self._lock = None

    async def __aenter__(self) -> LocalCluster:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()
