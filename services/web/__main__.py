"""Run the web pages: ``python -m services.web``.

Environment: POKER_TABLE_ADDR (the table service, one address or a list), POKER_TOURNAMENT_ADDR
(the tournament director, whose tournaments /tournaments lists; unset: none), POKER_NATS_URL and
POKER_NATS_CA (the log, as its reader), POKER_WALLET_ADDR (the wallet, whose Balance the table page shows a
signed-in player, called with POKER_TLS_DIR's "web" certificate, which the wallet accepts for
Balance alone; unset: no balance shown), POKER_TLS_DIR or POKER_TLS_CA/... (the client
certificate for the table service; POKER_INSECURE=1: plaintext), POKER_WEB_TOKEN (the web
service's own token for the table service: one with the ``relay`` role and no other, as
`pokerctl up` makes it, or `pokerctl token --player web --role relay`; the table service holds
a relay to POKER_LIMIT_WATCHES_PER_RELAY streams, default 20,000, since the web fans one Watch
per table out to its visitors; a token without the role works, but is held to the per-caller
cap of 64 streams, so at most 64 tables can be followed here at once), POKER_JWKS_FILE or
POKER_JWKS_URL, POKER_JWT_ISSUER, POKER_JWT_AUDIENCE (the identity provider players sign in
with; without one, signing in is refused), POKER_COMPLIANCE_KEY (the compliance private key
file(s), ':'-separated, for the compliance replay; without, there is none; with it,
POKER_COMPLIANCE_NATS_URL: NATS as the compliance user, who alone may record those reads in the
access log), POKER_WEB_PORT (default the base port + 8),
POKER_BIND (default 127.0.0.1), POKER_WEB_STREAMS_PER_VISITOR and POKER_WEB_STREAMS_PER_PROCESS
(the live streams, of tables and of the lobby, one visitor and the whole process may hold
open: default 16 and 20,000; services/web/limits.py). An anonymous visitor is counted by their
address: behind a proxy or an ingress, set FORWARDED_ALLOW_IPS (uvicorn's) to the proxy's
addresses, so that the address is the visitor's (X-Forwarded-For), not the proxy's, which
would hold every visitor behind it to one visitor's limit.

The sessions live in the POKER_WEB_SESSIONS bucket of that NATS (services/web/sessions.py;
the admin makes it, as `pokerctl up` and deploy/init_streams.py do), shared by every web
process. POKER_WEB_HOSTS: the Host names the pages answer to, comma-separated (any other is
400; unset: any, with a warning at start); POKER_WEB_SECURE_COOKIE=1: the session cookie is
Secure also on plain HTTP (behind a proxy that ends TLS; over TLS it always is).
"""

from __future__ import annotations

import asyncio
import os
import sys

import structlog
import uvicorn
from poker.table.v1 import table_pb2_grpc
from poker.tournament.v1.tournament_pb2_grpc import TournamentServiceStub
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from shared.audit.access import record_opened
from shared.infra import natsconn
from shared.infra.bearer import bearer_metadata
from shared.infra.config import WEB_PORT_OFFSET, base_port, service_address
from shared.infra.eventstore import EventStore
from shared.infra.identity import Verifier
from shared.infra.secrecy import ComplianceKeyring
from shared.infra.tls import TlsConfig, channel

from .app import Backend, create_app
from .limits import STREAMS_PER_PROCESS, STREAMS_PER_VISITOR, WebSettings, listen
from .sessions import SessionStore, open_bucket

log = structlog.get_logger()


def _count(env: dict[str, str], name: str, default: int) -> int:
    """A whole number of at least 1 from ``env`` (``default`` when unset)."""
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise SystemExit(f"web: {name} must be a whole number of at least 1 (default "
                         f"{default}), not {raw!r}")
    return int(raw)


def _wallet(env: dict[str, str]):
    """The wallet's channel as the "web" certificate (its Balance only: METHOD_CALLERS) and
    a player's balance through it; (None, None) without POKER_WALLET_ADDR."""
    if not env.get("POKER_WALLET_ADDR"):
        return None, None
    wallet = channel(service_address("wallet", env), TlsConfig.from_env("web", env),
                     service="wallet")
    stub = wallet_pb2_grpc.WalletServiceStub(wallet)

    async def balance(player_id: str) -> int:
        reply = await stub.Balance(wallet_pb2.BalanceRequest(
            account=wallet_pb2.Account(player_id=player_id)), timeout=5)
        return reply.balance
    return wallet, balance


