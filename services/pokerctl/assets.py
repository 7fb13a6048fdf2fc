"""The streams and buckets a deployment makes before its services start, as the NATS admin
user: one list for `pokerctl up` (services/pokerctl/up_nats.py ``create_streams``) and for
deploy's one-shot init job (deploy/init_streams.py).

Made first, not by the services as they start: most services' NATS users may not make
streams, and two instances of one service that race to make the same R3 asset while a
cluster elects its leaders can find it "not found" a moment after one of them made it (two
notaries did, on a three-node cluster). The log's own streams (POKER or its shards) come
with the admin's :class:`~shared.infra.eventstore.EventStore` connection, before this."""

from __future__ import annotations

from nats.js import JetStreamContext

from services.tournament.director import LEASES as TOURNAMENT_LEASES
from services.tournament.director import open_seeds
from services.tournament.log import ensure_stream as ensure_tournaments
from services.wallet.ledger import ensure_wallet_stream
from services.web.sessions import ensure_bucket as ensure_web_sessions
from shared.audit.access import ensure_access_stream
from shared.infra.lease import Leases
from shared.infra.vault import DeckVault
from shared.tlog import store as tlog


async def make_assets(js: JetStreamContext, replicas: int, lease_ttl_ms: int) -> None:
    """Every stream and bucket but the log's, each made if missing (an existing one is left
    as it is). ``lease_ttl_ms``: the TTL of the lease buckets, the one the services will ask
    for (POKER_LEASE_TTL_MS)."""
    await ensure_wallet_stream(js, replicas=replicas)  # the wallet's money ledger
    await ensure_access_stream(js, replicas=replicas)  # the compliance access log
    await DeckVault.open(js, replicas=replicas)  # the dealer's sealed decks
    await Leases.open(js, ttl_ms=lease_ttl_ms, replicas=replicas)  # the tables' clocks
    await ensure_web_sessions(js, replicas=replicas)  # the web pages' sessions (their TTL)
    await ensure_tournaments(js, replicas=replicas)  # the tournament director's log
    await open_seeds(js, replicas=replicas)  # and its draws' seeds
    await Leases.open(js, bucket=TOURNAMENT_LEASES, ttl_ms=lease_ttl_ms,  # and its leases
                      replicas=replicas)
    await tlog.ensure_streams(js, replicas=replicas)  # the hands' Merkle log, checkpoints
    await Leases.open(js, bucket=tlog.NOTARY_BUCKET, ttl_ms=lease_ttl_ms,  # the notary's
                      replicas=replicas)
