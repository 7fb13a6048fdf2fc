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
client commands (audit, history, bots, mirror) find them there (:func:`default_nats_url`,
:func:`client_ca`) as they find the compliance key.

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
import json
import os
import secrets
import shlex
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.infra import natsauth, natsconn
from shared.infra import services as registry
from shared.infra.config import (
    DEFAULT_BASE_PORT,
    DEFAULT_NATS_URL,
    PORT_OFFSETS,
    WEB_PORT_OFFSET,
    service_address,
    stream_shards,
)
from shared.infra.devissuer import DevIssuer
from shared.infra.files import write_private
from shared.infra.identity import DIRECTOR, OPERATOR, RELAY
from shared.infra.natsserver import NatsServer, free_port
from shared.infra.tls import TlsConfig, channel
from shared.infra.tls import generate as generate_certs

from .datadir import default_data_dir, up_cert_dir

#: every service, in the registry's start order (shared/infra/services.py): the table service
#: calls the others, so it starts after them and stops before them
SERVICES = registry.names()
DEFAULT_NATS_PORT = 4222
#: `up` gives up on a process that died this many times within this window (it cannot start:
#: its log says why) and stops the stack
SUPERVISE_DEATHS, SUPERVISE_WINDOW_S = 5, 60.0
#: processes of each service `up` runs at most (--replicas)
MAX_REPLICAS = 8
HOST = "127.0.0.1"
#: what selects a process's gRPC certificates (shared/infra/tls.py); `up` sets them itself
TLS_ENV = ("POKER_TLS_DIR", "POKER_TLS_CA", "POKER_TLS_CERT", "POKER_TLS_KEY", "POKER_INSECURE")

# Execs argv[2:] after asking the kernel to SIGTERM it when the supervisor's thread dies
# (argv[1]: the supervisor's pid, to catch a supervisor that died before the prctl).
_EXEC_WITH_PARENT_DEATH = (
    "import ctypes,os,signal,sys\n"
    "try:\n"
    "    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)\n"
    "except Exception:\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(1)\n"
    "os.execv(sys.argv[2], sys.argv[2:])\n"
)


#: the web pages' process (on the base port + WEB_PORT_OFFSET) and how long its token lasts
WEB = "web"
WEB_TOKEN_TTL_S = 30 * 24 * 3600
#: how long the director's token to the table service lasts (a restart of `up` makes another)
DIRECTOR_TOKEN_TTL_S = 30 * 24 * 3600


class ClusterError(RuntimeError):
    """A process of the cluster did not come up (or died)."""


class DataDirInUse(ClusterError):
    """Another cluster runs on this data directory."""


async def create_streams(url: str, replicas: int, ca: str | None = None,
                         shards: int = 1) -> None:
    """The log's streams (``shards`` of them, or the one) and the KV buckets, made once before
    the services start (as deploy/'s init job does), as the admin user (``url`` carries it):
    the services' users may not make streams, and ten processes racing to create R3 assets
    while the cluster elects leaders time out on a small machine. A log already split
    otherwise is refused (shared/infra/eventstore.ShardsChanged)."""
    from services.tournament.director import LEASES as TOURNAMENT_LEASES
    from services.tournament.director import open_seeds
    from services.tournament.log import ensure_stream as ensure_tournaments
    from services.wallet.ledger import ensure_wallet_stream
    from services.web.sessions import ensure_bucket as ensure_web_sessions
    from shared.audit.access import ensure_access_stream
    from shared.infra.eventstore import EventStore, StreamSettings
    from shared.infra.lease import Leases, ttl_ms_from_env
    from shared.infra.vault import DeckVault
    store = await EventStore.connect(url, name="pokerctl-up", ca=ca, shards=shards,
                                     settings=StreamSettings(replicas=replicas, upgrade=True))
    try:
        await ensure_wallet_stream(store.js, replicas=replicas)
        await ensure_access_stream(store.js, replicas=replicas)
        await DeckVault.open(store.js, replicas=replicas)
        # the TTL the services will ask for: POKER_LEASE_TTL_MS of the environment `up`
        # hands them (its own, see LocalCluster.env)
        await Leases.open(store.js, ttl_ms=ttl_ms_from_env(os.environ), replicas=replicas)
        await ensure_web_sessions(store.js, replicas=replicas)  # the web's (its TTL)
        await ensure_tournaments(store.js, replicas=replicas)  # the director's log
        await open_seeds(store.js, replicas=replicas)  # and its draws' seeds
        await Leases.open(store.js, bucket=TOURNAMENT_LEASES,  # and its leases
                          ttl_ms=ttl_ms_from_env(os.environ), replicas=replicas)
    finally:
        await store.close()