async def _compliance(env: dict[str, str]):
    """The compliance keyring (POKER_COMPLIANCE_KEY), compliance's own NATS connection (only
    it may append to the access log) and the access log's record of a view through it:
    (None, None, record) without a key."""
    keys = [k for k in env.get("POKER_COMPLIANCE_KEY", "").split(os.pathsep) if k]
    keyring = ComplianceKeyring.from_files(keys) if keys else None
    recorder = None
    if keyring is not None:
        if not env.get("POKER_COMPLIANCE_NATS_URL"):
            raise SystemExit("web: POKER_COMPLIANCE_KEY needs POKER_COMPLIANCE_NATS_URL (NATS "
                             "as the compliance user, who alone records the reads that open "
                             "sealed cards in the access log)")
        recorder = await natsconn.connect(env["POKER_COMPLIANCE_NATS_URL"],
                                          name="poker-web-compliance",
                                          ca=env.get("POKER_NATS_CA") or None)

    async def record(purpose, tables, key_ids, hands, person) -> int:
        assert recorder is not None  # (a keyring comes with its recorder)
        return await record_opened(recorder.jetstream(), purpose, tables, key_ids, hands,
                                   person)
    return keyring, recorder, record


async def serve(env: dict[str, str]) -> None:
    token = env.get("POKER_WEB_TOKEN", "")
    if not token:
        raise SystemExit("web: POKER_WEB_TOKEN must hold the web service's own token for the "
                         "table service (`pokerctl token --player web --role relay`)")
    tls = TlsConfig.from_env("client", env)  # None with POKER_INSECURE=1
    chan = channel(env.get("POKER_TABLE_ADDR", f"127.0.0.1:{base_port(env) + 1}"), tls,
                   service="table")  # each call names its caller: the web, or a player
    wallet, balance = _wallet(env)
    settings = WebSettings.from_env(env)
    if settings.hosts is None:
        log.warning("POKER_WEB_HOSTS is not set: the pages answer to any Host header; set it "
                    "to the names the pages are served under")
    store = await EventStore.connect(env["POKER_NATS_URL"], name="poker-web", create=False,
                                     ca=env.get("POKER_NATS_CA") or None)
    sessions = SessionStore(await open_bucket(store.js))
    verifier = Verifier.from_env(env)  # players' tokens, checked as the table service does
    keyring, recorder, record = await _compliance(env)
    # the tournament director, if there is one: the lobby lists its tournaments
    director = (channel(env["POKER_TOURNAMENT_ADDR"], tls, service="tournament")
                if env.get("POKER_TOURNAMENT_ADDR") else None)
    app = create_app(Backend(table_pb2_grpc.TableServiceStub(chan), store.table_counts,
                             store.read, verifier.averify if verifier else None,
                             bearer_metadata(token), keyring, record, sessions, store.read,
                             balance,
                             TournamentServiceStub(director) if director else None),
                     settings=settings,
                     streams_per_visitor=_count(env, "POKER_WEB_STREAMS_PER_VISITOR",
                                                STREAMS_PER_VISITOR),
                     streams_per_process=_count(env, "POKER_WEB_STREAMS_PER_PROCESS",
                                                STREAMS_PER_PROCESS))
    port = int(env.get("POKER_WEB_PORT") or base_port(env) + WEB_PORT_OFFSET)
    # the live streams never end by themselves: at a stop they are given a few seconds, then
    # cut (the pages' EventSource connects again, to another replica or after the restart)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning",
                                           timeout_graceful_shutdown=5))
    try:
        await server.serve(sockets=[listen(env.get("POKER_BIND", "127.0.0.1"), port)])
    finally:
        await store.close()
        if recorder is not None:
            await recorder.drain()
        await chan.close()
        if wallet is not None:
            await wallet.close()
        if director is not None:
            await director.close()


def main() -> None:
    try:
        asyncio.run(serve(dict(os.environ)))
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
