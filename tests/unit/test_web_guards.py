"""The web's guards without a server: the rates (services/web/limits.Rates: token buckets,
429 with the wait, a bounded memory of keys), the deployment's settings
(WebSettings.from_env), the listening socket's TCP_NODELAY, and the sessions' rules over a
MemoryKV (services/web/sessions.py: a subject's own oldest session goes past its limit, never
another's; a session ends at its TTL or its token's expiry; concurrent seat changes are not
lost; the bucket's keys are hashes, never the cookie's id)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket

import pytest

from services.web.limits import Rates, TooFast, WebSettings, listen
from services.web.sessions import (
    PER_SUBJECT,
    SESSION_TTL_S,
    MemoryKV,
    SessionStore,
    session_key,
    subject_key,
)
from shared.infra.identity import Principal


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_a_rate_gives_its_burst_then_one_a_period_and_says_how_long_to_wait():
    clock = Clock()
    rates = Rates(0.5, 3, "sign-ins from this address", clock=clock)
    for _ in range(3):
        rates.take("10.0.0.1")
    with pytest.raises(TooFast) as refused:
        rates.take("10.0.0.1")
    assert refused.value.status == 429 and refused.value.retry_after_s == pytest.approx(2.0)
    assert "sign-ins from this address" in str(refused.value)
    rates.take("10.0.0.2")  # another key has its own bucket
    clock.now += 2.0
    rates.take("10.0.0.1")  # one more after the wait


def test_a_rate_remembers_a_bounded_number_of_keys():
    clock = Clock()
    rates = Rates(1.0, 2, "things", max_keys=100, clock=clock)
    for n in range(1000):
        rates.take(f"k{n}")
        assert len(rates) <= 101
    rates.take("hot")
    with pytest.raises(TooFast):
        rates.take("hot") or rates.take("hot")
    assert len(rates) <= 101


def test_the_settings_come_from_the_environment():
    assert WebSettings.from_env({}) == WebSettings()
    s = WebSettings.from_env({"POKER_WEB_HOSTS": " Poker.Example.com, 127.0.0.1 ,",
                              "POKER_WEB_SECURE_COOKIE": "1"})
    assert s.hosts == ("poker.example.com", "127.0.0.1") and s.secure_cookie
    with pytest.raises(SystemExit, match="POKER_WEB_SECURE_COOKIE"):
        WebSettings.from_env({"POKER_WEB_SECURE_COOKIE": "yes"})


def test_the_web_s_connections_have_nagle_off():
    sock = listen("127.0.0.1", 0)
    try:
        client = socket.create_connection(sock.getsockname())
        sock.setblocking(True)
        accepted, _ = sock.accept()
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        accepted.close()
        client.close()
    finally:
        sock.close()


def principal(subject: str, expires_at: float = 10**10) -> Principal:
    return Principal(subject, frozenset({"player"}), expires_at)


def test_a_subject_s_own_oldest_session_goes_and_nobody_else_s():
    async def run():
        kv = MemoryKV()
        store = SessionStore(kv)
        victim, _ = await store.create("victim-token", principal("vera"))
        mine = [(await store.create("t", principal("mallory")))[0] for _ in range(3 * PER_SUBJECT)]
        assert await store.get(victim) is not None
        live = [sid for sid in mine if await store.get(sid) is not None]
        assert live == mine[-PER_SUBJECT:]  # the newest ten of the attacker's own
        index = json.loads((await kv.get(subject_key("mallory"))).value)
        assert [k for k, _ in index] == [session_key(s) for s in live]
    asyncio.run(run())


def test_the_bucket_holds_hashes_of_the_cookie_and_the_subject_never_them():
    async def run():
        kv = MemoryKV()
        sid, session = await SessionStore(kv).create("tok", principal("alice"))
        assert session.key == "s." + hashlib.sha256(sid.encode()).hexdigest()
        assert sid not in "".join(kv._data) and "alice" not in "".join(kv._data)
    asyncio.run(run())


def test_a_session_ends_at_its_ttl_or_when_its_token_expires():
    async def run():
        clock = Clock()
        store = SessionStore(MemoryKV(), clock=clock)
        long, _ = await store.create("t", principal("a", expires_at=clock.now + 10 * SESSION_TTL_S))
        short, _ = await store.create("t", principal("b", expires_at=clock.now + 60))
        clock.now += 61
        assert await store.get(short) is None and await store.get(long) is not None
        clock.now += SESSION_TTL_S
        assert await store.get(long) is None
        assert await store.get("") is None and await store.get("x" * 1000) is None
    asyncio.run(run())


def test_seats_changed_by_two_requests_at_once_are_both_kept():
    async def run():
        store = SessionStore(MemoryKV())
        sid, session = await store.create("t", principal("alice"))
        stale = await store.get(sid)
        await store.set_seat(session, "t1", (1, "tok1"))
        await store.set_seat(stale, "t2", (2, "tok2"))  # a conflict: read again, then kept
        assert (await store.get(sid)).seats == {"t1": (1, "tok1"), "t2": (2, "tok2")}
        await store.delete(await store.get(sid))
        assert await store.get(sid) is None
    asyncio.run(run())


def test_seats_left_do_not_fill_a_session():
    """A seat left (kept without its token) goes first when a session would pass MAX_SEATS;
    seats with their tokens are never dropped (the 65th is refused)."""
    from services.web.replies import Refused
    from services.web.sessions import MAX_SEATS

    async def run():
        store = SessionStore(MemoryKV())
        sid, session = await store.create("t", principal("alice"))
        for n in range(MAX_SEATS + 10):
            session = await store.set_seat(session, f"left{n}", (1, ""))
        session = await store.set_seat(session, "now", (2, "tok"))
        assert session.seats["now"] == (2, "tok") and len(session.seats) == MAX_SEATS
        for n in range(MAX_SEATS - 1):
            session = await store.set_seat(session, f"held{n}", (1, f"tok{n}"))
        assert all(tok for _, tok in session.seats.values())
        with pytest.raises(Refused) as refused:
            await store.set_seat(session, "one-more", (1, "tok"))
        assert refused.value.status == 409
    asyncio.run(run())
