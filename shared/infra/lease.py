"""Leases in a JetStream KV bucket: one holder per name, taken over when the holder dies.

A lease is a key whose value is the holder's instance id. It is taken with ``create`` (only
when the key is absent), renewed with ``update(last=revision)`` every third of the TTL, and
given up on a revision mismatch (someone else took it after it expired).

Expiry is the bucket's TTL (the stream's ``max_age``): every write is a new message and the
bucket keeps one per key, so a key vanishes TTL after its holder's last renewal. (nats-py's
per-message TTL is set by ``create`` only; ``update`` would not carry it, so it cannot be a
lease that is renewed.) The TTL belongs to the bucket: an instance that finds the bucket made
with another TTL uses the bucket's.

A holder counts a lease as its own only until TTL after it *sent* the write that last
succeeded, less a margin: the server keeps the key at least TTL after it stored that write,
so the holder lets go before anyone else can take it. A graceful stop deletes its keys (with
``last=revision``, so only its own), and a successor takes them at once.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import nats
import structlog
from nats.js import api as js_api
from nats.js.errors import BucketNotFoundError, KeyNotFoundError, KeyWrongLastSequenceError

log = structlog.get_logger()

DEFAULT_BUCKET = "POKER_LEASES"
DEFAULT_TTL_MS = 5000
_TRANSIENT = (nats.errors.TimeoutError, nats.errors.NoRespondersError,
              nats.errors.ConnectionClosedError, nats.js.errors.NoStreamResponseError,
              nats.js.errors.ServiceUnavailableError, KeyNotFoundError, asyncio.TimeoutError)


def default_instance_id() -> str:
    """Host, pid and a random suffix: unique per process (a lease holder's name when
    POKER_INSTANCE_ID is not set)."""
    return f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(3)}"


def instance_id_from_env(env: Mapping[str, str]) -> str:
    """POKER_INSTANCE_ID of ``env`` (a service's: :class:`shared.infra.config.Config`), else
    :func:`default_instance_id`."""
    return env.get("POKER_INSTANCE_ID") or default_instance_id()


def ttl_ms_from_env(env: Mapping[str, str]) -> int:
    """POKER_LEASE_TTL_MS of ``env`` (default :data:`DEFAULT_TTL_MS`); ValueError naming the
    variable unless it is an integer of at least 100. A service's comes from its
    :class:`shared.infra.config.Config`, which hands its mapping here; the one-shot tools
    that make the bucket outside any service pass their own environment
    (deploy/init_streams.py, `pokerctl up`)."""
    raw = env.get("POKER_LEASE_TTL_MS") or str(DEFAULT_TTL_MS)
    try:
        ttl = int(raw)
    except ValueError:
        raise ValueError(f"POKER_LEASE_TTL_MS must be an integer number of milliseconds (at "
                         f"least 100), not {raw!r}") from None
    if ttl < 100:
        raise ValueError(f"POKER_LEASE_TTL_MS must be at least 100 (JetStream's least "
                         f"max_age), not {ttl}")
    return ttl


@dataclass
class _Held:
    revision: int
    sent: float  # monotonic time the last successful write was sent


class Leases:
    """The leases this process holds in one bucket. Create with :meth:`open`."""

    def __init__(self, kv, instance_id: str, ttl_s: float,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        self.kv = kv
        self.instance_id = instance_id
        self.ttl_s = ttl_s
        self.margin_s = ttl_s / 10
        self.monotonic = monotonic
        self._held: dict[str, _Held] = {}
        self._next_try: dict[str, float] = {}
        self._renewing = asyncio.Lock()

    @classmethod
    async def open(cls, js, bucket: str = DEFAULT_BUCKET, ttl_ms: int = DEFAULT_TTL_MS,
                   instance_id: str | None = None, replicas: int = 1) -> Leases:
        """The bucket (made if missing: file storage, one value per key, TTL ``ttl_ms``).
        ``instance_id``: the holder's name (a service's: ``Config.instance_id``); None: one
        made for this process (:func:`default_instance_id`)."""
        try:
            kv = await js.key_value(bucket)
        except BucketNotFoundError:
            try:
                kv = await js.create_key_value(js_api.KeyValueConfig(
                    bucket=bucket, history=1, ttl=ttl_ms / 1000, replicas=replicas,
                    storage=js_api.StorageType.FILE,
                    description="one owner per name (table-service leases)"))
            except nats.js.errors.BadRequestError:  # made meanwhile with another config
                kv = await js.key_value(bucket)
        info = await js.stream_info(f"KV_{bucket}")
        ttl_s = info.config.max_age or 0
        if not ttl_s:
            raise ValueError(f"bucket {bucket} has no TTL: leases would never expire")
        if abs(ttl_s * 1000 - ttl_ms) > 1:
            log.warning("the lease bucket has another TTL: using it", bucket=bucket,
                        bucket_ttl_ms=int(ttl_s * 1000), wanted_ttl_ms=ttl_ms)
        return cls(kv, instance_id or default_instance_id(), ttl_s)

    # --- queries -------------------------------------------------------------------------

    def holds(self, name: str) -> bool:
        """Whether this process may act as the holder of ``name`` now."""
        held = self._held.get(name)
        return held is not None and self.monotonic() < held.sent + self.ttl_s - self.margin_s

    def held(self) -> list[str]:
        return [name for name in self._held if self.holds(name)]

    async def holder(self, name: str) -> str | None:
        """Who holds ``name`` according to the bucket (None: nobody)."""
        try:
            entry = await self.kv.get(name)
        except KeyNotFoundError:
            return None
        return entry.value.decode() if entry.value else None

    # --- taking, renewing, giving up -----------------------------------------------------

    async def acquire(self, name: str) -> bool:
        """Hold ``name`` if it is free; True if this process holds it. A name found held by
        another is tried again a third of the TTL later at the earliest."""
        if self.holds(name):
            return True
        if name in self._held:  # ours until it failed to renew: renew() decides
            return False
        now = self.monotonic()
        if now < self._next_try.get(name, 0.0):
            return False
        try:
            revision = await self.kv.create(name, self.instance_id.encode())
        except KeyWrongLastSequenceError:
            self._next_try[name] = now + self.ttl_s / 3
            return False
        except _TRANSIENT as exc:
            log.info("lease not taken", lease=name, reason=repr(exc))
            return False
        self._held[name] = _Held(revision, now)
        self._next_try.pop(name, None)
        log.info("lease taken", lease=name, instance=self.instance_id)
        return True

    async def renew(self, force: bool = False) -> list[str]:
        """Renew every lease due (a third of the TTL since its last write; ``force``: all);
        returns the names lost to a revision mismatch."""
        async with self._renewing:
            now = self.monotonic()
            due = [name for name, held in self._held.items()
                   if force or now >= held.sent + self.ttl_s / 3]
            kept = await asyncio.gather(*(self._renew_one(name) for name in due))
        return [name for name, ok in zip(due, kept) if not ok]

    async def _renew_one(self, name: str) -> bool:
        held = self._held[name]
        sent = self.monotonic()
        try:
            revision = await self.kv.update(name, self.instance_id.encode(), last=held.revision)
        except KeyWrongLastSequenceError:
            del self._held[name]
            log.warning("lease lost", lease=name, instance=self.instance_id)
            return False
        except _TRANSIENT as exc:  # still ours until it expires; try again
            log.info("lease not renewed", lease=name, reason=repr(exc))
            return True
        self._held[name] = _Held(revision, sent)
        return True

    async def release(self, name: str) -> None:
        """Give ``name`` up now (only if this process's write is still the last)."""
        held = self._held.pop(name, None)
        if held is None:
            return
        try:
            await self.kv.delete(name, last=held.revision)
        except (KeyWrongLastSequenceError, *_TRANSIENT, nats.js.errors.APIError) as exc:
            log.info("lease not released (it expires)", lease=name, reason=repr(exc))

    async def release_all(self) -> None:
        async with self._renewing:
            for name in list(self._held):
                await self.release(name)
