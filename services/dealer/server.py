"""DealerService: secure shuffles, deck commitments, dealing and burns, deck reveals.

The deck of a running hand lives in the dealer's vault (a KV bucket no other service reads);
events carry only the commitment until a card is dealt, and the deck after the hand.
"""

from __future__ import annotations

from poker.dealer.v1 import dealer_pb2_grpc
from poker.engine.v1 import step_pb2

from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import check_step, rpc
from shared.infra.steps import current_hand, for_hand, run_step
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

    async def _hand(self, request: step_pb2.StepRequest):
        check_step(request)
        lt = await self.repo.get(request.table_id, request.version or None)
        return current_hand(lt.state, request.table_id, request.hand_no)

    @rpc
    async def CommitDeck(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        await self._hand(request)
        # Shuffle (CSPRNG) and store before committing; a retry reuses the stored deck.
        decks = await self.vault.create(request.table_id, request.hand_no,
                                        HandDecks((shuffled(DECK),), (new_salt(),)))
        return await run_step(self.repo, request, digest("commit_deck", request.hand_no),
                              for_hand(request, D.commit_deck,
                                       commitment(decks.decks[0], decks.salts[0])))

    @rpc
    async def DealStreet(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        decks, _ = await self._decks(request.table_id, request.hand_no)

        def deal_from_deck(hand):
            step = D.next_step(hand)
            if not isinstance(step, D.Deal):
                raise IllegalAction(f"no cards are due: the hand is at {hand.phase.value}")
            deck = decks.decks[len(hand.commitments) - 1]
            return D.deal(hand, deck[hand.dealt_from_deck: hand.dealt_from_deck + step.count])

        return await run_step(self.repo, request, digest("deal", request.hand_no),
                              for_hand(request, deal_from_deck))

    @rpc
    async def Reshuffle(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        hand = await self._hand(request)
        decks, revision = await self._decks(request.table_id, request.hand_no)
        if len(decks.decks) == len(hand.commitments):
            # Shuffle the undealt and burned cards anew; stored before the commitment.
            cards = decks.decks[-1][hand.dealt_from_deck:] + hand.burned
            decks = HandDecks(decks.decks + (shuffled(cards),), decks.salts + (new_salt(),))
            await self.vault.update(request.table_id, request.hand_no, decks, revision)
        return await run_step(self.repo, request, digest("reshuffle", request.hand_no),
                              for_hand(request, D.reshuffle,
                                       commitment(decks.decks[-1], decks.salts[-1]),
                                       len(decks.decks[-1])))

    @rpc
    async def RevealDeck(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        decks, _ = await self._decks(request.table_id, request.hand_no)
        return await run_step(self.repo, request, digest("reveal", request.hand_no),
                              for_hand(request, D.reveal_deck, decks.decks, decks.salts))


async def setup(server, repo, store, config):
    vault = await DeckVault.open(store.js, replicas=config.stream_replicas)
    dealer_pb2_grpc.add_DealerServiceServicer_to_server(DealerService(repo, vault), server)