async def wait_jetstream_ready(url: str, timeout: float = 30.0, ca: str | None = None) -> None:
    """Wait until the JetStream cluster has a meta leader and answers account info."""
    deadline = time.monotonic() + timeout
    nc = await natsconn.connect(url, name="pokerctl-up", ca=ca, connect_timeout=2,
                                max_reconnect_attempts=-1, reconnect_time_wait=0.1)
    try:
        js = nc.jetstream(timeout=1)
        while True:
            try:
                await js.account_info()
                return
            except Exception as exc:  # not ready: no meta leader yet, a timeout
                if time.monotonic() > deadline:
                    raise ClusterError(f"JetStream at {natsconn.redact(url)} not ready after "
                                       f"{timeout} s: {exc!r}") from None
                await asyncio.sleep(0.1)
    finally:
        await nc.close()


def nats_passwords(data_dir: Path) -> dict[str, str]:
    """Every NATS user's password (shared/infra/natsauth.py), kept owner-only in
    ``data_dir/nats/passwords.json``: made on first use, the same on every restart."""
    path = data_dir / "nats" / "passwords.json"
    known = json.loads(path.read_text()) if path.exists() else {}
    users = [u.name for u in (*natsauth.USERS, natsauth.SYS)]
    if all(u in known for u in users):
        return known
    passwords = {u: known.get(u) or secrets.token_hex(24) for u in users}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, json.dumps(passwords, indent=1))
    return passwords


def client_nats_url(data_dir: Path, user: str = natsauth.READER) -> str | None:
    """The URL of the NATS that `up` runs on ``data_dir``, as ``user`` (None: `up` has not
    run there, or its files cannot be read)."""
    try:
        address = (data_dir / "nats" / "url").read_text().strip()
        password = json.loads((data_dir / "nats" / "passwords.json").read_text())[user]
    except (OSError, ValueError, KeyError):
        return None
    return natsconn.with_user(address, user, password)


#: the help of a client command's --nats (its default holds a password: not shown)
NATS_HELP = ("NATS URL (default POKER_NATS_URL, else the NATS of `pokerctl up` as its "
             "compliance user, who may record the reads that open sealed cards, found with "
             "the compliance key in its data directory)")


def default_nats_url(user: str = natsauth.COMPLIANCE) -> str:
    """What client commands connect to unless told: POKER_NATS_URL, else the NATS of `up`
    (its data directory: POKER_DATA_DIR, else the default) as ``user`` (compliance: audit,
    history and the bots' audit may open sealed cards with the key kept beside it, and only
    compliance may record such a read in the access log), else nats://127.0.0.1:4222."""
    return (os.environ.get("POKER_NATS_URL") or client_nats_url(default_data_dir(), user)
            or DEFAULT_NATS_URL)


def client_ca() -> str | None:
    """The CA client commands check NATS against: POKER_NATS_CA (or the services' CA, see
    shared/infra/natsconn.py), else the one in `up`'s data directory, if any."""
    ca = natsconn.ca_file(os.environ)
    if ca is None and (up_cert_dir() / "ca.pem").exists():
        ca = str(up_cert_dir() / "ca.pem")
    return ca


def default_table_addr() -> str:
    """POKER_TABLE_ADDR, else the table service of the `up` whose data directory this is (the
    addresses its env file lists: every instance), else POKER_BASE_PORT + 1: the address the
    services themselves would use (shared/infra/config.service_address)."""
    if os.environ.get("POKER_TABLE_ADDR"):
        return service_address("table", os.environ)
    return up_env(default_data_dir()).get("POKER_TABLE_ADDR") or service_address("table",
                                                                             os.environ)


