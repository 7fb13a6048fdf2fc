"""`pokerctl up`: nats-server and every service on this machine, until Ctrl-C or SIGTERM.

    pokerctl up [--base-port 50050] [--nats-port 4222] [--data-dir DIR]
                [--cluster 3] [--replicas N] [--table-services N] [--shards N]
                [--insecure]

The services listen on 127.0.0.1 at the base port + 1 (table), + 2 (dealer), + 3 (betting),
+ 4 (showdown), + 5 (rake); NATS at --nats-port with its JetStream store in DIR/jetstream and
every process's log in DIR/logs. Once every service serves, `up` writes DIR/env, what every
client command reads (POKER_DATA_DIR, POKER_TABLE_ADDR, POKER_WALLET_ADDR,
POKER_COMPLIANCE_KEY; NATS and metrics addresses as comments), and prints `source DIR/env`, the
one line to run in a client's shell. DIR is locked while `up` runs: a second `up` on it is
refused, naming the first. On Ctrl-C or SIGTERM the
table service is stopped first, then the other services, then NATS.

`up` supervises in every mode: a process that dies (a service, a replica, NATS or a cluster
node) is started again on its port (its store) with its environment, after a backoff that
doubles from 0.2 s to 5 s; one that dies 5 times within a minute cannot be kept up, so the
rest are stopped, its log is named, and the exit code is 1.

--cluster 3 runs three nats-server nodes (client ports --nats-port, +1, +2) as one JetStream
cluster, with the stream and KV buckets at 3 replicas. --replicas N runs N processes of each
service (instance i at the base port + 20*i + offset); peers balance over them round robin,
and so do clients: the POKER_TABLE_ADDR and POKER_WALLET_ADDR `up` prints list every instance.
Prometheus metrics: base port + 10 + offset. --table-services N (default 2) runs N table-service
processes whatever --replicas says: the table service's one event loop serves every command,
view and clock of the tables it is asked about, and on a 2-core machine two of them held more
human-paced, watched tables than one (bench_capacity); they share the tables' clocks through
the clock slots' leases.

--shards N splits the log's tables over N streams (POKER_S0..POKER_S{N-1}, by a hash of the
table id; shared/infra/eventstore.py): every process gets POKER_STREAM_SHARDS=N and the NATS
users their rights on each stream; with --cluster 3 each shard stream has 3 replicas. A data
directory whose log was split otherwise is refused (tables do not move between shards); one
whose log is the single POKER stream keeps its tables there.

gRPC between the services is mutual TLS: a CA made in DIR/tls on first use (kept after, as
`pokerctl certs generate DIR/tls` makes it) and a certificate per service, each given
POKER_TLS_DIR; internal services accept the table service only. Client commands use
DIR/tls/client.pem. --insecure runs plaintext, for debugging only.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from pathlib import Path

from shared.infra.config import DEFAULT_BASE_PORT, PORT_OFFSETS, WEB_PORT_OFFSET, stream_shards
from shared.infra.tls import INSECURE_WARNING

from .datadir import default_data_dir
from .failures import FAILED
from .up import MAX_REPLICAS, LocalCluster
from .up_nats import DEFAULT_NATS_PORT
from .up_processes import HOST, SUPERVISE_DEATHS, SUPERVISE_WINDOW_S, WEB, ClusterError


def print_banner(cluster: LocalCluster, out) -> None:
    """What `up` says once every service is healthy: each process, the metrics, where the
    data, the certificates and the tokens are, and the file clients source."""
    addrs = cluster.addresses
    print("every service is healthy:", file=out)
    for name, addr in addrs.items():
        pid = cluster.pid(name)
        shown = cluster.web_url if name == WEB else addr
        print(f"  {name:<9} {shown:<24} pid {pid}", file=out)
    print("metrics (Prometheus): " + ", ".join(
        f"{name} http://{HOST}:{port}/metrics"
        for name, port in cluster.metrics_ports.items()), file=out)
    print(f"data {cluster.data_dir}  logs {cluster.log_dir}", file=out)
    if cluster.tls_dir is None:
        print(f"WARNING: {INSECURE_WARNING}; clients: export POKER_INSECURE=1", file=out)
    else:
        print(f"gRPC: mutual TLS, CA {cluster.tls_dir / 'ca.pem'}, a client's certificate "
              f"{cluster.tls_dir / 'client.pem'} (+ .key); client commands find them "
              "through the data directory (or POKER_TLS_DIR)", file=out)
    print(f"identity: tokens from the dev issuer {cluster.issuer.directory} (`pokerctl "
          "token --player P [--role operator]`); money: the reference wallet (`pokerctl "
          "wallet deposit --player P --amount N`)", file=out)
    # NATS's URL, CA and the clients' passwords are in the data directory, not printed
    print(f"clients (every pokerctl command reads it): source {cluster.env_file}"
          "\nCtrl-C stops everything.", file=out, flush=True)


async def serve(cluster: LocalCluster, out=None) -> int:
    out = sys.stdout if out is None else out
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        starting = asyncio.create_task(cluster.start())
        stopping = asyncio.create_task(stop.wait())
        await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
        if not starting.done():
            starting.cancel()
            await asyncio.gather(starting, return_exceptions=True)
            print("stopped before every service was up", file=out)
            return 130
        stopping.cancel()
        try:
            starting.result()
        except (ClusterError, OSError, RuntimeError, TimeoutError) as exc:
            # ports in use, the nats-server binary missing, a service that died at start
            print(f"pokerctl up: {exc}", file=sys.stderr)
            return FAILED
        print_banner(cluster, out)
        waiting = asyncio.create_task(stop.wait())
        exited = asyncio.create_task(cluster.supervise(
            lambda name, rc: print(f"pokerctl up: {name} exited with code {rc}; restarting "
                                   f"it (its log: {cluster.log_of(name)})", file=sys.stderr,
                                   flush=True)))
        await asyncio.wait({waiting, exited}, return_when=asyncio.FIRST_COMPLETED)
        code = 0
        if exited.done():
            name, rc, log = exited.result()
            print(f"pokerctl up: {name} died {SUPERVISE_DEATHS} times within "
                  f"{SUPERVISE_WINDOW_S:.0f} s (last exit code {rc}): it cannot be kept up; "
                  f"stopping everything. Its log says why: {log}", file=sys.stderr)
            code = 1
        for t in (waiting, exited):
            t.cancel()
        print("stopping: table, then wallet, dealer, betting, showdown, rake, then NATS",
              file=out, flush=True)
        return code
    finally:
        await cluster.stop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)


def run(args: argparse.Namespace) -> int:
    cluster = LocalCluster(Path(args.data_dir), base_port=args.base_port,
                           nats_port=args.nats_port, log_level=args.log_level,
                           nats_nodes=args.cluster, replica_count=args.replicas,
                           table_services=args.table_services,
                           insecure=args.insecure, shards=args.shards, web=True)
    if args.insecure:
        print(f"pokerctl up: WARNING: --insecure: {INSECURE_WARNING}", file=sys.stderr,
              flush=True)
    code = asyncio.run(serve(cluster))
    print("stopped", flush=True)
    return code


def _shards(raw: str) -> int:
    """--shards: POKER_STREAM_SHARDS's rule (shared/infra/config.py)."""
    try:
        return stream_shards({"POKER_STREAM_SHARDS": raw})
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc).replace("POKER_STREAM_SHARDS", "--shards",
                                                          1)) from None


