"""The pure helpers of the networked benchmarks (bench/cpu.py, bench/load.py, the report of
bench/bench_services.py): /proc stat parsing, CPU per action, settings, percentiles, ratios
and the printed tables. Nothing here starts a server or measures speed."""

from __future__ import annotations

import math
import os

import pytest

from bench import cpu, load

# /proc/<pid>/stat of a process whose command name holds a space and parentheses
STAT = ("4335 (py (x) y) S 1 4335 4335 0 -1 4194560 9770 0 0 0 "
        "157 42 0 0 20 0 5 0 123456 456789504 11264 18446744073709551615 1 1 0 0 0 0 0 "
        "16781312 17642 0 0 0 17 1 0 0 0 0 0")


def test_stat_ticks_are_utime_plus_stime_counted_after_the_command_name():
    assert cpu.parse_stat_ticks(STAT) == 157 + 42
    assert cpu.parse_stat_ticks("1 (init) S 0 1 1 0 -1 0 0 0 0 0 7 3 0 0 20 0") == 10


@pytest.mark.parametrize("text", ["", "1 init S 0", "1 (init) S 0 1 1"])
def test_a_line_that_is_not_a_stat_line_is_refused(text):
    with pytest.raises(ValueError):
        cpu.parse_stat_ticks(text)


def test_this_process_reads_its_own_cpu_and_a_missing_one_reads_none():
    assert cpu.cpu_seconds(os.getpid()) >= 0
    assert cpu.cpu_seconds(2**22 + 12345) is None  # above the kernel's pid_max


def test_cluster_pids_names_the_services_and_each_nats_node():
    class Node:
        def __init__(self, name):
            self.name = name

    class Cluster:
        procs = {"table": None, "dealer": None, "dealer-2": None}
        nodes = [Node("nats-1"), Node("nats-2")]

        def pid(self, name):
            return {"table": 10, "dealer": 11, "dealer-2": 12, "nats-1": 20}.get(name)

    assert cpu.cluster_pids(Cluster()) == {"table": 10, "dealer": 11, "dealer-2": 12,
                                           "nats-1": 20}
    Cluster.nodes = [Node("poker-nats")]
    assert cpu.cluster_pids(Cluster()) == {"table": 10, "dealer": 11, "dealer-2": 12}


def test_cpu_per_action_and_its_totals():
    before = {"table": 1.0, "nats": 2.0, "client": 0.5, "gone": 1.0}
    after = {"table": 1.3, "nats": 2.1, "client": 0.7}
    ms = cpu.per_action_ms(before, after, 100)
    assert ms == pytest.approx({"table": 3.0, "nats": 1.0, "client": 2.0})
    assert cpu.server_total(ms) == pytest.approx(4.0)  # the client is not the server's
    assert cpu.per_action_ms(before, after, 0) == {}


def test_replicas_and_nodes_fold_into_their_columns():
    ms = {"dealer": 1.0, "dealer-2": 0.5, "nats-1": 0.25, "nats-3": 0.25, "client": 2.0,
          "other": 9.0}
    assert cpu.group(ms, ("dealer", "nats", "table", "client")) == {
        "dealer": 1.5, "nats": 0.5, "table": 0.0, "client": 2.0}


def test_settings_from_the_environment():
    assert load.window_seconds(2.0, {}) == 2.0
    assert load.window_seconds(2.0, {"POKER_BENCH_SECONDS": "0.5"}) == 0.5
    with pytest.raises(ValueError):
        load.window_seconds(2.0, {"POKER_BENCH_SECONDS": "0"})
    assert load.load_points({}) == load.DEFAULT_LOADS
    assert load.load_points({"POKER_BENCH_TABLES": "20, 1,5,1"}) == (1, 5, 20)
    with pytest.raises(ValueError):
        load.load_points({"POKER_BENCH_TABLES": "0,3"})


def test_ratios_medians_and_milliseconds():
    assert load.ratio(50, 200) == 0.25
    assert math.isnan(load.ratio(1, 0)) and math.isnan(load.ratio(1, None))
    assert load.fmt_ratio(0.2049) == "0.20" and load.fmt_ratio(float("nan")) == "-"
    assert load.median([3, float("nan"), 1, 2]) == 2
    assert math.isnan(load.median([]))
    assert load.fmt_ms(4213, 0) == "4.21" and load.fmt_ms(42130, 0) == "42.1"
    assert load.fmt_ms(421300, 0) == "421" and load.fmt_ms(float("nan"), 3) == "  -"


def test_percentiles_from_the_histogram_in_microseconds():
    h = load.histogram([0.001] * 98 + [0.010, 0.100])  # seconds in, µs recorded
    p = load.percentiles_us(h)
    assert p["p50"] == pytest.approx(1000, rel=1e-3)
    assert p["p99"] == pytest.approx(10000, rel=1e-3)
    assert p["max"] == pytest.approx(100000, rel=1e-3)
    assert all(math.isnan(v) for v in load.percentiles_us(load.histogram()).values())


def _point(tables, raw_per_s, act_per_s, ms):
    lat = {"p50": 4000.0, "p90": 8000.0, "p99": 20000.0, "p99.9": 40000.0, "max": 50000.0}
    return {"tables": tables, "ratio": load.ratio(act_per_s, raw_per_s),
            "raw": {"per_s": raw_per_s, "lat_us": lat, "cpu_ms": {"nats": 0.3}},
            "act": {"per_s": act_per_s, "lat_us": lat, "cpu_ms": ms,
                    "cpu_total_ms": cpu.server_total(ms)}}


def test_the_report_shows_each_load_with_its_ratio_to_raw_and_the_goals():
    from bench import bench_services as bs
    ms = {"table": 1.0, "betting": 0.5, "dealer": 0.5, "nats": 0.5, "client": 0.7}
    points = [_point(1, 1000.0, 100.0, ms), _point(20, 2000.0, 500.0, ms)]
    table = bs.load_table(points)
    assert table[-1].split()[:5] == ["20", "2,000", "20.0", "500", "0.25"]
    assert bs.cpu_table(points)[-1].split()[-3:] == ["2.500", "0.700", "0.300"]
    goals = "\n".join(bs.goal_lines(points))
    assert "raw at 20 subjects: 0.25" in goals and "2.50 ms" in goals
    assert "no 20-table load" in bs.goal_lines(points[:1])[0]


async def test_a_bot_that_swallows_a_cancel_is_cancelled_again():
    import asyncio

    never = asyncio.Event()  # nothing sets it: the tasks wait until they are cancelled
    started = asyncio.Event()

    async def stubborn():
        started.set()
        try:
            await never.wait()
        except asyncio.CancelledError:
            pass  # as a gRPC reply that won the race against the cancel
        await never.wait()

    tasks = [asyncio.create_task(stubborn()), asyncio.create_task(never.wait())]
    await started.wait()  # the first cancel lands inside its try
    assert await load.stop_tasks(tasks, timeout=5.0) == []
    assert all(t.done() for t in tasks)


def test_stream_leaders_are_counted_by_node():
    from bench.bench_cluster import _nodes
    assert _nodes(["nats-2", "nats-1", "nats-2", None]) == "nats-1, nats-2 x2"
    assert _nodes([None]) == "-"
