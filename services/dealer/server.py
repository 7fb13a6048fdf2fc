"""DealerService: secure shuffles, deck commitments, dealing and burns, deck reveals.

The deck of a running hand lives in the dealer's vault (a KV bucket no other service reads);
events carry only the commitment until a card is dealt, and the deck after the hand.
"""

from __future__ import annotations

from poker.dealer.v1 import dealer_pb2_grpc
from poker.engine.v1 import step_pb2

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import check_step, rpc
from shared.infra.steps import current_hand, reply
from shared.infra.vault import DeckVault, HandDecks
from shared.poker import decide as D
from shared.poker.cards import DECK
from shared.poker.deck import commitment, new_salt, shuffled
from shared.poker.errors import IllegalAction


class DealerService(dealer_pb2_grpc.DealerServiceServicer):
    def __init__(self, repo: TableRepository, vault: DeckVault) -> None:
        self.repo = repo
        self.vault = vault

    async def _decks(self, table_id: str, hand_no: int) -> tuple[HandDecks, int]:
        stored = await self.vault.get(table_id, hand_no)
        if stored is None:
            raise IllegalAction(f"no deck was committed for hand {hand_no}")
        return stored

    @rpc
    async def CommitDeck(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        lt = await self.repo.get(request.table_id)
        current_hand(lt.state, request.table_id, request.hand_no)
        # Shuffle (CSPRNG) and store before committing; a retry reuses the stored deck.
        decks = await self.vault.create(request.table_id, request.hand_no,
                                        HandDecks((shuffled(DECK),), (new_salt(),)))
        hash_ = commitment(decks.decks[0], decks.salts[0])
        outcome = await self.repo.execute(
            request.table_id, request.command_id, digest("commit_deck", request.hand_no),
            lambda t: D.commit_deck(current_hand(t, request.table_id, request.hand_no), hash_))
        return reply(outcome)

    @rpc
    async def DealStreet(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        decks, _ = await self._decks(request.table_id, request.hand_no)

        def decide(table):
            hand = current_hand(table, request.table_id, request.hand_no)
            step = D.next_step(hand)
            if not isinstance(step, D.Deal):
                raise IllegalAction(f"no cards are due: the hand is at {hand.phase.value}")
            deck = decks.decks[len(hand.commitments) - 1]
            pos = hand.dealt_from_deck
            return D.deal(hand, deck[pos: pos + step.count])

        outcome = await self.repo.execute(request.table_id, request.command_id,
                                          digest("deal", request.hand_no), decide)
        return reply(outcome)

    @rpc
    async def Reshuffle(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        lt = await self.repo.get(request.table_id)
        hand = current_hand(lt.state, request.table_id, request.hand_no)
        decks, revision = await self._decks(request.table_id, request.hand_no)
        if len(decks.decks) == len(hand.commitments):
            # Shuffle the undealt and burned cards anew; stored before the commitment.
            deck = decks.decks[-1]
            cards = deck[hand.dealt_from_deck:] + hand.burned
            decks = HandDecks(decks.decks + (shuffled(cards),), decks.salts + (new_salt(),))
            await self.vault.update(request.table_id, request.hand_no, decks, revision)
        hash_ = commitment(decks.decks[-1], decks.salts[-1])
        size = len(decks.decks[-1])
        outcome = await self.repo.execute(
            request.table_id, request.command_id, digest("reshuffle", request.hand_no),
            lambda t: D.reshuffle(current_hand(t, request.table_id, request.hand_no),
                                  hash_, size))
        return reply(outcome)

    @rpc
    async def RevealDeck(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        decks, _ = await self._decks(request.table_id, request.hand_no)
        outcome = await self.repo.execute(
            request.table_id, request.command_id, digest("reveal", request.hand_no),
            lambda t: D.reveal_deck(current_hand(t, request.table_id, request.hand_no),
                                    decks.decks, decks.salts))
        return reply(outcome)


async def setup(server, repo, store, config):
    vault = await DeckVault.open(store.js, replicas=config.stream_replicas)
    dealer_pb2_grpc.add_DealerServiceServicer_to_server(DealerService(repo, vault), server)
