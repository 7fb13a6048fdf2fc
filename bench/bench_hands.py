"""Whole hands per second: our engine against pokerkit 0.7.7 on the same scripted hands.

Six players, everyone checks or calls (and brings in) to the showdown, for NT, FT, PO, FO/8,
F7S and F7S/8. Both engines play the SAME hands: one list of pre-generated decks, dealt in
the same order (our deck order is pokerkit's dealing order when its player 0 is the seat left
of the button), and the first hands are checked to end with the same stacks in both.

* ours: ``driver.run_hand`` with ``check_call_policy`` and a ``Dealer`` whose shuffle returns
  the pre-generated deck: a realistic full hand (deck commitment with a fresh salt, forced bets,
  every event folded, showdown, rake step, award, deck reveal), table options as a table would
  have them (rake 0 so the stacks can be compared with pokerkit).
* pokerkit: a new ``State`` per hand in automatic mode except dealing (every card dealt
  explicitly from the same deck) and the players' check/call/bring-in.

Rates are hands per second of process CPU time (this machine is shared and noisy: CPU time is
far steadier than wall time), the median of REPEATS rounds in which each engine plays for about
``seconds / REPEATS`` in turn; the ratio is the median of the per-round ratios. Goals (the
issue): at least 20x pokerkit on NT and 50x on FO/8.

``python -m bench.bench_hands [--seconds S] [--profile NT FO/8]`` prints the table, or a
cProfile of our engine on the given games.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Unpack

from shared.poker.cards import DECK, Card
from shared.poker.events import HandEnded
from shared.poker.handrunner import Dealer, check_call_policy, new_table, run_hand
from shared.poker.options import Stakes, TableOptions, table_options

REPEATS = 5
DECKS = 200
PLAYERS = 6
STACK = 10_000
SEATS = list(range(1, PLAYERS + 1))
BUTTON = PLAYERS  # seat 1 is left of the button: pokerkit's player 0
GAMES = ("NT", "FT", "PO", "FO/8", "F7S", "F7S/8")
GOALS = {"NT": 20.0, "FO/8": 50.0}


def game_options(game: str) -> TableOptions:
    if game == "NT":
        return _options("holdem", "no_limit", small_blind=1, big_blind=2)
    if game == "PO":
        return _options("omaha", "pot_limit", small_blind=1, big_blind=2)
    if game == "FT":
        return _options("holdem", "fixed_limit", small_bet=2, big_bet=4)
    if game == "FO/8":
        return _options("omaha_hilo", "fixed_limit", small_bet=2, big_bet=4)
    if game == "F7S":
        return _options("stud", "fixed_limit", small_bet=10, big_bet=20, ante=1, bring_in=3)
    if game == "F7S/8":
        return _options("stud_hilo", "fixed_limit", small_bet=10, big_bet=20, ante=1,
                        bring_in=3)
    raise ValueError(game)


def _options(game: str, structure: str, **stakes: Unpack[Stakes]) -> TableOptions:
    """The options every game is measured at: bridge suit order, no rake."""
    return table_options(game, structure, suit_order="bridge", rake_basis_points=0, **stakes)


def decks(n: int = DECKS, seed: int = 7) -> list[tuple[Card, ...]]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        d = list(DECK)
        rng.shuffle(d)
        out.append(tuple(d))
    return out


# --- our engine ------------------------------------------------------------------------------

def ours_runner(game: str) -> Callable[[tuple[Card, ...]], tuple[int, ...]]:
    """One full hand on a fixed deck; returns the final stacks (seat order)."""
    table = new_table(game_options(game))
    stacks = [(s, STACK) for s in SEATS]

    def play(deck: tuple[Card, ...]) -> tuple[int, ...]:
        _, events = run_hand(table, 1, BUTTON, stacks, check_call_policy,
                             Dealer(shuffle=lambda cards: deck))
        return _stacks(events)

    return play


def _stacks(events) -> tuple[int, ...]:
    return next(tuple(s.stack for s in e.stacks) for e in reversed(events)
                if isinstance(e, HandEnded))


# --- pokerkit ------------------------------------------------------------------------------

def pokerkit_runner(game: str) -> Callable[[tuple[Card, ...]], tuple[int, ...]]:
    """One hand on pokerkit with the same deck; returns the final stacks (seat order)."""
    import pokerkit as pk

    auto = (pk.Automation.ANTE_POSTING, pk.Automation.BET_COLLECTION,
            pk.Automation.BLIND_OR_STRADDLE_POSTING,
            pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING, pk.Automation.HAND_KILLING,
            pk.Automation.CHIPS_PUSHING, pk.Automation.CHIPS_PULLING)
    o = game_options(game)
    mode = pk.Mode.TOURNAMENT
    make: Callable[[tuple[int, ...], int], pk.State]
    if game == "NT":
        make = pk.NoLimitTexasHoldem(auto, True, 0, (o.small_blind, o.big_blind), o.big_blind,
                                     mode=mode)
    elif game == "PO":
        make = pk.PotLimitOmahaHoldem(auto, True, 0, (o.small_blind, o.big_blind),
                                      o.big_blind, mode=mode)
    elif game == "FT":
        make = pk.FixedLimitTexasHoldem(auto, True, 0, (o.small_blind, o.big_blind),
                                        o.small_bet, o.big_bet, mode=mode)
    elif game == "FO/8":
        make = _pokerkit_fixed_limit_omaha_hilo(pk, auto, (o.small_blind, o.big_blind),
                                                o.small_bet, o.big_bet)
    elif game == "F7S":
        make = pk.FixedLimitSevenCardStud(auto, True, o.ante, o.bring_in, o.small_bet,
                                          o.big_bet, mode=mode)
    else:
        make = pk.FixedLimitSevenCardStudHighLowSplitEightOrBetter(
            auto, True, o.ante, o.bring_in, o.small_bet, o.big_bet, mode=mode)
    card = {c: next(iter(pk.Card.parse(str(c)))) for c in DECK}
    stacks = (STACK,) * PLAYERS

    def play(deck: tuple[Card, ...]) -> tuple[int, ...]:
        state = make(stacks, PLAYERS)
        top = iter(deck)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            while state.status:
                if state.actor_index is not None:
                    if state.can_post_bring_in():
                        state.post_bring_in()
                    else:
                        state.check_or_call()
                elif state.can_burn_card():
                    state.burn_card((card[next(top)],))
                elif state.can_deal_hole():
                    state.deal_hole((card[next(top)],))
                elif state.can_deal_board():
                    n = state.board_dealing_count
                    assert n is not None  # (a board card is due: can_deal_board)
                    state.deal_board(tuple(card[next(top)] for _ in range(n)))
                else:  # pragma: no cover - automatic mode covers every other step
                    raise RuntimeError("pokerkit waits for an operation we do not script")
        return tuple(state.stacks)

    return play


def _pokerkit_fixed_limit_omaha_hilo(pk, auto, blinds, small_bet: int, big_bet: int):
    """Fixed-limit Omaha hi/lo on pokerkit.State: pokerkit 0.7.7's
    FixedLimitOmahaHoldemHighLowSplitEightOrBetter is pot limit (PotLimitPokerMixin)."""
    streets = (
        pk.Street(False, (False,) * 4, 0, False, pk.Opening.POSITION, small_bet, 4),
        pk.Street(True, (), 3, False, pk.Opening.POSITION, small_bet, 4),
        pk.Street(True, (), 1, False, pk.Opening.POSITION, big_bet, 4),
        pk.Street(True, (), 1, False, pk.Opening.POSITION, big_bet, 4),
    )

    def make(stacks, n):
        return pk.State(auto, pk.Deck.STANDARD, (pk.OmahaHoldemHand,
                                                 pk.OmahaEightOrBetterLowHand),
                        streets, pk.BettingStructure.FIXED_LIMIT, True, 0, blinds, 0,
                        stacks, n, mode=pk.Mode.TOURNAMENT)

    return make


# --- measuring -----------------------------------------------------------------------------

class _Cycle:
    """Plays the pre-generated hands in turn, for about a given CPU time per call."""

    def __init__(self, play: Callable, hands: list):
        self.play, self.hands, self.k = play, hands, 0

    def rate(self, seconds: float) -> float:
        done, start = 0, time.process_time()
        while True:
            self.play(self.hands[self.k % len(self.hands)])
            self.k += 1
            done += 1
            elapsed = time.process_time() - start
            if elapsed >= seconds:
                return done / elapsed


def _rates(runners: list[Callable], hands: list, seconds: float) -> list[list[float]]:
    """REPEATS rounds; in each, every runner plays for ``seconds / REPEATS`` of CPU time, one
    after the other (interleaved, so a busy machine slows both engines alike)."""
    cycles = [_Cycle(r, hands) for r in runners]
    out: list[list[float]] = [[] for _ in runners]
    for _ in range(REPEATS):
        for k, c in enumerate(cycles):
            out[k].append(c.rate(seconds / REPEATS))
    return out


def check_same_hands(game: str, hands: list, n: int = 20) -> None:
    """The first ``n`` hands end with the same stacks in both engines (same hands played)."""
    ours, theirs = ours_runner(game), pokerkit_runner(game)
    for deck in hands[:n]:
        a, b = ours(deck), theirs(deck)
        if a != b:
            raise AssertionError(f"{game}: ours {a}, pokerkit {b} on deck "
                                 + " ".join(map(str, deck)))


def run(seconds: float = 2.0) -> list[dict]:
    """Hands per second (CPU time) of both engines per game; one dict per row of the table.

    The ratio is the median of the per-round ratios (ours / pokerkit, measured back to back).
    """
    hands = decks()
    rows = []
    try:
        import pokerkit  # noqa: F401
        have_pokerkit = True
    except ImportError:
        have_pokerkit = False
    for game in GAMES:
        runners = [ours_runner(game)]
        if have_pokerkit:
            check_same_hands(game, hands)
            runners.append(pokerkit_runner(game))
        rates = _rates(runners, hands, seconds)
        ours = statistics.median(rates[0])
        theirs = statistics.median(rates[1]) if have_pokerkit else None
        ratio = (statistics.median(a / b for a, b in zip(rates[0], rates[1], strict=True))
                 if have_pokerkit else None)
        rows.append({"game": game, "ours_hands_per_s": ours, "pokerkit_hands_per_s": theirs,
                     "ratio": ratio, "goal": GOALS.get(game)})
    return rows


def main(seconds: float = 2.0) -> None:
    t0 = time.perf_counter()
    rows = run(seconds)
    print(f"{PLAYERS}-max, everyone checks or calls to the showdown, the same {DECKS} decks "
          f"in both engines")
    print(f"{'game':6} {'ours hands/s':>13} {'pokerkit hands/s':>17} {'ratio':>8} {'goal':>6}")
    for r in rows:
        pk = r["pokerkit_hands_per_s"]
        ratio = r["ratio"]
        goal = r["goal"]
        verdict = "" if goal is None or ratio is None else (" ok" if ratio >= goal else " MISS")
        print(f"{r['game']:6} {r['ours_hands_per_s']:13,.0f} "
              f"{(f'{pk:,.0f}' if pk else 'n/a'):>17} "
              f"{(f'{ratio:.1f}x' if ratio else 'n/a'):>8} "
              f"{(f'{goal:g}x' if goal else ''):>6}{verdict}")
    print(f"(hands per CPU second, median of {REPEATS} interleaved rounds, ~{seconds:g}s of "
          f"CPU per engine and game; ratio = median of the per-round ratios; "
          f"{time.perf_counter() - t0:.1f}s)")


def profile(games=("NT", "FO/8"), hands: int = 400, top: int = 25) -> None:
    """cProfile of our engine on ``hands`` scripted hands of each game."""
    import cProfile
    import pstats

    decks_ = decks(hands)
    for game in games:
        play = ours_runner(game)
        prof = cProfile.Profile()
        prof.enable()
        for d in decks_:
            play(d)
        prof.disable()
        print(f"\n== {game}: {hands} hands")
        pstats.Stats(prof).sort_stats("tottime").print_stats(top)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m bench.bench_hands")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--profile", nargs="*", metavar="GAME",
                        help="profile our engine on these games (default NT FO/8)")
    args = parser.parse_args()
    if args.profile is not None:
        profile(tuple(args.profile) or ("NT", "FO/8"))
    else:
        main(args.seconds)
