"""bench_capacity's load-generating processes: each (``python -m bench.bench_capacity --client
CONFIG``) seats and plays its share of the tables and speaks JSON lines with the parent
(:class:`Client`): ``ready``, then the parent's ``start`` and ``stop``, then its ``report``."""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .load import SEATS, histogram, stop_tasks

#: tables a client creates and seats at once (each table's bots sit down one after another)
SEAT_CONCURRENCY = 16
#: hands per table: more than any window plays (the bots never reach the last one)
ENDLESS = 10**9
REPO = Path(__file__).resolve().parent.parent


def _emit(out, message: dict) -> None:
    out.write(json.dumps(message) + "\n")
    out.flush()


def _error(exc: BaseException) -> str:
    code = getattr(exc, "code", None)
    if callable(code) and hasattr(exc, "details"):
        return f"{code().name}: {exc.details()}"[:200]
    return repr(exc)[:200]


async def client_main(config: dict, out) -> None:
    """One load-generating process: seats ``config["tables"]`` tables (their ids), plays
    them (every bot watching its seat, at a person's pace, spectators beside), says
    ``{"ready": ...}`` once every table has had an action acknowledged (or failed), then
    between ``start`` and ``stop`` on its stdin counts what happens and reports it on
    ``out`` as ``{"report": ...}``."""
    from poker.table.v1 import table_pb2_grpc
    from poker.wallet.v1 import wallet_pb2_grpc

    from services.pokerctl.botclient import BotTable, Sponsor, play_table
    from services.pokerctl.bots_cmd import TablePlan, create_and_seat
    from services.pokerctl.table_addresses import table_channel
    from services.pokerctl.thinktime import ThinkTime
    from shared.infra.devissuer import DevIssuer
    from shared.infra.tls import TlsConfig, channel

    def tls(identity: str) -> TlsConfig | None:
        return None if config["tls_dir"] is None else TlsConfig.in_dir(config["tls_dir"],
                                                                         identity)

    think = ThinkTime.parse(config["think_ms"])
    rng = random.Random(config["seed"])
    latencies: list[float] = []
    seated: dict[str, BotTable] = {}  # table id -> its bots, once seated
    gate = asyncio.Semaphore(SEAT_CONCURRENCY)
    issuer = DevIssuer.create(config["identity_dir"])
    async with table_channel(config["table_addr"], tls("client")) as chan, \
            channel(config["wallet_addr"], tls("admin"), service="wallet") as wallet:
        stub = table_pb2_grpc.TableServiceStub(chan)
        sponsor = Sponsor(issuer, wallet_pb2_grpc.WalletServiceStub(wallet))

        async def one(table_id: str, seed: float) -> None:
            plan = TablePlan(table_id, "holdem", "fixed_limit", {"small_bet": 10})
            async with gate:
                bots = await create_and_seat(stub, plan, SEATS, sponsor)
            seated[table_id] = bots  # its bots play from now on
            await play_table(stub, bots, ENDLESS, random.Random(seed), latencies, think=think,
                             watch=True, spectators=config["spectators"])

        tasks = {t: asyncio.create_task(one(t, rng.random())) for t in config["tables"]}
        try:
            await _window(out, tasks, seated, latencies)
        finally:
            await stop_tasks(list(tasks.values()))
            await asyncio.gather(*tasks.values(), return_exceptions=True)


