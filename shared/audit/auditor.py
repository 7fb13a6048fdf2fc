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

The modules: this one reads, re-decides and folds each commit (1 to 3; the decisions as
shared/poker/steprules.py gives them), books.py keeps the cards and the chips (4 and 5),
findings.py holds the result and the first failure.

The first failure stops the audit of the table and names the event: stream sequence, index in
the table's log, index in its commit, type, and why. A card changed in a ``CardsDealt`` may
first show as a wrong showdown; the auditor then reads on to the hand's reveal and, if the
revealed deck shows an earlier card was not the deck's, names that ``CardsDealt`` instead.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

from poker.events.v1 import events_pb2 as pb

from shared.infra.codec import SEALABLE, CodecError, decode_body, is_sealed
from shared.infra.commits import CommitParseError, read_envelopes
from shared.infra.eventstore import Stored
from shared.infra.repository import LoadedTable
from shared.infra.secrecy import Keyring
from shared.poker import decide as D
from shared.poker import events as E
from shared.poker import table as T
from shared.poker.clock import TurnClock, clock_after, is_late
from shared.poker.errors import IllegalAction, InvalidEvent
from shared.poker.fold import apply
from shared.poker.memo import Memo
from shared.poker.state import TableState
from shared.poker.steprules import (
    NotThisStep,
    decide_again,
    decide_table_again,
    is_table_decision,
    next_step,
)
from shared.tlog.hands import HandLeaves

from .books import Books
from .findings import (
    Bad,
    DeckRecord,
    EngineBug,
    Failure,
    FirstFailure,
    Named,
    SagaRecord,
    TableAudit,
    compare,
)

__all__ = ["EngineBug", "Failure", "SagaRecord", "TableAudit", "TableAuditor", "audit_table"]

_sha256 = hashlib.sha256



