"""What the generated code of shared/poker/evolve.py buys: the core's value classes with and
without it, on the same hands, in one process.

Variants (switched by putting the dataclass-made methods back on the classes, so the very same
code runs; see :func:`use`):

* a: as built (whatever evolve.py generates today)
* b: the dataclass's own ``__init__`` (``cls.__dataclass_init__``, kept by evolve.py)
* c: ``evolve`` is ``dataclasses.replace``
* d: both b and c
* e: ``evolve`` generated without the twin class (each slot written through its descriptor)

Workloads (a fixed, seeded set, the same in every variant and round):

* hands: ``driver.run_hand`` plays HANDS hands of each of hold'em no limit, Omaha pot limit
  and stud fixed limit, six players, ``random_policy`` on a seeded ``random.Random`` and a
  seeded dealer (folds, raises, all-ins, showdowns);
* fold: ``fold.fold`` of every one of those hands' events, from the empty table;
* audit: ``shared.audit.audit_table`` of sample logs of the same three games (AUDIT_HANDS
  hands each: decoding, re-deciding and folding every commit).

Before timing, every variant must produce the same events and final tables as (a). Each round
runs the variants one after the other (a b c d e, a b c d e, ...), ROUNDS rounds; a measurement is
process CPU time (this machine is shared: CPU time is steadier than wall time) of enough passes
over the set to take about ``seconds / ROUNDS``. Reported: the median time per pass of each
variant, its spread (min..max over the rounds), and the median of the per-round ratios to (a)
(> 1: slower than as built). The load average before and after says how busy the machine was.

    .venv/bin/python -m bench bench_values
    .venv/bin/python -m bench.bench_values --seconds 4 --rounds 9
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence

from shared.audit import audit_table
from shared.audit.sample import chain, play_decisions, sample_keyring, seeded_dealer
from shared.poker import betting, clock, events, state, steps
from shared.poker.evolve import evolver
from shared.poker.fold import fold
from shared.poker.handrunner import new_table, random_policy, run_hand
from shared.poker.options import Stakes, TableOptions, table_options

ROUNDS = 9
HANDS = 40  # per game
AUDIT_HANDS = 30  # per game
PLAYERS = 6
GAMES: tuple[tuple[str, str, str, Stakes], ...] = (
    ("NLHE", "holdem", "no_limit", {"small_blind": 1, "big_blind": 2}),
    ("PLO", "omaha", "pot_limit", {"small_blind": 1, "big_blind": 2}),
    ("FL stud", "stud", "fixed_limit", {"small_bet": 10}),
)
VARIANTS = ("a as built", "b dataclass __init__", "c replace as evolve", "d both (b+c)",
            "e evolve without twin")
#: (the dataclass's __init__, evolve: "built", "replace" or "no twin")
_PLAIN = {"a as built": (False, "built"), "b dataclass __init__": (True, "built"),
          "c replace as evolve": (False, "replace"), "d both (b+c)": (True, "replace"),
          "e evolve without twin": (False, "no twin")}
MODULES = (events, state, steps, betting, clock)


# --- switching the generated methods -----------------------------------------------------------

def _value_classes() -> list[type]:
    out = []
    for m in MODULES:
        for obj in vars(m).values():
            if (isinstance(obj, type) and obj.__module__ == m.__name__
                    and dataclasses.is_dataclass(obj)):
                out.append(obj)
    return out


_BUILT: dict[type, dict[str, object]] = {
    cls: {k: vars(cls)[k] for k in ("__init__", "__dataclass_init__", "evolve") if k in vars(cls)}
    for cls in _value_classes()
}
_NO_TWIN = {cls: evolver(cls, twin=False) for cls, built in _BUILT.items() if "evolve" in built}


def use(variant: str) -> None:
    """Put the variant's methods on every value class: the generated ones (as built), the
    dataclass's (``__dataclass_init__``, ``dataclasses.replace``) or an ``evolve`` generated
    without the twin."""
    plain_init, evolve = _PLAIN[variant]
    for cls, built in _BUILT.items():
        if "__dataclass_init__" in built:
            _put(cls, "__init__", built["__dataclass_init__" if plain_init else "__init__"])
        if "evolve" in built:
            _put(cls, "evolve", {"built": built["evolve"], "replace": dataclasses.replace,
                                 "no twin": _NO_TWIN[cls]}[evolve])


def _put(cls: type, name: str, method: object) -> None:
    """Swap a method of a value class (the variants this benchmark compares)."""
    setattr(cls, name, method)


def generated() -> tuple[int, int]:
    """(classes whose ``__init__`` is generated, classes with a generated ``evolve``)."""
    return (sum("__dataclass_init__" in b for b in _BUILT.values()),
            sum("evolve" in b and b["evolve"] is not dataclasses.replace
                for b in _BUILT.values()))


# --- workloads ------------------------------------------------------------------------------

def _options(game: str, structure: str, stakes: Stakes) -> TableOptions:
    return table_options(game, structure, **stakes)


def play_all() -> list[tuple[TableOptions, list[object], state.TableState]]:
    """Every hand of the set: (options, events, table after the hand)."""
    out: list[tuple[TableOptions, list[object], state.TableState]] = []
    for g, (_, game, structure, stakes) in enumerate(GAMES):
        options = _options(game, structure, stakes)
        table = new_table(options)
        high = 200 * (options.big_blind or options.small_bet)
        for k in range(HANDS):
            rng = random.Random(1000 * g + k)
            stacks = [(s, rng.randrange(high // 4, high + 1)) for s in range(1, PLAYERS + 1)]
            after, evs = run_hand(table, k + 1, 1 + k % PLAYERS, stacks, random_policy(rng),
                                  seeded_dealer(rng))
            out.append((options, evs, after))
    return out


def fold_all(hands: Sequence[tuple[TableOptions, list[object], object]]) -> list[object]:
    return [fold(evs, new_table(options)) for options, evs, _ in hands]


def audit_logs() -> list[tuple[str, list]]:
    logs = []
    for g, (_, game, structure, stakes) in enumerate(GAMES):
        options = _options(game, structure, stakes)
        tid = f"bench-values-{g}"
        logs.append((tid, list(chain(tid, play_decisions(tid, options, AUDIT_HANDS, seed=g),
                                     options=options))))
    return logs


def audit_all(logs: list[tuple[str, list]]) -> list[int]:
    out = []
    for tid, stored in logs:
        a = audit_table(tid, stored, sample_keyring())
        if not a.ok:
            raise AssertionError(f"{tid}: {a.failure}")
        out.append(a.events)
    return out


def check_same(hands, logs) -> None:
    """Every variant plays, folds and audits to the same result as (a)."""
    use(VARIANTS[0])
    want = ([(evs, after) for _, evs, after in hands], fold_all(hands), audit_all(logs))
    for v in VARIANTS[1:]:
        use(v)
        played = play_all()
        got = ([(evs, after) for _, evs, after in played], fold_all(hands), audit_all(logs))
        if got != want:
            raise AssertionError(f"variant {v!r} does not reproduce the hands of (a)")
    use(VARIANTS[0])


def _cpu(fn: Callable[[], object], passes: int) -> float:
    """CPU seconds per pass of ``fn``."""
    start = time.process_time()
    for _ in range(passes):
        fn()
    return (time.process_time() - start) / passes


def run(seconds: float = 2.0, rounds: int = ROUNDS) -> dict:
    hands = play_all()
    logs = audit_logs()
    check_same(hands, logs)
    workloads: dict[str, Callable[[], object]] = {
        "hands": play_all, "fold": lambda: fold_all(hands), "audit": lambda: audit_all(logs)}
    per = seconds / rounds
    passes = {name: max(1, round(per / _cpu(fn, 1))) for name, fn in workloads.items()}
    times: dict[str, dict[str, list[float]]] = {w: {v: [] for v in VARIANTS} for w in workloads}
    load_before = os.getloadavg()
    wall = time.perf_counter()
    for _ in range(rounds):
        for v in VARIANTS:
            use(v)
            for name, fn in workloads.items():
                times[name][v].append(_cpu(fn, passes[name]))
    use(VARIANTS[0])
    return {
        "times": times, "passes": passes, "rounds": rounds,
        "events": sum(len(evs) for _, evs, _ in hands),
        "audit_events": sum(audit_all(logs)),
        "load": (load_before, os.getloadavg()), "wall": time.perf_counter() - wall,
        "cpus": os.cpu_count(),
    }


def main(seconds: float = 2.0, rounds: int = ROUNDS) -> None:
    fast_inits, evolvers = generated()
    r = run(seconds, rounds)
    base = VARIANTS[0]
    print(f"{len(GAMES)} games x {HANDS} hands ({r['events']:,} events) played and folded; "
          f"audit: {len(GAMES)} logs x {AUDIT_HANDS} hands ({r['audit_events']:,} events)")
    print(f"generated: __init__ on {fast_inits} classes, evolve on {evolvers}")
    print(f"{'workload':8} {'variant':22} {'ms/pass':>9} {'min..max':>17} {'ratio to a':>11}")
    for name, by_variant in r["times"].items():
        for v in VARIANTS:
            t = by_variant[v]
            ratio = statistics.median(x / y for x, y in zip(t, by_variant[base], strict=True))
            print(f"{name:8} {v:22} {statistics.median(t) * 1e3:9.1f} "
                  f"{f'{min(t) * 1e3:.1f}..{max(t) * 1e3:.1f}':>17} {ratio:10.3f}x")
    (b1, b5, _), (a1, a5, _) = r["load"]
    print(f"(process CPU time, median of {r['rounds']} interleaved rounds a b c d e, passes per "
          f"measurement {r['passes']}; ratio = median of per-round ratios, > 1 is slower; "
          f"load average 1/5 min {b1:.2f}/{b5:.2f} before, {a1:.2f}/{a5:.2f} after on "
          f"{r['cpus']} CPUs; {r['wall']:.1f}s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.bench_values")
    parser.add_argument("--seconds", type=float, default=2.0,
                        help="CPU time per variant and workload, over all rounds")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    args = parser.parse_args()
    main(args.seconds, args.rounds)
