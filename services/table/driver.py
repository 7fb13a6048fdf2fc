"""The hand driver: after every append it derives the next step from the fold and calls the
service that owns it, until the table waits for a player (or for players).

Nothing here is remembered between calls: a driver that dies is replaced by any other that
reads the log (the clock keeper of the instance holding the table's lease carries on a table
left with a step pending; keeper.py). Command ids of driver steps are derived from the table
version a step is based on, so two drivers that race on a table make the same command and
JetStream keeps one; they live outside the clients' namespace (shared/infra/rpc.py).

A step that fails is reported once, loudly, with what failed; the same failure again is
logged quietly until the table moves on or fails differently (``Failures``).

Every step goes to its service through :meth:`Driver.call`, which sends the commits the
service has not folded yet (``StepRequest.tail``: those after the version it last answered
with), so that a service a commit or two behind needs no read of the log, and folds the
service's commit from its reply; a deal's reply also carries the dealt seats' cards, kept in
:class:`OwnCards` for each seat's own view.
"""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass

import grpc
import structlog
from poker.dealer.v1 import dealer_pb2_grpc
from poker.engine.v1 import step_pb2
from poker.wallet.v1 import wallet_pb2_grpc

from shared.infra import tablecache
from shared.infra.repository import TableRepository, digest, on_table
from shared.infra.retry import PEER_RETRY, retrying
from shared.infra.rpc import MAX_TAIL, system_command_id
from shared.infra.services import callers_of
from shared.infra.stepcalls import step_call
from shared.infra.stepclient import StepPeers
from shared.infra.tablecache import TableCache
from shared.infra.tls import TlsConfig, channel
from shared.poker import table as T
from shared.poker.cards import Card, card
from shared.poker.steprules import STEPS, owners, table_step

from .calls import Failures, Outages
from .cashier import Cashier

log = structlog.get_logger()

#: the services the table service calls (those that accept its certificate:
#: shared/infra/services.py)
PEERS = callers_of("table")
MAX_STEPS = 500  # per call of advance: a hand never needs this many automated steps


@dataclass
class Peers:
    #: the dealer's calls that are not steps (a seat's cards, a hand's cards for receipts)
    dealer: dealer_pb2_grpc.DealerServiceStub
    wallet: wallet_pb2_grpc.WalletServiceStub
    channels: tuple[grpc.aio.Channel, ...]
    #: the steps' one long-lived stream per service instance (shared/infra/stepclient.py)
    steps: StepPeers

    @classmethod
    def connect(cls, addresses: dict[str, str], tls: TlsConfig | None) -> Peers:
        """Channels to every peer (``addresses``: see :func:`shared.infra.tls.channel`),
        presenting the table service's certificate ``tls`` and checking each peer's."""
        chans = {name: channel(addresses[name], tls, service=name)
                 for name in PEERS}
        for chan in chans.values():  # connect now: the first hand waits for no handshake
            chan.get_state(try_to_connect=True)
        return cls(dealer_pb2_grpc.DealerServiceStub(chans["dealer"]),
                   wallet_pb2_grpc.WalletServiceStub(chans["wallet"]),
                   tuple(chans.values()), StepPeers.connect(addresses, tls, STEP_SERVICES))

    async def close(self) -> None:
        await self.steps.close()
        for c in self.channels:
            await c.close()


class OwnCards:
    """Each seat's cards in a table's running hand, as the dealer handed them over (the log
    seals them): from a deal's reply, or asked for with ``SeatCards``. One hand per table, in
    a cache that forgets (shared/infra/tablecache.py): a view without them asks the dealer."""

    def __init__(self) -> None:
        self._cards: TableCache[tuple[int, dict[int, tuple[Card, ...]]]] = \
            TableCache("own cards")

    def get(self, table_id: str, hand_no: int, seat: int) -> tuple[Card, ...] | None:
        kept = self._cards.get(table_id)
        return kept[1].get(seat) if kept is not None and kept[0] == hand_no else None

    def put(self, table_id: str, hand_no: int, seat: int, cards: tuple[Card, ...]) -> None:
        kept = self._cards.get(table_id)
        if kept is None or kept[0] != hand_no:  # the table's hand before is dropped
            kept = (hand_no, {})
            self._cards.put(table_id, kept)
        kept[1][seat] = cards


#: how many of a table's last commits the table service keeps at most to send as a step's
#: tail: those some step service has not folded yet, which is less than a hand's unless a
#: service goes unasked for a hand (the most a step may carry: the services read the log for
#: more)
TAIL_KEPT = MAX_TAIL
#: the services the driver sends steps to (each is asked every hand)
STEP_SERVICES = owners()
#: and at most this many bytes of them in one step (its message stays well under the services'
#: 1 MiB limit; the service reads the log for the rest)
TAIL_BYTES = 256 * 1024