class TableAuditor(Books):
    """Feed a table's commits in order with :meth:`feed`; read the result with :meth:`result`."""

    def __init__(self, table_id: str, keyring: Keyring | None = None) -> None:
        self.audit = TableAudit(table_id)
        self.table_id = table_id
        self.keyring = keyring
        self.state: TableState | None = None
        self.last_hash = b""
        self.clock: TurnClock | None = None
        self.commands: set[str] = set()
        self.decks: list[DeckRecord] = []
        self.hand_start = 0  # chips of the players dealt in
        self.hand_no = 0
        self.hand_pots = 0
        self.hand_rake = 0
        self.hand_awarded = 0
        self._lookahead = False  # after a mid-hand failure: read on to the reveal
        self._events: list = []  # the current commit's events, decoded so far
        self._envelopes_read: list[pb.EventEnvelope] = []  # the current commit's, parsed
        self._read_raws: Sequence[bytes] = ()  # the current commit's envelopes' bytes
        self._first = FirstFailure()  # the current commit's first bad event
        #: the table's envelopes carry their command's digest (from the first that did on)
        self.digests = False
        self._digests_after = False  # the same, after the current commit
        self._command_digest = b""  # the current commit's (outside the chain)
        #: each finished hand's leaf of the hands' Merkle log (shared/tlog/hands.py), made
        #: from the commits that passed
        self.hands = HandLeaves(table_id)
        self._out_of_hand_memo: tuple = (None, None, 0)
        #: what a commit's step and its decision ask again (shared/poker/memo.py)
        self.memo = Memo()

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
        except Named:
            self._lookahead = False
            return False
        except Bad as bad:
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
        compare(events, expected, first)
        first.raise_any()
        self._fold(stored, expected)
        self._advance(stored, events, command_id, at_ms, last_hash)

    def _read(self, stored: Stored) -> tuple[Sequence[bytes], list[pb.EventEnvelope]]:
        """The commit in order, parsed (its envelopes too), not empty: the envelopes' bytes
        and the envelopes."""
        a = self.audit
        if stored.seq <= a.last_seq:
            raise Bad(-1, f"sequence {stored.seq} after {a.last_seq}: out of order or repeated")
        try:
            commit, envelopes = read_envelopes(stored.data)
        except CommitParseError as exc:
            if exc.index is None:
                raise Bad(-1, f"the commit does not parse: {exc.cause}") from None
            raise Bad(exc.index, f"the event does not parse: {exc.cause}") from None
        if not envelopes:
            raise Bad(-1, "an empty commit")
        self._envelopes_read = envelopes
        self._read_raws = commit.events
        self._command_digest = commit.command_digest
        return commit.events, envelopes

    def _envelopes(self, raws: Sequence[bytes], envelopes: list[pb.EventEnvelope],  # noqa: C901 (one check per envelope field, in the order the chain reads them)
                   first: FirstFailure) -> tuple[list, str, int, bytes]:
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
                    first.note(Bad(k, reason))
                    chained = False
            try:
                event = decode_body(env, keyring)
            except CodecError as exc:
                first.note(Bad(k, f"the event does not decode: {exc}"))
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
                    first.note(Bad(k, reason))
                    chained = False
            events.append(event)
            if chained and type(event) in SEALABLE:
                try:
                    self._check_secrecy(k, env, is_sealed(env))
                except Bad as bad:
                    first.note(bad)
                    first.raise_any()
            last_hash = _sha256(raws[k]).digest()
        if command_id and command_id in self.commands and first.bad is None:
            first.note(Bad(0, f"command {command_id!r} was applied before"))
        self._digests_after = digests
        return events, command_id, at_ms, last_hash

    def _redecide(self, events: list, at_ms: int, first: FirstFailure) -> list:
        """The engine's decision on the fold before the commit: the events the rules give
        for what the commit claims. The engine refusing it (IllegalAction, InvalidEvent) is
        a verdict on the log; any other exception is a bug in the engine, reported as one
        (:class:`EngineBug`), never as tampering."""
        try:
            return self._decide(events, at_ms)
        except Bad as bad:
            first.note(bad)
        except (IllegalAction, InvalidEvent) as exc:
            first.note(Bad(0, f"the engine refuses this decision: {exc}"))
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
                state = apply(state, event, self.memo)
            except InvalidEvent as exc:
                raise Bad(k, f"the event cannot follow the table's state: {exc}") from None
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
            raise Bad(len(events) - 1,
                       f"chips are not conserved at the table: stacks and pots "
                       f"{total - a.rake - a.left_with} + rake {a.rake} + taken by leavers "
                       f"{a.left_with} != buy-ins {a.buy_ins} + top-ups {a.top_ups}")

    def _check_secrecy(self, k: int, env: pb.EventEnvelope, sealed: bool | None) -> None:
        if not sealed:
            raise Bad(k, "secret cards in the clear: burned and face-down cards, decks and "
                          "hand keys must be sealed in the log")
        if self.keyring is None:
            raise Bad(k, "the hand's cards are sealed and no compliance key was given to "
                          "open them (pokerctl audit --key FILE)")
        if self.keyring.hand_key(env.table_id, env.hand_no) is None:
            key_id = env.deck_committed.compliance_key_id or "?"
            raise Bad(k, f"no compliance key given opens this hand (it is sealed to key "
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
                raise Bad(0, f"the log of table {self.table_id} creates table {first.table_id}")
            return T.create_table(table, first.table_id, first.options)
        if table is None:
            raise Bad(0, "the table was not created first")
        try:
            if is_table_decision(first):
                return decide_table_again(table, first)
            return self._decide_hand(first, table, at_ms)
        except NotThisStep as exc:
            raise Bad(0, str(exc)) from None

    def _decide_hand(self, first: object, table: TableState, at_ms: int) -> list:
        hand = table.hand
        if hand is None or not table.hand_running:
            raise Bad(0, "a hand event while no hand is running")
        step = next_step(hand, self.memo)
        if (type(first) is E.PlayerTimedOut and type(step) is D.Act
                and not is_late(self.clock, table.options, at_ms)):
            raise Bad(0, f"seat {first.seat} timed out before their time ran out")
        return decide_again(hand, step, first, self.memo)


def audit_table(table_id: str, commits: Iterable[Stored],
                keyring: Keyring | None = None) -> TableAudit:
    """Audit a table's commits (in stream order), streaming; ``keyring``: the compliance
    role's, which opens the sealed cards."""
    auditor = TableAuditor(table_id, keyring)
    for stored in commits:
        auditor.feed(stored)
    return auditor.result()
