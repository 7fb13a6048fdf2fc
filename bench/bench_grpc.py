"""The floor under an action: what one bare gRPC unary call costs in CPU, between two Python
processes on this machine, over mutual TLS as the services talk (and in plaintext beside it),
and what one request and its reply cost as messages on a long-lived bidirectional stream
instead (each caller holding its own stream: the shape of the step streams, and of a client
session stream that would carry a player's Acts beside their views), and what one message
written to a watcher costs (a server stream sending a view-sized message after another: the
floor under each view a Watch delivers). Each is measured flat out and, for unary calls and stream messages, at a human
pace too (each caller waits 50-150 ms between calls, about 100 calls a second in all): what a
message costs when it comes on its own, which is how messages come to a table whose players
think (bench.ab_cpu --think-ms).

An Act crosses at least two such calls (client -> table service, table service -> betting)
and one guarded JetStream append, whatever the services do; a hand adds about a dozen more
calls for its automated steps. The server here answers the gRPC health check (no work of its
own), so the figure is gRPC's (Python's grpc.aio, its poller thread, HTTP/2, TLS) alone.

    .venv/bin/python -m bench bench_grpc
"""

from __future__ import annotations

import asyncio
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from grpc_health.v1 import health_pb2, health_pb2_grpc

from shared.infra.natsserver import free_port
from shared.infra.tls import TlsConfig, channel, generate

from .cpu import cpu_seconds
from .load import median

CONCURRENCY = 10
#: a paced caller's mean wait between calls (each waits 0.5 to 1.5 times this)
PACE_S = 0.1

_SERVER = """
import asyncio, sys
from pathlib import Path
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from shared.infra.rpc import Server
from shared.infra.tls import TlsConfig
import grpc
async def session(requests, context):  # one reply per request, as an Act on a session would
    async for request in requests:
        yield request
async def views(request, context):  # a view after another, as fast as the caller reads
    view = b"v" * 512
    while True:
        yield view
async def main():
    tls = TlsConfig(*map(Path, sys.argv[2:5])) if len(sys.argv) > 2 else None
    s = Server("bench", port=int(sys.argv[1]), tls=tls)
    s.server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        "bench.Echo", {"Session": grpc.stream_stream_rpc_method_handler(session),
                       "Views": grpc.unary_stream_rpc_method_handler(views)}),))
    await s.server.start()
    await s.health.set("", health_pb2.HealthCheckResponse.SERVING)
    await s.server.wait_for_termination()
asyncio.run(main())
"""


#: a message about an Act request's size (table id, seat, token digest, action, amount)
PAYLOAD = b"x" * 96


async def _calls(target: str, tls: TlsConfig | None, seconds: float,
                 mode: str = "unary", pace_s: float = 0.0) -> tuple[int, float]:
    """From CONCURRENCY callers for ``seconds``: health checks (``mode`` "unary"), a message
    and its reply on each caller's own long-lived stream ("session"), or the messages of a
    server stream ("views"); each caller waiting about ``pace_s`` between calls (0: none);
    calls (or messages) made, client CPU s."""
    chan = channel(target, tls, service="table")
    stub = health_pb2_grpc.HealthStub(chan)
    request = health_pb2.HealthCheckRequest()
    await stub.Check(request, wait_for_ready=True, timeout=30)  # connected and warm
    for _ in range(200):
        await stub.Check(request)
    open_session = chan.stream_stream("/bench.Echo/Session")
    open_views = chan.unary_stream("/bench.Echo/Views")
    done = 0
    stop = time.perf_counter() + seconds
    rng = random.Random(7)

    async def think() -> None:
        if pace_s:
            await asyncio.sleep(rng.uniform(0.5, 1.5) * pace_s)

    async def caller() -> None:
        nonlocal done
        if mode == "unary":
            while time.perf_counter() < stop:
                await think()
                await stub.Check(request)
                done += 1
            return
        if mode == "views":
            watch = open_views(PAYLOAD)
            async for _ in watch:
                done += 1
                if time.perf_counter() >= stop:
                    watch.cancel()
                    break
            return
        call = open_session()
        while time.perf_counter() < stop:
            await think()
            await call.write(PAYLOAD)
            await call.read()
            done += 1
        await call.done_writing()

    cpu0 = time.process_time()
    await asyncio.gather(*(caller() for _ in range(CONCURRENCY)))
    cpu = time.process_time() - cpu0
    await chan.close()
    return done, cpu