class Driver:
    def __init__(self, repo: TableRepository, peers: Peers) -> None:
        self.repo = repo
        self.peers = peers
        #: a table's lock lives while someone holds or waits for it
        self._running: weakref.WeakValueDictionary[str, asyncio.Lock] = \
            weakref.WeakValueDictionary()
        self._background: set[asyncio.Task] = set()
        self.failures = Failures("driving the table")
        #: decisions on the clock when the log refused for lack of space (calls.Outages)
        self.outages = Outages()
        self.cashier = Cashier(repo, peers.wallet)
        self.own_cards = OwnCards()
        #: table -> service -> the table version that service last answered with
        self._answered: TableCache[dict[str, int]] = TableCache("answered versions")
        #: a table that turns vacant here is released by the services that folded it too
        self._unhook = tablecache.on_release(self._released)

    def _released(self, table_id: str) -> None:
        answered = self._answered.peek(table_id)
        if answered:
            self.peers.steps.release(table_id, list(answered))

    async def call(self, service: str, method: str, request):
        """Call ``service``'s step ``method`` with ``request`` (a StepRequest, or a message
        whose ``step`` is one), retried while the service is away: the commits it lacks go
        with it, and so does this service's time unless the caller set one (the step's
        commit is stamped with it: shared/poker/clock.py); its reply's commit (and dealt
        cards) are kept here. The service takes its own next automated steps in the same
        message (StepRequest.chain): their commits are kept too, and the reply's version is
        the table's after the last of them."""
        step = request if isinstance(request, step_pb2.StepRequest) else request.step
        step.chain = True  # the service's own next steps in the same message
        table_id = step.table_id
        if not step.now_unix_ms:
            step.now_unix_ms = self.repo.now_ms()
        answered = self._answered.setdefault(table_id, dict)
        size = 0
        for c in self.repo.tail(table_id, answered.get(service, 0), step.version):
            size += len(c.data)
            if size > TAIL_BYTES:
                break
            step.tail.add(seq=c.seq, data=c.data)
        # on the service's step stream, retried as a unary call was
        reply = await retrying(self.peers.steps.method(service, table_id, method), request,
                               policy=PEER_RETRY)
        for answer in (reply, *reply.chained):  # the step, and the owner's steps after it
            self.repo.absorb(table_id, answer.version, answer.commit)
            for held in answer.seat_cards:
                self.own_cards.put(table_id, step.hand_no, held.seat,
                                   tuple(card(c) for c in held.cards))
        if reply.chained:
            reply.version = reply.chained[-1].version  # (the table's version after them all)
        answered[service] = reply.version
        if len(answered) == len(STEP_SERVICES):  # what every one of them has is sent no more
            self.repo.drop_recent(table_id, min(answered.values()))
        return reply

    def lock(self, table_id: str) -> asyncio.Lock:
        """Held while the driver works on the table; others (the clock keeper) hold it to keep
        automated steps out between commits of their own."""
        return self._running.setdefault(table_id, asyncio.Lock())

    def nudge(self, table_id: str) -> None:
        """Advance the table in the background if it has an automated step pending (a driver
        that died between steps left it so); a no-op while a driver is at work on it."""
        lock = self._running.get(table_id)
        if lock is not None and lock.locked() or self.failures.waiting(table_id):
            return
        self.advance_in_background(table_id)

    def advance_in_background(self, table_id: str,
                              version: int | None = None) -> asyncio.Task[int | None]:
        """:meth:`advance` as a task of the driver's own (a caller that stops waiting for it,
        or is cancelled, leaves it running); its result is the table's version after, or None
        if a step failed (reported once: the next command or nudge tries again)."""
        task = asyncio.create_task(self._advance_logged(table_id, version))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _advance_logged(self, table_id: str, version: int | None) -> int | None:
        try:
            return await self.advance(table_id, version)
        except Exception as exc:
            self.failures.failed(table_id, exc)
            return None

    async def close(self) -> None:
        self._unhook()
        for task in list(self._background):
            task.cancel()
        await asyncio.gather(*self._background, return_exceptions=True)

    async def advance(self, table_id: str, version: int | None = None) -> int:
        """Run every automated step until the table waits for a player or for players;
        returns the table's version then. ``version``: the version the caller knows of."""
        async with self.lock(table_id):
            for _ in range(MAX_STEPS):
                lt = await self.repo.load(table_id, version)
                if lt.state is None:
                    return lt.seq
                if T.settleable(lt.state) and not self.cashier.failures.waiting(table_id):
                    # money first (a wallet away holds up no hand: its sagas wait)
                    version = (await self.cashier.settle(table_id, lt.seq)).version
                    lt = await self.repo.load(table_id, version)
                assert lt.state is not None  # (as read above: a table's log only grows)
                step = table_step(lt.state)
                if step is None:
                    self.failures.ok(table_id)
                    return lt.seq
                try:
                    version = await self._run(table_id, lt.seq, lt.state, step)
                except grpc.aio.AioRpcError as exc:
                    if exc.code() is grpc.StatusCode.FAILED_PRECONDITION:
                        # Another driver moved the table on: re-read and carry on.
                        log.info("step overtaken", table_id=table_id, reason=exc.details())
                        version = None
                        continue
                    raise
            raise RuntimeError(f"table {table_id} took more than {MAX_STEPS} automated steps")

    async def _run(self, table_id: str, version: int, table, step) -> int:
        """Take ``step`` (shared/poker/steprules.py): the service that owns it is called, or
        the table decides it here; returns the table's version after it."""
        call = step_call(table_id, version, table, step)
        if call is not None:
            owner, method, message = call
            return (await self.call(owner, method, message)).version
        hand_no = table.hand.hand_no if table.hand is not None else 0
        command_id = system_command_id("drv", hand_no, type(step).__name__, version)
        rule = STEPS[type(step)]
        decision, fingerprint = rule.table, rule.fingerprint
        if decision is None or fingerprint is None:
            raise AssertionError(f"{type(step).__name__}: no service takes it")
        outcome = await self.repo.execute(
            table_id, command_id, digest(*fingerprint(step, hand_no, version)),
            on_table(table_id, lambda t: decision(t, step, command_id)), min_version=version)
        return outcome.version