async def _window(out, tasks: dict[str, asyncio.Task], seated: dict, latencies: list[float]
                  ) -> None:
    """Say ``ready`` once every table is seated and acting (or failed: the parent's
    deadline rules), then count what happens between the parent's ``start`` and ``stop``
    and ``report`` it."""

    def errors() -> list[str]:
        return sorted({_error(exc) for t in tasks.values()
                       if t.done() and not t.cancelled() and (exc := t.exception())})

    def counts() -> tuple[int, int, int]:
        return (len(latencies), sum(sum(b.views.values()) for b in seated.values()),
                sum(sum(b.spectator_views) for b in seated.values()))

    def dealt(table_id: str) -> bool:
        bots = seated.get(table_id)
        return tasks[table_id].done() or bots is not None and bots.actions > 0

    while not all(dealt(t) for t in tasks):
        await asyncio.sleep(0.2)  # polling this process's own counters
    _emit(out, {"ready": {"tables": len(seated), "errors": errors()[:20]}})
    await _expect("start")
    first = counts()
    await _expect("stop")
    last = counts()
    hist = histogram(latencies[first[0]:last[0]])
    _emit(out, {"report": {
        "actions": last[0] - first[0], "bot_views": last[1] - first[1],
        "spectator_views": last[2] - first[2],
        "hist": hist.encode().decode("ascii"),  # HdrHistogram's base64 encoding
        "errors": errors()[:20]}})


async def _expect(word: str) -> None:
    """Wait for the parent's next word on stdin, which must be ``word`` (its stdin closed:
    the parent gave up on this load, and this process ends)."""
    line = await asyncio.to_thread(sys.stdin.readline)
    if line.strip() != word:
        raise SystemExit(f"bench client: expected {word!r}, got {line.strip()!r}")


def client(config_json: str) -> None:
    """``--client``: run :func:`client_main` with its protocol on stdout (anything else a
    library prints goes to stderr)."""
    out, sys.stdout = sys.stdout, sys.stderr
    asyncio.run(client_main(json.loads(config_json), out))


@dataclass
class Client:
    """A client process of the parent's, speaking JSON lines."""

    name: str
    proc: asyncio.subprocess.Process
    log: Path
    tables: int
    messages: list[dict] = field(default_factory=list)

    async def receive(self, key: str, timeout: float) -> dict:
        """The next message, which must be ``{key: ...}``; RuntimeError (with the end of
        its log) if the process ends or says nothing else within ``timeout``."""
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(self.proc.stdout.readline(), timeout)
        except TimeoutError:
            raise RuntimeError(f"{self.name} said nothing within {timeout:.0f} s "
                               f"(waiting for {key!r})") from None
        if not line:
            raise RuntimeError(f"{self.name} exited before {key!r}: "
                               f"{self.tail() or 'no output'}")
        message = json.loads(line)
        if key not in message:
            raise RuntimeError(f"{self.name} said {message!r}, not {key!r}")
        return message[key]

    async def send(self, word: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{word}\n".encode())
        await self.proc.stdin.drain()

    def tail(self, lines: int = 3) -> str:
        try:
            return " | ".join(self.log.read_text().strip().splitlines()[-lines:])
        except OSError:
            return ""

    async def close(self, timeout: float = 15.0) -> None:
        if self.proc.returncode is None:
            try:
                await asyncio.wait_for(self.proc.wait(), timeout)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()


async def spawn_clients(cluster, shares: list[int], think_ms: str, spectators: int,
                        log_dir: Path) -> list[Client]:
    """One client process per share of the load's tables (``shares``: how many each
    drives), its stderr to ``log_dir``."""
    out = []
    tables = sum(shares)
    table_ids = [f"cap{tables}-{i + 1}" for i in range(tables)]
    start = 0
    for k, n in enumerate(shares):
        name = f"bots-{k + 1}"
        config = {"tables": table_ids[start:start + n], "seed": k + 1,
                  "table_addr": cluster.client_address("table"),
                  "wallet_addr": cluster.addresses["wallet"],
                  "tls_dir": None if cluster.tls_dir is None else str(cluster.tls_dir),
                  "identity_dir": str(cluster.data_dir / "identity"),
                  "think_ms": think_ms, "spectators": spectators}
        start += n
        log = log_dir / f"{name}.log"
        with open(log, "wb") as err:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "bench.bench_capacity", "--client", json.dumps(config),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=err,
                cwd=REPO, env={**os.environ, "PYTHONPATH": os.pathsep.join(
                    filter(None, (str(REPO), os.environ.get("PYTHONPATH"))))})
        out.append(Client(name, proc, log, n))
    return out
