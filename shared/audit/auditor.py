"""The auditor: replay one table's commits from the start and check every event.

Pure: it reads ``Stored`` commits (sequence + bytes) handed to it, one at a time, and keeps
only the table's fold and the current hand's deck records, so a table of any length streams
through in constant memory (plus the set of command ids, to catch a decision applied twice).

For each commit, in order:

1. the hash chain: every envelope's ``prev_hash`` is the SHA-256 of the previous envelope's
   exact bytes (empty for the first of the table), every envelope names this table, and one
   commit is one command (one command id); sequences only go up, no command id repeats; an
   envelope's ``command_digest`` (inside the chain) is the commit's, and once a table's
   envelopes carry one every later envelope does (a log written before they did has none);
2. the decision: the engine re-decides, on the fold before the commit, the decision the commit
   claims: a hand's step as shared/poker/steprules.py decides it again (an action, a time-out
   after the player's deadline, the house steps, a deal on the cards recorded, a show or muck,
   a reveal, a deck commitment), or a table decision (create, sit, leave, free a seat, sit
   out, top up, (dis)connect, start the next hand); its events must equal the commit's, event
   for event;
3. the fold: every event applies (``apply``);
4. the cards: each hand's deck(s) are committed before a card is dealt; at the reveal every
   deck hashes to its commitment, the first is a permutation of the 52 cards, a stud reshuffle
   deck is exactly the undealt and burned cards, and every card dealt (in deck order) is the
   next card of the current deck;
5. the chips: per hand, start stacks = final stacks + rake, pots formed = contributions, rake
   taken from the pots = rake, awards = pots - rake; per table after every commit, buy-ins +
   top-ups = seats' stacks (with a running hand's stacks and pot) + rake + chips taken away
   by players who left.

Secrecy (shared/infra/secrecy.py): burned and face-down cards and revealed decks must be
sealed in the log, and every hand's key wrapped to compliance; the auditor opens them with the
compliance ``keyring``. A secret card in the clear, or a sealed one no key given opens, fails.

The first failure stops the audit of the table and names the event: stream sequence, index in
the table's log, index in its commit, type, and why. A card changed in a ``CardsDealt`` may
first show as a wrong showdown; the auditor then reads on to the hand's reveal and, if the
revealed deck shows an earlier card was not the deck's, names that ``CardsDealt`` instead.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from poker.events.v1 import events_pb2 as pb

from shared.infra.codec import SEALABLE, CodecError, decode_body, is_sealed
from shared.infra.commits import CommitParseError, parse_commit, read_envelopes
from shared.infra.eventstore import Stored
from shared.infra.repository import LoadedTable
from shared.infra.secrecy import Keyring
from shared.poker import decide as D
from shared.poker import events as E
from shared.poker import table as T
from shared.poker.cards import DECK, Card
from shared.poker.clock import TurnClock, clock_after, is_late
from shared.poker.deck import commitment as deck_commitment
from shared.poker.errors import IllegalAction, InvalidEvent
from shared.poker.fold import apply
from shared.poker.state import SagaKind, TableState
from shared.poker.steprules import (
    NotThisStep,
    decide_again,
    decide_table_again,
    is_table_decision,
    next_step,
)
from shared.tlog.hands import HandLeaves
from shared.tlog.receipt import positions_root

_FULL_DECK = frozenset(DECK)
#: the wallet's answers to a saga
_Settlement = E.BuyInConfirmed | E.BuyInRefused | E.CashOutConfirmed | E.RakeCredited
_SETTLED = {E.BuyInConfirmed: "confirmed", E.BuyInRefused: "refused",
            E.CashOutConfirmed: "credited", E.RakeCredited: "credited"}
_sha256 = hashlib.sha256


@dataclass(frozen=True, slots=True)
class Failure:
    """The first bad event of a table."""

    table_id: str
    seq: int  # stream sequence of the commit
    event_index: int  # 1-based index of the event in the table's log (0: the commit itself)
    commit_index: int  # 0-based index of the event in its commit
    event_type: str
    reason: str
    #: the engine failed on this commit: a bug to report, not a finding about the log
    engine_bug: bool = False

    def __str__(self) -> str:
        where = (f"event {self.event_index} ({self.event_type}, #{self.commit_index} of the "
                 f"commit)" if self.event_index else f"the commit ({self.event_type})")
        return f"table {self.table_id}, stream seq {self.seq}, {where}: {self.reason}"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class SagaRecord:
    """A saga with the wallet as the table's log tells it (the money audit matches each with
    the wallet's ledger): ``outcome`` confirmed, refused, credited or open."""

    key: str
    kind: str  # buy_in, top_up, cash_out, rake
    player_id: str
    amount: int
    outcome: str