def up_env(data_dir: Path) -> dict[str, str]:
    """The variables an `up` wrote in ``data_dir/env`` for its clients ({}: none there)."""
    try:
        text = (data_dir / "env").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            name, _, value = line[len("export "):].partition("=")
            try:
                words = shlex.split(value)
            except ValueError:
                continue
            if len(words) == 1 and name.startswith("POKER_"):
                out[name] = words[0]
    return out


def port_in_use(port: int, host: str = HOST) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not "in use"
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def _spawn(argv: list[str], log_path: Path, env: dict[str, str] | None = None
           ) -> subprocess.Popen:
    """Start ``argv`` in its own session, output appended to ``log_path``."""
    if sys.platform.startswith("linux"):
        argv = [sys.executable, "-I", "-S", "-c", _EXEC_WITH_PARENT_DEATH, str(os.getpid()),
                *argv]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)


def compliance_key_files(data_dir: Path) -> tuple[Path, Path]:
    """The compliance key pair kept in the data directory (made on first use): the dealer
    seals every hand to its public key; `pokerctl audit` and `history` open hands with the
    private one. A real deployment keeps the private key with compliance, off the cluster."""
    keys = data_dir / "keys"
    private, public = keys / "compliance.key", keys / "compliance.pub"
    if not public.exists():
        from shared.infra.secrecy import ComplianceKey
        ComplianceKey.generate().write(keys)
    return private, public


def notary_key_files(data_dir: Path) -> tuple[Path, Path]:
    """The notary's signing key (``keys/notary.key``, owner-only) and its verifier key
    (``keys/notary.vkey``), made on first use with an origin of their own
    (``poker-tables.local/hands-<random>``): the notary signs the hands' log checkpoints with
    it; witnesses and audits check them with the vkey."""
    keys = data_dir / "keys"
    private, public = keys / "notary.key", keys / "notary.vkey"
    if not private.exists():
        from shared.tlog.note import Signer
        signer = Signer.generate(f"poker-tables.local/hands-{secrets.token_hex(4)}")
        keys.mkdir(parents=True, exist_ok=True)
        write_private(private, signer.skey + "\n")
        public.write_text(signer.verifier.vkey + "\n")
    return private, public


