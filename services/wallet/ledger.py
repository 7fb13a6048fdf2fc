"""The reference wallet's ledger: a pure fold of money movements, the decisions on it, and its
store on NATS JetStream.

Every movement is one :class:`LedgerEvent` (poker.wallet.v1), one message on its account's
subject of the stream ``POKER_WALLET``: ``poker.wallet.p.<first 32 hex of sha256(player id)>``
for a player (one account per player id, exactly: the identity provider's subject, so
``Alice`` and ``alice`` are two accounts; shared/poker/players.py), ``poker.wallet.house`` for
the house. An event records the balance after it, which
the fold checks, so a ledger that does not add up is refused (DATA_LOSS), never served.

The rules (the decisions, pure):

- amounts are whole chips, 1 to :data:`MAX_CHIPS`; a balance stays within 0..MAX_CHIPS;
- a deposit goes to a player (money in); a withdrawal takes from a player or the house (money
  out: the operator takes its rake); a debit takes from a player (chips to a table, a
  tournament's buy-in) or the house (a tournament's guarantee overlay: what the house adds to
  a prize pool the buy-ins leave below the guarantee); a credit goes to a player or the house
  (a cash-out, a prize; the rake, a tournament's fees);
- an idempotency key (1 to 200 printable ASCII characters) is kept per account: the same key
  with the same movement and amount returns the first receipt and moves nothing; with other
  arguments it is refused; a refused movement records nothing, so a retry may succeed later.

The store keeps each account's fold (its :class:`Book`) in memory, read from its subject on
first use. An append carries ``Nats-Expected-Last-Subject-Sequence`` (the account's last
event the decision was made on: two writers, in one process or many, never both spend the same
chips) and ``Nats-Msg-Id`` (a hash of account and key, for JetStream's duplicate window). A
lost race re-reads the account and decides again, a bounded number of times, then ABORTED
("retry with the same key"); a refusal is only ever given on a fold just read from the log.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import nats.errors
import structlog
from google.protobuf.message import DecodeError
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js import api as js_api
from nats.js.errors import APIError, NotFoundError
from poker.wallet.v1 import wallet_pb2 as pb

from shared.infra.eventstore import AppendConflict, EventStore, StoreError
from shared.infra.repository import Aborted, CorruptLog
from shared.infra.rpc import BadRequest
from shared.poker.errors import IllegalAction
from shared.poker.options import MAX_CHIPS
from shared.poker.players import printable, subject_problem

log = structlog.get_logger()

WALLET_STREAM = "POKER_WALLET"
WALLET_PREFIX = "poker.wallet."
HOUSE_TOKEN = "house"
#: metadata of the stream: the ledger's identity (a random id, made with the stream)
LEDGER_ID = "poker-ledger-id"
KEY_MAX = 200
REFERENCE_MAX = 200
IDEMPOTENCY_KEY = re.compile(rf"[\x20-\x7e]{{1,{KEY_MAX}}}")
#: appends tried on one request before ABORTED (each lost one means another writer won)
MAX_ATTEMPTS = 8
STREAM_NAME_IN_USE = 10058  # JetStream: a stream of that name exists (made meanwhile)

DEPOSIT, WITHDRAWAL, DEBIT, CREDIT = (pb.MOVEMENT_DEPOSIT, pb.MOVEMENT_WITHDRAWAL,
                                      pb.MOVEMENT_DEBIT, pb.MOVEMENT_CREDIT)
MOVEMENTS = (DEPOSIT, WITHDRAWAL, DEBIT, CREDIT)
#: the movements that grow a balance (the others shrink it)
GROWS = frozenset({DEPOSIT, CREDIT})
WORDS: dict[int, str] = {DEPOSIT: "deposit", WITHDRAWAL: "withdrawal", DEBIT: "debit", CREDIT: "credit"}


class LedgerCorrupt(CorruptLog):
    """The ledger does not fold (an event that does not parse, a balance that does not add
    up, an event on another account's subject): DATA_LOSS, nothing served on it."""


# --- accounts ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AccountId:
    """An account: the house's, or a player's (one per player id, exactly). ``key``: what the
    account's subject is made from (the player id itself)."""

    house: bool
    key: str = ""
    player_id: str = field(default="", compare=False)

    @classmethod
    def player(cls, player_id: str) -> AccountId:
        """A player's account; BadRequest with the reason for an invalid id."""
        why = subject_problem(player_id)
        if why is not None:
            raise BadRequest(why)
        return cls(False, player_id, player_id)

    @classmethod
    def of(cls, account: pb.Account) -> AccountId:
        """The account a request names; BadRequest when it names none or an invalid id."""
        kind = account.WhichOneof("kind")
        if kind == "house" and account.house:
            return HOUSE
        if kind == "player_id":
            return cls.player(account.player_id)
        raise BadRequest("an account is a player (player_id) or the house (house: true)")

    @property
    def token(self) -> str:
        """The last tokens of the account's subject: ``house`` or ``p.<32 hex>``."""
        if self.house:
            return HOUSE_TOKEN
        return "p." + hashlib.sha256(self.key.encode()).hexdigest()[:32]

    @property
    def subject(self) -> str:
        return WALLET_PREFIX + self.token

    def proto(self) -> pb.Account:
        return pb.Account(house=True) if self.house else pb.Account(player_id=self.player_id)

    def __str__(self) -> str:
        return "the house" if self.house else printable(self.player_id)


HOUSE = AccountId(True)


# --- the fold ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Entry:
    """One movement as the ledger holds it: what its key's receipt says."""

    movement: pb.Movement
    amount: int
    balance_after: int
    seq: int  # its stream sequence
    reference: str = ""
    at_unix_ms: int = 0


@dataclass
class Book:
    """One account's fold: its balance, every key it has seen and the stream sequence of its
    last event (0: none). Folded by :meth:`apply`; decisions only read it."""

    account: AccountId
    balance: int = 0
    last_seq: int = 0
    entries: dict[str, Entry] = field(default_factory=dict)  # idempotency key -> entry

    def apply(self, seq: int, event: pb.LedgerEvent) -> Entry:
        """Fold one event of this account (LedgerCorrupt if it does not follow)."""
        where = f"ledger event {seq} ({self.account})"
        try:
            account = AccountId.of(event.account)
        except BadRequest as exc:
            raise LedgerCorrupt(f"{where}: {exc}") from None
        if account != self.account:
            raise LedgerCorrupt(f"{where} names another account, {account}")
        if seq <= self.last_seq:
            raise LedgerCorrupt(f"{where} comes after {self.last_seq}, out of order")
        if event.movement not in MOVEMENTS:
            raise LedgerCorrupt(f"{where}: unknown movement {event.movement}")
        if not IDEMPOTENCY_KEY.fullmatch(event.idempotency_key):
            raise LedgerCorrupt(f"{where}: not an idempotency key")
        if event.idempotency_key in self.entries:
            raise LedgerCorrupt(f"{where}: key {event.idempotency_key!r} moved money twice")
        problem = _movement_problem(account, event.movement) or _amount_problem(event.amount)
        if problem is not None:
            raise LedgerCorrupt(f"{where}: {problem}")
        after = _after(self.balance, event.movement, event.amount)
        if after != event.balance_after or not 0 <= after <= MAX_CHIPS:
            raise LedgerCorrupt(f"{where}: a {WORDS[event.movement]} of {event.amount} on "
                                f"{self.balance} is {after}, the event says "
                                f"{event.balance_after}")
        entry = Entry(event.movement, event.amount, after, seq, event.reference,
                      event.at_unix_ms)
        self.balance, self.last_seq = after, seq
        self.entries[event.idempotency_key] = entry
        return entry


def _after(balance: int, movement: int, amount: int) -> int:
    return balance + amount if movement in GROWS else balance - amount


def _amount_problem(amount: int) -> str | None:
    if not 1 <= amount <= MAX_CHIPS:
        return f"an amount is 1 to {MAX_CHIPS} whole chips, not {amount}"
    return None


def _movement_problem(account: AccountId, movement: int) -> str | None:
    if account.house and movement == DEPOSIT:
        return "the house takes no deposits: its chips come from the rake (credits)"
    return None


@dataclass
class Ledger:
    """The fold of the whole ledger: each account's book and the totals of each movement.
    The sum of the balances is deposits - withdrawals - debits + credits."""

    books: dict[AccountId, Book] = field(default_factory=dict)
    deposits: int = 0
    withdrawals: int = 0
    debits: int = 0
    credits: int = 0

    @property
    def balances(self) -> dict[AccountId, int]:
        return {account: book.balance for account, book in self.books.items()}

    @property
    def receipts(self) -> dict[tuple[AccountId, str], Entry]:
        """(account, idempotency key) -> the movement it made."""
        return {(account, key): entry for account, book in self.books.items()
                for key, entry in book.entries.items()}

    def apply(self, seq: int, event: pb.LedgerEvent) -> Entry:
        try:
            account = AccountId.of(event.account)
        except BadRequest as exc:
            raise LedgerCorrupt(f"ledger event {seq}: {exc}") from None
        book = self.books.get(account)
        if book is None:
            book = self.books[account] = Book(account)
        entry = book.apply(seq, event)
        total = {DEPOSIT: "deposits", WITHDRAWAL: "withdrawals", DEBIT: "debits",
                 CREDIT: "credits"}[entry.movement]
        setattr(self, total, getattr(self, total) + entry.amount)
        return entry


def fold_ledger(events: Iterable[pb.LedgerEvent | tuple[int, pb.LedgerEvent]]) -> Ledger:
    """The fold of ledger events in stream order: ``(stream_seq, event)`` pairs as
    :func:`read_ledger` returns them, or bare events (numbered 1, 2, ... then).
    LedgerCorrupt if they do not add up."""
    ledger = Ledger()
    for position, item in enumerate(events, start=1):
        seq, event = item if isinstance(item, tuple) else (position, item)
        ledger.apply(seq, event)
    return ledger


# --- decisions ---------------------------------------------------------------------------------


def check_transfer(movement: pb.Movement, account: pb.Account, amount: int, key: str,
                   reference: str) -> AccountId:
    """The account of a well-formed transfer; BadRequest (INVALID_ARGUMENT) with the reason
    otherwise: no account, a bad player id, amount, key or reference, a movement the account
    does not take."""
    if movement not in MOVEMENTS:
        raise BadRequest(f"unknown movement {movement}")
    who = AccountId.of(account)
    problem = _amount_problem(amount) or _movement_problem(who, movement)
    if problem is not None:
        raise BadRequest(problem)
    if not IDEMPOTENCY_KEY.fullmatch(key or ""):
        raise BadRequest(f"idempotency_key must be 1 to {KEY_MAX} printable ASCII characters "
                         "(fresh per transfer, the same for its retries)")
    if len(reference) > REFERENCE_MAX or not reference.isprintable():
        raise BadRequest(f"reference must be at most {REFERENCE_MAX} printable characters")
    return who


def decide(book: Book, movement: pb.Movement, amount: int, key: str, reference: str = "",
           now_ms: int = 0, account: AccountId | None = None) -> pb.LedgerEvent | Entry:
    """The event a (checked) transfer appends to ``book``'s account, or the :class:`Entry`
    its key made before (a duplicate: nothing to append). IllegalAction (FAILED_PRECONDITION)
    when the key was used for another transfer or the balance does not allow it.
    ``account``: the account as the request names it (default: the book's)."""
    seen = book.entries.get(key)
    if seen is not None:
        if (seen.movement, seen.amount) == (movement, amount):
            return seen
        raise IllegalAction(
            f"idempotency key {key!r} was used for another transfer: a {WORDS[seen.movement]} "
            f"of {seen.amount} chips (ledger sequence {seen.seq}), not a {WORDS[movement]} of "
            f"{amount}; use a fresh key for a new transfer")
    who = account or book.account
    after = _after(book.balance, movement, amount)
    if after < 0:
        raise IllegalAction(f"the balance of {who} is {book.balance} chips: a "
                            f"{WORDS[movement]} of {amount} needs {-after} more")
    if after > MAX_CHIPS:
        raise IllegalAction(f"the balance of {who} is {book.balance} chips: a "
                            f"{WORDS[movement]} of {amount} would take it past {MAX_CHIPS}, "
                            "the most an account holds")
    return pb.LedgerEvent(idempotency_key=key, account=who.proto(), movement=movement,
                          amount=amount, balance_after=after, reference=reference,
                          at_unix_ms=now_ms)


def msg_id(account: AccountId, key: str) -> str:
    """The append's ``Nats-Msg-Id``: one per account and key."""
    return hashlib.sha256(f"{account.token}\x00{key}".encode()).hexdigest()[:40]


# --- the stream --------------------------------------------------------------------------------


def wallet_stream_config(replicas: int = 1) -> js_api.StreamConfig:
    """File storage, no deletes, purges or roll-ups, direct gets, a new ledger id."""
    return js_api.StreamConfig(
        name=WALLET_STREAM, subjects=[WALLET_PREFIX + ">"], storage=js_api.StorageType.FILE,
        retention=js_api.RetentionPolicy.LIMITS, num_replicas=replicas,
        duplicate_window=120.0, deny_delete=True, deny_purge=True, allow_rollup_hdrs=False,
        allow_direct=True, discard=js_api.DiscardPolicy.NEW,
        metadata={LEDGER_ID: uuid.uuid4().hex})


async def ensure_wallet_stream(js: JetStreamContext, replicas: int = 1) -> None:
    """Create the wallet's stream if it is missing (the admin does, before the services
    start). A user that may not create streams (the wallet's own) passes when it exists."""
    try:
        await js.stream_info(WALLET_STREAM)
        return
    except NotFoundError:
        pass
    try:
        await js.add_stream(wallet_stream_config(replicas))
    except APIError as exc:
        if exc.err_code != STREAM_NAME_IN_USE:  # made meanwhile by another: fine
            raise StoreError(f"cannot create the stream {WALLET_STREAM}: "
                             f"{exc.description}") from exc
    except (nats.errors.TimeoutError, nats.errors.NoRespondersError) as exc:
        # no answer: a NATS user without the right to create it (a permissions violation)
        try:
            await js.stream_info(WALLET_STREAM)
        except NotFoundError:
            raise StoreError(f"the stream {WALLET_STREAM} is missing and this NATS user may "
                             "not create it: the admin makes it (ensure_wallet_stream) "
                             "before the wallet starts") from exc


def _store(nc: Client, js: JetStreamContext) -> EventStore:
    return EventStore(nc, js, WALLET_STREAM, WALLET_PREFIX)


def _parse(seq: int, data: bytes) -> pb.LedgerEvent:
    event = pb.LedgerEvent()
    try:
        event.ParseFromString(data)
    except DecodeError as exc:
        raise LedgerCorrupt(f"ledger event {seq} does not parse: {exc}") from None
    return event


async def read_ledger(js: JetStreamContext) -> list[tuple[int, pb.LedgerEvent]]:
    """Every ledger event in stream order, with its stream sequence (the money audit reads
    it; the reader's NATS user may). LedgerCorrupt for an event that does not parse or sits
    on another account's subject; StoreError when there is no wallet stream."""
    try:
        await js.stream_info(WALLET_STREAM)
    except NotFoundError:
        raise StoreError(f"there is no wallet ledger (stream {WALLET_STREAM}) on this "
                         "server") from None
    out: list[tuple[int, pb.LedgerEvent]] = []
    for subject, stored in await _store(js._nc, js).read_all(subject_filter=WALLET_PREFIX + ">"):
        event = _parse(stored.seq, stored.data)
        try:
            account = AccountId.of(event.account)
        except BadRequest as exc:
            raise LedgerCorrupt(f"ledger event {stored.seq}: {exc}") from None
        if account.subject != subject:
            raise LedgerCorrupt(f"ledger event {stored.seq} of {account} is on {subject}")
        out.append((stored.seq, event))
    return out


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class LedgerStore:
    """The ledger on JetStream with each account's :class:`Book` cached in this process
    (read from its subject on first use). One transfer per account at a time in a process;
    across processes the appends' expected sequence keeps them apart."""

    def __init__(self, nc: Client, js: JetStreamContext,
                 now_ms: Callable[[], int] | None = None,
                 max_attempts: int = MAX_ATTEMPTS) -> None:
        self.store = _store(nc, js)
        self.js = js
        self.now_ms = now_ms or wall_clock_ms
        self.max_attempts = max_attempts
        self._books: dict[AccountId, Book] = {}
        self._locks: dict[AccountId, asyncio.Lock] = {}

    def _lock(self, account: AccountId) -> asyncio.Lock:
        return self._locks.setdefault(account, asyncio.Lock())

    async def _book(self, account: AccountId, fresh: bool) -> Book:
        """The account's cached book; read from its subject on first use, and caught up to
        the end of it when ``fresh``."""
        book = self._books.get(account)
        if book is not None and not fresh:
            return book
        book = book or Book(account)
        # fresh: the end of the subject as its stream's leader has it (a replica's direct
        # read may be behind a deposit another wallet instance just made)
        read = self.store.read_current if fresh else self.store.read
        try:
            for stored in await read(account.token, after_seq=book.last_seq):
                book.apply(stored.seq, _parse(stored.seq, stored.data))
        except LedgerCorrupt as exc:
            self._books.pop(account, None)  # folded again from the start next time
            log.critical("ledger does not fold", account=str(account), reason=str(exc))
            raise
        self._books[account] = book
        return book

    async def balance(self, account: AccountId) -> int:
        """The account's balance at the end of its subject."""
        async with self._lock(account):
            return (await self._book(account, fresh=True)).balance

    async def transfer(self, account: AccountId, movement: pb.Movement, amount: int, key: str,
                       reference: str = "") -> tuple[Entry, bool]:
        """Move money (a checked transfer, :func:`check_transfer`): the entry made, or the
        one the key made before and True (a duplicate). IllegalAction (decided on the log as
        it stands), Aborted after ``max_attempts`` lost races."""
        async with self._lock(account):
            fresh = False
            for _ in range(self.max_attempts):
                book = await self._book(account, fresh)
                try:
                    decision = decide(book, movement, amount, key, reference, self.now_ms(),
                                      account)
                except IllegalAction:
                    if fresh:
                        raise
                    fresh = True  # a refusal is given on the account as the log has it now
                    continue
                if isinstance(decision, Entry):
                    return decision, True
                seq, duplicate = await self._append(book, decision, key)
                if seq is None or duplicate:
                    # another writer moved the account (or took this key): read, decide again
                    fresh = True
                    continue
                return book.apply(seq, decision), False
            await self._book(account, fresh=True)  # so that the retry decides on the news
            raise Aborted(f"other writers moved the account of {account} under each of "
                          f"{self.max_attempts} tries of this transfer; retry with the same key")

    async def _append(self, book: Book, event: pb.LedgerEvent,
                      key: str) -> tuple[int | None, bool]:
        """(stream sequence, JetStream saw the message id before); (None, False) when the
        account moved past ``book.last_seq``."""
        data = event.SerializeToString(deterministic=True)
        try:
            return await self.store.append(book.account.token, data, book.last_seq,
                                           msg_id=msg_id(book.account, key))
        except AppendConflict:
            return None, False
        except StoreError as exc:
            raise StoreError(f"the ledger of {book.account} was not written (or its answer "
                             f"was lost): {exc}; retry with the same key") from None

    async def ledger(self) -> Ledger:
        """The fold of the whole ledger as the stream holds it now."""
        return fold_ledger(await read_ledger(self.js))
