"""The per-table caches that forget (shared/infra/tablecache.py): least recently used out past
the bound, an unused table out after the idle time, a released table out of every cache at
once, a table put back after it was forgotten counted as a reload."""

from __future__ import annotations

import pytest

from shared.infra import metrics, tablecache
from shared.infra.tablecache import CacheSettings, TableCache


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def evictions(name: str, reason: str) -> float:
    return metrics.CACHE_EVICTIONS.labels(name, reason)._value.get()


def reloads(name: str) -> float:
    return metrics.CACHE_RELOADS.labels(name)._value.get()


def test_the_least_recently_used_table_goes_first_past_the_bound():
    cache: TableCache[int] = TableCache("t-bound", limit=2, idle_s=60)
    before = evictions("t-bound", "bound")
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # b is now the least recently used
    cache.put("c", 3)
    assert list(cache) == ["a", "c"] and len(cache) == 2
    assert cache.get("b") is None
    assert evictions("t-bound", "bound") == before + 1


def test_a_peek_does_not_count_as_a_use():
    cache: TableCache[int] = TableCache("t-peek", limit=2, idle_s=60)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1
    cache.put("c", 3)
    assert "a" not in cache and list(cache) == ["b", "c"]


def test_an_unused_table_is_forgotten_after_the_idle_time_and_a_used_one_is_not():
    clock = Clock()
    dropped: list[tuple[str, int]] = []
    cache: TableCache[int] = TableCache("t-idle", limit=10, idle_s=30, monotonic=clock,
                                        on_drop=lambda t, v: dropped.append((t, v)))
    cache.put("quiet", 1)
    cache.put("busy", 2)
    clock.t += 20
    assert cache.get("busy") == 2
    clock.t += 15  # quiet unused for 35 s, busy for 15 s
    assert cache.get("busy") == 2
    assert "quiet" not in cache and dropped == [("quiet", 1)]
    clock.t += 31
    cache.sweep()  # without a use: a sweep
    assert len(cache) == 0 and dropped[-1] == ("busy", 2)


def test_release_drops_the_table_from_every_cache_at_once():
    a: TableCache[int] = TableCache("t-rel-a", limit=10, idle_s=60)
    b: TableCache[str] = TableCache("t-rel-b", limit=10, idle_s=60)
    private: TableCache[int] = TableCache("t-rel-c", limit=10, idle_s=60, released=False)
    for cache, value in ((a, 1), (b, "x"), (private, 3)):
        cache.put("gone", value)  # type: ignore[arg-type]
        cache.put("stays", value)  # type: ignore[arg-type]
    assert tablecache.holding("gone") == ["t-rel-a", "t-rel-b"]
    tablecache.release("gone")
    assert tablecache.holding("gone") == []
    assert "stays" in a and "stays" in b and "gone" in private


def test_a_table_put_back_after_it_was_forgotten_is_a_reload():
    cache: TableCache[int] = TableCache("t-reload", limit=10, idle_s=60)
    before = reloads("t-reload")
    cache.put("t", 1)
    cache.put("t", 2)  # replaced, not forgotten
    assert reloads("t-reload") == before
    cache.pop("t")
    cache.put("t", 3)
    assert reloads("t-reload") == before + 1
    assert metrics.CACHED_TABLES.labels("t-reload")._value.get() == 1


def test_configure_sets_every_cache_and_holds_the_new_bound_now():
    cache: TableCache[int] = TableCache("t-conf")
    try:
        for t in "abcd":
            cache.put(t, 1)
        tablecache.configure(CacheSettings(tables=2, idle_s=60))
        assert cache.limit == 2 and list(cache) == ["c", "d"]
        assert TableCache("t-conf-later").limit == 2
    finally:
        tablecache.configure(CacheSettings())


@pytest.mark.parametrize("env, says", [
    ({"POKER_CACHE_TABLES": "0"}, "POKER_CACHE_TABLES must be an integer of at least 1"),
    ({"POKER_CACHE_TABLES": "many"}, "not 'many'"),
    ({"POKER_CACHE_IDLE_S": "0.5"}, "POKER_CACHE_IDLE_S must be a number of seconds"),
    ({"POKER_CACHE_IDLE_S": "inf"}, "POKER_CACHE_IDLE_S"),
])
def test_bad_settings_name_the_variable(env, says):
    with pytest.raises(ValueError, match=says):
        CacheSettings.from_env(env)


def test_settings_from_the_environment():
    assert CacheSettings.from_env({}) == CacheSettings()
    assert CacheSettings.from_env({"POKER_CACHE_TABLES": "7", "POKER_CACHE_IDLE_S": "2.5"}) \
        == CacheSettings(7, 2.5)
