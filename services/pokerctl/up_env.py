"""The environments of a :class:`~services.pokerctl.up.LocalCluster`'s processes (the same
variables a deployment sets) and the client environment file it writes for `source DIR/env`."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from shared.infra import natsauth
from shared.infra.devissuer import DevIssuer
from shared.infra.files import write_private
from shared.infra.identity import DIRECTOR, OPERATOR, RELAY

from .up_processes import HOST, SERVICES, WEB

#: what selects a process's gRPC certificates (shared/infra/tls.py); `up` sets them itself
TLS_ENV = ("POKER_TLS_DIR", "POKER_TLS_CA", "POKER_TLS_CERT", "POKER_TLS_KEY", "POKER_INSECURE")
#: how long the web's token lasts
WEB_TOKEN_TTL_S = 30 * 24 * 3600
#: how long the director's token to the table service lasts (a restart of `up` makes another)
DIRECTOR_TOKEN_TTL_S = 30 * 24 * 3600


class Environments:
    """What each process of a cluster is started with (the state is the cluster's fields)."""

    data_dir: Path
    base_port: int | None
    ports: dict[str, int]
    metrics_ports: dict[str, int]
    replicas: dict[str, str]
    replica_env: dict[str, dict[str, str]]
    instances: dict[str, list[str]]
    nats_nodes: int
    shards: int
    log_level: str
    tls_dir: Path | None
    issuer: DevIssuer
    key_file: Path
    public_key_file: Path
    notary_key_file: Path
    notary_vkey_file: Path

    if TYPE_CHECKING:  # the cluster's, from its other parts
        @property
        def nats_ca(self) -> str: ...
        @property
        def nats_address(self) -> str: ...
        @property
        def web_url(self) -> str | None: ...
        def nats_url_for(self, user: str) -> str: ...
        def client_address(self, service: str) -> str: ...

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
