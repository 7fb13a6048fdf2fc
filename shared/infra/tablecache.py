"""Per-table caches that forget: the one mechanism every service's per-table structure uses
(the repository's folds and their recent commits, the dealer's decks, the table service's
own cards, answered versions and hubs' listeners, the log's placements, the limits'
buckets).

A :class:`TableCache` maps a table id to what a process keeps of it, least recently used
first out. It forgets a table three ways:

- at once, when the table is vacant (nobody seated, no hand running, no money with the
  wallet: ``TableState.vacant``) or closed: :func:`release` drops it from every cache of the
  process (the repository calls it when a fold turns vacant);
- when the table has not been used for ``idle_s`` seconds (``POKER_CACHE_IDLE_S``);
- when more than ``limit`` tables are cached (``POKER_CACHE_TABLES``), the least recently
  used first.

Whatever is forgotten is made again from the log by the next call that needs it (a fold from
the table's first commit, the decks from the vault). Metrics, per cache (a bounded label: the
cache's name): ``poker_cached_tables``, ``poker_cache_evictions_total{reason}`` (released,
idle, bound) and ``poker_cache_reloads_total`` (a table put back after it was forgotten).

Expiry is lazy: each use of a cache first drops the idle tables at its least recently used
end (a few at a time, so a use costs O(1) amortised); a process that is not called keeps what
it has, and grows by nothing.
"""

from __future__ import annotations

import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from . import metrics

V = TypeVar("V")

#: defaults of POKER_CACHE_TABLES and POKER_CACHE_IDLE_S
DEFAULT_TABLES = 2_000
DEFAULT_IDLE_S = 300.0


@dataclass(frozen=True, slots=True)
class CacheSettings:
    """How many tables a cache keeps, and how long an unused one stays."""

    tables: int = DEFAULT_TABLES
    idle_s: float = DEFAULT_IDLE_S

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> CacheSettings:
        """POKER_CACHE_TABLES (at least 1) and POKER_CACHE_IDLE_S (at least 1 s); a bad value
        is a ValueError naming the variable."""
        tables = _parse(env, "POKER_CACHE_TABLES", int, DEFAULT_TABLES, 1, "an integer")
        idle_s = _parse(env, "POKER_CACHE_IDLE_S", float, DEFAULT_IDLE_S, 1.0,
                        "a number of seconds")
        return cls(int(tables), float(idle_s))


def _parse(env: Mapping[str, str], variable: str, kind: Callable[[str], float],
           default: float, least: float, what: str) -> float:
    raw = env.get(variable)
    if raw is None or not raw.strip():
        return default
    try:
        value = kind(raw)
    except ValueError:
        value = least - 1
    if not value >= least or value == float("inf"):
        raise ValueError(f"{variable} must be {what} of at least {least:g}, not {raw!r}")
    return value


_settings = CacheSettings()
_caches: weakref.WeakSet[TableCache] = weakref.WeakSet()
#: called with a table's id just before it is released (the table service tells the services
#: it sends steps to, whose folds did not see the commit that made the table vacant)
_on_release: list[Callable[[str], None]] = []


def on_release(callback: Callable[[str], None]) -> Callable[[], None]:
    """Call ``callback(table_id)`` whenever a table is released here; returns the undo."""
    _on_release.append(callback)
    return lambda: _on_release.remove(callback) if callback in _on_release else None


def configure(settings: CacheSettings) -> None:
    """Set the bound and the idle time of every cache of this process (made before or
    after): the process's start does it once, from its Config."""
    global _settings
    _settings = settings
    for cache in list(_caches):
        cache.limit, cache.idle_s = settings.tables, settings.idle_s
        cache.sweep()


def release(table_id: str, reason: str = "released") -> None:
    """The table is vacant or closed: drop it from every cache of this process at once
    (counted under ``reason``)."""
    if reason == "released":
        for callback in list(_on_release):
            callback(table_id)
    for cache in list(_caches):
        cache.pop(table_id, reason=reason)


def holding(table_id: str) -> list[str]:
    """The names of this process's caches that hold the table (for tests and benchmarks)."""
    return sorted(c.name for c in list(_caches) if table_id in c)


