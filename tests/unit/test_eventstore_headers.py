"""The event store parses NATS message headers with its own ``header_lines``, which must give
exactly what nats-py's parser gives (it replaces it on the store's connections for speed)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from nats.aio.client import Client

from shared.infra.eventstore import header_lines, use_fast_headers

SAMPLES = [
    b"Nats-Stream: POKER\r\nNats-Subject: poker.table.t1\r\nNats-Sequence: 42\r\n"
    b"Nats-Time-Stamp: 2026-11-30T09:00:00.1Z\r\nNats-Msg-Id: t1:c1\r\n\r\n",
    b"Name:Value\r\nTabbed:\tv\r\n  Padded  :  spaced value  \r\n",
    b"no colon here\r\n:empty name\r\nBad Name: x\r\nK\x1cey: y\r\nUtf: \xc2\xa3\r\n",
    b"Caf\xc3\xa9: non-ascii name\r\nDup: 1\r\nDup: 2\r\n",
    b"\x1cEdge\x1f: \x1cvalue\x1d\r\nV: x\x0b\r\n",
    b"",
]


def test_the_samples_parse_as_nats_py_parses_them():
    for raw in SAMPLES:
        assert header_lines(raw) == Client._parse_header_lines(raw), raw


@given(st.lists(st.tuples(st.binary(max_size=12), st.sampled_from([b":", b": ", b"", b"::"]),
                          st.binary(max_size=12)), max_size=6))
def test_any_header_block_parses_as_nats_py_parses_it(lines):
    raw = b"\r\n".join(n + sep + v for n, sep, v in lines)
    assert header_lines(raw) == Client._parse_header_lines(raw)


def test_a_store_connection_uses_it():
    nc = Client()
    use_fast_headers(nc)
    assert nc._parse_header_lines is header_lines
