"""Hand evaluator throughput: ours against treys, pokerkit (and eval7 raw, phevaluator if
installed) on the same pre-generated random hands, in this process.

Each figure is the median of several repeats; each repeat evaluates hands for about
``seconds / REPEATS``. Ratios are against ours. Goals: 7-card high >= 1,000,000/s; Omaha
high + 8-or-better low for one hand >= 100,000/s.
"""

from __future__ import annotations

import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from shared.poker.cards import DECK, cards_str
from shared.poker.evaluator import EVAL7_CARDS, high_value, omaha_high_value, omaha_low8_value

REPEATS = 5
HANDS = 20_000


def _rate(loop: Callable[[list], None], hands: list, seconds: float) -> float:
    """Median evaluations per second over REPEATS timed runs of ``loop`` over ``hands``."""
    rates = []
    for _ in range(REPEATS):
        done, start = 0, time.perf_counter()
        while True:
            loop(hands)
            done += len(hands)
            elapsed = time.perf_counter() - start
            if elapsed >= seconds / REPEATS:
                break
        rates.append(done / elapsed)
    return statistics.median(rates)


def _deals(n: int, size: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    return [tuple(rng.sample(DECK, size)) for _ in range(n)]


def _pk_cards(cs) -> tuple:
    from pokerkit import Card

    return tuple(Card.parse(cards_str(cs)))


def _holdem_runners(deals: list[tuple]) -> list[tuple[str, Callable, list]]:
    """(name, loop, hands) for 7-card high evaluation; hands pre-converted for each library."""

    def ours(hands):
        for h in hands:
            high_value(h)

    runners: list[tuple[str, Callable, list]] = [("ours high_value (eval7 inside)", ours, deals)]
    import eval7

    def eval7_raw(hands, ev=eval7.evaluate):
        for h in hands:
            ev(h)

    e7deals = [[EVAL7_CARDS[c] for c in d] for d in deals]
    runners.append(("eval7.evaluate, cards pre-converted", eval7_raw, e7deals))
    for optional in (_treys_runner, _phevaluator_runner, _pokerkit_runner):
        runner = optional(deals)
        if runner is not None:  # its library is installed
            runners.append(runner)
    return runners



def _treys_runner(deals: list[tuple]) -> tuple[str, Callable, list] | None:
    try:
        from treys import Card as TCard
        from treys import Evaluator
    except ImportError:
        return None
    t = Evaluator()

    def treys_loop(hands, ev=t.evaluate):
        for board, hole in hands:
            ev(board, hole)

    tc = {c: TCard.new(str(c)) for c in DECK}
    tdeals = [([tc[c] for c in d[2:]], [tc[c] for c in d[:2]]) for d in deals]
    return ("treys Evaluator.evaluate", treys_loop, tdeals)


def _phevaluator_runner(deals: list[tuple]) -> tuple[str, Callable, list] | None:
    try:
        from phevaluator import evaluate_cards
    except ImportError:
        return None

    def phe(hands, ev=evaluate_cards):
        for h in hands:
            ev(*h)

    return ("phevaluator evaluate_cards (C)", phe, [tuple(map(int, d)) for d in deals])


def _pokerkit_runner(deals: list[tuple]) -> tuple[str, Callable, list] | None:
    try:
        from pokerkit import StandardHighHand
    except ImportError:
        return None

    def pk(hands, from_game=StandardHighHand.from_game):
        for hole, board in hands:
            from_game(hole, board)

    # pokerkit is ~200x slower: a prefix of the same hands keeps a repeat short
    pdeals = [(_pk_cards(d[:2]), _pk_cards(d[2:])) for d in deals[:500]]
    return ("pokerkit StandardHighHand.from_game", pk, pdeals)


def _omaha_runners(deals: list[tuple]) -> list[tuple[str, Callable, list]]:
    """(name, loop, hands) for Omaha: high and 8-or-better low for each hand."""

    def ours(hands):
        for hole, board in hands:
            omaha_high_value(hole, board)
            omaha_low8_value(hole, board)

    split = [(d[:4], d[4:]) for d in deals]
    runners: list[tuple[str, Callable, list]] = [("ours omaha high + low8", ours, split)]
    try:
        from pokerkit import OmahaEightOrBetterLowHand, OmahaHoldemHand
    except ImportError:
        pass
    else:

        def pk(hands, hi=OmahaHoldemHand.from_game, lo=OmahaEightOrBetterLowHand.from_game_or_none):
            for hole, board in hands:
                hi(hole, board)
                lo(hole, board)

        pdeals = [(_pk_cards(h), _pk_cards(b)) for h, b in split[:200]]
        runners.append(("pokerkit OmahaHoldemHand + OmahaEightOrBetterLowHand", pk, pdeals))
    try:
        from phevaluator import evaluate_omaha_cards
    except ImportError:
        pass
    else:

        def phe(hands, ev=evaluate_omaha_cards):
            for h in hands:
                ev(*h)

        # phevaluator has no low: its row is high only (board first, then the 4 hole cards)
        phdeals = [tuple(map(int, b + h)) for h, b in split]
        runners.append(("phevaluator evaluate_omaha_cards (C, high only)", phe, phdeals))
    return runners


def run(seconds: float = 2.0) -> list[dict]:
    """Measure every runner for about ``seconds`` each; one dict per row of the table."""
    rows = []
    for bench, runners in (
        ("7-card high", _holdem_runners(_deals(HANDS, 7, 1))),
        ("Omaha high+low", _omaha_runners(_deals(HANDS, 9, 2))),
    ):
        ours = None
        for name, loop, hands in runners:
            rate = _rate(loop, hands, seconds)
            ours = ours or rate
            row = {"benchmark": bench, "impl": name, "evals_per_s": rate, "vs_ours": rate / ours}
            rows.append(row)
    return rows


def import_seconds() -> dict[str, float]:
    """Import cost in a fresh interpreter: eval7 alone, then the evaluator's own tables."""
    code = (
        "import time; t = time.perf_counter(); import eval7; u = time.perf_counter();"
        "import shared.poker.evaluator; v = time.perf_counter(); print(u - t, v - u)"
    )
    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    out.check_returncode()
    eval7_s, tables_s = map(float, out.stdout.split())
    return {"eval7": eval7_s, "evaluator": tables_s}


def main(seconds: float = 2.0) -> None:
    t0 = time.perf_counter()
    rows = run(seconds)
    print(f"{'benchmark':16} {'implementation':52} {'evals/s':>12} {'vs ours':>8}")
    for r in rows:
        print(f"{r['benchmark']:16} {r['impl']:52} {r['evals_per_s']:12,.0f} {r['vs_ours']:8.3g}")
    print(f"(median of {REPEATS} repeats, ~{seconds:g}s per row; {time.perf_counter() - t0:.1f}s)")
    imp = import_seconds()
    print(f"import: eval7 {imp['eval7'] * 1000:.0f} ms, then shared.poker.evaluator tables "
          f"{imp['evaluator'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
