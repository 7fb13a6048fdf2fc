"""`pokerctl phh replay` as a whole process against pokerkit replaying the same files in one
process.

    .venv/bin/python -m bench.bench_phh [--hands 3000] [--repeats 3] [--seed 13] [--before DIR]

Picks ``--hands`` hands (seeded, with replacement) from the PHH corpus (``tests/data/phh``
beside the repository), an equal share from each of the six variants the engine plays (NT,
FT, PO, FO/8, F7S, F7S/8), and writes each as a ``.phh`` file in a temporary directory. Then,
in alternate runs, median of ``--repeats`` each:

- ours: ``.venv/bin/pokerctl phh replay DIR`` as a subprocess, wall time of the whole process
  (interpreter start, imports, parsing, replaying, printing one line a hand);
- pokerkit: in this process (already imported), every file parsed with
  ``pokerkit.HandHistory.load`` and played to the end (``for state in hand_history``).

The ratio is pokerkit's time over ours (the goal of issue 13: >= 10). Each row also gives
CPU seconds (the child's user + system time; this process's for pokerkit), steadier than
wall time on a shared machine. ``--before DIR``: also time the same command on an earlier
copy of the code (``DIR`` holding its ``services/`` and ``shared/``, put first on
``PYTHONPATH``), in the same alternation, for before/after figures. ``python -m bench``
runs it with the defaults (its ``--seconds`` does not apply: the hands set the work).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "data" / "phh"
VARIANTS = ("NT", "FT", "PO", "FO/8", "F7S", "F7S/8")
HANDS = 3000
REPEATS = 3
SEED = 13


def pick(hands: int, seed: int) -> list[Path]:
    """``hands`` corpus files, an equal share (seeded, with replacement) per variant."""
    by_variant: dict[str, list[Path]] = {v: [] for v in VARIANTS}
    for f in sorted(CORPUS.rglob("*.phh")):
        variant = tomllib.loads(f.read_text(encoding="utf-8")).get("variant")
        if variant in by_variant:
            by_variant[variant].append(f)
    rng = random.Random(seed)
    picked: list[Path] = []
    for i, variant in enumerate(VARIANTS):
        share = hands // len(VARIANTS) + (i < hands % len(VARIANTS))
        picked += rng.choices(by_variant[variant], k=share)
    rng.shuffle(picked)
    return picked


def write(files: list[Path], out: Path) -> list[Path]:
    """Each picked hand as ``out/NNNN.phh``; the written paths."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for i, f in enumerate(files, start=1):
        dest = out / f"{i:04d}.phh"
        dest.write_bytes(f.read_bytes())
        written.append(dest)
    return written


def pokerctl_seconds(hands_dir: Path, code: Path | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of ``pokerctl phh replay hands_dir`` (with
    ``code`` first on the path)."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(code), env.get("PYTHONPATH")]))
    command = [str(Path(sys.executable).parent / "pokerctl"), "phh", "replay", str(hands_dir)]
    cpu = _children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    cpu = _children_cpu() - cpu
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: "
                           f"{done.stderr or done.stdout.splitlines()[-1:]}")
    return elapsed, cpu


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pokerkit_seconds(files: list[Path]) -> tuple[float, float, int]:
    """Wall and CPU seconds for pokerkit to load and play every file; how many end with the
    file's finishing stacks (a check, not timed apart)."""
    from pokerkit import HandHistory

    matched = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pokerkit warns about user fields without '_'
        start, cpu = time.perf_counter(), time.process_time()
        for f in files:
            with open(f, "rb") as fp:
                hh = HandHistory.load(fp)
            state = None
            for state in hh:  # noqa: B007 - the last state is the hand's end
                pass
            assert state is not None and not state.status, f"{f}: pokerkit did not finish"
            matched += list(state.stacks) == list(hh.finishing_stacks or ())
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    return elapsed, cpu, matched


def run(hands: int = HANDS, repeats: int = REPEATS, seed: int = SEED,
        before: Path | None = None) -> dict:
    picked = pick(hands, seed)
    with tempfile.TemporaryDirectory(prefix="bench-phh-") as tmp:
        hands_dir = Path(tmp) / "hands"
        files = write(picked, hands_dir)
        # warm-up: byte-compile, fill the page cache, check that every hand replays
        pokerctl_seconds(hands_dir)
        if before is not None:
            pokerctl_seconds(hands_dir, before)
        runs: dict[str, list[tuple[float, float]]] = {"ours": [], "before": [], "pokerkit": []}
        matched = 0
        for _ in range(repeats):
            runs["ours"].append(pokerctl_seconds(hands_dir))
            if before is not None:
                runs["before"].append(pokerctl_seconds(hands_dir, before))
            wall, cpu, matched = pokerkit_seconds(files)
            runs["pokerkit"].append((wall, cpu))
    return {"hands": len(files), **runs, "pokerkit_matched": matched}


def report(r: dict) -> None:
    n = r["hands"]
    rows = [("pokerctl phh replay (subprocess)", "ours"),
            ("pokerctl phh replay, --before code", "before"),
            ("pokerkit load + play (in process)", "pokerkit")]
    wall = {key: statistics.median(w for w, _ in r[key]) for _, key in rows if r[key]}
    cpu = {key: statistics.median(c for _, c in r[key]) for _, key in rows if r[key]}
    print(f"{n} hands, {n // len(VARIANTS)} of each of {', '.join(VARIANTS)}; medians of "
          f"{len(r['ours'])} alternate runs")
    print(f"{'':36} {'wall s':>7} {'hands/s':>8} {'cpu s':>7}   wall runs")
    for name, key in rows:
        if key in wall:
            each = " ".join(f"{w:.2f}" for w, _ in r[key])
            print(f"{name:36} {wall[key]:7.2f} {n / wall[key]:8,.0f} {cpu[key]:7.2f}   {each}")
    for a, b in (("pokerkit", "ours"), ("pokerkit", "before"), ("before", "ours")):
        if a in wall and b in wall:
            goal = " (goal >= 10x)" if (a, b) == ("pokerkit", "ours") else ""
            print(f"{a} / {b}: wall {wall[a] / wall[b]:.2f}x, cpu {cpu[a] / cpu[b]:.2f}x{goal}")
    print(f"(pokerkit ends {r['pokerkit_matched']} of {n} hands with the file's "
          f"finishing_stacks; ours checks every hand and exits 0)")


def main(seconds: float = 2.0, argv: list[str] | None = None) -> None:
    """``seconds`` (from ``python -m bench``) is not used: the hand count sets the work."""
    parser = argparse.ArgumentParser(prog="python -m bench.bench_phh")
    parser.add_argument("--hands", type=int, default=HANDS)
    parser.add_argument("--repeats", type=int, default=REPEATS)
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--before", type=Path, default=None,
                        help="a directory with an earlier services/ and shared/ to time too")
    args = parser.parse_args(argv if argv is not None else [])
    t0 = time.perf_counter()
    report(run(args.hands, args.repeats, args.seed, args.before))
    print(f"({time.perf_counter() - t0:.1f}s)")


if __name__ == "__main__":
    main(argv=sys.argv[1:])
