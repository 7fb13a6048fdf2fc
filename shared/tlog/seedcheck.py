"""A player's check of a hand's shuffle (issue 29): from a receipt (shared/tlog/receipt.py)
that holds the server's seed (given once the table has closed), recompute the hand's deck
(shared/poker/shuffle.py) and check it against what the hand's leaf, in a signed checkpoint,
says: the server's seed is the one it committed to, the deck its seeds give is the deck it
committed to (with the salt the seed gives), every card the player saw lies where that deck
has it, and the player's own seed is among those used.

Only the hand's first deck is recomputed: a stud reshuffle shuffles the cards left over, which
the player cannot list (they include the burned cards).
"""

from __future__ import annotations

from shared.poker.deck import commitment
from shared.poker.shuffle import ALGORITHM, deck_salt, derive_deck, is_seed_hex, seed_digest
from shared.tlog.hands import HandLeaf, LeafError
from shared.tlog.receipt import Receipt, ReceiptError


def check_shuffle(receipt: Receipt, own_seed: str = "") -> list[str]:
    """The lines of what was proved about the hand's shuffle, or ReceiptError naming the
    first part that fails. Check the receipt itself first (receipt.verify): this trusts its
    leaf."""
    try:
        leaf = HandLeaf.parse(receipt.leaf)
    except LeafError as exc:
        raise ReceiptError(f"the hand's leaf: {exc}") from None
    if not leaf.shuffle:
        raise ReceiptError(f"hand {leaf.hand_no}'s deck was not derived from seeds (it was "
                           f"shuffled by the server's random source alone)")
    algorithm, seed_sha256, *player_seeds = leaf.shuffle.split(" ")
    if algorithm != ALGORITHM:
        raise ReceiptError(f"the hand's shuffle is {algorithm!r}, which this check does not "
                           f"know (it knows {ALGORITHM})")
    server = receipt.extra.get("server_seed", "")
    if not server:
        raise ReceiptError("the receipt holds no server seed: it is given once the table has "
                           "closed; fetch the receipt again then")
    if not is_seed_hex(server) or seed_digest(server) != seed_sha256:
        raise ReceiptError("the server's seed is not the one it committed to before the "
                           "players revealed theirs")
    lines = [f"the server's seed hashes to the commitment {seed_sha256}"]
    deck = derive_deck(server, player_seeds)
    if not leaf.decks or commitment(deck, deck_salt(server)) != leaf.decks[0]:
        raise ReceiptError("the deck the seeds give is not the deck the hand committed to")
    lines.append(f"the deck {ALGORITHM} gives from the server's seed and "
                 f"{len(player_seeds)} player seed(s) is the deck committed before the deal")
    for c in receipt.cards:
        if c.deck == 0 and deck[c.position] != c.card:
            raise ReceiptError(f"{c.card} was dealt from position {c.position}, where the "
                               f"derived deck has {deck[c.position]}")
    if own_seed:
        if own_seed not in player_seeds:
            raise ReceiptError("your seed is not among the seeds the hand's deck came from")
        lines.append("your seed is among them")
    lines.append("the whole deck, in order: " + " ".join(str(c) for c in deck))
    return lines
