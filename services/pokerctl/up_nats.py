"""The NATS of a :class:`~services.pokerctl.up.LocalCluster`: its nodes (one, or a JetStream
cluster) with TLS and the users of shared/infra/natsauth.py, the log's streams and buckets
made before the services start, and the URLs its clients connect with."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from shared.infra import natsauth, natsconn
from shared.infra.natsserver import NatsServer
from shared.infra.tls import generate as generate_certs

from .up_processes import HOST, ClusterError, spawn

DEFAULT_NATS_PORT = 4222


async def create_streams(url: str, replicas: int, ca: str | None = None,
                         shards: int = 1) -> None:
    """The log's streams (``shards`` of them, or the one) and the KV buckets, made once before
    the services start (as deploy/'s init job does), as the admin user (``url`` carries it):
    the services' users may not make streams, and ten processes racing to create R3 assets
    while the cluster elects leaders time out on a small machine. A log already split
    otherwise is refused (shared/infra/eventstore.ShardsChanged)."""
    from shared.infra.eventstore import EventStore, StreamSettings
    from shared.infra.lease import ttl_ms_from_env

    from .assets import make_assets
    store = await EventStore.connect(url, name="pokerctl-up", ca=ca, shards=shards,
                                     settings=StreamSettings(replicas=replicas, upgrade=True))
    try:
        # the TTL the services will ask for: POKER_LEASE_TTL_MS of the environment `up`
        # hands them (its own, see LocalCluster.env)
        await make_assets(store.js, replicas, ttl_ms_from_env(os.environ))
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


class NatsNodes:
    """What a cluster does with its NATS nodes (the state is the cluster's fields)."""

    data_dir: Path
    nats: NatsServer | None
    nats_port: int | None
    nats_nodes: int
    nodes: list[NatsServer]
    nats_passwords: dict[str, str]
    shards: int
    health_timeout: float

    if TYPE_CHECKING:  # the cluster's, from its other parts
        @property
        def log_dir(self) -> Path: ...
        def unused_port(self) -> int: ...


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

    def _nats_security(self) -> dict:
        """What every node is started with: TLS (the ``nats`` certificate of the data
        directory's CA, made on first use) and the users with their passwords."""
        certs = generate_certs(self.nats_cert_dir, identities=("nats",))
        return {"tls_cert": certs / "nats.pem", "tls_key": certs / "nats.key",
                "tls_ca": certs / "ca.pem",
                "accounts": natsauth.accounts_conf(self.nats_passwords, shards=self.shards)}

    async def start_nats(self) -> None:
        security = self._nats_security()
        count = max(1, self.nats_nodes)
        if count == 1:
            self.nodes = [NatsServer(self.data_dir / "jetstream", port=self.nats_port or 0,
                                     **security)]
            logs = [self.log_dir / "nats.log"]
        else:
            ports = [(self.nats_port + i) if self.nats_port else self.unused_port()
                     for i in range(count)]
            routes = [self.unused_port() for _ in range(count)]
            self.nodes = [
                NatsServer(self.data_dir / "jetstream" / f"nats-{i + 1}", port=ports[i],
                           name=f"nats-{i + 1}", cluster="poker", cluster_port=routes[i],
                           routes=[f"nats-route://{HOST}:{p}" for p in routes], **security)
                for i in range(count)]
            logs = [self.log_dir / f"{node.name}.log" for node in self.nodes]
        for node, log in zip(self.nodes, logs):
            node.start(log_file=log, spawn=spawn)
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
        node.start(log_file=self.log_dir / f"{node.name}.log", spawn=spawn)