def one(tls_dir: Path | None, seconds: float, mode: str = "unary",
        pace_s: float = 0.0) -> dict:
    port = free_port()
    args = [str(port)]
    tls = None
    if tls_dir is not None:  # the server is "table" (clients may call it), the client "client"
        args += [str(tls_dir / "ca.pem"), str(tls_dir / "table.pem"), str(tls_dir / "table.key")]
        tls = TlsConfig(tls_dir / "ca.pem", tls_dir / "client.pem", tls_dir / "client.key")
    proc = subprocess.Popen([sys.executable, "-c", _SERVER, *args],
                            cwd=Path(__file__).resolve().parents[1])
    try:
        server0 = None

        async def run() -> tuple[int, float]:
            nonlocal server0
            chan = channel(f"127.0.0.1:{port}", tls, service="table")
            await health_pb2_grpc.HealthStub(chan).Check(
                health_pb2.HealthCheckRequest(), wait_for_ready=True, timeout=30)
            await chan.close()
            server0 = cpu_seconds(proc.pid)
            return await _calls(f"127.0.0.1:{port}", tls, seconds, mode, pace_s)

        calls, client_cpu = asyncio.run(run())
        server_cpu = (cpu_seconds(proc.pid) or 0.0) - (server0 or 0.0)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return {"calls": calls, "per_s": calls / seconds,
            "client_ms": client_cpu / calls * 1e3, "server_ms": server_cpu / calls * 1e3}


def run(seconds: float = 2.0, repeats: int = 3) -> dict[str, dict]:
    with tempfile.TemporaryDirectory(prefix="poker-bench-grpc-") as tmp:
        tls_dir = generate(Path(tmp) / "tls", identities=("table", "client"))
        rows: dict[str, dict] = {}
        for label, where, mode, pace in (
                ("mutual TLS", tls_dir, "unary", 0.0),
                ("plaintext", None, "unary", 0.0),
                ("mTLS stream", tls_dir, "session", 0.0),
                ("mTLS views", tls_dir, "views", 0.0),
                ("paced unary", tls_dir, "unary", PACE_S),
                ("paced stream", tls_dir, "session", PACE_S)):
            # paced: a window three times as long, for enough calls to read /proc's ticks
            runs = [one(where, seconds * (3 if pace else 1), mode, pace)
                    for _ in range(repeats)]
            rows[label] = {k: median(r[k] for r in runs) for k in runs[0]}
        return rows


def main(seconds: float = 2.0) -> None:
    rows = run(seconds)
    print(f"bare gRPC unary calls between two Python processes ({CONCURRENCY} callers, "
          f"medians of 3)")
    print(f"{'transport':<13}{'calls/s':>10}{'client ms':>11}{'server ms':>11}{'both ms':>9}")
    for label, r in rows.items():
        print(f"{label:<13}{r['per_s']:>10,.0f}{r['client_ms']:>11.3f}{r['server_ms']:>11.3f}"
              f"{r['client_ms'] + r['server_ms']:>9.3f}")
    tls = rows["mutual TLS"]
    both = tls["client_ms"] + tls["server_ms"]
    print(f"an Act's two calls alone: {2 * both:.2f} ms of CPU; with a hand's ~0.7 automated "
          f"steps per action: {2.7 * both:.2f} ms (before any work, NATS or the bots)")
    s = rows["mTLS stream"]
    print(f"an Act as a message on a client session stream instead of a unary call: "
          f"{tls['server_ms'] - s['server_ms']:.3f} ms less of the table service's CPU, "
          f"{both - s['client_ms'] - s['server_ms']:.3f} ms less in all "
          f"(stream / unary, both sides: {(s['client_ms'] + s['server_ms']) / both:.2f})")
    v = rows["mTLS views"]
    print(f"a view written to a watcher: {v['server_ms']:.3f} ms of the writer's CPU, "
          f"{v['client_ms']:.3f} ms of the watcher's (the floor under each view a Watch "
          f"delivers)")

    for paced, flat in (("paced unary", "mutual TLS"), ("paced stream", "mTLS stream")):
        p, f = rows[paced], rows[flat]
        print(f"{paced}: {(p['client_ms'] + p['server_ms']) / (f['client_ms'] + f['server_ms']):.2f}"
              f"x the CPU of a call flat out (each caller waiting {PACE_S * 1e3:.0f} ms "
              f"on average between calls)")


if __name__ == "__main__":
    main()
