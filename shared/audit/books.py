"""The auditor's books (shared/audit/auditor.py, checks 4 and 5): the cards each hand's
decks deal, checked at the reveal against the decks committed, and the chips each hand and
the table move, checked as they go."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from shared.infra.codec import decode_body
from shared.infra.commits import parse_commit
from shared.infra.eventstore import Stored
from shared.infra.secrecy import Keyring
from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.cards import DECK, Card
from shared.poker.deck import commitment as deck_commitment
from shared.poker.state import SagaKind, TableState
from shared.tlog.receipt import positions_root

from .findings import Bad, DeckRecord, Failure, Named, SagaRecord, TableAudit

_FULL_DECK = frozenset(DECK)
#: the wallet's answers to a saga
_Settlement = E.BuyInConfirmed | E.BuyInRefused | E.CashOutConfirmed | E.RakeCredited
_SETTLED = {E.BuyInConfirmed: "confirmed", E.BuyInRefused: "refused",
            E.CashOutConfirmed: "credited", E.RakeCredited: "credited"}


class Books:
    """The books of one table's audit, kept per event (a part of :class:`TableAuditor`)."""

    audit: TableAudit
    table_id: str
    keyring: Keyring | None
    decks: list[DeckRecord]
    hand_start: int
    hand_no: int
    hand_pots: int
    hand_rake: int
    hand_awarded: int
    _lookahead: bool
    _out_of_hand_memo: tuple

    def _in_play(self, table: TableState) -> int:
        """The chips at the table: the seats' stacks, and during a hand the dealt-in players'
        stacks and every chip in the middle (pots and bets) in place of their seats' stacks."""
        hand = table.hand
        if hand is not None and table.hand_running:
            return (self._out_of_hand(table.seats, hand.positions)
                    + sum([p.stack + p.contributed for p in hand.players])
                    - hand.rake - hand.paid_out)  # stacks + pot_total, in one pass
        return sum([s.stack for s in table.seats])

    def _out_of_hand(self, seats: tuple, positions: tuple) -> int:
        """The stacks of the seats not dealt in. Checked after every commit, it changes only
        with the seats or the hand, both immutable tuples: the last sum is kept by identity."""
        cached = self._out_of_hand_memo
        if cached[0] is seats and cached[1] is positions:
            return cached[2]
        n = len(positions)
        total = sum([s.stack for s in seats if not (s.seat < n and positions[s.seat] >= 0)])
        self._out_of_hand_memo = (seats, positions, total)
        return total

    def _account(self, stored: Stored, k: int, e: object, before: TableState | None,
                 after: TableState) -> None:
        """Book the cards and chips event ``e`` (the commit's ``k``-th) moves, checking each
        hand's and the table's books as they go (the module docstring, 4 and 5)."""
        book = _BOOKS.get(type(e))
        if book is not None:  # most events move no chips the books count
            assert before is not None  # only TableCreated comes first, and it books nothing
            book(self, stored, k, e, before, after)

    def _cards_dealt(self, stored: Stored, k: int, e: E.CardsDealt, before: TableState,
                     after: TableState) -> None:
        if not self.decks:
            raise Bad(k, "cards dealt before the deck was committed")
        rec = self.decks[-1]
        cards = D.deck_order(e)
        rec.dealt.extend(cards)
        rec.where.extend([(stored.seq, self.audit.events + k + 1, k)] * len(cards))

    def _hand_started(self, stored: Stored, k: int, e: E.HandStarted, before: TableState,
                      after: TableState) -> None:
        self.audit.hands += 1
        self.decks = []
        self.hand_no = e.hand_no
        self.hand_start = sum(p.stack for p in e.players)
        self.hand_pots = self.hand_rake = self.hand_awarded = 0

    def _deck_committed(self, stored: Stored, k: int, e: E.DeckCommitted, before: TableState,
                        after: TableState) -> None:
        rec = DeckRecord(e.commitment, e.deck_size, e.reshuffle, root=e.positions_root)
        if e.reshuffle:
            hand = before.hand
            assert hand is not None  # a reshuffle is in a hand
            rec.taken_before = hand.dealt_from_deck
            rec.burned_before = tuple(hand.burned)
        self.decks.append(rec)

    def _pots_formed(self, stored: Stored, k: int, e: E.PotsFormed, before: TableState,
                     after: TableState) -> None:
        self.hand_pots = sum(p.amount for p in e.pots)
        assert after.hand is not None  # pots are formed in a hand
        contributed = sum(p.contributed for p in after.hand.players)
        if self.hand_pots != contributed:
            raise Bad(k, f"the pots hold {self.hand_pots}, the players put in {contributed}")

    def _rake_taken(self, stored: Stored, k: int, e: E.RakeTaken, before: TableState,
                    after: TableState) -> None:
        if sum(e.from_pots) != e.amount:
            raise Bad(k, f"rake {e.amount} but {sum(e.from_pots)} taken from the pots")
        self.hand_rake += e.amount
        self.audit.rake += e.amount

    def _pot_awarded(self, stored: Stored, k: int, e: E.PotAwarded, before: TableState,
                     after: TableState) -> None:
        self.hand_awarded += sum(s.amount for s in e.shares)

    def _hand_ended(self, stored: Stored, k: int, e: E.HandEnded, before: TableState,
                    after: TableState) -> None:
        final = sum(s.stack for s in e.stacks)
        if final + self.hand_rake != self.hand_start:
            raise Bad(k, f"the hand started with {self.hand_start} chips and ended with "
                          f"{final} + rake {self.hand_rake}")
        if self.hand_awarded != self.hand_pots - self.hand_rake:
            raise Bad(k, f"awarded {self.hand_awarded}, pots {self.hand_pots} - rake "
                          f"{self.hand_rake}")

    def _deck_revealed(self, stored: Stored, k: int, e: E.DeckRevealed, before: TableState,
                       after: TableState) -> None:
        a = self.audit
        bad = self._check_reveal(e)
        if bad is not None:
            where, reason = bad
            if where is not None:
                # the bad card's CardsDealt is the first bad event: name it
                seq, index, commit_index = where
                a.failure = Failure(self.table_id, seq, index, commit_index, "CardsDealt",
                                    reason)
                raise Named()
            raise Bad(k, reason)
        a.decks += len(e.decks)
        a.cards += sum(len(r.dealt) for r in self.decks)
        self.decks = []

    def _player_seated(self, stored: Stored, k: int, e: E.PlayerSeated, before: TableState,
                       after: TableState) -> None:
        self.audit.buy_ins += e.stack

    def _player_topped_up(self, stored: Stored, k: int, e: E.PlayerToppedUp,
                          before: TableState, after: TableState) -> None:
        self.audit.top_ups += e.amount

    def _saga_settled(self, stored: Stored, k: int, e: _Settlement, before: TableState,
                      after: TableState) -> None:
        """The wallet answered a saga (_SETTLED); a confirmed buy-in's chips reach the seat."""
        a = self.audit
        saga = before.saga(e.key)
        assert saga is not None  # the fold found it
        a.sagas.append(SagaRecord(e.key, saga.kind.value, saga.player_id, saga.amount,
                                  _SETTLED[type(e)]))
        if type(e) is E.BuyInConfirmed:
            if saga.kind is SagaKind.TOP_UP:
                a.top_ups += saga.amount
            else:
                a.buy_ins += saga.amount

    def _cash_out_requested(self, stored: Stored, k: int, e: E.CashOutRequested,
                            before: TableState, after: TableState) -> None:
        self.audit.left_with += e.amount  # the chips leave for the wallet

    def _player_left(self, stored: Stored, k: int, e: E.PlayerLeft, before: TableState,
                     after: TableState) -> None:
        seat = before.seat(e.seat)
        self.audit.left_with += seat.stack if seat is not None else 0

    def _check_reveal(self, e: E.DeckRevealed) -> tuple[tuple | None, str] | None:
        """(where, reason) of the first problem with a reveal, or None."""
        recs = self.decks
        if len(e.decks) != len(recs) or len(e.salts) != len(recs):
            return None, f"{len(recs)} deck(s) committed, {len(e.decks)} revealed"
        for i, (deck, salt, rec) in enumerate(zip(e.decks, e.salts, recs), start=1):
            if deck_commitment(deck, salt) != rec.commitment:
                return None, f"deck {i} and its salt do not match the commitment made before it"
            if rec.root and not self._root_matches(deck, i - 1, rec.root):
                return None, (f"deck {i}'s positions root (what players' receipts prove "
                              f"against) is not the revealed deck's")
            if len(deck) != rec.size:
                return None, f"deck {i} holds {len(deck)} cards, {rec.size} were committed"
            if not rec.reshuffle:
                if len(deck) != 52 or set(deck) != _FULL_DECK:
                    return None, f"deck {i} is not a permutation of the 52 cards"
            else:
                prev = e.decks[i - 2] if i >= 2 else ()
                made_of = tuple(prev[rec.taken_before:]) + rec.burned_before
                if sorted(deck) != sorted(made_of):
                    return None, (f"reshuffled deck {i} is not the undealt and burned cards of "
                                  f"deck {i - 1}")
            bad = _first_wrong_card(rec.dealt, deck)
            if bad is not None:
                pos = bad
                got = rec.dealt[pos]
                want = deck[pos] if pos < len(deck) else None
                there = str(Card(want)) if want is not None else "no card"
                reason = (f"card {pos + 1} dealt from deck {i} is {Card(got)}, the revealed "
                          f"deck has {there} there")
                return rec.where[pos], reason
        return None

    def _root_matches(self, deck: Sequence[Card], index: int, root: str) -> bool:
        key = self.keyring.hand_key(self.table_id, self.hand_no) if self.keyring else None
        return key is not None and positions_root(deck, key.key, index) == root

    def _look_for_reveal(self, stored: Stored) -> None:
        """After a mid-hand failure: find the hand's reveal; a card dealt that is not the
        deck's is an earlier bad event than the failure."""
        try:
            parsed = parse_commit(stored.data)
            for k in range(len(parsed)):
                env = parsed.envelope(k)
                if env.WhichOneof("body") == "hand_started":
                    self._lookahead = False
                    return
                if env.WhichOneof("body") != "deck_revealed":
                    continue
                self._lookahead = False
                e = decode_body(env, self.keyring)
                assert isinstance(e, E.DeckRevealed)  # the body is deck_revealed
                bad = self._check_reveal(e)
                if bad is not None and bad[0] is not None:
                    seq, index, commit_index = bad[0]
                    f = self.audit.failure
                    assert f is not None  # reading on after a failure
                    if (seq, index) < (f.seq, f.event_index):
                        self.audit.failure = Failure(
                            self.table_id, seq, index, commit_index, "CardsDealt",
                            bad[1] + f" (found at the reveal, stream seq {stored.seq}; the "
                                     f"audit first stopped at seq {f.seq}: {f.reason})")
                return
        except Exception:  # noqa: BLE001 - a best-effort refinement of a failure found
            self._lookahead = False




#: the books kept per event type (the rest move no chips or cards the books count)
_BOOKS: dict[type, Callable[..., None]] = {
    E.CardsDealt: Books._cards_dealt, E.HandStarted: Books._hand_started,
    E.DeckCommitted: Books._deck_committed, E.PotsFormed: Books._pots_formed,
    E.RakeTaken: Books._rake_taken, E.PotAwarded: Books._pot_awarded,
    E.HandEnded: Books._hand_ended, E.DeckRevealed: Books._deck_revealed,
    E.PlayerSeated: Books._player_seated,
    E.PlayerToppedUp: Books._player_topped_up,
    E.BuyInConfirmed: Books._saga_settled, E.BuyInRefused: Books._saga_settled,
    E.CashOutConfirmed: Books._saga_settled, E.RakeCredited: Books._saga_settled,
    E.CashOutRequested: Books._cash_out_requested,
    E.PlayerLeft: Books._player_left,
}



def _first_wrong_card(dealt: list, deck: tuple) -> int | None:
    n = len(dealt)
    if n <= len(deck) and tuple(dealt) == tuple(deck[:n]):
        return None
    for i, c in enumerate(dealt):
        if i >= len(deck) or c != deck[i]:
            return i
    return None