@dataclass
class LocalCluster:
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
                self.ports = {name: self._free_port() for name in SERVICES}
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
                self.ports[extra] = (self._free_port() if self.base_port is None else
                                     self.base_port + 20 * i + PORT_OFFSETS[name])
        if self.web and WEB not in self.ports:
            self.ports[WEB] = (self._free_port() if self.base_port is None
                               else self.base_port + WEB_PORT_OFFSET)
        for service, names in self.instances.items():
            for i, name in enumerate(names):
                self.metrics_ports.setdefault(name, (
                    self._free_port() if self.base_port is None
                    else self.base_port + 20 * i + 10 + PORT_OFFSETS[service]))

    def _free_port(self) -> int:
        """A free port not handed out before by this cluster (ports are bound later)."""
        taken = set(self.ports.values()) | set(self.metrics_ports.values()) | \
            {n.port for n in self.nodes} | {self.nats_port or 0} | self._handed
        while (port := free_port(HOST)) in taken:
            pass
        self._handed.add(port)
        return port

    # --- what clients need ---------------------------------------------------------------

    @property
    def nats_address(self) -> str:
        """Every NATS node's client URL (``tls://``), no credentials: what `up` prints."""
        if self.nats is None:
            raise ClusterError("the cluster is not started")
        return ",".join(node.url for node in self.nodes)

    def nats_url_for(self, user: str) -> str:
        """The NATS URL as ``user`` (shared/infra/natsauth.py), password included."""
        return natsconn.with_user(self.nats_address, user, self.nats_passwords[user])

    @property
    def nats_url(self) -> str:
        """The NATS URL as the admin (tests and operators; the services have their own
        users); connect with ``ca=cluster.nats_ca``."""
        return self.nats_url_for(natsauth.ADMIN)

    @property
    def nats_ca(self) -> str:
        """The CA NATS's certificate is checked against."""
        return str(self.nats_cert_dir / "ca.pem")

    @property
    def nats_cert_dir(self) -> Path:
        return self.data_dir / "tls"

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

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    def env(self, name: str) -> dict[str, str]:
        """The environment of service ``name``: the same variables a deployment sets."""
        env = dict(os.environ)
        env.update({
            # its own NATS user (its rights: shared/infra/natsauth.py), over TLS
            "POKER_NATS_URL": self.nats_url_for(
                natsauth.SERVICE_USERS[self.replicas.get(name, name)]),
            "POKER_NATS_CA": self.nats_ca,
            "POKER_STREAM_REPLICAS": str(min(self.nats_nodes, 3)),
            "POKER_STREAM_SHARDS": str(self.shards),
            "POKER_METRICS_PORT": str(self.metrics_ports.get(name, 0)),
            "POKER_COMPLIANCE_PUBLIC_KEY": str(self.public_key_file),
            "POKER_PORT": str(self.ports[name]),
            "POKER_BIND": HOST,
            "POKER_LOG_LEVEL": self.log_level,
            "PYTHONUNBUFFERED": "1",
            **self.issuer.env(),  # the table service checks every caller's token with it
        })
        if self.base_port is not None:
            env["POKER_BASE_PORT"] = str(self.base_port)
        for peer in SERVICES:
            env[f"POKER_{peer.upper()}_ADDR"] = ",".join(
                f"{HOST}:{self.ports[n]}" for n in self.instances[peer])
        for var in TLS_ENV:  # the certificates of this cluster, not the caller's
            env.pop(var, None)
        if self.tls_dir is None:
            env["POKER_INSECURE"] = "1"
        else:
            env["POKER_TLS_DIR"] = str(self.tls_dir)  # each uses its own name's files
        if self.replicas.get(name) == "table":
            env["POKER_INSTANCE_ID"] = name
        if self.replicas.get(name, name) == "notary":  # it signs the hands' checkpoints
            env["POKER_NOTARY_KEY"] = str(self.notary_key_file)
            env["POKER_INSTANCE_ID"] = name
        if self.replicas.get(name, name) == "tournament":  # the director's own token
            env["POKER_DIRECTOR_TOKEN"] = self.issuer.token(
                "director", (DIRECTOR, OPERATOR), ttl_s=DIRECTOR_TOKEN_TTL_S)
            env["POKER_INSTANCE_ID"] = name
        env.update(self.replica_env.get(name, {}))
        return env

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
            await self._start_nats()
            names = [n for svc in SERVICES for n in self.instances[svc]]
            for name in names:
                self._start_process(name)
            await self.wait_healthy(names)
            if self.web:  # a client of the table service: once it serves
                self._start_process(WEB)
                await self.wait_healthy([WEB])
            self.write_client_env()
        except BaseException:
            await self.stop()
            raise
        return self

    def _nats_security(self) -> dict:
        """What every node is started with: TLS (the ``nats`` certificate of the data
        directory's CA, made on first use) and the users with their passwords."""
        certs = generate_certs(self.nats_cert_dir, identities=("nats",))
        return {"tls_cert": certs / "nats.pem", "tls_key": certs / "nats.key",
                "tls_ca": certs / "ca.pem",
                "accounts": natsauth.accounts_conf(self.nats_passwords, shards=self.shards)}

    async def _start_nats(self) -> None:
        security = self._nats_security()
        count = max(1, self.nats_nodes)
        if count == 1:
            self.nodes = [NatsServer(self.data_dir / "jetstream", port=self.nats_port or 0,
                                     **security)]
            logs = [self.log_dir / "nats.log"]
        else:
            ports = [(self.nats_port + i) if self.nats_port else self._free_port()
                     for i in range(count)]
            routes = [self._free_port() for _ in range(count)]
            self.nodes = [
                NatsServer(self.data_dir / "jetstream" / f"nats-{i + 1}", port=ports[i],
                           name=f"nats-{i + 1}", cluster="poker", cluster_port=routes[i],
                           routes=[f"nats-route://{HOST}:{p}" for p in routes], **security)
                for i in range(count)]
            logs = [self.log_dir / f"{node.name}.log" for node in self.nodes]
        for node, log in zip(self.nodes, logs):
            node.start(log_file=log, spawn=_spawn)
        self.nats = self.nodes[0]
        self.nats_port = self.nats.port
        await wait_jetstream_ready(self.nats_url, timeout=self.health_timeout, ca=self.nats_ca)
        await create_streams(self.nats_url, replicas=min(count, 3), ca=self.nats_ca,
                             shards=self.shards)
        # where client commands find this NATS (their passwords are in passwords.json)
        (self.data_dir / "nats" / "url").write_text(self.nats_address + "\n")

    def node(self, server_name: str) -> NatsServer:
        """The NATS node of that server name (as a stream's cluster info names its leader)."""
        return next(n for n in self.nodes if n.name == server_name)

    def kill_node(self, server_name: str) -> None:
        """kill -9 one NATS node (fault tests)."""
        self.node(server_name).stop(kill=True)

    def restart_node(self, server_name: str) -> None:
        """Start a stopped NATS node again with the same config and store."""
        node = self.node(server_name)
        node.start(log_file=self.log_dir / f"{node.name}.log", spawn=_spawn)

    def _start_process(self, name: str) -> None:
        if name in self.procs and self.procs[name].poll() is None:
            raise ClusterError(f"{name} is already running (pid {self.procs[name].pid})")
        service = self.replicas.get(name, name)
        env = self.web_env() if name == WEB else self.env(name)
        self.procs[name] = _spawn([sys.executable, "-m", f"services.{service}"],
                                  self.log_dir / f"{name}.log", env=env)

    @property
    def web_url(self) -> str | None:
        """The web pages' address (None: not run)."""
        return f"http://{HOST}:{self.ports[WEB]}/" if WEB in self.ports else None

    def web_env(self) -> dict[str, str]:
        """The web service's environment: a client of every table-service instance (with the
        client certificate and a token of its own, the relay role), a reader of the log with
        its own sessions bucket, and compliance's recorder of the replays it opens."""
        env = {k: v for k, v in os.environ.items() if k not in TLS_ENV}
        env.update({
            "POKER_TABLE_ADDR": self.client_address("table"),
            "POKER_WALLET_ADDR": self.client_address("wallet"),  # a player's balance
            "POKER_TOURNAMENT_ADDR": self.client_address("tournament"),  # its lobby's
            "POKER_NATS_URL": self.nats_url_for(natsauth.WEB),
            # the compliance replay's reads are recorded in the access log as compliance
            "POKER_COMPLIANCE_NATS_URL": self.nats_url_for(natsauth.COMPLIANCE),
            "POKER_NATS_CA": self.nats_ca,
            "POKER_WEB_PORT": str(self.ports[WEB]),
            "POKER_WEB_HOSTS": f"{HOST},localhost",  # the names its address is given by
            "POKER_BIND": HOST,
            "POKER_WEB_TOKEN": self.issuer.token("web", (RELAY,), ttl_s=WEB_TOKEN_TTL_S),
            "PYTHONUNBUFFERED": "1",
            **self.issuer.env(),  # players sign in with the dev issuer's tokens
            "POKER_COMPLIANCE_KEY": str(self.key_file),  # the compliance replay's
        })
        if self.tls_dir is None:
            env["POKER_INSECURE"] = "1"
        else:
            env["POKER_TLS_DIR"] = str(self.tls_dir)  # its "client" certificate
        return env

    async def _wait_web(self, deadline: float) -> None:
        """Until the web pages answer /healthz (HTTP 200)."""
        import urllib.request

        def answers() -> bool:
            try:
                with urllib.request.urlopen(f"{self.web_url}healthz", timeout=0.5) as reply:
                    return reply.status == 200
            except OSError:
                return False

        while not await asyncio.to_thread(answers):
            proc = self.procs.get(WEB)
            if proc is not None and proc.poll() is not None:
                raise ClusterError(f"web exited with code {proc.returncode}; see "
                                   f"{self.log_dir / 'web.log'}")
            if time.monotonic() > deadline:
                raise ClusterError(f"the web pages did not answer at {self.web_url} within "
                                   f"{self.health_timeout} s; see {self.log_dir / 'web.log'}")
            await asyncio.sleep(0.05)  # polling a process that is starting

    async def add_replica(self, service: str, name: str,
                          env: dict[str, str] | None = None) -> None:
        """Start another instance of ``service`` as process ``name`` on a free port, with
        ``env`` on top of the service's environment (POKER_INSTANCE_ID, say); wait until it
        is healthy. ``kill``, ``restart`` and ``pid`` take its name; ``stop`` stops it with
        its service. Clients find it in ``addresses[name]``; peers keep calling the first."""
        if service not in SERVICES or name in self.ports:
            raise ClusterError(f"cannot add {name!r} as an instance of {service!r}")
        self.ports[name] = self._free_port()
        self.metrics_ports[name] = self._free_port()
        self.replicas[name] = service
        self.replica_env[name] = dict(env or {})
        self._start_process(name)
        await self.wait_healthy([name])

    async def wait_healthy(self, names: Iterable[str], timeout: float | None = None) -> None:
        """Wait until each service answers the gRPC health check with SERVING."""
        deadline = time.monotonic() + (timeout or self.health_timeout)
        await asyncio.gather(*(self._wait_one(name, deadline) for name in names))

    async def _wait_one(self, name: str, deadline: float) -> None:
        if name == WEB:
            return await self._wait_web(deadline)
        options = [("grpc.initial_reconnect_backoff_ms", 50),
                   ("grpc.min_reconnect_backoff_ms", 50),
                   ("grpc.max_reconnect_backoff_ms", 250)]
        # over TLS as a client: the health check is open to every certificate of the CA
        async with self.channel(name, options=options) as ch:
            stub = health_pb2_grpc.HealthStub(ch)
            while True:
                proc = self.procs.get(name)
                if proc is not None and proc.poll() is not None:
                    raise ClusterError(f"{name} exited with code {proc.returncode}; see "
                                       f"{self.log_dir / (name + '.log')}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ClusterError(f"{name} was not healthy at {self.addresses[name]} "
                                       f"within {self.health_timeout} s; see "
                                       f"{self.log_dir / (name + '.log')}")
                try:
                    reply = await stub.Check(health_pb2.HealthCheckRequest(service=""),
                                             timeout=min(left, 0.5), wait_for_ready=True)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        return
                except grpc.aio.AioRpcError as exc:
                    if exc.code() not in (grpc.StatusCode.UNAVAILABLE,
                                          grpc.StatusCode.DEADLINE_EXCEEDED):
                        raise
                # not serving yet (or still binding): the next Check waits on the channel

    def pid(self, name: str) -> int | None:
        """The process id of a service, of "nats" or of a node "nats-N" (None if not
        started)."""
        nodes = {n.name: n for n in self.nodes}
        proc = self.nats.proc if name == "nats" and self.nats is not None else \
            nodes[name].proc if name in nodes else self.procs.get(name)
        return proc.pid if proc is not None else None

    def dead(self) -> dict[str, int]:
        """Services whose process has exited, with their exit codes."""
        return {name: p.returncode for name, p in self.procs.items() if p.poll() is not None}

    def exited(self) -> dict[str, int]:
        """Every child that has exited (NATS first, then the services), with its exit code.
        A single NATS server is "nats", cluster nodes their names."""
        out = {("nats" if len(self.nodes) == 1 else node.name): node.proc.returncode
               for node in self.nodes if node.proc is not None and node.proc.poll() is not None}
        out.update(self.dead())
        return out

    def log_of(self, name: str) -> Path:
        """Where the child ``name`` writes its output."""
        return self.log_dir / f"{name}.log"

    async def supervise(self, on_restart=None, max_deaths: int = SUPERVISE_DEATHS,
                        window_s: float = SUPERVISE_WINDOW_S,
                        clock=time.monotonic, sleep=asyncio.sleep) -> tuple[str, int, Path]:
        """Restart whatever dies, as a supervisor would: a service on its port with its
        environment, a NATS server (or cluster node) on its store, each after a backoff that
        doubles from 0.2 s to 5 s while it keeps dying, without waiting for it to be healthy
        (one that dies again is restarted again). A process that died ``max_deaths`` times
        within ``window_s`` cannot be kept up: returns (its name, its last exit code, its
        log) for the caller to stop the stack. ``on_restart(name, code)`` is told of each
        death that will be restarted. ``clock`` and ``sleep`` (its wait between two looks at
        its children): the real ones unless a test steps the supervisor."""
        deaths: dict[str, deque[float]] = {}
        due: dict[str, float] = {}  # name -> when to start it again
        while True:
            now = clock()
            for name, code in self.exited().items():
                if name in due:
                    continue
                times = deaths.setdefault(name, deque())
                times.append(now)
                while now - times[0] > window_s:
                    times.popleft()
                if len(times) >= max_deaths:
                    return name, code, self.log_of(name)
                if on_restart is not None:
                    on_restart(name, code)
                due[name] = now + min(0.2 * 2 ** (len(times) - 1), 5.0)
            for name, at in list(due.items()):
                if at <= now:
                    del due[name]
                    try:
                        self._revive(name)
                    except (ClusterError, RuntimeError, OSError):
                        pass  # still dead: counted again on the next turn
            await sleep(0.1)  # a supervisor's poll of its children

    def _revive(self, name: str) -> None:
        if name in self.procs:
            self.procs.pop(name)
            self._start_process(name)
        elif name == "nats":
            self.nodes[0].start(log_file=self.log_of("nats"), spawn=_spawn)
        else:
            self.restart_node(name)

    def kill(self, name: str) -> None:
        """kill -9 one service and reap it (fault tests)."""
        proc = self.procs[name]
        proc.kill()
        proc.wait()

    async def restart(self, name: str) -> None:
        """Start ``name`` again on the same port with the same environment; wait until
        healthy. A running process is stopped first (SIGTERM)."""
        proc = self.procs.get(name)
        if proc is not None and proc.poll() is None:
            await self._terminate([name])
        self._start_process(name)
        await self.wait_healthy([name])

    async def _terminate(self, names: list[str], timeout: float = 10.0) -> None:
        procs = [self.procs[n] for n in names if n in self.procs]
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                await asyncio.to_thread(p.wait, timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                await asyncio.to_thread(p.wait)

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

    @property
    def env_file(self) -> Path:
        return self.data_dir / "env"

    def write_client_env(self) -> Path:
        """``data_dir/env``: what every client command reads to find this cluster (the data
        directory, where NATS's URL, its CA, the passwords and the compliance key are; the
        table and wallet addresses), for ``source DIR/env``; the NATS and metrics addresses
        as comments. No secret in it: the passwords stay in ``data_dir/nats``."""
        values = {"POKER_DATA_DIR": str(self.data_dir.resolve()),
                  "POKER_TABLE_ADDR": self.client_address("table"),
                  "POKER_WALLET_ADDR": self.client_address("wallet"),
                  "POKER_TOURNAMENT_ADDR": self.client_address("tournament"),
                  "POKER_COMPLIANCE_KEY": str(self.key_file.resolve()),
                  "POKER_NOTARY_VKEY": str(self.notary_vkey_file.resolve())}
        if self.tls_dir is None:
            values["POKER_INSECURE"] = "1"
        # the pokerctl of the environment `up` runs in, first on the PATH of a client's shell
        bin_dir = str(Path(sys.executable).parent)
        lines = ["# `pokerctl up`'s clients: source this file (written at each start)",
                 *(f"export {k}={shlex.quote(v)}" for k, v in values.items()),
                 f"export PATH={shlex.quote(bin_dir)}:\"$PATH\"",
                 f"# NATS: {self.nats_address}",
                 "# metrics (Prometheus): " + ", ".join(
                     f"{name} http://{HOST}:{port}/metrics"
                     for name, port in self.metrics_ports.items())]
        if self.web_url:
            lines.append(f"# web pages: {self.web_url}")
        write_private(self.env_file, "\n".join(lines) + "\n")
        return self.env_file

    async def stop(self) -> None:
        """SIGTERM the table service (it calls the others), then the rest; wait for each
        (SIGKILL after 10 s); then stop NATS. Safe to call twice."""
        if self._cashier is not None:
            await self._cashier.close()
            self._cashier = None
        tables = ["table", *(n for n, s in self.replicas.items() if s == "table")]
        await self._terminate(tables)
        await self._terminate([n for n in self.procs if n not in tables])
        for node in self.nodes or ([self.nats] if self.nats is not None else []):
            await asyncio.to_thread(node.stop)
        if self._lock is not None:
            os.close(self._lock)  # the data directory is free again
            self._lock = None

    async def __aenter__(self) -> LocalCluster:
        return await self.start()

    async def __aexit__(self, *exc) -> None:
        await self.stop()
