"""The codec's decoders (shared/infra/codec.py): do the generated ones pay for themselves?

Every event decoder follows its class's plan (``codec.plan``). It can run as a loop over the
plan's fields (``codec._interpreted_decoder``) or as the plan unrolled into straight-line code
by ``exec`` (``codec._generated_decoder``); this measures both, in this process, on the same
envelopes: the commits of a few hundred hands of every game of the mixed sample (hold'em NL
and FL, Omaha PL, Omaha hi-lo FL, stud, stud hi-lo; time-outs, leavers and newcomers), sealed
as the dealer seals them.

1. decode: ``decode_body`` of every envelope, without a keyring (what the services' fold
   reads: sealed cards as unknown) and with the compliance keyring (what the audit reads);
2. fold: ``fold_commit`` of every commit (parse, chain check, decode, apply), as a table is
   loaded;
3. audit: ``audit_table`` of every log (parse, decode, re-decide, check), as bench_audit does.

Runs alternate between the two variants; each figure is the median of the runs, and the ratio
is generated / interpreted time (below 1: the generated decoders are faster).

    .venv/bin/python -m bench bench_codec
    .venv/bin/python -m bench.bench_codec --hands 600 --runs 15
"""

from __future__ import annotations

import argparse
import statistics
import time

from shared.audit import audit_table
from shared.audit.sample import MIXED, chain, play_decisions, sample_keyring
from shared.infra import codec
from shared.infra.commits import parse_commit
from shared.infra.repository import LoadedTable, fold_commit
from shared.poker.options import table_options

VARIANTS = {"interpreted": codec._interpreted_decoder, "generated": codec._generated_decoder}


def build(hands: int) -> list[tuple[str, list]]:
    """One table per game of the mixed sample, ``hands`` hands in all."""
    per = max(1, hands // len(MIXED))
    logs = []
    for i, (game, structure, stakes) in enumerate(MIXED):
        options = table_options(game, structure, **stakes)
        tid = f"codec-{i}"
        logs.append((tid, list(chain(tid, play_decisions(tid, options, per, seed=i, churn=0.05),
                                     options=options))))
    return logs


def _decode_all(envelopes_by_table: list[list], keyed: bool) -> None:
    decode = codec.decode_body
    for envelopes in envelopes_by_table:
        keyring = sample_keyring() if keyed else None  # learns each hand's key as it goes
        for env in envelopes:
            decode(env, keyring)


def _fold_all(logs: list[tuple[str, list]]) -> None:
    for _, stored in logs:
        lt = LoadedTable()
        for s in stored:
            lt = fold_commit(lt, s)


def _audit_all(logs: list[tuple[str, list]]) -> None:
    for tid, stored in logs:
        assert audit_table(tid, stored, sample_keyring()).ok


def _timed(work, runs: int) -> dict[str, float]:
    """Median seconds of ``work()`` per variant, the variants alternating run by run."""
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    for decoder in VARIANTS.values():  # a warm-up run each: every decoder built
        codec._decoder = decoder
        work()
    for _ in range(runs):
        for name, decoder in VARIANTS.items():
            codec._decoder = decoder
            start = time.perf_counter()
            work()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def measure(hands: int = 400, runs: int = 21) -> list[tuple[str, int, dict[str, float]]]:
    """(what, events, median seconds per variant) of each measurement."""
    logs = build(hands)
    envelopes = [[p.envelope(k) for s in stored for p in [parse_commit(s.data)]
                  for k in range(len(p))] for _, stored in logs]
    events = sum(len(e) for e in envelopes)
    chosen = codec._decoder
    try:
        return [
            ("decode, no keyring", events, _timed(lambda: _decode_all(envelopes, False), runs)),
            ("decode, compliance keyring", events,
             _timed(lambda: _decode_all(envelopes, True), runs)),
            ("fold_commit", events, _timed(lambda: _fold_all(logs), runs)),
            ("audit_table", events, _timed(lambda: _audit_all(logs), max(3, runs // 3))),
        ]
    finally:
        codec._decoder = chosen


def report(results) -> None:
    for what, events, med in results:
        i, g = med["interpreted"], med["generated"]
        print(f"{what:28} {events:7} events  interpreted {i * 1e3:8.1f} ms "
              f"({i / events * 1e6:5.2f} us/event)  generated {g * 1e3:8.1f} ms "
              f"({g / events * 1e6:5.2f} us/event)  generated/interpreted {g / i:.3f}")


def main(seconds: float = 2.0) -> None:
    # ``seconds`` (bench/__main__) sets the number of runs: about that long per measurement
    report(measure(runs=max(5, int(seconds * 4))))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.bench_codec")
    parser.add_argument("--hands", type=int, default=400)
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    report(measure(args.hands, args.runs))
