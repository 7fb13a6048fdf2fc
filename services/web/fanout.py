"""One upstream Watch per view, fanned out to the web's visitors: a table's spectators share
one stream of the table service (as the web's own caller), and a seated player's pages share
one of their own (as the player, with their seat token). However many pages follow a table,
the table service sees one Watch for its spectators here, so a visitor opening many pages
costs the table service nothing more, and cannot use up the web's allowance of streams there.

An :class:`Upstream` follows its view with shared/infra/retry.py's ``watching`` (a stream that
breaks is opened again from the last version seen), turns each view into its server-sent
event once (``render``), keeps the latest, and hands the same bytes to every
:class:`Subscriber`. A new subscriber is given the latest at once, then every later one.

Each subscriber takes views through a queue of its own of at most ``queue`` events (those
waiting while its connection is busy go out in one write): one that falls that far behind (a
client that stopped reading) is dropped, its queue emptied and its stream ended (a browser's
EventSource connects again by itself and starts from the latest view); it never holds up the
upstream or the others.

An upstream stops (its Watch cancelled) ``linger_s`` after its last subscriber left, unless
another came (a page reloaded); at most ``max_lingering`` wait so at once (past that the one
waiting longest stops at once: pages opened and closed across many tables must not hold many
Watches open that nobody reads). One that ends with an error that retrying does not mend (the
table is gone or private, the token expired, the seat was left) ends its subscribers' streams
with it and is forgotten: the next subscriber starts a new one, whose refusal it gets.
Nothing is kept for a table or a seat once nobody follows it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import deque
from collections.abc import AsyncIterator, Callable

import grpc
from poker.table.v1 import table_pb2

from shared.infra.retry import PLAYER_RETRY, RetryPolicy, watching

#: views a subscriber may have waiting before it is dropped as too slow (a hand's end is about
#: a dozen commits at once)
QUEUE = 64
#: how long an upstream outlives its last subscriber (a page reloaded finds it still there),
#: and how many may be waiting so at once
LINGER_S = 5.0
MAX_LINGERING = 1024

#: a view turned into its server-sent event, with the seat it is seen from (0: a spectator)
Render = Callable[[table_pb2.TableView, int], bytes]
#: which view an upstream follows: the table, and the seat and seat token (0, "": spectators)
Key = tuple[str, int, str]


class Subscriber:
    """One page's share of an upstream: the events it has not taken yet, at most ``limit``."""

    __slots__ = ("upstream", "limit", "_events", "_ready", "ended", "error")

    def __init__(self, upstream: Upstream, limit: int) -> None:
        self.upstream = upstream
        self.limit = limit
        self._events: deque[bytes] = deque()
        self._ready = asyncio.Event()
        self.ended = False
        #: why the upstream ended, when an error did (the page's stream ends with it)
        self.error: grpc.aio.AioRpcError | None = None

    def offer(self, event: bytes) -> bool:
        """Queue ``event``; False (and the subscriber ended) when ``limit`` are waiting."""
        if len(self._events) >= self.limit:
            self._events.clear()
            self.end()
            return False
        self._events.append(event)
        self._ready.set()
        return True

    def end(self, error: grpc.aio.AioRpcError | None = None) -> None:
        """No more events: the stream ends once it has taken those queued."""
        if not self.ended:
            self.ended, self.error = True, error
            self._ready.set()

    def close(self) -> None:
        """The page is gone (or its stream over): leave the upstream."""
        self.end()
        self.upstream.leave(self)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        """The events as they come; those that queued up meanwhile (the page's connection
        was busy) in one piece, one write to the connection for all of them."""
        while True:
            if self._events:
                events = self._events
                chunk = events[0] if len(events) == 1 else b"".join(events)
                events.clear()
                yield chunk
                continue
            if self.ended:
                return
            self._ready.clear()
            await self._ready.wait()


