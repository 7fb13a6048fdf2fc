"""The processes of a :class:`~services.pokerctl.up.LocalCluster`: starting each in its own
session (dying with the supervisor), waiting until it is healthy, supervising, killing and
restarting it."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections import deque
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.infra import services as registry
from shared.infra.natsserver import NatsServer

#: every service, in the registry's start order (shared/infra/services.py): the table service
#: calls the others, so it starts after them and stops before them
SERVICES = registry.names()
#: `up` gives up on a process that died this many times within this window (it cannot start:
#: its log says why) and stops the stack
SUPERVISE_DEATHS, SUPERVISE_WINDOW_S = 5, 60.0
HOST = "127.0.0.1"

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
#: the web pages' process (on the base port + WEB_PORT_OFFSET)
WEB = "web"


class ClusterError(RuntimeError):
    """A process of the cluster did not come up (or died)."""


class DataDirInUse(ClusterError):
    """Another cluster runs on this data directory."""


def port_in_use(port: int, host: str = HOST) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # TIME_WAIT is not "in use"
        try:
            s.bind((host, port))
        except OSError:
            return True
    return False


def spawn(argv: list[str], log_path: Path, env: dict[str, str] | None = None
           ) -> subprocess.Popen:
    """Start ``argv`` in its own session, output appended to ``log_path``."""
    if sys.platform.startswith("linux"):
        argv = [sys.executable, "-I", "-S", "-c", _EXEC_WITH_PARENT_DEATH, str(os.getpid()),
                *argv]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "ab") as out:
        return subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env,
                                stdin=subprocess.DEVNULL, start_new_session=True)


class Processes:
    """What a cluster does with its processes (the state is the cluster's fields)."""

    data_dir: Path
    health_timeout: float
    ports: dict[str, int]
    procs: dict[str, subprocess.Popen]
    replicas: dict[str, str]
    replica_env: dict[str, dict[str, str]]
    nodes: list[NatsServer]
    nats: NatsServer | None

    if TYPE_CHECKING:  # the cluster's, from its other parts
        @property
        def addresses(self) -> dict[str, str]: ...
        def env(self, name: str) -> dict[str, str]: ...
        def web_env(self) -> dict[str, str]: ...
        def channel(self, name: str, identity: str | None = "client",
                    options: Sequence[tuple[str, object]] = ()) -> grpc.aio.Channel: ...
        def restart_node(self, server_name: str) -> None: ...

    @property
    def log_dir(self) -> Path:
        return self.data_dir / "logs"

    def start_process(self, name: str) -> None:
        if name in self.procs and self.procs[name].poll() is None:
            raise ClusterError(f"{name} is already running (pid {self.procs[name].pid})")
        service = self.replicas.get(name, name)
        env = self.web_env() if name == WEB else self.env(name)
        self.procs[name] = spawn([sys.executable, "-m", f"services.{service}"],
                                  self.log_dir / f"{name}.log", env=env)

    @property
    def web_url(self) -> str | None:
        """The web pages' address (None: not run)."""
        return f"http://{HOST}:{self.ports[WEB]}/" if WEB in self.ports else None

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
            self.start_process(name)
        elif name == "nats":
            self.nodes[0].start(log_file=self.log_of("nats"), spawn=spawn)
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
            await self.terminate([name])
        self.start_process(name)
        await self.wait_healthy([name])

    async def terminate(self, names: list[str], timeout: float = 10.0) -> None:
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
