"""The pure parts of bench/bench_soak.py and bench/proctrend.py: the least-squares slope after
the warm-up, the verdict read from it, the /proc parsing and the settings. Nothing here starts
a server or sleeps."""

from __future__ import annotations

import os

import pytest

from bench import bench_soak as soak
from bench import proctrend


def test_a_line_of_known_slope_gives_that_slope_per_minute():
    # 120 KiB a minute is 2 KiB a second, sampled every 5 s for 10 minutes
    points = [(t, 50_000 + 2 * t) for t in range(0, 601, 5)]
    t = proctrend.trend(points, warmup=0.0)
    assert t.per_min == pytest.approx(120.0)
    assert (t.used, t.dropped, t.note) == (len(points), 0, "")
    assert t.span_min == pytest.approx(10.0)
    flat = proctrend.trend([(t, 7) for t in range(0, 100, 5)])
    assert flat.per_min == pytest.approx(0.0)
    falling = proctrend.trend([(t, 100 - t / 60) for t in range(0, 600, 10)])
    assert falling.per_min == pytest.approx(-1.0)


def test_noise_around_a_line_still_gives_its_slope():
    points = [(t, 10 * t / 60 + (3 if i % 2 else -3)) for i, t in enumerate(range(0, 600, 5))]
    assert proctrend.trend(points, warmup=0.0).per_min == pytest.approx(10.0, abs=0.2)


def test_the_warm_up_samples_are_dropped():
    # steep for the first 20% of the run (start-up: caches, connections), flat after it
    points = [(t, t * 100 if t < 20 else 2000) for t in range(0, 101)]
    t = proctrend.trend(points, warmup=0.2)
    assert t.per_min == pytest.approx(0.0)
    assert t.dropped == 20 and t.used == 81
    assert proctrend.trend(points, warmup=0.0).per_min > 0  # with the warm-up in, it "grows"
    # the warm-up is a share of the run by time, whatever the order the samples come in
    assert proctrend.trend(list(reversed(points)), warmup=0.2) == t


def test_fewer_than_two_samples_give_no_slope_and_say_why():
    none = proctrend.trend([])
    assert none.per_min is None and none.used == 0 and "no samples" in none.note
    one = proctrend.trend([(3.0, 42.0)])
    assert one.per_min is None and one.used == 1 and "2" in one.note and one.mean == 42.0
    # two samples: the first is in the warm-up, which leaves one
    two = proctrend.trend([(0.0, 1.0), (10.0, 2.0)])
    assert two.per_min is None and (two.used, two.dropped) == (1, 1)
    assert proctrend.trend([(0.0, 1.0), (10.0, 2.0)], warmup=0.0).per_min == pytest.approx(6.0)
    same_time = proctrend.trend([(5.0, 1.0), (5.0, 3.0)])
    assert same_time.per_min is None and "same time" in same_time.note
    assert proctrend.verdict(none, one).startswith("no slope")
    with pytest.raises(ValueError):
        proctrend.trend([(0, 1), (1, 2)], warmup=1.0)


def test_the_verdict_reads_the_slopes_and_asserts_nothing():
    flat = proctrend.trend([(t, 1000.0) for t in range(0, 601, 5)])
    assert proctrend.verdict(flat, flat) == "flat"
    growing = proctrend.trend([(t, 100_000 + 100 * t / 60) for t in range(0, 601, 5)])
    leaking = proctrend.trend([(t, 20 + t / 60) for t in range(0, 601, 5)])
    assert proctrend.verdict(growing, flat) == "flat"  # +800 KiB over 8 minutes: 0.8% of RSS
    assert proctrend.verdict(growing, leaking) == "fds grow +8"
    big = proctrend.trend([(t, 100_000 + 1000 * t / 60) for t in range(0, 601, 5)])
    assert proctrend.verdict(big, flat) == "RSS grows +8%"
    assert proctrend.verdict(flat, leaking) == "fds grow +8"


def test_vmrss_is_read_from_proc_status_and_this_process_has_fds():
    status = "Name:\tpython\nVmPeak:\t  999 kB\nVmRSS:\t   12345 kB\nThreads:\t4\n"
    assert proctrend.parse_vmrss_kib(status) == 12345
    assert proctrend.parse_vmrss_kib("Name:\tzombie\nState:\tZ (zombie)\n") is None
    assert proctrend.rss_kib(os.getpid()) > 0
    assert proctrend.open_fds(os.getpid()) >= 3
    gone = 2**22 + 12345  # above the kernel's pid_max
    assert proctrend.rss_kib(gone) is None and proctrend.open_fds(gone) is None
    s = proctrend.sample_procs({"me": os.getpid(), "gone": gone}, 1.5)
    assert set(s.rss_kib) == set(s.fds) == {"me"} and s.t == 1.5


def test_settings_from_flags_then_the_environment_then_the_defaults():
    assert soak.settings({}) == soak.Settings()
    env = {"POKER_SOAK_TABLES": "3", "POKER_SOAK_MINUTES": "0.5", "POKER_SOAK_EVERY": "1"}
    assert soak.settings(env) == soak.Settings(tables=3, minutes=0.5, every=1.0)
    assert soak.settings(env, tables=2, web=False).tables == 2
    assert soak.settings(env, web=False).web is False
    with pytest.raises(ValueError):
        soak.settings({"POKER_SOAK_EVERY": "0"})
    with pytest.raises(ValueError):
        soak.settings({}, tables=-1)


def test_the_report_lists_each_process_services_first_and_nats_last():
    samples = [proctrend.Sample(t, rss_kib={"nats": 20_000 + t, "table": 70_000,
                                            "dealer": 70_000},
                                fds={"nats": 20, "table": 16, "dealer": 16},
                                pids={"nats": 1, "table": 2, "dealer": 3}, commits=10 * t)
               for t in range(0, 61, 5)]
    rows = soak.process_rows(samples)
    assert [r["name"] for r in rows] == ["table", "dealer", "nats"]
    lines = soak.process_table(rows)
    assert lines[2].split()[:2] == ["table", "2"]
    assert lines[-1].split()[:6] == ["nats", "1", "19.5", "19.6", "+60", "+60"]
    summary = soak.summary_line(rows)
    assert "flat at 3 of 3" in summary and "not a test" in summary


def test_the_second_half_slope_tells_a_cache_that_levels_off_from_a_steady_climb():
    """A process that grows for the first third and then stops, beside one that grows all
    along: the same warm-up slope can hide either; the second half's slope tells them apart."""
    def rss(t: int) -> dict[str, float]:
        return {"levels": 20_000 + 60 * min(t, 400), "climbs": 20_000 + 10 * t}
    samples = [proctrend.Sample(t, rss_kib=rss(t), fds={"levels": 20, "climbs": 20},
                                pids={"levels": 1, "climbs": 2}) for t in range(0, 1201, 10)]
    rows = {r["name"]: r for r in soak.process_rows(samples)}
    assert rows["levels"]["rss_late"].per_min == pytest.approx(0)
    assert rows["levels"]["rss_trend"].per_min > 100
    assert rows["climbs"]["rss_late"].per_min == pytest.approx(600)
    assert rows["climbs"]["rss_trend"].per_min == pytest.approx(600)
