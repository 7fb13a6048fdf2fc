"""The derived shuffle's test vectors (issue 29): tests/data/shuffle/vectors.json holds fixed
server and player seeds and the deck, salt and commitment each must give. The code
(shared/poker/shuffle.py) must give them, and so must a second implementation written here from
the algorithm's description alone (one buffer of HMAC blocks, then the draws), so that the
vectors pin the algorithm and not only what the code happened to do when they were made."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path

import pytest

from shared.poker.cards import DECK, card
from shared.poker.deck import commitment
from shared.poker.shuffle import ALGORITHM, deck_salt, derive_deck, seed_digest, server_seed

VECTORS = json.loads((Path(__file__).resolve().parents[1] / "data" / "shuffle"
                      / "vectors.json").read_text())


def from_the_description(seed_hex: str, player_seeds: list[str], cards: list, index: int):
    """poker-shuffle/hmac-sha256-fy/v1 as the module's docstring describes it."""
    key = bytes.fromhex(seed_hex)
    context = b"poker-shuffle/v1\n" + b"deck %d\n" % index + b"".join(
        bytes.fromhex(s) for s in sorted(player_seeds))
    stream = b"".join(hmac.new(key, context + n.to_bytes(8, "big"), hashlib.sha256).digest()
                      for n in range(64))  # far more than 51 draws can take
    at = 0
    deck = list(cards)
    for i in range(len(deck) - 1, 0, -1):
        b = i.bit_length()
        width = (b + 7) // 8
        while True:
            draw = int.from_bytes(stream[at:at + width], "big") >> (8 * width - b)
            at += width
            if draw <= i:
                break
        deck[i], deck[draw] = deck[draw], deck[i]
    return deck


@pytest.mark.parametrize("v", VECTORS["decks"], ids=lambda v: v["name"])
def test_the_vectors_deck_salt_and_commitment(v):
    assert VECTORS["algorithm"] == ALGORITHM
    cards = tuple(card(c) for c in v["cards"]) if "cards" in v else DECK
    want = tuple(card(c) for c in v["deck"].split())
    deck = derive_deck(v["server_seed"], v["player_seeds"], cards, v["deck_index"])
    assert deck == want
    assert tuple(from_the_description(v["server_seed"], v["player_seeds"], list(cards),
                                      v["deck_index"])) == want
    assert sorted(deck) == sorted(cards)
    assert seed_digest(v["server_seed"]) == v["server_seed_sha256"]
    assert deck_salt(v["server_seed"], v["deck_index"]) == v["salt"]
    assert commitment(deck, v["salt"]) == v["commitment"]


def test_the_vectors_are_distinct_where_the_seeds_are():
    decks = {v["name"]: v["deck"] for v in VECTORS["decks"]}
    by_seeds = {(v["server_seed"], tuple(sorted(v["player_seeds"])), v["deck_index"]): v["deck"]
                for v in VECTORS["decks"]}
    assert len(set(decks.values())) == len(by_seeds)  # the reordered seeds: the same deck


@pytest.mark.parametrize("v", VECTORS["server_seeds"], ids=lambda v: v["table"])
def test_the_server_seed_of_a_hand_from_the_tables_master_seed(v):
    assert server_seed(bytes.fromhex(v["master"]), v["table"], v["hand"]) == v["server_seed"]
    assert v["server_seed"] == hmac.new(bytes.fromhex(v["master"]),
                                        f"poker-server-seed/v1|{v['table']}|{v['hand']}".encode(),
                                        hashlib.sha256).hexdigest()
