"""The shuffle's statistics (threat 24): the dealer's Fisher-Yates over the CSPRNG
(shared/infra/randomness.secure_shuffle) and the deck derived from the server's and the
players' seeds (shared/poker/shuffle.derive_deck, issue 29) each put every card at every
position equally often, and give every order of a small deck equally often; a shuffle biased
by one percentage point, or the classic naive shuffle, is caught by the same tests (so they can
fail); two dealers started together deal different decks (nothing is seeded from the time).

Significance: each test refuses a fair shuffle with probability below 1e-6 (chi-square by the
Wilson-Hilferty approximation; the largest of the 2,704 card-by-position cells by a normal
bound with Bonferroni's correction), so a run is not made red by chance.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from shared.infra.randomness import secure_shuffle
from shared.poker.cards import DECK
from shared.poker.deck import shuffled
from shared.poker.shuffle import derive_deck

ROOT = Path(__file__).resolve().parents[2]
DECKS = 20_000  # enough to see one card 1 percentage point more often at one position
Z = 4.753  # one-sided normal quantile of 1e-6


def chi2_critical(df: int, z: float = Z) -> float:
    """The chi-square value a fair sample exceeds with the normal tail of ``z`` (Wilson and
    Hilferty's approximation, within a fraction of a percent at these degrees of freedom)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def card_by_position(decks: list[tuple]) -> list[list[int]]:
    counts = [[0] * 52 for _ in range(52)]  # [position][card]
    for deck in decks:
        for position, c in enumerate(deck):
            counts[position][int(c)] += 1
    return counts


def verdicts(counts: list[list[int]], n: int) -> tuple[float, float]:
    """The chi-square statistic of the 52 x 52 table against 1/52 everywhere, and the largest
    standardised deviation of one cell."""
    p = 1 / 52
    expected = n * p
    sd = math.sqrt(n * p * (1 - p))
    chi2 = sum((x - expected) ** 2 / expected for row in counts for x in row)
    worst = max(abs(x - expected) / sd for row in counts for x in row)
    return chi2, worst


#: the largest cell deviation a fair shuffle exceeds with probability 1e-6 over all cells
#: (Bonferroni over 2,704 cells: a two-sided tail of 1e-6 / 2,704 each)
CELL_Z = 6.27


def looks_fair(decks: list[tuple]) -> bool:
    chi2, worst = verdicts(card_by_position(decks), len(decks))
    return chi2 < chi2_critical(52 * 51) and worst < CELL_Z


_HANDS = itertools.count()


def derived(cards=DECK) -> tuple:
    """A deck derived from seeds as the dealer derives one: a fresh server seed per hand (here
    the hand's number, hashed: distinct and fixed, so a failure can be replayed) and two
    players' seeds."""
    n = next(_HANDS)
    seed = hashlib.sha256(f"server {n}".encode()).hexdigest()
    players = [hashlib.sha256(f"player {n} {k}".encode()).hexdigest() for k in range(2)]
    return derive_deck(seed, players, cards)


SHUFFLES = {"csprng": secure_shuffle, "derived": derived}


@pytest.mark.parametrize("name", sorted(SHUFFLES))
def test_every_card_lands_at_every_position_equally_often(name):
    shuffle = SHUFFLES[name]
    decks = [shuffle(DECK) for _ in range(DECKS)]
    chi2, worst = verdicts(card_by_position(decks), DECKS)
    assert chi2 < chi2_critical(52 * 51), chi2
    assert worst < CELL_Z, worst


def test_a_one_point_bias_and_the_naive_shuffle_are_caught():
    """The same verdict on shuffles that are wrong (seeded, so this test is exact): the ace of
    spades put on top 1 percentage point more often than 1/52, and the naive shuffle that
    swaps each card with any card of the deck."""
    rng = random.Random(24)
    ace = next(c for c in DECK if str(c) == "As")

    def biased() -> tuple:
        deck = list(shuffled(DECK, rng.randrange))
        if rng.random() < 0.01 * 52 / 51:  # P(ace on top) = 1/52 + 0.01
            i = deck.index(ace)
            deck[0], deck[i] = deck[i], deck[0]
        return tuple(deck)

    def naive() -> tuple:
        deck = list(DECK)
        for i in range(len(deck)):
            j = rng.randrange(len(deck))
            deck[i], deck[j] = deck[j], deck[i]
        return tuple(deck)

    assert looks_fair([shuffled(DECK, rng.randrange) for _ in range(DECKS)])  # a control
    assert not looks_fair([biased() for _ in range(DECKS)])
    assert not looks_fair([naive() for _ in range(DECKS)])


def _orders(shuffle, n: int) -> float:
    """The chi-square statistic of the orders of a 4-card deck over ``n`` shuffles."""
    small = DECK[:4]
    seen = Counter(shuffle(small) for _ in range(n))
    expected = n / 24
    return sum((seen.get(p, 0) - expected) ** 2 / expected
               for p in itertools.permutations(small))


@pytest.mark.parametrize("name", sorted(SHUFFLES))
def test_every_order_of_a_small_deck_comes_equally_often(name):
    n = 48_000
    assert _orders(SHUFFLES[name], n) < chi2_critical(23)
    rng = random.Random(4)

    def naive(cards):  # 4^4 = 256 equally likely paths onto 24 orders: not uniform
        deck = list(cards)
        for i in range(len(deck)):
            j = rng.randrange(len(deck))
            deck[i], deck[j] = deck[j], deck[i]
        return tuple(deck)

    assert _orders(naive, n) > chi2_critical(23)  # the test sees the naive shuffle's bias


def test_two_dealers_started_together_deal_different_decks():
    """Two processes started at the same moment shuffle from the CSPRNG: nothing they share
    (the time, the pid range) makes their decks alike."""
    code = ("from shared.infra.randomness import secure_shuffle; "
            "print(' '.join(str(c) for c in secure_shuffle()))")
    procs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True) for _ in range(2)]
    decks = [p.communicate(timeout=60)[0].split() for p in procs]
    assert all(sorted(d) == sorted(str(c) for c in DECK) for d in decks)
    assert decks[0] != decks[1]
