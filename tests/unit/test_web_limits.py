"""The web's limits on live streams (services/web/limits.py): per visitor, per process, given
back once whatever happens, and nothing remembered of a visitor who holds none; and its
listening socket's fixed send buffer, which every connection accepted on it has."""

from __future__ import annotations

import socket

import pytest

from services.web.limits import (
    RETRY_PROCESS_S,
    RETRY_VISITOR_S,
    StreamLimits,
    TooManyStreams,
    listen,
)


def test_a_visitor_gets_their_streams_then_a_refusal_they_can_act_on():
    limits = StreamLimits(per_visitor=2, per_process=10)
    limits.take("address:10.0.0.1")
    limits.take("address:10.0.0.1")
    with pytest.raises(TooManyStreams) as refused:
        limits.take("address:10.0.0.1")
    assert refused.value.retry_after_s == RETRY_VISITOR_S
    assert "at most 2" in str(refused.value) and "close a tab" in str(refused.value)
    limits.take("address:10.0.0.2")  # another visitor is served
    assert limits.held("address:10.0.0.1") == 2 and limits.total == 3 and len(limits) == 2


def test_the_process_refuses_everyone_when_full():
    limits = StreamLimits(per_visitor=5, per_process=3)
    for n in range(3):
        limits.take(f"address:10.0.0.{n}")
    with pytest.raises(TooManyStreams) as refused:
        limits.take("session:new")
    assert refused.value.retry_after_s == RETRY_PROCESS_S
    assert "(3)" in str(refused.value) and limits.total == 3


def test_a_stream_given_back_frees_its_place_once_and_forgets_the_visitor():
    limits = StreamLimits(per_visitor=1, per_process=2)
    release = limits.take("session:abc")
    other = limits.take("address:10.0.0.1")
    release()
    release()  # given back once, however many times it is called
    assert limits.total == 1 and limits.held("session:abc") == 0
    assert len(limits) == 1  # nothing kept of a visitor without a stream
    limits.take("session:abc")()  # their place again
    other()
    assert limits.total == 0 and len(limits) == 0


def test_a_refusal_takes_nothing():
    limits = StreamLimits(per_visitor=1, per_process=1)
    limits.take("address:10.0.0.1")
    for visitor in ("address:10.0.0.1", "address:10.0.0.2"):
        with pytest.raises(TooManyStreams):
            limits.take(visitor)
    assert limits.total == 1 and len(limits) == 1


def test_every_connection_accepted_has_the_fixed_send_buffer():
    server = listen("127.0.0.1", 0, send_buffer=16 * 1024)
    server.setblocking(True)
    client = socket.create_connection(server.getsockname(), timeout=5)
    try:
        accepted, _ = server.accept()
        with accepted:
            fixed = server.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
            assert 16 * 1024 <= fixed <= 2 * 16 * 1024  # Linux doubles what is asked
            assert accepted.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF) == fixed
    finally:
        client.close()
        server.close()
