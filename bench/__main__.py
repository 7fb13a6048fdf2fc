"""`make bench`: run every benchmark and print its figures. Nothing is asserted: these
machines are noisy, so each benchmark reports medians of repeats and ratios against a
baseline measured in the same process."""

from __future__ import annotations

import argparse
import importlib

BENCHMARKS = ("bench.bench_evaluator", "bench.bench_hands", "bench.bench_values",
              "bench.bench_services", "bench.bench_audit",
              "bench.bench_cluster",
              "bench.bench_web",
              "bench.bench_phh", "bench.bench_grpc", "bench.bench_watchers",
              "bench.bench_idle", "bench.bench_capacity")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("only", nargs="*", help="benchmark modules to run (default: all)")
    args = parser.parse_args()
    for name in args.only or BENCHMARKS:
        module = importlib.import_module(name if "." in name else f"bench.{name}")
        print(f"\n== {name}")
        module.main(seconds=args.seconds) if hasattr(module, "main") else module.run(args.seconds)


if __name__ == "__main__":
    main()
