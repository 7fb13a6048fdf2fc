"""The web's own limits on live streams (the table's server-sent events and the lobby's): how
many one visitor may hold open, and how many this process serves in all.

The table service holds the web (a relay) to one cap for all its visitors together, and the
web fans one upstream per table out to them (fanout.py), so what a visitor can take from the
others here is connections and memory of this process: these limits bound that. A visitor is
a signed-in session, else the client's address (``request.client.host``; uvicorn takes it from
X-Forwarded-For only when the connection comes from one of its ``forwarded_allow_ips``).
"""

from __future__ import annotations

import socket
from collections.abc import Callable

#: live streams one visitor may hold open (a few tabs of tables and the lobby), and this
#: process in all (each a connection and a small queue of views)
STREAMS_PER_VISITOR = 16
STREAMS_PER_PROCESS = 20_000
#: how long a refused visitor is told to wait: until one of their streams ends (a tab they
#: close), or until others have left a full process
RETRY_VISITOR_S = 5
RETRY_PROCESS_S = 30


class TooManyStreams(Exception):
    """A stream refused by a limit: why (a person can act on it) and the seconds to wait
    (the HTTP Retry-After)."""

    def __init__(self, why: str, retry_after_s: int) -> None:
        super().__init__(why)
        self.retry_after_s = retry_after_s


class StreamLimits:
    """Open streams counted per visitor and in all; a key is kept only while it holds one."""

    def __init__(self, per_visitor: int = STREAMS_PER_VISITOR,
                 per_process: int = STREAMS_PER_PROCESS) -> None:
        self.per_visitor = per_visitor
        self.per_process = per_process
        self.total = 0
        self._open: dict[str, int] = {}

    def held(self, visitor: str) -> int:
        return self._open.get(visitor, 0)

    def __len__(self) -> int:
        """How many visitors hold a stream."""
        return len(self._open)

    def take(self, visitor: str) -> Callable[[], None]:
        """One stream for ``visitor``, or TooManyStreams; returns the release (which gives it
        back once, however many times it is called)."""
        held = self._open.get(visitor, 0)
        if held >= self.per_visitor:
            raise TooManyStreams(
                f"you already have {held} live views open here (at most {self.per_visitor}): "
                f"close a tab of a table or of the lobby, then reload", RETRY_VISITOR_S)
        if self.total >= self.per_process:
            raise TooManyStreams(
                f"this server is serving as many live views as it may ({self.per_process}): "
                f"try again in a little while", RETRY_PROCESS_S)
        self._open[visitor] = held + 1
        self.total += 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            self.total -= 1
            left = self._open[visitor] - 1
            if left:
                self._open[visitor] = left
            else:
                del self._open[visitor]
        return release


#: the kernel's send buffer of each visitor's connection (Linux doubles it): a fixed size
#: instead of the kernel's autotuning, which grows the buffer of a client that stops reading
#: to megabytes (net.ipv4.tcp_wmem); at this size a connection still carries some 600 KB/s at
#: a 200 ms round trip, far more than a table's views
SEND_BUFFER = 64 * 1024


def listen(host: str, port: int, send_buffer: int = SEND_BUFFER) -> socket.socket:
    """The web's listening socket on ``host`` and ``port`` (0: one the OS picks), for
    uvicorn's ``Server.serve(sockets=...)``; every connection accepted on it has a kernel
    send buffer of ``send_buffer`` bytes. What a visitor who stops reading holds here is that,
    the 64 KiB asyncio's transport buffers before uvicorn waits, and the events queued for it
    (fanout.QUEUE, each shared with the other pages)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn's own bind
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        sock.bind((host, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock
