"""DealerService: decks derived from the server's and the players' seeds (seeding.py), deck
commitments, dealing and burns, turning hands face up at the showdown, deck reveals.

The deck of a running hand and the hand's key live in the dealer's vault (a KV bucket no other
service reads). In the log, burned and face-down cards and the revealed decks are sealed under
the hand key, which each ``DeckCommitted`` also carries sealed to the compliance role
(shared/infra/secrecy.py). The dealer's fold opens the running hand with the vault's key;
every other service folds the cards nobody has seen as unknown. So the dealer turns hands face
up at the showdown (the player's show or muck, or the rule for one who does not act), and
hands a seat its own cards for its view: each deal's reply carries the dealt seats' cards
to the table service (its only caller), and ``SeatCards`` answers a view that lacks them.

A hand's decks are read from the vault once and kept here while the hand runs (they change
only by a reshuffle, which reads the vault afresh before it writes), one hand per table, in a
cache that forgets (shared/infra/tablecache.py): a forgotten hand's decks are read again.
"""

from __future__ import annotations

from collections.abc import Callable

from poker.dealer.v1 import dealer_pb2, dealer_pb2_grpc
from poker.engine.v1 import step_pb2

from shared.infra.randomness import new_salt, secure_shuffle
from shared.infra.repository import TableRepository, digest
from shared.infra.rpc import BadRequest, check_step, check_table_id, rpc
from shared.infra.seattokens import check_holder
from shared.infra.secrecy import CompliancePublicKey, DealerKeyring, HandKey, Sealing
from shared.infra.stepcalls import catch_up, current_hand, for_hand, run_step
from shared.infra.stepstream import serve_steps
from shared.infra.tablecache import TableCache
from shared.infra.vault import DeckVault, HandDecks
from shared.poker import decide as D
from shared.poker.cards import UNKNOWN_CARD
from shared.poker.deck import commitment
from shared.poker.errors import IllegalAction
from shared.poker.shuffle import NO_ENTROPY, Entropy
from shared.poker.state import HandState
from shared.poker.steprules import STEPS, next_step
from shared.poker.steps import CommitDeck, Deal, Reshuffle, RevealDeck, Step
from shared.tlog.receipt import positions_root

from .receipts import hand_cards
from .seeding import Seeds

CHOICES: dict[int, Callable[[HandState, int], list]] = {
    dealer_pb2.SHOW_CHOICE_SHOW: D.show,
    dealer_pb2.SHOW_CHOICE_MUCK: D.muck,
    dealer_pb2.SHOW_CHOICE_DEFAULT: D.showdown_default,
}


class VaultDecks:
    """A hand's decks as the vault holds them, for the dealer's decisions
    (shared/poker/steprules.py ``DeckHolder``): the ``committed`` decks, and ``new_deck``
    hands over the next one, which the dealer shuffled and stored before deciding."""

    def __init__(self, stored: HandDecks, committed: int, entropy: Entropy = NO_ENTROPY,
                 server_seed: str = "") -> None:
        self._stored = stored
        self._n = committed
        self.entropy = entropy
        self.server_seed = server_seed

    @property
    def decks(self) -> tuple:
        return self._stored.decks[:self._n]

    @property
    def salts(self) -> tuple:
        return self._stored.salts[:self._n]

    def new_deck(self, cards=None) -> str:
        """The next stored deck's commitment (``cards``: what it was shuffled from)."""
        self._n += 1
        return commitment(self._stored.decks[self._n - 1], self._stored.salts[self._n - 1])

    def root(self) -> str:
        return positions_root(self._stored.decks[self._n - 1], self._stored.key, self._n - 1)


