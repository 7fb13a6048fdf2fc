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


def test_a_process_that_is_not_running_is_refused_by_name_not_measured_as_none():
    class Cluster:
        def pid(self, name):
            return {"table": 10}.get(name)

    assert cpu.running_pid(Cluster(), "table") == 10
    with pytest.raises(RuntimeError, match="web is not running in this cluster"):
        cpu.running_pid(Cluster(), "web")


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


def test_the_watched_report_puts_nobody_watching_beside_every_bot_watching():
    from bench import bench_services as bs
    ms = {"table": 1.0, "betting": 0.5, "nats": 0.5, "client": 0.7}
    watched_ms = {"table": 2.5, "betting": 0.5, "nats": 0.5, "client": 0.9}
    point = _point(10, 1000.0, 300.0, ms)
    watched = _point(10, 1000.0, 250.0, watched_ms)["act"]
    point.update(watched=watched, watch_ratio=load.ratio(watched["cpu_total_ms"],
                                                         point["act"]["cpu_total_ms"]))
    lines = bs.watch_table([_point(1, 1000.0, 100.0, ms), point])  # the first: unwatched only
    assert len(lines) == 4
    assert lines[2].split() == ["10", "300", "20.0", "1.000", "2.000", "250", "20.0", "2.500",
                                "3.500", "1.75"]
    assert lines[3] == ("CPU per action at 10 tables, services + NATS: 2.00 ms with nobody "
                        "watching, 3.50 ms with every bot watching its seat (1.75x)")


def test_loads_given_as_a_list_are_read_in_one_place():
    assert load.parse_loads(" 400,200,200 ") == (200, 400)
    for bad in ("", "0,3", "two", "1.5"):
        with pytest.raises(ValueError, match="--tables must list table counts"):
            load.parse_loads(bad)


# --- think time (services/pokerctl/thinktime.py) ---------------------------------------------


def test_a_think_time_is_min_max_in_whole_milliseconds():
    from services.pokerctl.thinktime import MAX_THINK_MS, ThinkTime
    assert ThinkTime.parse("1000-3000") == ThinkTime(1000, 3000)
    assert ThinkTime.parse(" 0 - 0 ") == ThinkTime() and ThinkTime.parse("5-5") == ThinkTime(5, 5)
    assert ThinkTime.parse(f"0-{MAX_THINK_MS}").max_ms == MAX_THINK_MS


@pytest.mark.parametrize(("text", "says"), [
    ("", "is not MIN-MAX"),
    ("1000", "is not MIN-MAX"),
    ("-5-10", "MIN '' is not a whole number"),
    ("5--10", "MAX '-10' is not a whole number"),
    ("1.5-2", "MIN '1.5' is not a whole number"),
    ("a-b", "MIN 'a' is not a whole number"),
    ("1-2-3", "MAX '2-3' is not a whole number"),
    ("1-", "MAX '' is not a whole number"),
    ("3000-1000", "MIN 3000 is above MAX 1000 (give 1000-3000)"),
    ("0-600001", "at most 600000 ms"),
])
def test_a_bad_think_time_is_refused_saying_why(text, says):
    from services.pokerctl.thinktime import ThinkTime, ThinkTimeError
    with pytest.raises(ThinkTimeError) as refused:
        ThinkTime.parse(text)
    assert says in str(refused.value) and "\n" not in str(refused.value)


def test_think_times_are_drawn_in_range_and_none_is_drawn_at_0_0():
    import random

    from services.pokerctl.thinktime import ThinkTime
    rng = random.Random(3)
    state = rng.getstate()
    assert ThinkTime().seconds(rng) == 0.0 and rng.getstate() == state
    waits = [ThinkTime(1000, 3000).seconds(rng) for _ in range(500)]
    assert all(1.0 <= w <= 3.0 for w in waits) and max(waits) - min(waits) > 1.5


# --- the capacity search (bench/bench_capacity.py) -------------------------------------------


def test_the_search_steps_up_until_a_load_fails():
    from bench import bench_capacity as cap
    assert list(cap.ladder([400, 200])) == [200, 400]
    steps = list(cap.ladder())
    assert steps[:8] == [100, 200, 400, 600, 800, 1000, 1200, 1400]
    assert steps[-1] == cap.MAX_TABLES
    assert cap.next_load({}) == 100
    assert cap.next_load({100: True, 200: True}) == 400
    assert cap.next_load({200: True}, given=[200, 400]) == 400
    assert cap.next_load({200: True, 400: True}, given=[200, 400]) is None  # all held


def test_the_search_bisects_between_the_last_pass_and_the_first_fail():
    from bench import bench_capacity as cap
    results = {100: True, 200: True, 400: True, 600: False}
    tried = []
    # a machine that holds 530 tables
    while (n := cap.next_load(results)) is not None:
        tried.append(n)
        results[n] = n <= 530
    assert tried == [500, 550, 525]
    assert cap.bounds(results) == (525, 550)  # within 5% of 550: done
    # nothing held: halve down from the first failure
    assert cap.next_load({200: False}, given=[200, 400]) == 100
    assert cap.next_load({1: False}) is None and cap.next_load({2: False, 1: True}) is None
    # a pass above the first failure is noise: the capacity is what held below it
    assert cap.bounds({100: True, 200: False, 300: True}) == (100, 200)


