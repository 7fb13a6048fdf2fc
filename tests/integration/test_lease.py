"""Leases in a JetStream KV bucket (shared/infra/lease.py) on a real nats-server: one holder
at a time, renewal, expiry when the holder stops, loss on a revision mismatch, release."""

from __future__ import annotations

import asyncio
import time

import pytest

from shared.infra.lease import Leases
from shared.infra.waiting import until

TTL_MS = 400


class FakeMonotonic:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


async def test_one_holder_renewal_expiry_and_release(store):
    a = await Leases.open(store.js, ttl_ms=TTL_MS, instance_id="a")
    b = await Leases.open(store.js, ttl_ms=TTL_MS, instance_id="b")
    assert a.ttl_s == pytest.approx(TTL_MS / 1000)

    assert await a.acquire("table.t1")
    assert a.holds("table.t1") and a.held() == ["table.t1"]
    assert not await b.acquire("table.t1")
    assert await b.holder("table.t1") == "a"
    assert await b.acquire("table.t2")  # another name: another lease

    # a keeps renewing past several TTLs; b never gets it
    deadline = time.monotonic() + 3 * TTL_MS / 1000
    while time.monotonic() < deadline:
        assert await a.renew() == []
        b._next_try.clear()
        assert not await b.acquire("table.t1")
        await asyncio.sleep(TTL_MS / 1000 / 4)

    # a stops renewing (as if it died): the key expires and b takes it
    b._next_try.clear()
    await until(lambda: b.acquire("table.t1"), timeout=5)
    assert not a.holds("table.t1")  # a let go before the key could expire
    assert await a.renew(force=True) == ["table.t1"]  # and b's write is not a's revision
    assert await a.holder("table.t1") == "b"

    # a graceful release hands it over at once
    await b.release_all()
    assert await a.acquire("table.t1") and await a.holder("table.t1") == "a"
    assert await a.acquire("table.t2")


async def test_a_holder_stops_counting_on_its_lease_before_it_can_expire(store):
    real = await Leases.open(store.js, ttl_ms=5000, instance_id="a")  # no real expiry here
    clock = FakeMonotonic()
    a = Leases(real.kv, "a", real.ttl_s, monotonic=clock)
    assert await a.acquire("table.t")
    clock.t += real.ttl_s * 0.85
    assert a.holds("table.t")
    clock.t += real.ttl_s * 0.1  # within the margin of the TTL: no longer safe to act
    assert not a.holds("table.t")
    assert not await a.acquire("table.t")  # renew() decides: still ours, or lost
    assert await a.renew() == []  # the key had not expired on the server: ours again
    assert a.holds("table.t")


async def test_the_bucket_keeps_the_ttl_it_was_made_with(store):
    await Leases.open(store.js, ttl_ms=TTL_MS, instance_id="a")
    other = await Leases.open(store.js, ttl_ms=10_000, instance_id="b")
    assert other.ttl_s == pytest.approx(TTL_MS / 1000)
