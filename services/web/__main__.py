"""Run the web pages: ``python -m services.web``.

Environment: POKER_TABLE_ADDR (the table service, one address or a list), POKER_NATS_URL and
POKER_NATS_CA (the log, as its reader), POKER_TLS_DIR or POKER_TLS_CA/... (the client
certificate for the table service; POKER_INSECURE=1: plaintext), POKER_WEB_TOKEN (the web
service's own token for the table service: a token with no role), POKER_JWKS_FILE or
POKER_JWKS_URL, POKER_JWT_ISSUER, POKER_JWT_AUDIENCE (the identity provider players sign in
with; without one, signing in is refused), POKER_COMPLIANCE_KEY (the compliance private key
file(s), ':'-separated, for the compliance replay; without, there is none), POKER_WEB_PORT (default the base port + 8),
POKER_BIND (default 127.0.0.1).
"""

from __future__ import annotations

import asyncio
import os
import sys

import uvicorn
from poker.table.v1 import table_pb2_grpc

from shared.audit.access import record_opened
from shared.infra.config import WEB_PORT_OFFSET, base_port
from shared.infra.eventstore import EventStore
from shared.infra.identity import Verifier, bearer_metadata
from shared.infra.secrecy import ComplianceKeyring
from shared.infra.tls import TlsConfig, channel

from .app import Backend, create_app


async def serve(env: dict[str, str]) -> None:
    token = env.get("POKER_WEB_TOKEN", "")
    if not token:
        raise SystemExit("web: POKER_WEB_TOKEN must hold the web service's own token for the "
                         "table service (`pokerctl token --player web`)")
    tls = TlsConfig.from_env("client", env)  # None with POKER_INSECURE=1
    chan = channel(env.get("POKER_TABLE_ADDR", f"127.0.0.1:{base_port(env) + 1}"), tls,
                   service="table")  # each call names its caller: the web, or a player
    store = await EventStore.connect(env["POKER_NATS_URL"], name="poker-web", create=False,
                                     ca=env.get("POKER_NATS_CA") or None)
    verifier = Verifier.from_env(env)  # players' tokens, checked as the table service does
    keys = [k for k in env.get("POKER_COMPLIANCE_KEY", "").split(os.pathsep) if k]
    keyring = ComplianceKeyring.from_files(keys) if keys else None

    async def record(purpose, tables, key_ids, hands, person) -> int:
        return await record_opened(store.js, purpose, tables, key_ids, hands, person)

    app = create_app(Backend(table_pb2_grpc.TableServiceStub(chan), store.table_ids,
                             store.read, verifier.averify if verifier else None,
                             bearer_metadata(token), keyring, record))
    port = int(env.get("POKER_WEB_PORT") or base_port(env) + WEB_PORT_OFFSET)
    server = uvicorn.Server(uvicorn.Config(app, host=env.get("POKER_BIND", "127.0.0.1"),
                                           port=port, log_level="warning"))
    try:
        await server.serve()
    finally:
        await store.close()
        await chan.close()


def main() -> None:
    try:
        asyncio.run(serve(dict(os.environ)))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