def sizes() -> list[tuple[str, int]]:
    """Each cache of this process: its name and how many tables it holds."""
    return sorted((c.name, len(c)) for c in list(_caches))


class TableCache(Generic[V]):
    """Table id -> value, bounded and forgetting idle tables (see the module's docstring).

    ``name``: the metrics' label (one per kind of structure, a bounded set).
    ``limit``, ``idle_s``: None for the process's settings (:func:`configure`).
    ``on_drop``: called with (table id, value) when a table is forgotten, whatever the way.
    ``released``: whether :func:`release` drops its tables (False for a cache whose value is
    no fold of the table, which a vacancy does not make stale)."""

    def __init__(self, name: str, *, limit: int | None = None, idle_s: float | None = None,
                 monotonic: Callable[[], float] = time.monotonic,
                 on_drop: Callable[[str, V], None] | None = None,
                 released: bool = True) -> None:
        self.name = name
        self.limit = _settings.tables if limit is None else limit
        self.idle_s = _settings.idle_s if idle_s is None else idle_s
        self.monotonic = monotonic
        self.on_drop = on_drop
        self._items: OrderedDict[str, tuple[V, float]] = OrderedDict()  # LRU first
        #: tables forgotten (bounded like the cache): a put of one of them is a reload
        self._gone: OrderedDict[str, None] = OrderedDict()
        self._gauge = metrics.CACHED_TABLES.labels(name)
        if released:
            _caches.add(self)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, table_id: object) -> bool:
        return table_id in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._items))

    def get(self, table_id: str) -> V | None:
        """The table's value (it becomes the most recently used), or None."""
        now = self.monotonic()
        self._expire(now)
        item = self._items.get(table_id)
        if item is None:
            return None
        self._items[table_id] = (item[0], now)
        self._items.move_to_end(table_id)
        return item[0]

    def peek(self, table_id: str) -> V | None:
        """The table's value without using it (its place and idle time unchanged)."""
        item = self._items.get(table_id)
        return None if item is None else item[0]

    def put(self, table_id: str, value: V) -> None:
        """Keep ``value`` for the table (the most recently used), then hold the bound."""
        now = self.monotonic()
        self._expire(now)
        if table_id not in self._items:
            self._gauge.inc()
            if table_id in self._gone:
                del self._gone[table_id]
                metrics.CACHE_RELOADS.labels(self.name).inc()
        self._items[table_id] = (value, now)
        self._items.move_to_end(table_id)
        while len(self._items) > self.limit:
            self._drop(next(iter(self._items)), "bound")

    def setdefault(self, table_id: str, make: Callable[[], V]) -> V:
        """The table's value, made with ``make()`` and kept if there is none."""
        value = self.get(table_id)
        if value is None:
            value = make()
            self.put(table_id, value)
        return value

    def pop(self, table_id: str, reason: str = "released") -> V | None:
        """Forget the table now (counted under ``reason``); its value, or None."""
        if table_id not in self._items:
            return None
        return self._drop(table_id, reason)

    def clear(self) -> None:
        for table_id in list(self._items):
            self._drop(table_id, "released")

    def sweep(self) -> None:
        """Drop the idle tables and hold the bound now (not only at the next use)."""
        self._expire(self.monotonic(), everything=True)
        while len(self._items) > self.limit:
            self._drop(next(iter(self._items)), "bound")

    def _expire(self, now: float, everything: bool = False) -> None:
        # the least recently used end holds the idlest: a few per use, all in a sweep
        budget = len(self._items) if everything else 4
        while budget and self._items:
            table_id, (_, used) = next(iter(self._items.items()))
            if now - used < self.idle_s:
                return
            self._drop(table_id, "idle")
            budget -= 1

    def _drop(self, table_id: str, reason: str) -> V:
        value, _ = self._items.pop(table_id)
        self._gone[table_id] = None
        while len(self._gone) > self.limit:
            self._gone.popitem(last=False)
        metrics.CACHE_EVICTIONS.labels(self.name, reason).inc()
        self._gauge.dec()
        if self.on_drop is not None:
            self.on_drop(table_id, value)
        return value
