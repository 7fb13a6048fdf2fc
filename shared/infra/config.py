"""Configuration from environment variables; the same variables drive `pokerctl up`, the
compose file and the Kubernetes manifests."""

from __future__ import annotations

import os
from dataclasses import dataclass

from .tls import TlsConfig

DEFAULT_NATS_URL = "nats://127.0.0.1:4222"
DEFAULT_BASE_PORT = 50050

#: service name -> offset from the base port used by `pokerctl up`
PORT_OFFSETS = {"table": 1, "dealer": 2, "betting": 3, "showdown": 4, "rake": 5,
                "wallet": 6}


@dataclass(frozen=True)
class Config:
    nats_url: str
    host: str
    port: int
    addresses: dict[str, str]  # peer service -> "host:port[,host:port...]"
    log_level: str
    stream_replicas: int
    #: the dealer's: the compliance role's public key file, which every hand key is sealed to
    compliance_public_key: str = ""
    #: the service's certificate and the CA it trusts (POKER_TLS_DIR, ...); None: plaintext,
    #: POKER_INSECURE=1 (from_env refuses to build a Config with neither)
    tls: TlsConfig | None = None

    @classmethod
    def from_env(cls, service: str, env: dict[str, str] | None = None) -> "Config":
        env = dict(os.environ if env is None else env)
        base = int(env.get("POKER_BASE_PORT", DEFAULT_BASE_PORT))
        addresses = {
            name: env.get(f"POKER_{name.upper()}_ADDR", f"127.0.0.1:{base + offset}")
            for name, offset in PORT_OFFSETS.items()
        }
        port = int(env.get("POKER_PORT", base + PORT_OFFSETS.get(service, 0)))
        return cls(
            nats_url=env.get("POKER_NATS_URL", DEFAULT_NATS_URL),
            host=env.get("POKER_BIND", "127.0.0.1"),
            port=port,
            addresses=addresses,
            log_level=env.get("POKER_LOG_LEVEL", "INFO"),
            stream_replicas=int(env.get("POKER_STREAM_REPLICAS", "1")),
            compliance_public_key=env.get("POKER_COMPLIANCE_PUBLIC_KEY", ""),
            tls=TlsConfig.from_env(service, env),
        )