@dataclass
class TableAudit:
    table_id: str
    commits: int = 0
    events: int = 0
    hands: int = 0
    decisions: int = 0  # commits re-decided by the engine
    buy_ins: int = 0  # PlayerSeated stacks
    top_ups: int = 0
    stacks: int = 0  # at the end: seats' stacks (with a running hand's stacks and pot)
    rake: int = 0
    left_with: int = 0  # chips taken away by players who left
    decks: int = 0  # decks revealed and checked
    cards: int = 0  # cards dealt and checked against a revealed deck
    first_seq: int = 0
    last_seq: int = 0
    head_hash: str = ""  # SHA-256 of the table's last envelope: anchor it elsewhere
    hand_open: bool = False  # the log ends inside a hand (its deck is not revealed yet)
    wallet: bool = False  # the table's chips come from a wallet (its sagas below)
    sagas: list[SagaRecord] = field(default_factory=list)  # settled, in log order
    open_sagas: list[SagaRecord] = field(default_factory=list)  # at the end of the log
    failure: Failure | None = None
    #: each finished hand's leaf of the hands' Merkle log, as the audited commits make it
    #: (shared/tlog/hands.py): what an audit against a checkpoint compares (not reported)
    hand_leaves: list[bytes] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def conserved(self) -> bool:
        return self.stacks + self.rake + self.left_with == self.buy_ins + self.top_ups

    def as_dict(self) -> dict:
        out = {k: v for k, v in dataclasses.asdict(self).items()
               if k not in ("failure", "hand_leaves")}
        out["ok"] = self.ok
        out["failure"] = self.failure.as_dict() if self.failure else None
        out["error"] = str(self.failure) if self.failure else None
        return out


@dataclass(slots=True)
class _DeckRecord:
    commitment: str
    size: int
    reshuffle: bool
    taken_before: int = 0  # reshuffle: cards taken from the previous deck when it was made
    burned_before: tuple = ()  # reshuffle: the burned cards it was made with
    root: str = ""  # the positions root committed beside it (shared/tlog/receipt.py), if any
    dealt: list = field(default_factory=list)  # cards in deck order
    where: list = field(default_factory=list)  # per card: (seq, event_index, commit_index)


class _Bad(Exception):
    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


class EngineBug(Exception):
    """The engine failed while re-deciding or folding a commit (not a refusal: a bug). The
    audit of the table stops there and says so; it is not evidence about the log."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


class _FirstFailure:
    """The earliest bad event a commit's checks found (by index in the commit; on a tie, the
    one noted first)."""

    __slots__ = ("bad",)

    def __init__(self) -> None:
        self.bad: _Bad | None = None

    def note(self, bad: _Bad) -> None:
        if self.bad is None or bad.index < self.bad.index:
            self.bad = bad

    def raise_any(self) -> None:
        if self.bad is not None:
            raise self.bad


def _compare(events: list, expected: list, first: _FirstFailure) -> None:
    """The commit's events equal the engine's, event for event: note the first that
    differs, or the one too many, or the one missing."""
    if events == expected:
        return
    n = min(len(events), len(expected))
    for k in range(n):
        if events[k] != expected[k]:
            first.note(_Bad(k, _diff(events[k], expected[k])))
            return
    if len(events) > n:
        first.note(_Bad(n, "an event the engine's decision does not produce"))
    else:
        first.note(_Bad(n - 1, f"the decision also produces {type(expected[n]).__name__}, "
                               f"missing from the commit"))


def _diff(got: object, want: object) -> str:
    """What differs between a recorded event and the engine's."""
    if type(got) is not type(want):
        return f"the engine decides {type(want).__name__} here"
    parts = []
    if dataclasses.is_dataclass(got):  # every event is
        for f in dataclasses.fields(got):
            a, b = getattr(got, f.name), getattr(want, f.name)
            if a != b:
                parts.append(f"{f.name} is {_short(a)}, the engine decides {_short(b)}")
    return "; ".join(parts) or "differs from the engine's decision"


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."


