"""The dealer's seeds (services/dealer/seeding.py, issue 29) against nats-server: a table's
master seed is made once and kept (another dealer process gets the same one, a table without
one is not given one by asking), and the decks the dealer derives, a stud reshuffle's too, are
the ones the rules accept when the hand reveals them (what the audit decides again)."""

from __future__ import annotations

from services.dealer.seeding import Seeds
from shared.infra.vault import DeckVault
from shared.poker import decide as D
from shared.poker.deck import commitment
from shared.poker.events import PlayerSeated
from shared.poker.fold import apply
from shared.poker.handrunner import check_call_policy, new_table
from shared.poker.options import table_options
from shared.poker.shuffle import ALGORITHM, Entropy, seed_digest
from shared.poker.steprules import STEPS, automatic

TABLE = "stud8"


class Decks:
    def __init__(self) -> None:
        self.decks: list = []
        self.salts: list = []

    def new_deck(self, cards=None) -> str:
        raise AssertionError("the test reshuffles as the dealer does")


async def test_the_dealers_derived_decks_and_reshuffle_are_the_ones_the_rules_accept(store):
    vault = await DeckVault.open(store.js)
    seeds = Seeds(vault)
    assert await vault.master_seed(TABLE, create=False) is None
    table = new_table(table_options("stud", "fixed_limit", small_bet=10, big_bet=20), TABLE)
    for seat in range(1, 9):
        table = apply(table, PlayerSeated(seat, f"p{seat}", 1000, "a" * 64))
    for e in D.start_hand(table, 1, 1, [(s, 1000) for s in range(1, 9)]):
        table = apply(table, e)
    holder = Decks()
    deck, salt, entropy = await seeds.first_deck(TABLE, table.hand)
    assert entropy.shuffle == ALGORITHM and entropy.seed_sha256 == seed_digest(
        await seeds.seed(TABLE, 1))
    assert entropy.next_seed_sha256 == seed_digest(await Seeds(vault).seed(TABLE, 2))  # kept
    holder.decks.append(deck)
    holder.salts.append(salt)
    events = D.commit_deck(table.hand, commitment(deck, salt), entropy=entropy)
    reshuffled = 0
    while True:
        for e in events:
            table = apply(table, e)
        hand = table.hand
        step = D.next_step(hand)
        if isinstance(step, D.RevealDeck):
            break
        if isinstance(step, D.Reshuffle):
            cards = D.cards_to_reshuffle(hand, holder.decks[-1])
            deck, salt = await seeds.reshuffled(TABLE, hand, cards, len(holder.decks))
            holder.decks.append(deck)
            holder.salts.append(salt)
            events = D.reshuffle(hand, commitment(deck, salt), len(deck),
                                 entropy=Entropy(hand.shuffle, hand.seed_sha256,
                                                 hand.player_seeds))
            reshuffled += 1
        elif isinstance(step, D.Act):
            events = D.act(hand, step.seat, *check_call_policy(hand, step.legal))
        else:  # the house's and the dealer's steps; a showdown by the rule
            events = automatic(hand, step, holder) or STEPS[type(step)].default(hand, step)
    assert reshuffled == 1  # eight players to seventh street: the deck ran short
    (revealed,) = D.reveal_deck(table.hand, holder.decks, holder.salts,
                                await seeds.seed(TABLE, 1))
    assert len(revealed.decks) == 2
