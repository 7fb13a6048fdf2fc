"""The web's own limits: live streams (the table's server-sent events and the lobby's), how
many one visitor may hold open and how many this process serves in all; and rates (token
buckets: sign-ins per address and per player, hand pages per visitor), over which a request
is refused with 429 and the wait (Retry-After). Both are shared/infra/limits.py's (StreamCap,
RateLimiter), the table service's own, refused here as HTTP. With them, the web's settings of
a deployment (:class:`WebSettings`: the Host allow-list, the Secure cookie).

The table service holds the web (a relay) to one cap for all its visitors together, and the
web fans one upstream per table out to them (fanout.py), so what a visitor can take from the
others here is connections and memory of this process: these limits bound that. A visitor is
a signed-in session, else the client's address (``request.client.host``; uvicorn takes it from
X-Forwarded-For only when the connection comes from one of its ``forwarded_allow_ips``).
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from shared.infra.limits import RateLimiter, StreamCap

from .replies import Refused

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
    """Open streams counted per visitor and in all: two of shared/infra/limits.py's
    StreamCap (a visitor's key is kept only while it holds one), refused with
    TooManyStreams."""

    def __init__(self, per_visitor: int = STREAMS_PER_VISITOR,
                 per_process: int = STREAMS_PER_PROCESS) -> None:
        self.per_visitor = per_visitor
        self.per_process = per_process
        self.visitors = StreamCap(per_visitor, refuse=lambda held: TooManyStreams(
            f"you already have {held} live views open here (at most {per_visitor}): "
            f"close a tab of a table or of the lobby, then reload", RETRY_VISITOR_S))
        self.process = StreamCap(per_process, refuse=lambda held: TooManyStreams(
            f"this server is serving as many live views as it may ({per_process}): "
            f"try again in a little while", RETRY_PROCESS_S))

    @property
    def total(self) -> int:
        """How many streams are open in all."""
        return self.process.held("all")

    def held(self, visitor: str) -> int:
        return self.visitors.held(visitor)

    def __len__(self) -> int:
        """How many visitors hold a stream."""
        return self.visitors.holders()

    def take(self, visitor: str) -> Callable[[], None]:
        """One stream for ``visitor``, or TooManyStreams (nothing taken); returns the
        release (which gives it back once, however many times it is called)."""
        mine = self.visitors.take(visitor)
        try:
            everyone = self.process.take("all")
        except TooManyStreams:
            mine()
            raise

        def release() -> None:
            mine()
            everyone()
        return release


class TooFast(Refused):
    """A request over a rate: 429, why, and the seconds until one more passes."""

    def __init__(self, why: str, retry_after_s: float | None) -> None:
        wait = retry_after_s if retry_after_s is not None else float(RETRY_PROCESS_S)
        super().__init__(429, f"{why}: try again in {math.ceil(wait)} s", wait)


class Rates(RateLimiter):
    """The web's token buckets by key (a visitor, an address, a player): shared/infra's
    RateLimiter, ``per_s`` tokens a second up to ``burst``, at most ``max_keys`` keys
    remembered, refused with :class:`TooFast` (429)."""

    def __init__(self, per_s: float, burst: int, what: str,
                 max_keys: int = RateLimiter.MAX_KEYS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if not per_s > 0 or burst < 1:
            raise ValueError(f"a rate needs per_s > 0 and burst >= 1, not {per_s}, {burst}")
        super().__init__(per_s, burst, what, clock, max_keys=max_keys, refuse=TooFast)

    def __len__(self) -> int:
        """How many keys have a bucket."""
        return self.remembered()


#: sign-ins: per client address (an office behind one address signs in many people) and per
#: player (a person signs in a few times a day); each sign-in verifies a token and writes the
#: sessions bucket
SIGN_INS_PER_ADDRESS = (0.5, 30)  # per second, burst
SIGN_INS_PER_SUBJECT = (0.1, 10)
#: hand pages (the page, its JSON, PokerStars text and PHH) per visitor: a person steps
#: through hands; a cached page costs little, a hand not yet cached a fold of new commits
HAND_PAGES_PER_VISITOR = (5.0, 30)


@dataclass(frozen=True)
class WebSettings:
    """A deployment's settings of the web (``from_env``): the Host names it answers to
    (None: any; POKER_WEB_HOSTS), whether the session cookie is Secure on plain HTTP too
    (behind a TLS proxy: POKER_WEB_SECURE_COOKIE=1; over TLS it always is), and the rates
    (per second, burst) of sign-ins and hand pages."""

    hosts: tuple[str, ...] | None = None
    secure_cookie: bool = False
    sign_ins_per_address: tuple[float, int] = SIGN_INS_PER_ADDRESS
    sign_ins_per_subject: tuple[float, int] = SIGN_INS_PER_SUBJECT
    hand_pages_per_visitor: tuple[float, int] = HAND_PAGES_PER_VISITOR

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> WebSettings:
        raw = env.get("POKER_WEB_HOSTS", "").strip()
        hosts = tuple(h.strip().lower() for h in raw.split(",") if h.strip()) or None
        secure = env.get("POKER_WEB_SECURE_COOKIE", "").strip()
        if secure not in ("", "0", "1"):
            raise SystemExit(f"web: POKER_WEB_SECURE_COOKIE is 1 (the cookie is Secure even "
                             f"on plain HTTP, behind a TLS proxy) or 0, not {secure!r}")
        return cls(hosts=hosts, secure_cookie=secure == "1")


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
    (fanout.QUEUE, each shared with the other pages). Every connection also has Nagle's
    algorithm off (TCP_NODELAY, inherited from this socket): asyncio turns it off only for a
    socket made with the protocol named, which this one (as uvicorn's own) is not, and a
    kept-alive connection then waited for the client's delayed ACK (40 ms) between a
    response's head and its body."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET  # as uvicorn's own bind
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((host, port))
        sock.listen(2048)
    except BaseException:
        sock.close()
        raise
    sock.setblocking(False)
    return sock