class TableAuditor:
    """Feed a table's commits in order with :meth:`feed`; read the result with :meth:`result`."""

    def __init__(self, table_id: str, keyring: Keyring | None = None) -> None:
        self.audit = TableAudit(table_id)
        self.table_id = table_id
        self.keyring = keyring
        self.state: TableState | None = None
        self.last_hash = b""
        self.clock: TurnClock | None = None
        self.commands: set[str] = set()
        self.decks: list[_DeckRecord] = []
        self.hand_start = 0  # chips of the players dealt in
        self.hand_no = 0
        self.hand_pots = 0
        self.hand_rake = 0
        self.hand_awarded = 0
        self._lookahead = False  # after a mid-hand failure: read on to the reveal
        self._events: list = []  # the current commit's events, decoded so far
        self._envelopes_read: list[pb.EventEnvelope] = []  # the current commit's, parsed
        self._read_raws: Sequence[bytes] = ()  # the current commit's envelopes' bytes
        self._first = _FirstFailure()  # the current commit's first bad event
        #: the table's envelopes carry their command's digest (from the first that did on)
        self.digests = False
        self._digests_after = False  # the same, after the current commit
        self._command_digest = b""  # the current commit's (outside the chain)
        #: each finished hand's leaf of the hands' Merkle log (shared/tlog/hands.py), made
        #: from the commits that passed
        self.hands = HandLeaves(table_id)
        self._out_of_hand_memo: tuple = (None, None, 0)

    @classmethod
    def resumed(cls, table_id: str, before: LoadedTable, keyring: Keyring | None = None,
                digests: bool = False) -> TableAuditor:
        """An auditor that goes on from ``before``: the repository's fold of the table's
        earlier commits (their hash chain checked, nothing re-decided), whose events carry
        their command's digest if ``digests``. One hand's evidence is audited so
        (shared/audit/evidence.py): the chips at the table then count as its buy-ins."""
        auditor = cls(table_id, keyring)
        auditor.state, auditor.last_hash = before.state, before.last_hash
        auditor.clock, auditor.commands = before.clock, set(before.commands)
        auditor.digests = digests
        auditor.audit.last_seq = before.seq
        if before.state is not None:
            auditor.audit.buy_ins = auditor._in_play(before.state)
        return auditor

    # --- public ----------------------------------------------------------------------------

    def feed(self, stored: Stored) -> bool:
        """Audit one commit; False once the table has failed (further commits are ignored,
        except to look for the hand's reveal, which may name an earlier bad card)."""
        a = self.audit
        if a.failure is not None:
            if self._lookahead:
                self._look_for_reveal(stored)
            return False
        try:
            self._commit(stored)
        except _Named:
            self._lookahead = False
            return False
        except _Bad as bad:
            self._fail(stored, bad.index, bad.reason)
            return False
        except EngineBug as bug:
            self._fail(stored, -1, f"the auditor could not check this commit: the engine "
                                   f"failed ({bug}); this is a bug in the engine to report, "
                                   f"not evidence about the log", engine_bug=True)
            return False
        return True

    def result(self) -> TableAudit:
        a = self.audit
        a.head_hash = self.last_hash.hex()
        a.hand_leaves = self.hands.leaves
        table = self.state
        if table is not None:
            a.hand_open = table.hand_running
            a.stacks = self._in_play(table)
            a.wallet = table.options.wallet
            a.open_sagas = [SagaRecord(g.key, g.kind.value, g.player_id, g.amount, "open")
                            for g in table.sagas]
        return a

    # --- one commit ------------------------------------------------------------------------

    def _commit(self, stored: Stored) -> None:
        """Audit one commit: a pipeline of checks. A later check may find a bad event
        earlier in the commit than one an earlier check noted (the hash chain is checked as
        the events are read, before they are re-decided): ``first`` keeps the earliest, and a
        check stops the commit at once only where nothing after it can be read."""
        self._events = []
        self._envelopes_read = []
        first = self._first
        first.bad = None
        raws, envelopes = self._read(stored)
        events, command_id, at_ms, last_hash = self._envelopes(raws, envelopes, first)
        expected = self._redecide(events, at_ms, first)
        _compare(events, expected, first)
        first.raise_any()
        self._fold(stored, expected)
        self._advance(stored, events, command_id, at_ms, last_hash)

    def _read(self, stored: Stored) -> tuple[Sequence[bytes], list[pb.EventEnvelope]]:
        """The commit in order, parsed (its envelopes too), not empty: the envelopes' bytes
        and the envelopes."""
        a = self.audit
        if stored.seq <= a.last_seq:
            raise _Bad(-1, f"sequence {stored.seq} after {a.last_seq}: out of order or repeated")
        try:
            commit, envelopes = read_envelopes(stored.data)
        except CommitParseError as exc:
            if exc.index is None:
                raise _Bad(-1, f"the commit does not parse: {exc.cause}") from None
            raise _Bad(exc.index, f"the event does not parse: {exc.cause}") from None
        if not envelopes:
            raise _Bad(-1, "an empty commit")
        self._envelopes_read = envelopes
        self._read_raws = commit.events
        self._command_digest = commit.command_digest
        return commit.events, envelopes

    def _envelopes(self, raws: Sequence[bytes], envelopes: list[pb.EventEnvelope],
                   first: _FirstFailure) -> tuple[list, str, int, bytes]:
        """The commit's events, its command id and time, and its last envelope's hash, read
        in one pass: the hash chain (every envelope's prev_hash is the SHA-256 of the
        previous envelope's bytes), every envelope of this table and of one command, each
        event decoded (opening the sealed cards with the compliance keyring) and, up to the
        chain's first break, the events that can hold secret cards sealed; and a command
        applied once. An event that does not decode stops the commit."""
        head = envelopes[0]
        command_id, at_ms = head.command_id, head.occurred_at_unix_ms
        last_hash = self.last_hash
        keyring = self.keyring
        events = self._events
        chained = True  # no break so far
        digest, digests = self._command_digest, self.digests
        for k, env in enumerate(envelopes):
            if chained:
                reason = None
                if env.prev_hash != last_hash:
                    reason = ("the hash chain breaks: prev_hash is not the SHA-256 of the "
                              "previous event (an event was changed, removed, inserted or "
                              "reordered)")
                elif env.table_id != self.table_id:
                    reason = f"the event belongs to table {env.table_id!r}"
                elif env.command_id != command_id:
                    reason = "one commit holds events of two commands"
                if reason is not None:
                    first.note(_Bad(k, reason))
                    chained = False
            try:
                event = decode_body(env, keyring)
            except CodecError as exc:
                first.note(_Bad(k, f"the event does not decode: {exc}"))
                first.raise_any()
            if chained:  # the command's digest, in the chain: noted after the event decodes
                reason = None
                if env.command_digest:
                    if env.command_digest != digest:
                        reason = ("the commit's command digest is not the one its events "
                                  "carry in the hash chain (the commit's digest was changed)")
                    digests = True
                elif digests:
                    reason = ("the event carries no command digest, after events of the "
                              "table that carry theirs in the hash chain")
                if reason is not None:
                    first.note(_Bad(k, reason))
                    chained = False
            events.append(event)
            if chained and type(event) in SEALABLE:
                try:
                    self._check_secrecy(k, env, is_sealed(env))
                except _Bad as bad:
                    first.note(bad)
                    first.raise_any()
            last_hash = _sha256(raws[k]).digest()
        if command_id and command_id in self.commands and first.bad is None:
            first.note(_Bad(0, f"command {command_id!r} was applied before"))
        self._digests_after = digests
        return events, command_id, at_ms, last_hash

    def _redecide(self, events: list, at_ms: int, first: _FirstFailure) -> list:
        """The engine's decision on the fold before the commit: the events the rules give
        for what the commit claims. The engine refusing it (IllegalAction, InvalidEvent) is
        a verdict on the log; any other exception is a bug in the engine, reported as one
        (:class:`EngineBug`), never as tampering."""
        try:
            return self._decide(events, at_ms)
        except _Bad as bad:
            first.note(bad)
        except (IllegalAction, InvalidEvent) as exc:
            first.note(_Bad(0, f"the engine refuses this decision: {exc}"))
        except Exception as exc:  # noqa: BLE001 - the engine's own failure, named as such
            first.raise_any()  # a bad event before it explains it
            raise EngineBug(exc) from exc
        first.raise_any()
        raise AssertionError("not reached")  # pragma: no cover

    def _fold(self, stored: Stored, expected: list) -> None:
        """Fold the engine's events (equal to the recorded ones) and book their cards and
        chips."""
        state = self.state
        for k, event in enumerate(expected):
            before = state
            try:
                state = apply(state, event)
            except InvalidEvent as exc:
                raise _Bad(k, f"the event cannot follow the table's state: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - the fold's own failure
                raise EngineBug(exc) from exc
            self._account(stored, k, event, before, state)
        assert state is not None  # the commit has events, and each applied
        self.state = state

    def _advance(self, stored: Stored, events: list, command_id: str, at_ms: int,
                 last_hash: bytes) -> None:
        """The commit is good: the chain, the commands, the clock and the counts move on;
        then, per table after every commit, buy-ins + top-ups = the chips at the table + rake
        + chips taken away by players who left."""
        a = self.audit
        state = self.state
        assert state is not None
        self.last_hash = last_hash
        self.digests = self._digests_after
        self.hands.feed(stored, self._read_raws, self._envelopes_read)
        if command_id:
            self.commands.add(command_id)
        self.clock = clock_after(self.clock, state, events, at_ms)
        a.commits += 1
        a.decisions += 1
        a.events += len(events)
        if not a.first_seq:
            a.first_seq = stored.seq
        a.last_seq = stored.seq
        total = self._in_play(state) + a.rake + a.left_with
        if total != a.buy_ins + a.top_ups:
            raise _Bad(len(events) - 1,
                       f"chips are not conserved at the table: stacks and pots "
                       f"{total - a.rake - a.left_with} + rake {a.rake} + taken by leavers "
                       f"{a.left_with} != buy-ins {a.buy_ins} + top-ups {a.top_ups}")

    def _check_secrecy(self, k: int, env: pb.EventEnvelope, sealed: bool | None) -> None:
        if not sealed:
            raise _Bad(k, "secret cards in the clear: burned and face-down cards, decks and "
                          "hand keys must be sealed in the log")
        if self.keyring is None:
            raise _Bad(k, "the hand's cards are sealed and no compliance key was given to "
                          "open them (pokerctl audit --key FILE)")
        if self.keyring.hand_key(env.table_id, env.hand_no) is None:
            key_id = env.deck_committed.compliance_key_id or "?"
            raise _Bad(k, f"no compliance key given opens this hand (it is sealed to key "
                          f"{key_id}, or its DeckCommitted is missing)")

    def _fail(self, stored: Stored, index: int, reason: str, engine_bug: bool = False) -> None:
        a = self.audit
        if index < 0:
            a.failure = Failure(self.table_id, stored.seq, 0, 0, "Commit", reason, engine_bug)
            return
        a.failure = Failure(self.table_id, stored.seq, a.events + index + 1, index,
                            self._event_type(index), reason)
        table = self.state
        self._lookahead = bool(table is not None and table.hand_running and self.decks
                               and any(d.dealt for d in self.decks))

    def _event_type(self, index: int) -> str:
        """The type of the commit's event ``index``: its class once decoded, else its body's
        field name ("?" for bytes that do not parse)."""
        events = self._events
        if index < len(events):
            return type(events[index]).__name__
        envelopes = self._envelopes_read
        if index >= len(envelopes):  # the commit, or this event, does not parse
            return "?"
        return envelopes[index].WhichOneof("body") or "no body"

    # --- the decision a commit claims ---------------------------------------------------------

    def _decide(self, events: list, at_ms: int) -> list:
        """The decision the commit claims, again: a table decision (a table step's or a
        command's) or the running hand's step, as shared/poker/steprules.py decides them."""
        first = events[0]
        table = self.state
        if type(first) is E.TableCreated:
            if first.table_id != self.table_id:
                raise _Bad(0, f"the log of table {self.table_id} creates table {first.table_id}")
            return T.create_table(table, first.table_id, first.options)
        if table is None:
            raise _Bad(0, "the table was not created first")
        try:
            if is_table_decision(first):
                return decide_table_again(table, first)
            return self._decide_hand(first, table, at_ms)
        except NotThisStep as exc:
            raise _Bad(0, str(exc)) from None

    def _decide_hand(self, first: object, table: TableState, at_ms: int) -> list:
        hand = table.hand
        if hand is None or not table.hand_running:
            raise _Bad(0, "a hand event while no hand is running")
        step = next_step(hand)
        if (type(first) is E.PlayerTimedOut and type(step) is D.Act
                and not is_late(self.clock, table.options, at_ms)):
            raise _Bad(0, f"seat {first.seat} timed out before their time ran out")
        return decide_again(hand, step, first)

    # --- chips and cards -------------------------------------------------------------------

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
            raise _Bad(k, "cards dealt before the deck was committed")
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
        rec = _DeckRecord(e.commitment, e.deck_size, e.reshuffle, root=e.positions_root)
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
            raise _Bad(k, f"the pots hold {self.hand_pots}, the players put in {contributed}")

    def _rake_taken(self, stored: Stored, k: int, e: E.RakeTaken, before: TableState,
                    after: TableState) -> None:
        if sum(e.from_pots) != e.amount:
            raise _Bad(k, f"rake {e.amount} but {sum(e.from_pots)} taken from the pots")
        self.hand_rake += e.amount
        self.audit.rake += e.amount

    def _pot_awarded(self, stored: Stored, k: int, e: E.PotAwarded, before: TableState,
                     after: TableState) -> None:
        self.hand_awarded += sum(s.amount for s in e.shares)

    def _hand_ended(self, stored: Stored, k: int, e: E.HandEnded, before: TableState,
                    after: TableState) -> None:
        final = sum(s.stack for s in e.stacks)
        if final + self.hand_rake != self.hand_start:
            raise _Bad(k, f"the hand started with {self.hand_start} chips and ended with "
                          f"{final} + rake {self.hand_rake}")
        if self.hand_awarded != self.hand_pots - self.hand_rake:
            raise _Bad(k, f"awarded {self.hand_awarded}, pots {self.hand_pots} - rake "
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
                raise _Named()
            raise _Bad(k, reason)
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
    E.CardsDealt: TableAuditor._cards_dealt, E.HandStarted: TableAuditor._hand_started,
    E.DeckCommitted: TableAuditor._deck_committed, E.PotsFormed: TableAuditor._pots_formed,
    E.RakeTaken: TableAuditor._rake_taken, E.PotAwarded: TableAuditor._pot_awarded,
    E.HandEnded: TableAuditor._hand_ended, E.DeckRevealed: TableAuditor._deck_revealed,
    E.PlayerSeated: TableAuditor._player_seated,
    E.PlayerToppedUp: TableAuditor._player_topped_up,
    E.BuyInConfirmed: TableAuditor._saga_settled, E.BuyInRefused: TableAuditor._saga_settled,
    E.CashOutConfirmed: TableAuditor._saga_settled, E.RakeCredited: TableAuditor._saga_settled,
    E.CashOutRequested: TableAuditor._cash_out_requested,
    E.PlayerLeft: TableAuditor._player_left,
}


class _Named(_Bad):
    """The failure is already recorded (it names an earlier event than the current one)."""

    def __init__(self) -> None:
        super().__init__(0, "")


def _first_wrong_card(dealt: list, deck: tuple) -> int | None:
    n = len(dealt)
    if n <= len(deck) and tuple(dealt) == tuple(deck[:n]):
        return None
    for i, c in enumerate(dealt):
        if i >= len(deck) or c != deck[i]:
            return i
    return None


def audit_table(table_id: str, commits: Iterable[Stored],
                keyring: Keyring | None = None) -> TableAudit:
    """Audit a table's commits (in stream order), streaming; ``keyring``: the compliance
    role's, which opens the sealed cards."""
    auditor = TableAuditor(table_id, keyring)
    for stored in commits:
        auditor.feed(stored)
    return auditor.result()
