"""The lobby (``/``): the log's public tables as the table service shows them to a spectator
(game, structure, stakes, buy-in range, seats taken, the hand, its phase in words, hands per
hour), as JSON (``/api/tables``) and followed live (``/api/lobby/events``). The rows are read
at most every :data:`LOBBY_EVERY_S` for every page open (a read asks the table service
about every table whose commits moved since: a stranger opening many lobbies must not
multiply that); a closed table is listed no more."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable

import grpc
from poker.table.v1 import table_pb2
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from shared.infra.protomap import GAME, STRUCTURE
from shared.infra.tablecache import TableCache

from .backend import Backend
from .limits import StreamLimits, TooManyStreams
from .pages import EventStream, page, sse, too_many
from .replies import HEADERS
from .sessions import Sessions
from .words import view_words

#: how often the lobby looks at the log's tables again
LOBBY_EVERY_S = 2.0
#: the lobby's hands per hour are measured over at least this long
RATE_AFTER_S = 60.0
#: and a table the lobby has not listed for this long is forgotten (a rate spans minutes)
RATES_IDLE_S = 3600.0

def lobby_row(view: table_pb2.TableView) -> dict:
    game = GAME.from_pb(view.game).value if view.game else ""
    return {"table_id": view.table_id, "game": game,
            "structure": STRUCTURE.from_pb(view.structure).value if view.structure else "",
            "stakes": view.stakes, "seats_taken": len(view.seats),
            "max_seats": view.max_seats, "hand_no": view.hand_no, "phase": view.phase,
            "paused": view.paused, "closing": view.closing,
            "phase_words": view_words(view, game), "min_buy_in": view.min_buy_in,
            "max_buy_in": view.max_buy_in}


class HandRates:
    """Hands per hour of each table, as this process has seen its hand numbers move (from the
    first time it looked: None until it has looked for RATE_AFTER_S), a whole number.
    Per-table state that forgets (shared/infra/tablecache.py): a table the lobby has not
    listed for :data:`RATES_IDLE_S`, or past POKER_CACHE_TABLES, is measured again from its
    next look."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._first: TableCache[tuple[float, int]] = TableCache(
            "web hand rates", monotonic=clock, released=False, idle_s=RATES_IDLE_S)

    def rate(self, table_id: str, hand_no: int) -> float | None:
        now = self.clock()
        at, first = self._first.setdefault(table_id, lambda: (now, hand_no))
        if now - at < RATE_AFTER_S:
            return None
        return round((hand_no - first) * 3600 / (now - at))


#: what the lobby knows of a table as of the log's count of its commits: its row (None: a
#: table it does not list, closed or private) and when it asked; asked again once the count
#: moves, and an open table's row at least every :data:`RECHECK_S` (a view read from a
#: replica a little behind the count is not kept for ever)
Known = dict[str, tuple[int, dict | None, float]]
RECHECK_S = 60.0


async def lobby_rows(backend: Backend, rates: HandRates | None = None,
                     known: Known | None = None,
                     clock: Callable[[], float] = time.monotonic) -> list[dict]:
    """The public tables of the log still open, as the table service shows them to a
    spectator (with their hands per hour, given ``rates``). ``known``, kept between calls:
    a table whose commits the log counts as before is not asked again (an open one not
    before :data:`RECHECK_S`), so a refresh asks the table service about the tables that
    moved, not about every table the log ever held (a closed table's fold is read from the
    log again at each ask: the caches let a closed table go)."""
    known = {} if known is None else known
    rows = []
    for table_id, commits in sorted((await backend.table_counts()).items()):
        seen = known.get(table_id)
        if seen is None or seen[0] != commits or \
                seen[1] is not None and clock() - seen[2] >= RECHECK_S:
            try:
                view = await backend.stub.GetState(table_pb2.ViewRequest(table_id=table_id),
                                                   metadata=backend.own, timeout=5)
            except grpc.aio.AioRpcError as exc:
                if exc.code() == grpc.StatusCode.PERMISSION_DENIED:  # private, until it moves
                    known[table_id] = (commits, None, clock())
                continue  # stopped, or away: asked again at the next refresh
            seen = known[table_id] = (commits, None if view.closed else lobby_row(view),
                                      clock())
        if seen[1] is None:
            continue
        row = dict(seen[1])
        if rates is not None:
            row["hands_per_hour"] = rates.rate(table_id, row["hand_no"])
        rows.append(row)
    return rows


class Lobby:
    """The lobby's routes over ``backend``, its live stream held to ``limits``."""

    def __init__(self, backend: Backend, sessions: Sessions, limits: StreamLimits) -> None:
        self.backend, self.sessions, self.limits = backend, sessions, limits
        self.rates = HandRates()
        self._rows: list[dict] = []
        self._known: Known = {}  # each table's row as of its commit count (lobby_rows)
        self._at = 0.0  # when the rows were read (monotonic; 0: never)
        self._lock = asyncio.Lock()

    def routes(self) -> list[Route]:
        return [Route("/", self.page), Route("/api/tables", self.tables),
                Route("/api/lobby/events", self.events)]

    async def current(self) -> list[dict]:
        """The lobby's rows, read at most every LOBBY_EVERY_S whatever the number of pages
        open."""
        async with self._lock:
            if not self._at or time.monotonic() - self._at >= LOBBY_EVERY_S:
                self._rows = await lobby_rows(self.backend, self.rates, self._known)
                self._at = time.monotonic()
            return self._rows

    async def page(self, request: Request) -> Response:
        return page(request, "lobby.html")

    async def tables(self, request: Request) -> Response:
        return JSONResponse(await self.current(), headers=HEADERS)

    async def events(self, request: Request) -> Response:
        try:
            release = self.limits.take(await self.sessions.visitor_of(request))
        except TooManyStreams as exc:
            return too_many(exc)

        async def stream() -> AsyncIterator[bytes]:
            last = None
            while True:
                rows = await self.current()
                if rows != last:
                    last = rows
                    yield sse({"tables": rows})
                await asyncio.sleep(LOBBY_EVERY_S)  # the lobby's refresh period
        return EventStream(stream(), [release])
