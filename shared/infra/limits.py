"""Per-caller limits of the client API: how fast a seat may send commands, how often it may
toggle its presence (each toggle is a commit in a log that is never deleted), how many
live views (Watch streams) a caller and a table may hold.

A refusal is :class:`~shared.infra.rpc.Exhausted` (RESOURCE_EXHAUSTED, with the time after
which a retry will pass). Limits are kept per table-service process: they protect the
process and the log from one caller, they are not rules of the game (nothing here is in the
log, and the audit does not see them).

Who the caller is: a seat's commands are counted against the seat (after its token was
checked, so a stranger cannot use up a player's allowance); what comes before a seat (a new
table, a SitDown) and Watch streams against the caller's network address, until callers carry
an identity of their own.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields
from typing import Any

import grpc

from .authz import caller
from .identity import Unauthenticated
from .rpc import RETRY_AFTER_HEADER, Exhausted


@dataclass(frozen=True)
class LimitSettings:
    """Every limit, with its environment variable ``POKER_LIMIT_<NAME>`` (a service's:
    ``Config.limits``, read by :meth:`from_mapping`)."""

    #: Act, TopUp, CommitSeed and RevealSeed per seat: a sustained rate and a burst (bots
    #: are fast; a person is not). The rules take one commitment and one reveal a seat a hand
    #: (shared/poker/seeds.py), so a player's seeds add at most two commits a hand and never
    #: use up the toggles below
    seat_commands_per_s: float = 50.0
    seat_commands_burst: int = 200
    #: Disconnect, Reconnect, SitOut and Leave per seat that reach the log (each one is a
    #: commit for ever; a refused one costs nothing here)
    seat_toggles_per_s: float = 0.1
    seat_toggles_burst: int = 10
    #: CreateTable and SitDown per caller address (a lobby seats many players at once)
    caller_joins_per_s: float = 50.0
    caller_joins_burst: int = 300
    #: SitDown per player account, across every table of this process: a sit-down and the
    #: leave after it append about 1.1 KB of commits and ledger events for ever (and a few
    #: hundred bytes of JetStream's subjects and headers), so after its burst one account adds
    #: about 13 KB a minute (tests/system/test_identity_exact.py measures it)
    player_joins_per_s: float = 0.2
    player_joins_burst: int = 10
    #: open Watch streams per caller (a player's account, else an address); spectators' per
    #: table and in this whole process (a seated player's own view is never refused for
    #: strangers filling those). A spectator costs a hub a few kilobytes (README, "What a
    #: watcher costs"), so the caps are set where memory is not the limit and filling a
    #: table's takes watches_per_table / watches_per_caller accounts (64 with these).
    watches_per_caller: int = 64
    watches_per_table: int = 4096
    watches_per_process: int = 20_000
    #: a relay's (a caller with the ``relay`` role: the web pages, which fan one stream per
    #: table out to their own visitors and hold their own limits per visitor)
    watches_per_relay: int = 20_000
    #: views a Watch stream may have waiting (its client not reading) before it is closed
    #: with ABORTED, to resume from the last view it took (services/table/hub.py)
    watch_queue: int = 64
    #: GetReceipt per player: each reads the hand's table log at the dealer (a receipt is
    #: asked once per hand played, not per second)
    receipts_per_s: float = 1.0
    receipts_burst: int = 30
    #: Register and Unregister per player at the tournament director: each asks the wallet
    #: (a balance, a debit or a refund) and may append to the tournament's log for ever
    tournament_entries_per_s: float = 0.2
    tournament_entries_burst: int = 10

    @classmethod
    def from_mapping(cls, env: Mapping[str, str]) -> LimitSettings:
        """The limits ``env`` sets (``POKER_LIMIT_<NAME>``; the rest keep their defaults): the
        mapping :meth:`shared.infra.config.Config.from_env` hands it. ValueError naming the
        variable when one is not a number (an integer for a burst or a count) of at least 0."""
        values: dict[str, Any] = {}  # each field's own type: a float or an int
        for f in fields(cls):
            variable = f"POKER_LIMIT_{f.name.upper()}"
            raw = env.get(variable)
            if raw is None or raw.strip() == "":
                continue
            kind = float if f.type in ("float", float) else int
            try:
                value = kind(raw)
            except ValueError:
                value = None
            if value is None or not math.isfinite(value) or value < 0:
                what = "a number" if kind is float else "an integer"
                raise ValueError(f"{variable} must be {what} of at least 0 (default "
                                 f"{f.default}), not {raw!r}")
            values[f.name] = value
        return cls(**values)


#: how a limit refuses: (why, the seconds until a retry passes, None: no hint) -> the
#: exception raised (the table service's Exhausted, RESOURCE_EXHAUSTED; the web's 429)
Refuse = Callable[[str, "float | None"], Exception]


class RateLimiter:
    """Token buckets by key: ``rate`` tokens a second up to ``burst``, refused with
    ``refuse`` (Exhausted unless told). A bucket full again is the same as none: those are
    forgotten once per refill time (burst / rate), so the buckets of seats and tables gone do
    not stay; past ``max_keys`` keys the full ones go at once, then the least recently used
    (down to nine tenths of it, so that this runs once per many new keys). The one token
    bucket of the table service and of the web (services/web: sign-ins, pages per visitor)."""

    MAX_KEYS = 100_000  # past this, buckets that are full again are forgotten at once

    def __init__(self, rate: float, burst: int, what: str,
                 monotonic: Callable[[], float] = time.monotonic,
                 appended_only: bool = False, *, max_keys: int = MAX_KEYS,
                 refuse: Refuse = Exhausted) -> None:
        if rate < 0 or burst < 0:
            raise ValueError(f"a rate needs rate >= 0 and burst >= 0, not {rate}, {burst}")
        self.rate = rate
        self.burst = burst
        self.what = what
        #: count only commands that reach the log (:meth:`spent_nothing` gives the rest back)
        self.appended_only = appended_only
        self.monotonic = monotonic
        self.max_keys = max_keys
        self.refuse = refuse
        #: key -> (tokens, at), the least recently used first
        self._buckets: dict[str, tuple[float, float]] = {}
        #: how often the full buckets are forgotten: the time an empty one takes to refill
        self._refill_s = max(1.0, burst / rate) if rate > 0 else math.inf
        self._swept = monotonic()

    def remembered(self) -> int:
        """How many keys have a bucket. (Not ``__len__``: a limiter with none is still a
        limiter, and callers test ``limit or default``.)"""
        return len(self._buckets)

    def take(self, key: str) -> None:
        """Spend one token of ``key``'s bucket, or refuse with the wait until the next."""
        now = self.monotonic()
        tokens, at = self._buckets.pop(key, (float(self.burst), now))
        tokens = min(float(self.burst), tokens + (now - at) * self.rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            wait = (1.0 - tokens) / self.rate if self.rate > 0 else None
            raise self.refuse(f"too many {self.what} (at most {self.burst} at once, then "
                              f"{self.rate:g} a second)", wait)
        self._buckets[key] = (tokens - 1.0, now)  # (last in the dict: the newest)
        if len(self._buckets) > self.max_keys or now - self._swept >= self._refill_s:
            self._forget(now)

    def spent_nothing(self, key: str) -> None:
        """The command just taken for appended nothing (refused, or a retry of one already
        applied): a limit of what reaches the log gives its token back."""
        seen = self._buckets.get(key)
        if self.appended_only and seen is not None:
            self._buckets[key] = (min(float(self.burst), seen[0] + 1.0), seen[1])

    def _forget(self, now: float) -> None:
        """The full buckets go; then, past ``max_keys``, the least recently used."""
        self._swept = now
        self._buckets = {k: (t, at) for k, (t, at) in self._buckets.items()
                         if t + (now - at) * self.rate < self.burst}
        if len(self._buckets) > self.max_keys:
            over = len(self._buckets) - self.max_keys * 9 // 10
            for key in list(self._buckets)[:over]:
                del self._buckets[key]


class StreamCap:
    """At most ``limit`` open streams per key, refused with ``refuse(held)`` (Exhausted
    naming ``what``, unless told); a key is kept only while it holds one. The one count of
    open streams of the table service (Watch streams per caller, table and process) and of
    the web (live views per visitor and per process)."""

    def __init__(self, limit: int, what: str = "",
                 refuse: Callable[[int], Exception] | None = None) -> None:
        self.limit = limit
        self.what = what
        self.refuse = refuse or self._exhausted
        self._open: dict[str, int] = {}

    def _exhausted(self, held: int) -> Exception:
        return Exhausted(f"{self.what} already holds {held} open Watch streams (at most "
                         f"{self.limit}): close one first", 1.0)

    def held(self, key: str) -> int:
        return self._open.get(key, 0)

    def holders(self) -> int:
        """How many keys hold a stream."""
        return len(self._open)

    def take(self, key: str) -> Callable[[], None]:
        """One stream for ``key``, or the refusal; returns the release (which gives it back
        once, however many times it is called)."""
        held = self._open.get(key, 0)
        if held >= self.limit:
            raise self.refuse(held)
        self._open[key] = held + 1
        released = False

        def release() -> None:
            nonlocal released
            if released:
                return
            released = True
            left = self._open[key] - 1
            if left:
                self._open[key] = left
            else:
                del self._open[key]
        return release

    @contextmanager
    def holding(self, key: str):
        """One stream for ``key`` while the block runs (:meth:`take`, given back after)."""
        release = self.take(key)
        try:
            yield
        finally:
            release()


class Limits:
    """The table service's limits, by kind."""

    def __init__(self, settings: LimitSettings | None = None,
                 monotonic: Callable[[], float] = time.monotonic) -> None:
        s = settings or LimitSettings()
        self.settings = s
        self.seat_commands = RateLimiter(s.seat_commands_per_s, s.seat_commands_burst,
                                         "commands from this seat", monotonic)
        self.seat_toggles = RateLimiter(s.seat_toggles_per_s, s.seat_toggles_burst,
                                        "disconnects, reconnects, sit-outs and leaves from "
                                        "this seat", monotonic, appended_only=True)
        self.caller_joins = RateLimiter(s.caller_joins_per_s, s.caller_joins_burst,
                                        "new tables and seats from this caller", monotonic)
        self.player_joins = RateLimiter(s.player_joins_per_s, s.player_joins_burst,
                                        "sit-downs by this player", monotonic,
                                        appended_only=True)
        self.receipts = RateLimiter(s.receipts_per_s, s.receipts_burst,
                                    "receipts asked for by this player", monotonic)
        self.caller_watches = StreamCap(s.watches_per_caller, "this caller")
        self.relay_watches = StreamCap(s.watches_per_relay, "this relay")
        self.table_watches = StreamCap(s.watches_per_table, "this table")
        self.process_watches = StreamCap(s.watches_per_process, "this table service")

    @contextmanager
    def watching(self, caller: str, table_id: str, seated: bool, relay: bool = False):
        """Held while a Watch stream is open: the caller's streams (a relay's own cap), and a
        spectator's place at the table and in the process."""
        mine = self.relay_watches if relay else self.caller_watches
        with mine.holding(caller):
            if seated:
                yield
                return
            with self.table_watches.holding(table_id), self.process_watches.holding("all"):
                yield


def caller_of(context) -> str:
    """Whom a limit counts against: the verified player (``player:alice``, from the call's
    token: shared/infra/identity.py), else the caller's network address without its port
    (``ipv4:127.0.0.1``), so that players behind one address have limits of their own."""
    try:
        return f"player:{caller().subject}"
    except Unauthenticated:
        pass
    peer = context.peer() or ""
    host, sep, port = peer.rpartition(":")
    return host if sep and port.isdigit() else peer


def retry_after_s(exc: grpc.aio.AioRpcError | grpc.RpcError) -> float | None:
    """A client's side: how long a RESOURCE_EXHAUSTED refusal asks it to wait (None: not
    such a refusal, or no hint)."""
    if exc.code() is not grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    for key, value in exc.trailing_metadata() or ():
        if key == RETRY_AFTER_HEADER:
            try:
                return int(value) / 1000
            except ValueError:
                return None
    return None
