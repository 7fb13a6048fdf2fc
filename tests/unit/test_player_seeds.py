"""The players' seeds in the rules core (shared/poker/seeds.py, issue 29), through the
decisions and the fold alone: a commitment is for the hand after next and closes when the
next hand starts; a reveal opens once the server committed to its own seed for that hand (in
the deck commitment of the hand before) and closes when the hand starts; a reveal must match;
the hand's deck commitment must name exactly the revealed seeds and the server seed committed
to, and the reveal of the deck must be the one those seeds give (what the audit decides again)."""

from __future__ import annotations

import hashlib

import pytest

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker import seeds as S
from shared.poker.cards import DECK
from shared.poker.deck import commitment
from shared.poker.errors import IllegalAction, InvalidEvent
from shared.poker.events import ActionKind
from shared.poker.fold import apply
from shared.poker.handrunner import new_table
from shared.poker.options import table_options
from shared.poker.shuffle import (
    ALGORITHM,
    Entropy,
    deck_salt,
    derive_deck,
    seed_digest,
)
from shared.poker.state import TableState
from shared.poker.steprules import automatic


def hexed(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


SERVER = {n: hexed(f"server seed of hand {n}") for n in (1, 2, 3)}
ALICE, BOB = hexed("alice"), hexed("bob")


def applied(table: TableState, events) -> TableState:
    for e in events:
        table = apply(table, e)
    return table


def seated() -> TableState:
    table = new_table(table_options("holdem", "no_limit", small_blind=1, big_blind=2))
    return applied(table, [E.PlayerSeated(1, "alice", 100, "a" * 64),
                           E.PlayerSeated(2, "bob", 100, "b" * 64)])


def entropy_of(table: TableState, hand_no: int) -> Entropy:
    hand = table.hand
    assert hand is not None
    return Entropy(ALGORITHM, seed_digest(SERVER[hand_no]), hand.player_seeds,
                   seed_digest(SERVER[hand_no + 1]) if hand_no + 1 in SERVER else "")


class Derived:
    """The dealer's deck of a derived hand (steprules.DeckHolder)."""

    def __init__(self, hand_no: int, player_seeds) -> None:
        self.decks = [derive_deck(SERVER[hand_no], player_seeds)]
        self.salts = [deck_salt(SERVER[hand_no])]

    def new_deck(self, cards=None) -> str:
        raise AssertionError("no reshuffle in hold'em")


def start(table: TableState, hand_no: int, committed: bool = True) -> TableState:
    """Hand ``hand_no`` started and, if ``committed``, its derived deck committed."""
    table = applied(table, D.start_hand(table, hand_no, 1 + hand_no % 2, [(1, 100), (2, 100)]))
    if committed:
        hand = table.hand
        deck = Derived(hand_no, hand.player_seeds)
        table = applied(table, D.commit_deck(hand, commitment(deck.decks[0], deck.salts[0]),
                                             entropy=entropy_of(table, hand_no)))
    return table


def to_reveal(table: TableState) -> TableState:
    """Play the hand (everyone folds to the big blind) up to the deck's reveal."""
    hand = table.hand
    deck = Derived(hand.hand_no, hand.player_seeds)
    while not isinstance(step := D.next_step(table.hand), D.RevealDeck):
        if isinstance(step, D.Act):
            events = D.act(table.hand, step.seat, ActionKind.FOLD, None)
        else:
            events = automatic(table.hand, step, deck)
        table = applied(table, events)
    return table


def test_a_commitment_is_for_the_hand_after_next_before_the_next_starts():
    table = seated()
    assert S.commit_seed(table, 1, 2, seed_digest(ALICE)) == [
        E.SeedCommitted(1, 2, seed_digest(ALICE))]
    table = applied(table, S.commit_seed(table, 1, 2, seed_digest(ALICE)))
    for seat, hand, digest, words in ((1, 2, seed_digest(BOB), "already"),
                                      (1, 1, seed_digest(BOB), "for hand 2 now"),
                                      (1, 3, seed_digest(BOB), "for hand 2 now"),
                                      (3, 2, seed_digest(BOB), "empty"),
                                      (2, 2, "AB" * 32, "64 lowercase hex")):
        with pytest.raises(IllegalAction, match=words):
            S.commit_seed(table, seat, hand, digest)
    table = start(table, 1, committed=False)
    with pytest.raises(IllegalAction, match="for hand 3 now"):  # hand 2's closed at hand 1
        S.commit_seed(table, 2, 2, seed_digest(BOB))
    closing = applied(table, [E.TableClosing("done")])
    with pytest.raises(IllegalAction, match="closing"):
        S.commit_seed(closing, 2, 3, seed_digest(BOB))


def test_a_reveal_waits_for_the_servers_commitment_matches_and_closes_at_the_start():
    table = seated()
    table = applied(table, S.commit_seed(table, 1, 2, seed_digest(ALICE)))
    table = applied(table, S.commit_seed(table, 2, 2, seed_digest(BOB)))
    with pytest.raises(IllegalAction, match="committed to its own"):
        S.reveal_seed(table, 1, 2, ALICE)  # before hand 1 starts
    table = start(table, 1, committed=False)
    with pytest.raises(IllegalAction, match="committed to its own"):
        S.reveal_seed(table, 1, 2, ALICE)  # hand 1's deck (and the server's seed) not yet
    table = start(seated().evolve(seeds=table.seeds), 1)
    with pytest.raises(IllegalAction, match="does not match"):
        S.reveal_seed(table, 1, 2, BOB)
    alone = start(applied(seated(), S.commit_seed(seated(), 1, 2, seed_digest(ALICE))), 1)
    with pytest.raises(IllegalAction, match="committed to no seed"):
        S.reveal_seed(alone, 2, 2, BOB)
    table = applied(table, S.reveal_seed(table, 1, 2, ALICE))
    assert S.reveal_seed(table, 1, 2, ALICE) == []  # a retry: nothing more
    # bob does not reveal: hand 2 is dealt from the server's seed and alice's alone
    table = applied(to_reveal(table), D.reveal_deck(to_reveal(table).hand,
                                                    *_revealed(table, 1)))
    table = start(table, 2)
    assert table.hand.player_seeds == (ALICE,)
    assert table.hand.seed_sha256 == seed_digest(SERVER[2])
    assert table.seeds == ()
    with pytest.raises(IllegalAction, match="revealed after its hand started is refused"):
        S.reveal_seed(table, 2, 2, BOB)


def _revealed(table: TableState, hand_no: int):
    deck = Derived(hand_no, table.hand.player_seeds)
    return deck.decks, deck.salts, SERVER[hand_no]


def test_the_deck_commitment_names_exactly_the_revealed_seeds_and_the_committed_server_seed():
    table = seated()
    table = applied(table, S.commit_seed(table, 1, 2, seed_digest(ALICE)))
    table = start(table, 1)
    table = applied(table, S.reveal_seed(table, 1, 2, ALICE))
    table = to_reveal(table)
    table = applied(table, D.reveal_deck(table.hand, *_revealed(table, 1)))
    table = start(table, 2, committed=False)
    hand, right = table.hand, entropy_of(table, 2)
    c = commitment(*Derived(2, (ALICE,)).decks, Derived(2, (ALICE,)).salts[0])
    assert D.commit_deck(hand, c, entropy=right)[0].player_seeds == (ALICE,)
    for wrong, words in ((Entropy(ALGORITHM, right.seed_sha256, (), right.next_seed_sha256),
                          "every seed revealed"),
                         (Entropy(ALGORITHM, right.seed_sha256, (ALICE, BOB),
                                  right.next_seed_sha256), "every seed revealed"),
                         (Entropy(ALGORITHM, seed_digest(SERVER[3]), (ALICE,)),
                          "committed to in the hand before"),
                         (Entropy("poker-shuffle/other", right.seed_sha256, (ALICE,)),
                          "unknown shuffle"),
                         (Entropy(), "must be derived")):
        with pytest.raises(IllegalAction, match=words):
            D.commit_deck(hand, c, entropy=wrong)


def test_the_reveal_of_a_derived_deck_must_be_the_one_its_seeds_give():
    table = start(seated(), 1)
    table = to_reveal(table)
    hand = table.hand
    decks, salts, seed = _revealed(table, 1)
    assert D.reveal_deck(hand, decks, salts, seed)[0].server_seed == seed
    with pytest.raises(IllegalAction, match="not the one it committed to"):
        D.reveal_deck(hand, decks, salts, SERVER[2])
    # a deck that matches a commitment of its own but is not the seeds' deck
    other = start(seated(), 1, committed=False)
    forged = tuple(reversed(DECK))
    other = applied(other, D.commit_deck(other.hand, commitment(forged, salts[0]),
                                         entropy=entropy_of(other, 1)))
    other = to_reveal_with(other, forged, salts[0])
    with pytest.raises(IllegalAction, match="not the one its seeds give"):
        D.reveal_deck(other.hand, [forged], salts, seed)
    with pytest.raises(IllegalAction, match="not derived"):  # a CSPRNG hand has no seed
        plain = start(seated(), 1, committed=False)
        plain = applied(plain, D.commit_deck(plain.hand, commitment(forged, salts[0])))
        plain = to_reveal_with(plain, forged, salts[0])
        D.reveal_deck(plain.hand, [forged], salts, seed)


def to_reveal_with(table: TableState, deck, salt: str) -> TableState:
    holder = Derived(1, ())
    holder.decks, holder.salts = [deck], [salt]
    while not isinstance(step := D.next_step(table.hand), D.RevealDeck):
        events = (D.act(table.hand, step.seat, ActionKind.FOLD, None)
                  if isinstance(step, D.Act) else automatic(table.hand, step, holder))
        table = applied(table, events)
    return table


def test_the_fold_refuses_a_reveal_without_its_commitment():
    with pytest.raises(InvalidEvent, match="did not commit"):
        apply(seated(), E.SeedRevealed(1, 2, ALICE))
