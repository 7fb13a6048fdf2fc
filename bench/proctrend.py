"""A process's resident memory and open file descriptors, read from /proc, and their trend over
a run (the least-squares slope after a warm-up), read as a verdict: bench_soak's figures,
pure apart from the reading of /proc."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

#: the share of the run (by time, from the first sample) left out of the slopes
WARMUP = 0.2
#: the verdict calls RSS growth over the measured span below this share of its mean "flat"
RSS_FLAT_SHARE = 0.02
#: and a change in open fds over the measured span below this many
FDS_FLAT = 2.0




def parse_vmrss_kib(status: str) -> int | None:
    """VmRSS (KiB) from the text of /proc/<pid>/status; None without one (a zombie)."""
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])  # "VmRSS:     12345 kB": the kernel's kB are KiB
    return None


def rss_kib(pid: int) -> int | None:
    """Resident memory of process ``pid`` in KiB; None if it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return parse_vmrss_kib(f.read())
    except (FileNotFoundError, ProcessLookupError):
        return None


def open_fds(pid: int) -> int | None:
    """How many file descriptors process ``pid`` holds open; None if it is gone."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except (FileNotFoundError, ProcessLookupError):
        return None


@dataclass
class Sample:
    """One look at every process, ``t`` seconds after the soak started."""
    t: float
    rss_kib: dict[str, int] = field(default_factory=dict)
    fds: dict[str, int] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)
    #: messages in the log's streams (commits); None: the count could not be read
    commits: int | None = None


def sample_procs(pids: Mapping[str, int], t: float) -> Sample:
    """RSS and open fds of every process in ``pids`` (those gone are left out)."""
    s = Sample(t, pids=dict(pids))
    for name, pid in pids.items():
        rss, fds = rss_kib(pid), open_fds(pid)
        if rss is not None and fds is not None:
            s.rss_kib[name], s.fds[name] = rss, fds
    return s


# --- the figures (pure) --------------------------------------------------------------------


@dataclass(frozen=True)
class Trend:
    """The least-squares line over a series' samples after the warm-up."""
    #: change per minute (the series' unit); None: no line (``note`` says why)
    per_min: float | None
    #: samples the line was fitted to, and the warm-up's samples left out
    used: int
    dropped: int
    note: str = ""
    #: minutes between the first and last sample used, and their mean value
    span_min: float = 0.0
    mean: float = float("nan")


def trend(points: Iterable[tuple[float, float]], warmup: float = WARMUP) -> Trend:
    """The slope per minute of the least-squares line through ``points`` (seconds, value),
    once the samples of the first ``warmup`` share of the run (by time, from the first
    sample to the last) are left out. Fewer than 2 samples left (or all at one time): no
    slope, ``per_min`` None and ``note`` saying why."""
    if not 0 <= warmup < 1:
        raise ValueError(f"the warm-up is a share of the run in [0, 1), not {warmup!r}")
    pts = sorted((float(t), float(v)) for t, v in points)
    if not pts:
        return Trend(None, 0, 0, "no samples")
    cut = pts[0][0] + warmup * (pts[-1][0] - pts[0][0])
    kept = [p for p in pts if p[0] >= cut]
    dropped = len(pts) - len(kept)
    if len(kept) < 2:
        return Trend(None, len(kept), dropped,
                     f"{len(kept)} sample(s) after the warm-up: a slope needs 2",
                     mean=kept[0][1] if kept else float("nan"))
    tm = sum(t for t, _ in kept) / len(kept)
    vm = sum(v for _, v in kept) / len(kept)
    sxx = sum((t - tm) ** 2 for t, _ in kept)
    span = (kept[-1][0] - kept[0][0]) / 60
    if sxx == 0:
        return Trend(None, len(kept), dropped, "every sample at the same time: no slope",
                     mean=vm)
    sxy = sum((t - tm) * (v - vm) for t, v in kept)
    return Trend(sxy / sxx * 60, len(kept), dropped, span_min=span, mean=vm)


def series(samples: Sequence[Sample], name: str, what: str) -> list[tuple[float, float]]:
    """(t, value) of process ``name`` over ``samples``; ``what``: "rss_kib" or "fds"."""
    return [(s.t, getattr(s, what)[name]) for s in samples if name in getattr(s, what)]


def verdict(rss: Trend, fds: Trend) -> str:
    """A reading of one process's slopes, not a test: "flat", else what moved, by how much
    over the span measured (RSS as a share of its mean, fds as a count)."""
    if rss.per_min is None and fds.per_min is None:
        return f"no slope ({rss.note or fds.note})"
    words = []
    if rss.per_min is not None:
        change = rss.per_min * rss.span_min
        if rss.mean > 0 and abs(change) >= RSS_FLAT_SHARE * rss.mean:
            words.append(f"RSS {'grows' if change > 0 else 'falls'} "
                         f"{change / rss.mean:+.0%}")
    if fds.per_min is not None:
        change = fds.per_min * fds.span_min
        if abs(change) >= FDS_FLAT:
            words.append(f"fds {'grow' if change > 0 else 'fall'} {change:+.0f}")
    return ", ".join(words) or "flat"
