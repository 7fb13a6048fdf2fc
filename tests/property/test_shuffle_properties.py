"""Properties of the deck derived from seeds (shared/poker/shuffle.py, issue 29), for any
seeds hypothesis draws: the deck is a permutation of the cards it shuffles (the 52, or a stud
reshuffle's), it does not depend on the order the players' seeds are given in, each player's
seed changes it; and each draw is uniform by construction: for every bound a deck needs, every
value below it comes from exactly as many byte strings, and a try is rejected less than half
the time (so the expected bytes a deck takes are bounded)."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from shared.poker.cards import DECK
from shared.poker.shuffle import derive_deck, draws_from

seeds = st.binary(min_size=32, max_size=32).map(bytes.hex)
players = st.lists(seeds, max_size=9, unique=True)


@settings(deadline=None, max_examples=200)
@given(server=seeds, player_seeds=players, index=st.integers(0, 3),
       order=st.randoms(use_true_random=False))
def test_the_derived_deck_is_a_permutation_whatever_the_seeds(server, player_seeds, index,
                                                              order):
    deck = derive_deck(server, player_seeds, DECK, index)
    assert len(deck) == 52 and set(deck) == set(DECK)
    shuffled_seeds = list(player_seeds)
    order.shuffle(shuffled_seeds)
    assert derive_deck(server, shuffled_seeds, DECK, index) == deck
    assert derive_deck(server, player_seeds, DECK, index) == deck  # a function of the seeds


@settings(deadline=None, max_examples=100)
@given(server=seeds, player_seeds=players,
       cards=st.sets(st.sampled_from(DECK), min_size=1, max_size=52).map(sorted))
def test_a_reshuffle_is_a_permutation_of_its_cards(server, player_seeds, cards):
    deck = derive_deck(server, player_seeds, cards, 1)
    assert sorted(deck) == cards


@settings(deadline=None, max_examples=100)
@given(server=seeds, player_seeds=players.filter(bool), other=seeds)
def test_every_players_seed_changes_the_deck(server, player_seeds, other):
    if other in player_seeds:
        return
    deck = derive_deck(server, player_seeds)
    for k in range(len(player_seeds)):
        changed = player_seeds[:k] + [other] + player_seeds[k + 1:]
        assert derive_deck(server, changed) != deck  # equal with probability 1 / 52!


@given(n=st.integers(1, 52))
def test_each_draw_is_uniform_by_construction(n):
    """Every first byte of a draw below ``n`` (a deck's bounds fit one byte): the accepted
    ones map onto 0..n-1 evenly, the rejected ones are fewer than half, and a rejected one is
    followed by another try on the next byte."""
    outcomes = []
    for first in range(256):
        randbelow = draws_from(itertools.chain([bytes([first])], itertools.repeat(bytes(32))))
        outcomes.append(randbelow(n))
    bits = (n - 1).bit_length()
    accepted = [b for b in range(256) if b >> (8 - bits) < n]
    assert 256 - len(accepted) < 128  # rejections: under half
    counts = [0] * n
    for b in accepted:
        counts[outcomes[b]] += 1
    assert len(set(counts)) == 1  # exactly uniform over 0..n-1
    rejected = [b for b in range(256) if b not in accepted]
    assert all(outcomes[b] == 0 for b in rejected)  # the next byte (0) decided


@given(n=st.integers(53, 1 << 20))
def test_wider_bounds_read_more_bytes_and_reject_the_same_way(n):
    """Bounds over one byte (not needed by a deck) read several bytes, still by rejection."""
    bits = (n - 1).bit_length()
    width = (bits + 7) // 8

    def draw(value: int) -> int:  # ``value`` in the top bits, then zeros
        first = (value << (8 * width - bits)).to_bytes(width, "big")
        return draws_from(itertools.chain([first], itertools.repeat(bytes(32))))(n)

    assert draw(n - 1) == n - 1
    assert draw((1 << bits) - 1) == (n - 1 if n == 1 << bits else 0)  # over: the next try
