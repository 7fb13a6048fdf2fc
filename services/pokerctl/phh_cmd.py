"""`pokerctl phh`: public hand histories (PHH) in and out.

- ``phh replay PATH... [--json]``: replay every hand of the given ``.phh``/``.phhs`` files
  (directories are searched recursively) through the engine and compare the final stacks with
  the file's. One line per hand and a summary; ``--json`` prints one object per hand:
  ``{"path", "index", "variant", "ok", "finishing_stacks", "error"}`` (a file that cannot be
  parsed gives one object with ``index`` and ``variant`` null). Exit 1 if any hand of a variant
  the engine plays is not ok (or a file cannot be parsed); hands of other variants are
  reported as unsupported and do not fail the run.
- ``phh export --game G --structure S --hands N --seed X [--out DIR]``: bots play N hands at one
  table (stacks carried over, the button moving, busted bots rebuying) and each hand is
  written as PHH: to stdout (one ``.phh``, or a ``.phhs`` with ``[1]``, ``[2]`` ... for several
  hands) or to ``DIR/hand-0001.phh`` and so on.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from shared.phh.parse import PHHError, load
from shared.phh.replay import plain, replay

from .exitcodes import FAILED, OK, USAGE

if TYPE_CHECKING:  # (the engine is imported where it is used)
    from shared.poker.options import Stakes

# ``phh export`` imports what only it needs (the bots, the exporter) when it runs.

GAMES = ("holdem", "omaha", "omaha_hilo", "stud", "stud_hilo")
STRUCTURES = ("fixed_limit", "pot_limit", "no_limit")


# --- replay ----------------------------------------------------------------------------------


def phh_files(paths: list[str]) -> list[Path]:
    """The files named, with directories searched recursively for *.phh and *.phhs."""
    out: list[Path] = []
    for name in paths:
        p = Path(name)
        if p.is_dir():
            out += sorted(f for f in p.rglob("*") if f.suffix in (".phh", ".phhs") and f.is_file())
        else:
            out.append(p)
    return out


def replay_rows(paths: list[str]):
    """One row per hand: (json-ready dict, supported)."""
    for path in phh_files(paths):
        try:
            hands = load(path)
        except PHHError as exc:
            yield {"path": str(path), "index": None, "variant": None, "ok": False,
                   "finishing_stacks": None, "error": str(exc)}, True
            continue
        for hh in hands:
            r = replay(hh)
            stacks = [plain(s) for s in r.finishing_stacks] if r.finishing_stacks else None
            yield {"path": str(path), "index": hh.index, "variant": r.variant, "ok": r.ok,
                   "finishing_stacks": stacks, "error": r.error}, r.supported


def run_replay(args: argparse.Namespace) -> int:
    failed = 0
    counts: Counter[tuple[str, str]] = Counter()
    for row, supported in replay_rows(args.paths):
        verdict = "ok" if row["ok"] else ("unsupported" if not supported else "FAIL")
        counts[(row["variant"] or "?", verdict)] += 1
        if supported and not row["ok"]:
            failed += 1
        if args.json:
            print(json.dumps(row))
        else:
            where = f"{row['path']}" + (f" #{row['index']}" if row["index"] else "")
            detail = f": {row['error']}" if row["error"] else ""
            print(f"{where}  {row['variant'] or '?'}  {verdict}{detail}")
    if not args.json:
        total = sum(counts.values())
        by_verdict: Counter[str] = Counter()
        for (_, verdict), n in counts.items():
            by_verdict[verdict] += n
        per_variant = ", ".join(f"{v} {verdict} {n}" for (v, verdict), n in sorted(counts.items()))
        print(f"\n{total} hands: {by_verdict['ok']} ok, {by_verdict['FAIL']} failed, "
              f"{by_verdict['unsupported']} of unsupported variants ({per_variant})")
    return FAILED if failed else OK


# --- export ----------------------------------------------------------------------------------


def stakes(game: str, structure: str) -> Stakes:
    if game.startswith("stud"):
        return {"small_bet": 10, "big_bet": 20}  # ante 1, bring-in 3 by the rule book
    if structure == "fixed_limit":
        return {"small_bet": 2, "big_bet": 4, "small_blind": 1, "big_blind": 2}
    return {"small_blind": 1, "big_blind": 2}


def export_hands(game: str, structure: str, hands: int, seed: int | None,
                 players: int = 6) -> list[str]:
    """Bots play ``hands`` hands at one table; each hand as PHH text."""
    from shared.phh.export import export
    from shared.poker.deck import shuffled
    from shared.poker.events import TableCreated
    from shared.poker.handrunner import Dealer, new_table, random_policy, run_hand
    from shared.poker.options import table_options

    rng = random.Random(seed)
    options = table_options(game, structure, suit_order="bridge", rake_basis_points=0,
                            **stakes(game, structure))
    seats = min(players, options.max_seats)
    unit = max(options.big_blind, options.small_bet)
    table = new_table(options, "export")
    stacks = {s: rng.randint(20, 150) * unit for s in range(1, seats + 1)}
    names = {s: f"bot{s}" for s in stacks}
    texts = []
    button = seats
    for hand_no in range(1, hands + 1):
        for s, st in stacks.items():
            if st == 0:
                stacks[s] = rng.randint(20, 150) * unit
        button = button % seats + 1
        dealer = Dealer(shuffle=lambda cs: shuffled(cs, rng.randrange),
                        salt=lambda: f"{rng.getrandbits(128):032x}")
        table, events = run_hand(table, hand_no, button, sorted(stacks.items()),
                                 random_policy(rng), dealer)
        texts.append(export([TableCreated("export", options), *events], names))
        assert table.hand is not None  # run_hand returns the table with the hand it played
        stacks = {p.seat: p.stack for p in table.hand.players}
    return texts


def run_export(args: argparse.Namespace) -> int:
    from shared.poker.errors import InvalidOptions

    try:
        texts = export_hands(args.game, args.structure, args.hands, args.seed, args.players)
    except InvalidOptions as exc:
        print(f"pokerctl phh export: {exc}", file=sys.stderr)
        return USAGE
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        for i, text in enumerate(texts, start=1):
            (out / f"hand-{i:04d}.phh").write_text(text, encoding="utf-8")
        print(f"{len(texts)} hands written to {out}")
    elif len(texts) == 1:
        sys.stdout.write(texts[0])
    else:
        sys.stdout.write("\n".join(f"[{i}]\n{t}" for i, t in enumerate(texts, start=1)))
    return 0


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("phh", help=help)
    phh = p.add_subparsers(dest="phh_command", required=True)
    r = phh.add_parser("replay", help="replay PHH files through the engine")
    r.add_argument("paths", nargs="+", metavar="PATH", help=".phh/.phhs files or directories")
    r.add_argument("--json", action="store_true", help="one JSON object per hand")
    r.set_defaults(run=run_replay)
    e = phh.add_parser("export", help="bots play hands, written as PHH")
    e.add_argument("--game", choices=GAMES, default="holdem")
    e.add_argument("--structure", choices=STRUCTURES, default=None,
                   help="default: fixed_limit for stud, no_limit otherwise")
    e.add_argument("--hands", type=int, default=1)
    e.add_argument("--seed", type=int, default=None)
    e.add_argument("--players", type=int, default=6, help="bots at the table (default 6)")
    e.add_argument("--out", default=None, help="directory for hand-NNNN.phh files")
    e.set_defaults(run=_export_defaults)


def _export_defaults(args: argparse.Namespace) -> int:
    if args.structure is None:
        args.structure = "fixed_limit" if args.game.startswith("stud") else "no_limit"
    if args.hands < 1:
        print("pokerctl phh export: --hands must be at least 1", file=sys.stderr)
        return USAGE
    return run_export(args)
