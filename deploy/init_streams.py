"""Create the log's streams (POKER, or its shards POKER_S0..), the wallet's money ledger (POKER_WALLET, services/wallet/ledger.py)
and the KV buckets as the NATS admin user (services may not; the list is
services/pokerctl/assets.py, which `pokerctl up` makes too): the one-shot job of
deploy/compose.yaml and deploy/k8s (``python /app/deploy/init_streams.py``).

Environment: POKER_NATS_URL (with the admin user's credentials), POKER_NATS_CA (the CA NATS's
certificate is checked against; shared/infra/natsconn.py), POKER_STREAM_REPLICAS (3),
POKER_STREAM_SHARDS (1: the one stream POKER; N: the shard streams POKER_S0..POKER_S{N-1}, the
same N as every service's), POKER_LEASE_TTL_MS (the lease bucket's TTL); the web's sessions
bucket (POKER_WEB_SESSIONS) has its own TTL (services/web/sessions.py). Existing streams and
buckets are left as they are; a new stream gets its log id (the identity a mirror checks,
shared/infra/eventstore.py). A log already split over another number of shard streams is
refused (exit 1, saying what it has): tables do not move between shards.
"""

from __future__ import annotations

import asyncio
import os

from services.pokerctl.assets import make_assets
from services.tournament.log import STREAM as TOURNAMENT_STREAM
from services.wallet.ledger import WALLET_STREAM
from shared.audit.access import ACCESS_STREAM
from shared.infra.config import stream_shards
from shared.infra.eventstore import EventStore, StreamSettings
from shared.infra.lease import ttl_ms_from_env
from shared.tlog.store import HANDS_STREAM


async def main() -> None:
    replicas = int(os.environ.get("POKER_STREAM_REPLICAS", "3"))
    shards = stream_shards(os.environ)
    store = await EventStore.connect(os.environ["POKER_NATS_URL"], name="poker-init",
                                     settings=StreamSettings(replicas=replicas, upgrade=True),
                                     connect_timeout=60, shards=shards)
    try:
        # the wallet's user (and most others) may not create their streams: they find them
        await make_assets(store.js, replicas, ttl_ms_from_env(os.environ))
        log = (await store.layout()).label if shards > 1 else store.stream
        print(f"streams {log}, {WALLET_STREAM}, {ACCESS_STREAM}, {TOURNAMENT_STREAM}, "
              f"{HANDS_STREAM} and buckets ready "
              f"(replicas {replicas})", flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