def test_a_load_holds_while_its_p99_is_under_the_limit_and_nothing_failed():
    from bench import bench_capacity as cap
    assert cap.verdict(249.0, 250.0, []) == (True, "p99 249.0 ms < 250 ms")
    assert cap.verdict(250.0, 250.0, []) == (False, "p99 250 ms >= 250 ms")
    assert cap.verdict(10.0, 250.0, ["bots-1: 2 table(s) not seated", "x"]) == \
        (False, "bots-1: 2 table(s) not seated; x")
    assert cap.verdict(float("nan"), 250.0, [])[0] is False
    assert cap.shares(10, 3) == [4, 3, 3] and cap.shares(1, 4) == [1]


def _args(**given):
    import argparse
    names = ("tables", "window_s", "table_services", "clients", "think_ms", "spectators",
             "p99_ms")
    return argparse.Namespace(**{n: given.get(n) for n in names})


def test_capacity_settings_come_from_flags_then_the_environment_then_defaults():
    from bench import bench_capacity as cap
    s = cap.settings(_args(), {}, 2.0)
    assert s == cap.Settings() and s.window_s == cap.WINDOW_S
    assert cap.settings(_args(), {}, 60.0).window_s == 60.0  # python -m bench --seconds 60
    env = {"POKER_BENCH_TABLES": "400,200", "POKER_BENCH_WINDOW_S": "5",
           "POKER_BENCH_TABLE_SERVICES": "2", "POKER_BENCH_CLIENTS": "3"}
    s = cap.settings(_args(), env, 2.0)
    assert (s.tables, s.window_s, s.table_services, s.clients) == ((200, 400), 5.0, 2, 3)
    s = cap.settings(_args(tables="20,40", window_s="7", table_services="1", clients="1",
                           think_ms="0-5", spectators="0", p99_ms="100"), env, 2.0)
    assert s == cap.Settings((20, 40), 7.0, 1, 1, "0-5", 0, 100.0)


@pytest.mark.parametrize(("given", "env", "says"), [
    ({"tables": "0,100"}, {}, "--tables must list table counts"),
    ({}, {"POKER_BENCH_TABLES": "x"}, "POKER_BENCH_TABLES must list table counts"),
    ({"window_s": "0"}, {}, "--window-s must be a number of at least 1, not '0'"),
    ({}, {"POKER_BENCH_WINDOW_S": "inf"}, "POKER_BENCH_WINDOW_S must be a number"),
    ({"table_services": "1.5"}, {}, "--table-services must be a whole number of at least 1"),
    ({}, {"POKER_BENCH_CLIENTS": "0"}, "POKER_BENCH_CLIENTS must be a whole number"),
    ({"spectators": "-1"}, {}, "--spectators must be a whole number of at least 0"),
    ({"think_ms": "3-1"}, {}, "--think-ms: think time '3-1': MIN 3 is above MAX 1"),
    ({"p99_ms": "fast"}, {}, "--p99-ms must be a number"),
])
def test_bad_capacity_settings_are_refused_naming_the_setting(given, env, says):
    from bench import bench_capacity as cap
    with pytest.raises(cap.SettingsError) as refused:
        cap.settings(_args(**given), env, 2.0)
    assert says in str(refused.value)


def _capacity_row(tables, ok, p99_ms):
    from bench import bench_capacity as cap
    hist = load.histogram([0.020] * 98 + [p99_ms / 1e3] * 2)
    row = {"tables": tables, "ok": ok, "why": "p99 fine" if ok else "p99 too high",
           "actions": 1000, "per_s": 100.0, "hist": hist, "lat_us": load.percentiles_us(hist),
           "cpu_ms": {"table": 2.0, "betting": 1.0, "nats": 0.5, "bots-1": 1.5, "bots-2": 1.5},
           "cores": {"table": 0.2, "betting": 0.1, "nats": 0.05, "bots-1": 0.15,
                     "bots-2": 0.15},
           "rss_mib": {"table": 120.4, "nats": 30.0, "bots-1": 200.0},
           "servers": ["betting", "nats", "table"], "clients": ["bots-1", "bots-2"],
           "bot_views": 3000, "spectator_views": 1000, "elapsed_s": 10.0, "ready_s": 42.4}
    return row, cap


def test_the_capacity_report_names_every_process():
    row, cap = _capacity_row(200, True, 100.0)
    assert cap.server_ms(row) == 3.5 and cap.client_ms(row) == 3.0
    line = cap.row_line(row).split()
    assert line[:3] == ["200", "pass", "100"] and line[6:12] == ["3.500", "3.000", "0.35",
                                                                 "0.30", "400", "42"]
    text = "\n".join(cap.summary_lines(row, cap.Settings()))
    assert "200 tables (1200 bots each watching its seat, 400 spectators" in text
    assert "actions/s 100" in text and "services + NATS 3.500" in text
    assert "clients 3.000 (0.30 cores)" in text
    assert "betting 1.000, nats 0.500, table 2.000, bots-1 1.500, bots-2 1.500" in text
    assert "RSS (MiB, VmRSS at the window's end): nats 30, table 120, bots-1 200" in text


def test_ab_cpu_compares_a_setting_by_giving_it_to_one_side_and_taking_it_from_the_other():
    from pathlib import Path

    from bench.ab_cpu import setting, side_env
    compared = dict([setting("GOMEMLIMIT=48MiB")])
    caller = {"PATH": "/bin", "GOMEMLIMIT": "1GiB"}
    tree = Path("/t")
    this = side_env(caller, tree, compared, compared)
    other = side_env(caller, tree, {}, compared)
    assert this["GOMEMLIMIT"] == "48MiB" and "GOMEMLIMIT" not in other
    assert this["PYTHONPATH"] == other["PYTHONPATH"] == f"/t{os.pathsep}/t/gen"
    assert this["PATH"] == other["PATH"] == "/bin"
    with pytest.raises(SystemExit, match="NAME=VALUE"):
        setting("GOMEMLIMIT")