class DealerService(dealer_pb2_grpc.DealerServiceServicer):
    def __init__(self, repo: TableRepository, vault: DeckVault,
                 compliance: CompliancePublicKey) -> None:
        if not isinstance(repo.keyring, DealerKeyring):
            raise TypeError("the dealer's repository needs a DealerKeyring")
        self.repo = repo
        self.vault = vault
        self.compliance = compliance
        self.keyring: DealerKeyring = repo.keyring
        self.seeds = Seeds(vault)
        #: table -> its hand, the hand's decks and their vault revision, as last read or
        #: written
        self._decks_seen: TableCache[tuple[int, HandDecks, int]] = TableCache("decks")

    def _know(self, table_id: str, hand_no: int, decks: HandDecks) -> Sealing:
        """Hold the hand's key before the table is read, so the fold opens its cards; drop a
        cached fold that was made without it."""
        hand = HandKey(table_id, hand_no, decks.key)
        self.keyring.add(hand)
        lt = self.repo.cached(table_id)
        running = lt.state.hand if lt is not None and lt.state is not None else None
        if running is not None and running.hand_no == hand_no and (
                UNKNOWN_CARD in running.burned
                or any(UNKNOWN_CARD in p.hole for p in running.players)):
            self.repo.forget(table_id)
        return Sealing(hand, self.compliance)

    async def _decks(self, table_id: str, hand_no: int,
                     fresh: bool = False) -> tuple[HandDecks, int, Sealing]:
        """The hand's decks (kept from the last read unless ``fresh``), its key known."""
        kept = None if fresh else self._decks_seen.get(table_id)
        stored = kept[1:] if kept is not None and kept[0] == hand_no else None
        if stored is None:
            stored = await self.vault.get(table_id, hand_no)
            if stored is None:
                raise IllegalAction(f"no deck was committed for hand {hand_no}")
            self._keep_decks(table_id, hand_no, *stored)
        decks, revision = stored
        return decks, revision, self._know(table_id, hand_no, decks)

    def _keep_decks(self, table_id: str, hand_no: int, decks: HandDecks, revision: int) -> None:
        self._decks_seen.put(table_id, (hand_no, decks, revision))

    async def _hand(self, request: step_pb2.StepRequest):
        catch_up(self.repo, request)
        lt = await self.repo.get(request.table_id, request.version or None)
        return current_hand(lt.state, request.table_id, request.hand_no)

    async def _dealt_in(self, request: step_pb2.StepRequest) -> tuple[tuple[int, str], ...]:
        """(seat, player id) of each seat dealt in the request's hand."""
        lt = await self.repo.get(request.table_id, request.version or None)
        assert lt.state is not None and lt.state.hand is not None  # (_hand checked it)
        seats = {s.seat: s.player_id for s in lt.state.seats}
        return tuple((p.seat, seats.get(p.seat, "")) for p in lt.state.hand.players)

    async def _current_decks(self, request: step_pb2.StepRequest,
                             ) -> tuple[HandDecks, Sealing]:
        """The decks for a step that uses the one last committed: read afresh if the fold
        has a commitment the kept decks do not (another dealer reshuffled)."""
        decks, _, sealing = await self._decks(request.table_id, request.hand_no)
        catch_up(self.repo, request)
        lt = await self.repo.get(request.table_id, request.version or None)
        assert lt.state is not None  # (get: the table exists)
        hand = lt.state.hand
        if hand is not None and hand.hand_no == request.hand_no and \
                len(decks.decks) < len(hand.commitments):
            decks, _, sealing = await self._decks(request.table_id, request.hand_no, fresh=True)
        return decks, sealing

    def _with_seat_cards(self, reply: step_pb2.StepReply, table_id: str,
                         hand_no: int) -> step_pb2.StepReply:
        """A deal's reply with every dealt seat's cards, for the table service to show each
        seat its own (from this process's fold, which opens the running hand)."""
        lt = self.repo.cached(table_id)
        hand = lt.state.hand if lt is not None and lt.state is not None else None
        if hand is not None and hand.hand_no == hand_no:
            for p in hand.players:
                if p.hole and all(c.known for c in p.hole):
                    reply.seat_cards.add(seat=p.seat, cards=[str(c) for c in p.hole])
        return reply

    async def _step(self, request: step_pb2.StepRequest, kind: type[Step], decks: HandDecks,
                    sealing: Sealing, entropy: Entropy = NO_ENTROPY,
                    server_seed: str = "") -> step_pb2.StepReply:
        """Take the dealer's step ``kind`` as shared/poker/steprules.py decides it, with the
        hand's decks as the vault holds them (each derived and stored before its commitment
        is appended), the seeds they come from and the server's seed to reveal."""
        rule = STEPS[kind]
        decision, fingerprint = rule.dealer, rule.fingerprint
        assert decision is not None and fingerprint is not None  # (a dealer's step)

        def decide(hand: HandState) -> list:
            step = next_step(hand)
            if type(step) is not kind:
                raise IllegalAction(f"the hand's next step is {type(step).__name__}, not "
                                    f"{kind.__name__}")
            return decision(hand, step, VaultDecks(decks, len(hand.commitments), entropy,
                                                   server_seed), None)

        return await run_step(self.repo, request,
                              digest(*fingerprint(None, request.hand_no, request.version)),
                              for_hand(request, decide), sealing=sealing)

    @rpc
    async def CommitDeck(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        hand = await self._hand(request)
        # Derive the deck from the server's seed and the players' (seeding.py), make the
        # hand's key and store both, with who is dealt in, before committing; a retry reuses
        # what is stored.
        deck, salt, entropy = await self.seeds.first_deck(request.table_id, hand)
        decks = await self.vault.create(
            request.table_id, request.hand_no,
            HandDecks((deck,), (salt,), HandKey.generate(request.table_id, request.hand_no).key,
                      await self._dealt_in(request)))
        self._keep_decks(request.table_id, request.hand_no, decks, 0)  # revision: not needed
        sealing = self._know(request.table_id, request.hand_no, decks)
        return await self._step(request, CommitDeck, decks, sealing, entropy)

    @rpc
    async def DealStreet(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        decks, sealing = await self._current_decks(request)
        reply = await self._step(request, Deal, decks, sealing)
        return self._with_seat_cards(reply, request.table_id, request.hand_no)

    @rpc
    async def Reshuffle(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        decks, revision, sealing = await self._decks(request.table_id, request.hand_no,
                                                     fresh=True)  # it writes: the latest
        hand = await self._hand(request)
        if len(decks.decks) == len(hand.commitments):
            # Shuffle the undealt and burned cards anew; stored before the commitment.
            cards = D.cards_to_reshuffle(hand, decks.decks[-1])
            if hand.shuffle:  # derived as the hand's first deck was
                deck, salt = await self.seeds.reshuffled(request.table_id, hand, cards,
                                                         len(decks.decks))
            else:  # a hand dealt before the players' entropy
                deck, salt = secure_shuffle(cards), new_salt()
            decks = HandDecks(decks.decks + (deck,), decks.salts + (salt,), decks.key,
                              decks.players)
            revision = await self.vault.update(request.table_id, request.hand_no, decks,
                                               revision)
            self._keep_decks(request.table_id, request.hand_no, decks, revision)
        return await self._step(request, Reshuffle, decks, sealing,
                                Entropy(hand.shuffle, hand.seed_sha256, hand.player_seeds))

    @rpc
    async def ShowOrMuck(self, request: dealer_pb2.ShowRequest, context):
        step = request.step
        check_step(step)
        decision = CHOICES.get(request.choice)
        if decision is None:
            raise BadRequest("choice must be SHOW, MUCK or DEFAULT")
        _, _, sealing = await self._decks(step.table_id, step.hand_no)
        return await run_step(self.repo, step,
                              digest("show", step.hand_no, request.seat, request.choice),
                              for_hand(step, decision, request.seat), sealing=sealing)

    @rpc
    async def RevealDeck(self, request: step_pb2.StepRequest, context) -> step_pb2.StepReply:
        check_step(request)
        decks, sealing = await self._current_decks(request)
        hand = await self._hand(request)
        seed = await self.seeds.seed(request.table_id, request.hand_no) if hand.shuffle else ""
        return await self._step(request, RevealDeck, decks, sealing, server_seed=seed)

    @rpc
    async def SeatCards(self, request: dealer_pb2.SeatCardsRequest, context):
        check_table_id(request.table_id)
        if request.seat < 1:
            raise BadRequest("a seat is a seat number from 1")
        await self._decks(request.table_id, request.hand_no)
        lt = await self.repo.get(request.table_id, request.version or None)
        check_holder(lt.state, request.seat, request.player_id)  # the authenticated player's
        hand = current_hand(lt.state, request.table_id, request.hand_no)
        player = next((p for p in hand.players if p.seat == request.seat), None)
        if player is None:
            raise IllegalAction(f"seat {request.seat} is not dealt in hand {request.hand_no}")
        return dealer_pb2.SeatCardsReply(cards=[str(c) for c in player.hole])

    @rpc
    async def HandCards(self, request: dealer_pb2.HandCardsRequest, context):
        check_table_id(request.table_id)
        lt = await self.repo.get(request.table_id)
        assert lt.state is not None  # (get: the table exists)
        return await hand_cards(self.repo.store, self.vault, self.seeds, lt.state, request)


async def setup(server, repo, store, config):
    if not config.compliance_public_key:
        raise SystemExit("the dealer seals every hand to the compliance role: set "
                         "POKER_COMPLIANCE_PUBLIC_KEY to its public key file (make a key pair "
                         "with `pokerctl keys generate DIR`)")
    compliance = CompliancePublicKey.from_file(config.compliance_public_key)
    repo.keyring = DealerKeyring()
    vault = await DeckVault.open(store.js, replicas=config.stream_replicas)
    servicer = DealerService(repo, vault, compliance)
    dealer_pb2_grpc.add_DealerServiceServicer_to_server(servicer, server)
    serve_steps(server, servicer, "dealer")