#: table-service processes `up` runs unless told: what held the most human-paced, watched
#: tables on a 2-core machine (README, "Benchmarks")
TABLE_SERVICES = 2


def _replicas(raw: str) -> int:
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_REPLICAS:
        raise argparse.ArgumentTypeError(f"the number of processes of each service: 1 to "
                                         f"{MAX_REPLICAS}, not {raw!r}")
    return n


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    ports = ", ".join(f"{name} +{offset}" for name, offset in PORT_OFFSETS.items())
    p = sub.add_parser("up", help=help, epilog=(
        f"Ports, from the base port: {ports}, the web pages +{WEB_PORT_OFFSET}; each "
        f"service's Prometheus metrics +10 after its own (table +11 ...); instance i (from 0) "
        f"of a service with several (--table-services, --replicas) at +20*i; NATS at "
        f"--nats-port (--cluster 3: it, +1 and +2, their routes above). `up` prints them "
        f"all when everything serves."))
    p.add_argument("--base-port", type=int, default=DEFAULT_BASE_PORT,
                   help=f"the first of the ports listed below (default {DEFAULT_BASE_PORT})")
    p.add_argument("--nats-port", type=int, default=DEFAULT_NATS_PORT,
                   help=f"NATS client port (default {DEFAULT_NATS_PORT})")
    p.add_argument("--data-dir", default=str(default_data_dir()),
                   help="JetStream store, logs, keys, certificates and the dev token "
                        "issuer (default %(default)s)")
    p.add_argument("--log-level", default="INFO", help="services' log level (default INFO)")
    p.add_argument("--cluster", type=int, default=1, choices=(1, 3),
                   help="nats-server nodes: 1, or 3 as a JetStream cluster with R3 streams")
    p.add_argument("--replicas", type=_replicas, default=1, metavar="N",
                   help=f"processes of each service, balanced round robin (1 to "
                        f"{MAX_REPLICAS}, default 1)")
    p.add_argument("--table-services", type=_replicas, default=TABLE_SERVICES, metavar="N",
                   help=f"processes of the table service, balanced round robin, sharing the "
                        f"tables' clocks (1 to {MAX_REPLICAS}, default {TABLE_SERVICES}: on "
                        f"this 2-core machine two held more watched tables than one, "
                        f"python -m bench bench_capacity --table-services N)")
    p.add_argument("--shards", type=_shards, default=1, metavar="N",
                   help="streams the log's tables are split over, by a hash of the table id "
                        "(1 to 64, default 1: the one stream POKER)")
    p.add_argument("--insecure", action="store_true",
                   help="plaintext gRPC between the services, every caller trusted "
                        "(debugging only; default: mutual TLS with the CA in DIR/tls)")
    p.set_defaults(run=run)
