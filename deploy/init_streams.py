"""Create the POKER stream and the KV buckets as the NATS admin user (services may not):
the one-shot job of deploy/compose.yaml and deploy/k8s (``python /app/deploy/init_streams.py``).

Environment: POKER_NATS_URL (with the admin user's credentials), POKER_NATS_CA (the CA NATS's
certificate is checked against; shared/infra/natsconn.py), POKER_STREAM_REPLICAS (3),
POKER_LEASE_TTL_MS (the lease bucket's TTL). Existing streams and buckets are left as they are;
a new stream gets its log id (the identity a mirror checks, shared/infra/eventstore.py).
"""

from __future__ import annotations

import asyncio
import os

from shared.infra.eventstore import EventStore, StreamSettings
from shared.infra.lease import Leases, ttl_ms_from_env
from shared.infra.vault import DeckVault


async def main() -> None:
    replicas = int(os.environ.get("POKER_STREAM_REPLICAS", "3"))
    store = await EventStore.connect(os.environ["POKER_NATS_URL"], name="poker-init",
                                     settings=StreamSettings(replicas=replicas),
                                     connect_timeout=60)
    try:
        await DeckVault.open(store.js, replicas=replicas)
        await Leases.open(store.js, ttl_ms=ttl_ms_from_env(), replicas=replicas)
        print(f"stream {store.stream} and buckets ready (replicas {replicas})", flush=True)
    finally:
        await store.close()


if __name__ == "__main__":
    asyncio.run(main())
