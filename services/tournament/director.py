"""The director: drives each tournament whose lease it holds, from its log and its tables'.

Every decision is the pure core's (shared/poker/tournament/decide.py), appended to the
tournament's log before anything is done about it; what it asks of others is then done with
ids derived from the log, so a director that dies at any point is replaced by another that
reads the logs and finishes the same work once:

- money: the wallet's idempotency key names the tournament, the player and the entry (or the
  place, or the rebuy), so a buy-in, a refund, a rebuy or a prize moves once
  (``tournament/<id>/entry/<player>/<n>``, ``.../rebuy/<player>/<n>``);
- tables: each table command's id names what it carries out (a seating, a bust, a move, a
  level, a rebuy's chips, the release of a hand after a given hand), so the table appends
  it once;
- random draws: under the lease, the seed is written once (create-only) in the
  POKER_TOURNAMENT_SEEDS bucket before its commitment is appended, so every director uses
  and commits the first seed written for a draw, and one that takes over reveals the seed
  that was committed; the core refuses a draw on any other seed (decide.revealed).

A tournament table pauses after every hand (shared/poker/tournament/tables.py): the director
finds it between hands, takes the busted players off (ranked by the stacks they started the
hand with), balances or breaks tables (holding the tables a move needs until all are between
hands), seats whoever the log says sits there, sets the level, and releases the next hand;
hand-for-hand, it releases every table only once all are between hands.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from functools import partial

import grpc
import structlog
from nats.js.errors import KeyNotFoundError, KeyWrongLastSequenceError
from poker.tournament.v1 import tournament_pb2 as pb
from poker.wallet.v1 import wallet_pb2

from shared.infra import failpoints
from shared.infra.lease import Leases
from shared.infra.repository import TableRepository, digest
from shared.infra.retry import retrying
from shared.infra.rpc import Unavailable
from shared.poker.errors import IllegalAction
from shared.poker.state import TableState
from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament import tables as T
from shared.poker.tournament.draw import SEED_BYTES, commitment
from shared.poker.tournament.ranking import house_key, prizes_payable, wallet_key
from shared.poker.tournament.state import (
    Entry,
    EntryStatus,
    RebuyStatus,
    Status,
    TournamentState,
)
from shared.poker.tournament.structure import played_level

from . import chips
from .log import TournamentLog
from .names import WALLET, debit, player_digest

log = structlog.get_logger()

SEEDS = "POKER_TOURNAMENT_SEEDS"
#: the directors' lease bucket (one lease per tournament), apart from the table service's
LEASES = "POKER_TOURNAMENT_LEASES"
def lease_name(tournament_id: str) -> str:
    return f"tournament.{tournament_id}"


def level_message(s: TournamentState) -> pb.Level:
    """The level the tables play (structure.played_level)."""
    lv = played_level(s.structure, s.level)
    return pb.Level(small_blind=lv.small_blind, big_blind=lv.big_blind, ante=lv.ante,
                    minutes=lv.minutes)


class Director:
    def __init__(self, tlog: TournamentLog, repo: TableRepository, tables, wallet, kv,
                 leases: Leases, now_ms: Callable[[], int]) -> None:
        self.log = tlog
        self.repo = repo
        self.tables = tables  # TournamentTablesStub, with the director's token
        self.wallet = wallet  # WalletServiceStub
        self.kv = kv
        self.leases = leases
        self.now_ms = now_ms
        self.done: set[str] = set()
        self.short_of_overlay: set[str] = set()  # told once: the house cannot pay it yet

    # --- the loop ------------------------------------------------------------------------

    async def tick(self) -> None:
        """One pass over every tournament not over: each one whose lease this process holds
        (or takes now) is driven one step."""
        await self.leases.renew()
        for tid in await self.log.ids():
            if tid in self.done or not await self.leases.acquire(lease_name(tid)):
                continue
            try:
                await self.step(tid)
            except (grpc.aio.AioRpcError, OSError) as exc:
                log.info("tournament step failed; next tick", tournament_id=tid,
                         reason=repr(exc))
            except Exception:  # noqa: BLE001 - one tournament's fault never stops the others
                log.exception("tournament step failed; the others go on", tournament_id=tid)

    async def run(self, tick_s: float, stop: asyncio.Event) -> None:
        """Tick every ``tick_s`` seconds until ``stop`` is set."""
        while not stop.is_set():
            try:
                await self.tick()
            except Exception:  # noqa: BLE001 - logged; the next tick reads the logs again
                log.exception("director tick failed")
            try:
                await asyncio.wait_for(stop.wait(), tick_s)
            except TimeoutError:
                pass

    async def step(self, tid: str) -> None:
        s = (await self.log.get(tid)).state
        assert s is not None
        await self.settle_money(tid)
        if s.status is Status.REGISTERING and D.ready_to_start(s):
            await self.start(tid)
        elif s.status is Status.RUNNING:
            await self.run_tables(tid)
        s = (await self.log.get(tid)).state
        assert s is not None
        if s.status in (Status.FINISHED, Status.CANCELLED) and _settled(s):
            await self.let_go(s)

    async def let_go(self, s: TournamentState) -> None:
        """A tournament over, its money settled: nothing is left to drive. Its lease goes
        back, and its fold and its tables' leave the caches (a later read folds them
        again)."""
        tid = s.tournament_id
        self.done.add(tid)
        await self.leases.release(lease_name(tid))
        self.log.forget(tid)
        for t in s.tables:
            self.repo.forget(t.table_id)
        log.info("tournament over: lease and cache let go", tournament_id=tid)

    # --- money ---------------------------------------------------------------------------

    async def settle_money(self, tid: str) -> None:
        """Every saga of the log the wallet has not answered: buy-ins, refunds, prizes."""
        s = (await self.log.get(tid)).state
        assert s is not None
        for e in s.entries:
            if e.status is EntryStatus.REQUESTED:
                await self._debit(tid, s, e)
            elif e.status is EntryStatus.WITHDRAWN and not e.refunded:
                await self._credit(tid, e, "refund", s.structure.buy_in + s.structure.fee,
                                   lambda t, e=e: D.refund_paid(t, e.player_id, e.entry_no))
        for r in s.rebuys:
            if r.status is RebuyStatus.REQUESTED:
                await chips.debit(self, tid, s, r)
        await self._house(tid, s)
        s = (await self.log.get(tid)).state
        assert s is not None
        if not prizes_payable(s):
            return  # the pool waits for the house's overlay
        for p in s.prize_requests:
            if not s.entry(p.player_id, p.entry_no).prize_paid:
                failpoints.hit("tournament.before_prize")
                await self._credit(tid, s.entry(p.player_id, p.entry_no), "prize", p.amount,
                                   lambda t, p=p: D.prize_paid(t, p.player_id, p.entry_no))

    async def _house(self, tid: str, s: TournamentState) -> None:
        """Once registration has closed: the fees credited to the house, then the
        guarantee's overlay debited of it (TournamentState.house_due). A refusal (the house short of
        the overlay) is logged and tried again next tick; meanwhile play goes on and the
        prizes wait for it."""
        fees, overlay = s.house_due()
        if fees and not s.fees_paid:
            await retrying(self.wallet.Credit, self._house_transfer(tid, "fees", fees),
                           policy=WALLET)
            await self.log.execute(tid, "fees", lambda t: D.fees_paid(t) if t else [])
        if overlay and not s.overlay_paid:
            try:
                await retrying(self.wallet.Debit,
                               self._house_transfer(tid, "overlay", overlay), policy=WALLET)
            except grpc.aio.AioRpcError as exc:
                if exc.code() is not grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                if tid not in self.short_of_overlay:  # once, not every tick
                    self.short_of_overlay.add(tid)
                    log.warning("the house cannot pay the guarantee's overlay: the prizes "
                                "wait", tournament_id=tid, overlay=overlay,
                                reason=exc.details())
                return
            self.short_of_overlay.discard(tid)
            await self.log.execute(tid, "overlay", lambda t: D.overlay_paid(t) if t else [])

    @staticmethod
    def _house_transfer(tid: str, kind: str, amount: int) -> wallet_pb2.Transfer:
        return wallet_pb2.Transfer(account=wallet_pb2.Account(house=True), amount=amount,
                                   idempotency_key=house_key(tid, kind),
                                   reference=f"tournament {tid} {kind}")

    async def check_funds(self, player: str, amount: int,
                          what: str = "the buy-in and fee") -> None:
        """Refuse a registration (or a rebuy) the balance cannot cover before anything is
        appended (the debit decides in the end)."""
        reply = await retrying(self.wallet.Balance, wallet_pb2.BalanceRequest(
            account=wallet_pb2.Account(player_id=player)), policy=WALLET)
        if reply.balance < amount:
            raise IllegalAction(f"your wallet holds {reply.balance}: {what} costs {amount}")

    async def _debit(self, tid: str, s: TournamentState, e: Entry) -> None:
        transfer = wallet_pb2.Transfer(
            account=wallet_pb2.Account(player_id=e.player_id),
            amount=s.structure.buy_in + s.structure.fee,
            idempotency_key=wallet_key(tid, "entry", e.player_id, e.entry_no),
            reference=f"tournament {tid}")
        refusal = await debit(self.wallet, transfer, "the wallet refused the buy-in")
        await self.log.execute(tid, f"entry.{player_digest(e.player_id)}.{e.entry_no}", lambda t: (
            D.settle_entry(t, e.player_id, e.entry_no, not refusal, refusal) if t else []))

    async def stack_of(self, s: TournamentState, player: str) -> int | None:
        """``player``'s stack for a rebuy's rules (chips.stack_of)."""
        return await chips.stack_of(self, s, player)

    async def _credit(self, tid: str, e: Entry, kind: str, amount: int, decide) -> None:
        if amount:
            await retrying(self.wallet.Credit, wallet_pb2.Transfer(
                account=wallet_pb2.Account(player_id=e.player_id), amount=amount,
                idempotency_key=wallet_key(tid, kind, e.player_id, e.entry_no),
                reference=f"tournament {tid}"), policy=WALLET)
        await self.log.execute(tid, f"{kind}.{player_digest(e.player_id)}.{e.entry_no}",
                               lambda t: decide(t) if t else [])

    # --- draws ---------------------------------------------------------------------------

    async def hold(self, tid: str) -> None:
        """Take (or keep) the tournament's lease, or refuse: one director at a time draws,
        commits and reveals its seeds."""
        name = lease_name(tid)
        if not await self.leases.acquire(name):
            holder = await self.leases.holder(name) or "another director"
            raise Unavailable(f"tournament {tid} is driven by {holder}: send the command "
                              f"there, or retry once it stops (its lease lasts "
                              f"{self.leases.ttl_s:g} s after its last renewal)")

    async def seed(self, tid: str) -> bytes:
        """The seed of the draw committed last; when none is waiting, the next draw's,
        committed now. A draw's seed is written once (create-only), before its commitment:
        a director that finds one there uses it, so whoever commits commits that seed, and a
        director that takes over reveals it."""
        s = (await self.log.get(tid)).state
        assert s is not None
        draw = s.draws if s.pending_commitment else s.draws + 1
        key = f"{tid}.{draw}"
        if s.pending_commitment:
            try:
                return bytes((await self.kv.get(key)).value)
            except KeyNotFoundError:
                raise IllegalAction(f"the seed committed for draw {draw} of {tid} is not in "
                                    f"{SEEDS}: restore the bucket") from None
        seed = secrets.token_bytes(SEED_BYTES)
        try:
            await self.kv.create(key, seed)
        except KeyWrongLastSequenceError:  # another director's seed for this draw stands
            seed = bytes((await self.kv.get(key)).value)
        await self.log.execute(tid, f"seed.{draw}", lambda t: D.commit_seed(t, seed)
                               if t is not None and t.draws + 1 == draw else [],
                               digest("seed", commitment(seed)))
        return seed

    async def start(self, tid: str) -> None:
        """The first seating (a seed committed for it), level 1; refused (nothing appended)
        when the rules do not allow the start now."""
        s = (await self.log.get(tid)).state
        assert s is not None
        D.check_start(s)  # the rules first: a refused start commits no seed
        await self.hold(tid)
        seed = await self.seed(tid)
        await self.log.execute(tid, "start", lambda t: D.start(
            t, seed, _table_ids(tid, t), self.now_ms())
            if t is not None and t.status is Status.REGISTERING else [])

    # --- tables --------------------------------------------------------------------------

    async def table_state(self, table_id: str) -> TableState | None:
        return (await self.repo.load(table_id)).state

    async def run_tables(self, tid: str) -> None:
        s = (await self.log.get(tid)).state
        assert s is not None
        views = await self._open_tables(tid, s)
        between = {t for t, v in views.items() if v is not None and v.paused
                   and not v.hand_running}
        if await chips.add_chips(self, tid, views, between):
            views = {t: await self.table_state(t) for t in views}
        await self._busts(tid, views, between)
        await self.log.execute(tid, f"levels.{self.now_ms()}",
                               lambda t: D.next_level(t, self.now_ms()) if t else [])
        await self._late_seats(tid)
        held = await self._balance(tid, views, between)
        await self._apply_seating(tid, between)
        await self._release(tid, between, held)

    async def _open_tables(self, tid: str, s: TournamentState) -> dict[str, TableState | None]:
        views: dict[str, TableState | None] = {}
        for t in s.tables:
            view = await self.table_state(t.table_id)
            if view is None:
                await self.tables.OpenTable(pb.OpenTableRequest(
                    table_id=t.table_id, command_id=f"{tid}.open", tournament_id=tid,
                    level=level_message(s), max_seats=t.max_seats,
                    decision_seconds=s.structure.decision_seconds))
                view = await self.table_state(t.table_id)
            if view is not None and view.options.tournament != tid:
                raise IllegalAction(f"table {t.table_id} is not a table of tournament {tid} "
                                    f"(it names {view.options.tournament or 'no tournament'}): "
                                    f"it is not touched")
            views[t.table_id] = view
        return views

    async def _busts(self, tid: str, views: dict[str, TableState | None],
                     between: set[str]) -> None:
        for table_id in sorted(between):
            view = views[table_id]
            assert view is not None
            s = (await self.log.get(tid)).state
            assert s is not None
            busts = T.busted_after_hand(s, table_id, view)
            if busts:
                await self.log.execute(
                    tid, f"bust.{table_id}.{view.last_hand_no}",
                    partial(_eliminate, table_id, view.last_hand_no, busts, self.now_ms()))
        lt = await self.log.get(tid)
        await self.log.execute(tid, f"prizes.{lt.seq}",
                               lambda t: D.prizes_due(t, self.now_ms()) if t else [])

    async def _late_seats(self, tid: str) -> None:
        s = (await self.log.get(tid)).state
        assert s is not None
        for e in s.in_field():
            if not e.table_id and s.tables:
                seed = await self.seed(tid)
                await self.log.execute(tid, f"late.{player_digest(e.player_id)}.{e.entry_no}",
                                       partial(_seat_late, e.player_id, seed))

    async def _balance(self, tid: str, views: dict[str, TableState | None],
                       between: set[str]) -> set[str]:
        """Break or balance when every table it moves players from or to is between hands;
        returns the tables held for a move (not released until it is made)."""
        s = (await self.log.get(tid)).state
        assert s is not None
        if s.status is not Status.RUNNING:
            return set()
        bbs = {t: v.last_big_blind or 0 for t, v in views.items() if v is not None}
        involved = D.tables_moving(s, bbs)
        if not involved or not involved <= between:
            return set(involved & between)
        stacks = {seat.player_id: seat.stack for t in involved
                  for seat in (views[t].seats if views[t] is not None else ())}  # type: ignore
        seed = await self.seed(tid) if D.needs_break(s) else None
        await self.log.execute(tid, f"moves.{(await self.log.get(tid)).seq}",
                               lambda t: D.rebalance(t, bbs, seed, stacks) if t else [])
        return set()

    async def _apply_seating(self, tid: str, between: set[str]) -> None:
        """Make every table between hands seat whom the log says sits there: players off
        first (busted, or moved away), then players on, with the chips the log gives them."""
        s = (await self.log.get(tid)).state
        assert s is not None
        for table_id in sorted(between):
            loaded = await self.repo.load(table_id)
            view = loaded.state
            assert view is not None
            mine = dict(s.table(table_id).players)
            for seat in view.seats:
                if mine.get(seat.seat) != seat.player_id:
                    # named by the table's version: a player may leave one table twice
                    # between two hands (busted, re-entered there, moved away)
                    await self.tables.Unseat(pb.UnseatRequest(
                        table_id=table_id, seat=seat.seat, player_id=seat.player_id,
                        command_id=f"{tid}.off.{player_digest(seat.player_id)}.{loaded.seq}"))
                    if seat.stack:  # a move: off this table, not yet at the next
                        failpoints.hit("tournament.mid_move")
        seated: set[str] = set()
        for t in s.tables:
            view = await self.table_state(t.table_id)
            seated |= {seat.player_id for seat in (view.seats if view is not None else ())}
        for table_id in sorted(between):
            for seat_no, player in s.table(table_id).players:
                if player in seated:
                    continue
                e = s.latest(player)
                assert e is not None
                await self.tables.SeatEntrant(pb.SeatEntrantRequest(
                    table_id=table_id, seat=seat_no, player_id=player, stack=e.carry,
                    seat_token_sha256=e.token_digest,
                    command_id=f"{tid}.on.{player_digest(player)}.{e.entry_no}.{e.placement}"))
        await self._levels(tid, between)

    async def _levels(self, tid: str, between: set[str]) -> None:
        s = (await self.log.get(tid)).state
        assert s is not None
        for table_id in sorted(between):
            await self.tables.SetLevel(pb.SetLevelRequest(
                table_id=table_id, level=level_message(s),
                command_id=f"{tid}.level.{s.level}"))

    async def _release(self, tid: str, between: set[str], held: set[str]) -> None:
        s = (await self.log.get(tid)).state
        assert s is not None
        views = {t.table_id: await self.table_state(t.table_id) for t in s.live_tables()
                 if t.table_id in between}
        seated = {t: len(v.seats) for t, v in views.items() if v is not None}
        for table_id in T.tables_to_release(s, between, held, seated):
            view = views[table_id]
            assert view is not None
            await self.tables.Release(pb.TableCommandRequest(
                table_id=table_id, command_id=f"{tid}.deal.{view.last_hand_no}"))


def _eliminate(table_id: str, hand_no: int, busts: list[tuple[str, int]], now_ms: int,
               t: TournamentState | None) -> list[E.TournamentEvent]:
    return D.eliminate(t, table_id, hand_no, busts, now_ms) if t else []


def _seat_late(player: str, seed: bytes, t: TournamentState | None) -> list[E.TournamentEvent]:
    return D.seat_late(t, player, seed, t.live_tables() or list(t.tables)) if t else []


def _table_ids(tid: str, s: TournamentState) -> list[str]:
    """The tables a start opens: ``<tournament>-1``, ``-2``, ..."""
    return [f"{tid}-{i + 1}" for i in range(D.tables_for_start(s))]


def _settled(s: TournamentState) -> bool:
    """No money left to move: buy-ins, refunds, the house's fees and overlay, prizes."""
    unsettled = any(e.status is EntryStatus.REQUESTED
                    or (e.status is EntryStatus.WITHDRAWN and not e.refunded)
                    for e in s.entries) or any(r.status is RebuyStatus.REQUESTED
                                               for r in s.rebuys)
    return (not unsettled and s.house_due() == (s.fees_paid, s.overlay_paid)
            and all(s.entry(p.player_id, p.entry_no).prize_paid for p in s.prize_requests))


async def open_seeds(js, replicas: int = 1):
    """The director's seed bucket (made if missing)."""
    from nats.js import api as js_api
    from nats.js.errors import BucketNotFoundError
    try:
        return await js.key_value(SEEDS)
    except BucketNotFoundError:
        return await js.create_key_value(js_api.KeyValueConfig(
            bucket=SEEDS, history=1, replicas=replicas, storage=js_api.StorageType.FILE,
            description="tournament draws' seeds, kept before their commitment"))


__all__ = ["Director", "KeyNotFoundError", "lease_name", "open_seeds", "wallet_key"]
