"""The health probe of a service's container: ``python -m shared.infra.probe SERVICE``.

Kubernetes' built-in gRPC probes (and compose's) cannot speak TLS, and every port here is
TLS only (shared/infra/tls.py), so the container probes itself: the gRPC health check on
127.0.0.1 at the service's port, over TLS with the service's own certificate (the health check
is open to every certificate of the CA), checking the server is that service. Exit 0 when it
answers SERVING, 1 otherwise (with the reason on stderr). Its port and certificates come from
the container's environment, read once as the service reads it (:meth:`Config.from_env`).
"""

from __future__ import annotations

import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from .config import Config
from .tls import TlsError, sync_channel


def probe(service: str, timeout: float = 3.0, config: Config | None = None) -> str | None:
    """None when ``service`` in this container answers SERVING, else why not. ``config``:
    the service's (default: from this process's environment)."""
    if config is None:
        try:
            config = Config.from_env(service)
        except (TlsError, ValueError) as exc:
            return str(exc)
    with sync_channel(f"127.0.0.1:{config.port}", config.tls, service=service) as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=timeout)
        except grpc.RpcError as exc:
            return f"{exc.code().name}: {exc.details()}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    return None


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m shared.infra.probe SERVICE", file=sys.stderr)
        return 2
    problem = probe(argv[0])
    if problem is not None:
        print(f"{argv[0]} is not healthy: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