class Upstream:
    """One Watch of the table service and its subscribers (see the module's docstring)."""

    def __init__(self, fanout: Fanout, key: Key, metadata: tuple) -> None:
        self.fanout = fanout
        self.key = key
        self.metadata = metadata
        self.subscribers: set[Subscriber] = set()
        self.latest: bytes | None = None
        #: the latest view itself (what the web knows of the table without asking again)
        self.view: table_pb2.TableView | None = None
        #: set at the first view, or when the upstream ends before one (``error`` says why)
        self.ready = asyncio.Event()
        self.error: grpc.aio.AioRpcError | None = None
        self.done = False
        self._linger: asyncio.TimerHandle | None = None
        # a context of its own: nothing of the request that started it (a trace id) goes on
        self.task = asyncio.create_task(self._run(), name=f"web upstream {key[0]}/{key[1]}",
                                        context=contextvars.Context())

    def join(self, subscriber: Subscriber) -> None:
        self._stay()
        self.subscribers.add(subscriber)
        if self.latest is not None:
            subscriber.offer(self.latest)

    def leave(self, subscriber: Subscriber) -> None:
        self.subscribers.discard(subscriber)
        if not self.subscribers and not self.done and self._linger is None:
            self._linger = asyncio.get_running_loop().call_later(
                self.fanout.linger_s, self.stop)
            self.fanout.lingering(self)

    def _stay(self) -> None:
        if self._linger is not None:
            self._linger.cancel()
            self._linger = None
            self.fanout.forget(self, lingering_only=True)

    def stop(self) -> None:
        """Cancel the Watch (nobody came back within the linger) and forget this upstream."""
        self._stay()
        if not self.subscribers:
            self.fanout.forget(self)
            self.task.cancel()

    async def _run(self) -> None:
        table_id, seat, seat_token = self.key
        request = table_pb2.ViewRequest(table_id=table_id, seat=seat, seat_token=seat_token)
        error = None
        try:
            async for view in watching(self.fanout.watch, request, self.metadata,
                                       self.fanout.policy):
                event = self.latest = self.fanout.render(view, seat)  # once for everyone
                self.view = view
                self.ready.set()
                for subscriber in list(self.subscribers):
                    if not subscriber.offer(event):
                        self.subscribers.discard(subscriber)
                        self.fanout.dropped += 1
        except grpc.aio.AioRpcError as exc:
            error = exc  # refused, or away for longer than the retries last
        finally:
            self.done = True
            self._stay()
            self.fanout.forget(self)
            self.error = error
            self.ready.set()
            for subscriber in self.subscribers:
                subscriber.end(error)
            self.subscribers.clear()


class Fanout:
    """The upstreams of this web process, by the view they follow."""

    def __init__(self, watch: Callable[..., AsyncIterator], render: Render,
                 queue: int = QUEUE, linger_s: float = LINGER_S,
                 max_lingering: int = MAX_LINGERING,
                 policy: RetryPolicy = PLAYER_RETRY) -> None:
        self.watch = watch  # the table service's Watch (a stub's method)
        self.render = render
        self.queue = queue
        self.linger_s = linger_s
        self.max_lingering = max_lingering
        self.policy = policy
        self.dropped = 0  # subscribers dropped as too slow, since the start
        self._upstreams: dict[Key, Upstream] = {}
        self._tables: dict[str, set[Upstream]] = {}  # the open upstreams of each table
        self._lingering: dict[Key, Upstream] = {}  # in the order they began to

    def __len__(self) -> int:
        """How many upstreams are open."""
        return len(self._upstreams)

    def upstream(self, table_id: str, seat: int = 0, seat_token: str = "") -> Upstream | None:
        return self._upstreams.get((table_id, seat, seat_token))

    def version(self, table_id: str) -> int | None:
        """The latest version of the table this process has been sent (by any of its
        upstreams of the table), None when none follows it: the server's own word on how
        far the table is, never a client's."""
        views = [u.view.version for u in self._tables.get(table_id, ()) if u.view is not None]
        return max(views) if views else None

    def spectators_view(self, table_id: str) -> table_pb2.TableView | None:
        """The latest spectator's view of the table held here, None when no upstream of its
        spectators has one."""
        upstream = self._upstreams.get((table_id, 0, ""))
        return upstream.view if upstream is not None else None

    def lingering(self, upstream: Upstream) -> None:
        """``upstream`` has no subscriber left and waits for one; past ``max_lingering`` so,
        the one waiting longest stops now."""
        self._lingering[upstream.key] = upstream
        if len(self._lingering) > self.max_lingering:
            next(iter(self._lingering.values())).stop()

    def forget(self, upstream: Upstream, lingering_only: bool = False) -> None:
        if self._lingering.get(upstream.key) is upstream:
            del self._lingering[upstream.key]
        if not lingering_only and self._upstreams.get(upstream.key) is upstream:
            del self._upstreams[upstream.key]
            table = self._tables.get(upstream.key[0])
            if table is not None:
                table.discard(upstream)
                if not table:
                    del self._tables[upstream.key[0]]

    async def subscribe(self, table_id: str, metadata: tuple, seat: int = 0,
                        seat_token: str = "") -> Subscriber:
        """A subscriber to the table's view from ``seat`` (0: a spectator's), as the caller
        whose call metadata is ``metadata``, once its upstream has a view; the table
        service's refusal (grpc.aio.AioRpcError) when the upstream could not start."""
        key = (table_id, seat, seat_token)
        upstream = self._upstreams.get(key)
        if upstream is None:
            upstream = self._upstreams[key] = Upstream(self, key, metadata)
            self._tables.setdefault(table_id, set()).add(upstream)
        subscriber = Subscriber(upstream, self.queue)
        upstream.join(subscriber)
        try:
            await upstream.ready.wait()
        except BaseException:
            subscriber.close()  # the page went while the upstream started
            raise
        if upstream.latest is None and upstream.error is not None:
            raise upstream.error
        return subscriber

    async def close(self) -> None:
        """Stop every upstream (their subscribers' streams end)."""
        upstreams, self._upstreams = list(self._upstreams.values()), {}
        self._tables.clear()
        for upstream in upstreams:
            upstream.task.cancel()
        await asyncio.gather(*(u.task for u in upstreams), return_exceptions=True)
