"""A tournament's state, the fold of its events (:func:`apply`), and the queries on it."""

from __future__ import annotations

import enum
from collections.abc import Iterable

from ..errors import InvalidEvent
from ..evolve import Value, value
from . import events as E
from .balance import TableSeats
from .draw import check_reveal
from .structure import Structure


class Status(enum.Enum):
    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class EntryStatus(enum.Enum):
    REQUESTED = "requested"  # buy-in asked of the wallet
    PAID = "paid"  # in the field (seated or waiting for a seat)
    REFUSED = "refused"  # the wallet refused: never in the field
    WITHDRAWN = "withdrawn"  # unregistered or cancelled: refunded (or refund owed)
    BUSTED = "busted"


@value
class Entry(Value):
    player_id: str
    entry_no: int
    token_digest: str
    name: str
    status: EntryStatus = EntryStatus.REQUESTED
    table_id: str = ""
    seat: int = 0
    carry: int = 0  # the chips the entry sits down with at its table (start, or a move's)
    placement: int = 0  # how many times the entry was given a seat (names each seating)
    refunded: bool = False
    prize_paid: bool = False

    @property
    def key(self) -> tuple[str, int]:
        return self.player_id, self.entry_no


class RebuyStatus(enum.Enum):
    REQUESTED = "requested"  # its price asked of the wallet
    PAID = "paid"  # its chips owed to the player's stack (``added``: at their table)
    REFUSED = "refused"  # the wallet refused: no chips


@value
class Rebuy(Value):
    player_id: str
    entry_no: int
    rebuy_no: int
    status: RebuyStatus = RebuyStatus.REQUESTED
    added: bool = False  # its chips are on the player's stack
    add_on: bool = False  # the add-on (at the rebuy period's end), not a rebuy


@value
class TournamentState(Value):
    tournament_id: str
    structure: Structure
    name: str
    created_ms: int
    status: Status = Status.REGISTERING
    entries: tuple[Entry, ...] = ()
    rebuys: tuple[Rebuy, ...] = ()
    tables: tuple[TableSeats, ...] = ()
    level: int = -1  # -1: not started
    level_started_ms: int = 0
    started_ms: int = 0
    draws: int = 0  # seeds committed so far
    pending_commitment: str = ""  # the last seed committed, not yet revealed
    registration_closed: bool = False
    pool: int = 0
    prizes: tuple[int, ...] = ()
    busts: tuple[E.PlayersEliminated, ...] = ()
    prize_requests: tuple[E.PrizeRequested, ...] = ()
    winner: str = ""
    fees_paid: int = 0  # credited to the house
    overlay_paid: int = 0  # debited of the house

    def entry(self, player_id: str, entry_no: int) -> Entry:
        for e in self.entries:
            if e.key == (player_id, entry_no):
                return e
        raise InvalidEvent(f"no entry {entry_no} of {player_id!r}")

    def latest(self, player_id: str) -> Entry | None:
        mine = [e for e in self.entries if e.player_id == player_id]
        return mine[-1] if mine else None

    def in_field(self) -> list[Entry]:
        """Paid entries not busted: seated or waiting for a seat."""
        return [e for e in self.entries if e.status is EntryStatus.PAID]

    def paid_entries(self) -> int:
        """Entries that bought in and were not withdrawn (the field for the payouts)."""
        return sum(e.status in (EntryStatus.PAID, EntryStatus.BUSTED) for e in self.entries)

    def rebuy(self, player_id: str, rebuy_no: int) -> Rebuy:
        for r in self.rebuys:
            if (r.player_id, r.rebuy_no) == (player_id, rebuy_no):
                return r
        raise InvalidEvent(f"no rebuy {rebuy_no} of {player_id!r}")

    def paid_rebuys(self, add_on: bool = False) -> int:
        """Rebuys (or add-ons) the wallet paid (their price is in the pool)."""
        return sum(r.status is RebuyStatus.PAID and r.add_on == add_on for r in self.rebuys)

    def rebuy_money(self) -> int:
        """The price of the rebuys and add-ons paid: all of it in the pool."""
        st = self.structure
        return (self.paid_rebuys() * st.rebuy_price
                + self.paid_rebuys(add_on=True) * st.add_on_price)

    def chips_of(self, r: Rebuy) -> int:
        return self.structure.add_on_chips if r.add_on else self.structure.rebuy_chips

    def price_of(self, r: Rebuy) -> int:
        return self.structure.add_on_price if r.add_on else self.structure.rebuy_price

    def house_due(self) -> tuple[int, int]:
        """What the house takes and gives once registration has closed (nothing before:
        until then an entry may be refunded): the field's fees, credited to it, and the
        guarantee's overlay (the pool less the buy-ins), debited of it."""
        if not self.registration_closed:
            return 0, 0
        entries, st = self.paid_entries(), self.structure
        return (entries * st.fee,
                self.pool - entries * st.buy_in - self.rebuy_money())

    def table(self, table_id: str) -> TableSeats:
        for t in self.tables:
            if t.table_id == table_id:
                return t
        raise InvalidEvent(f"no table {table_id!r} in this tournament")

    def live_tables(self) -> list[TableSeats]:
        return [t for t in self.tables if t.players]


def _with_entry(s: TournamentState, e: Entry) -> TournamentState:
    return s.evolve(entries=tuple(e if x.key == e.key else x for x in s.entries))


def _with_table(s: TournamentState, t: TableSeats) -> TournamentState:
    return s.evolve(tables=tuple(t if x.table_id == t.table_id else x for x in s.tables))


def _seat(s: TournamentState, player: str, table_id: str, seat: int,
          carry: int) -> TournamentState:
    e = s.latest(player)
    if e is None or e.status is not EntryStatus.PAID:
        raise InvalidEvent(f"{player!r} has no entry in the field to seat")
    t = s.table(table_id)
    if seat in dict(t.players) or seat not in range(1, t.max_seats + 1):
        raise InvalidEvent(f"seat {seat} at {table_id} is not free")
    s = _with_table(s, t.with_player(seat, player))
    return _with_entry(s, e.evolve(table_id=table_id, seat=seat, carry=carry,
                                   placement=e.placement + 1))


def _unseat(s: TournamentState, e: Entry) -> TournamentState:
    if e.table_id:
        s = _with_table(s, s.table(e.table_id).without_seat(e.seat))
    return s


def _with_rebuy(s: TournamentState, r: Rebuy) -> TournamentState:
    return s.evolve(rebuys=tuple(r if (x.player_id, x.rebuy_no) == (r.player_id, r.rebuy_no)
                                 else x for x in s.rebuys))


def _rebuy_event(s: TournamentState, ev: E.RebuyRequested | E.RebuyPaid | E.RebuyRefused
                 | E.RebuyChipsAdded) -> TournamentState:
    """A rebuy asked for (by an entry in the field, numbered next), settled, or its chips
    added (once, paid, as many as the structure's)."""
    if isinstance(ev, E.RebuyRequested):
        e = s.entry(ev.player_id, ev.entry_no)
        mine = sum(r.player_id == ev.player_id for r in s.rebuys)
        twice = ev.add_on and any(r.add_on and r.player_id == ev.player_id
                                  and r.status is not RebuyStatus.REFUSED for r in s.rebuys)
        if (e.status is not EntryStatus.PAID or ev.rebuy_no != mine + 1
                or s.registration_closed or twice):
            raise InvalidEvent(f"{ev.player_id!r} cannot ask for rebuy {ev.rebuy_no} now")
        return s.evolve(rebuys=(*s.rebuys, Rebuy(ev.player_id, ev.entry_no, ev.rebuy_no,
                                                 add_on=ev.add_on)))
    r = s.rebuy(ev.player_id, ev.rebuy_no)
    if isinstance(ev, E.RebuyChipsAdded):
        if r.status is not RebuyStatus.PAID or r.added or ev.chips != s.chips_of(r):
            raise InvalidEvent(f"rebuy {ev.rebuy_no} of {ev.player_id!r} owes no chips")
        return _with_rebuy(s, r.evolve(added=True))
    if r.status is not RebuyStatus.REQUESTED:
        raise InvalidEvent(f"rebuy {ev.rebuy_no} of {ev.player_id!r} is settled")
    return _with_rebuy(s, r.evolve(status=RebuyStatus.PAID if isinstance(ev, E.RebuyPaid)
                                   else RebuyStatus.REFUSED))


def _reveal(s: TournamentState, draw_no: int, seed: str) -> TournamentState:
    if draw_no != s.draws or not s.pending_commitment:
        raise InvalidEvent(f"draw {draw_no} was not the last committed")
    check_reveal(bytes.fromhex(seed), s.pending_commitment)
    return s.evolve(pending_commitment="")


def _moved(s: TournamentState, ev: E.PlayersMoved) -> TournamentState:
    if ev.broken:
        s = _reveal(s, ev.draw_no, ev.seed)
    if ev.stacks and len(ev.stacks) != len(ev.moves):
        raise InvalidEvent("a move without its stack")
    for i, m in enumerate(ev.moves):
        moving = s.latest(m.player_id)
        if moving is None or (moving.table_id, moving.seat) != (m.from_table, m.from_seat):
            raise InvalidEvent(f"{m.player_id!r} is not at {m.from_table} seat {m.from_seat}")
        s = _seat(_unseat(s, moving), m.player_id, m.to_table, m.to_seat,
                  ev.stacks[i] if ev.stacks else moving.carry)
    return s


def _eliminated(s: TournamentState, ev: E.PlayersEliminated) -> TournamentState:
    for b in ev.busts:
        e = s.entry(b.player_id, b.entry_no)
        if e.status is not EntryStatus.PAID:
            raise InvalidEvent(f"{b.player_id!r} is not in the field")
        s = _with_entry(_unseat(s, e), e.evolve(status=EntryStatus.BUSTED, table_id="",
                                                seat=0))
    return s.evolve(busts=(*s.busts, ev))


def _house_paid(s: TournamentState, ev: E.FeesPaid | E.OverlayPaid) -> TournamentState:
    """The house's fees or overlay: what is due (TournamentState.house_due), once."""
    fees, overlay = s.house_due()
    if isinstance(ev, E.FeesPaid):
        if s.fees_paid or ev.amount != fees:
            raise InvalidEvent(f"fees of {ev.amount}: the house is owed {fees}, once")
        return s.evolve(fees_paid=ev.amount)
    if s.overlay_paid or ev.amount != overlay:
        raise InvalidEvent(f"an overlay of {ev.amount}: the house owes {overlay}, once")
    return s.evolve(overlay_paid=ev.amount)


def apply(s: TournamentState | None, ev: E.TournamentEvent) -> TournamentState:  # noqa: C901 (one branch per event: a dispatch)
    """The state after ``ev``; InvalidEvent for an event that cannot follow ``s``."""
    if isinstance(ev, E.TournamentCreated):
        if s is not None:
            raise InvalidEvent("the tournament exists")
        return TournamentState(ev.tournament_id, ev.structure, ev.name, ev.created_ms)
    if s is None:
        raise InvalidEvent("no tournament yet")
    match ev:
        case E.EntryRequested():
            return s.evolve(entries=(*s.entries, Entry(ev.player_id, ev.entry_no,
                                                       ev.token_digest, ev.name)))
        case E.EntryPaid():
            return _with_entry(s, s.entry(ev.player_id, ev.entry_no).evolve(
                status=EntryStatus.PAID))
        case E.EntryRefused():
            return _with_entry(s, s.entry(ev.player_id, ev.entry_no).evolve(
                status=EntryStatus.REFUSED))
        case E.Unregistered():
            e = s.entry(ev.player_id, ev.entry_no)
            return _with_entry(_unseat(s, e), e.evolve(status=EntryStatus.WITHDRAWN,
                                                       table_id="", seat=0))
        case E.RefundPaid():
            return _with_entry(s, s.entry(ev.player_id, ev.entry_no).evolve(refunded=True))
        case E.RebuyRequested() | E.RebuyPaid() | E.RebuyRefused() | E.RebuyChipsAdded():
            return _rebuy_event(s, ev)
        case E.SeedCommitted():
            if ev.draw_no != s.draws + 1:
                raise InvalidEvent(f"draw {ev.draw_no} after draw {s.draws}")
            return s.evolve(draws=ev.draw_no, pending_commitment=ev.commitment)
        case E.TableOpened():
            return s.evolve(tables=(*s.tables, TableSeats(ev.table_id, ev.max_seats, ())))
        case E.PlayersSeated():
            s = _reveal(s, ev.draw_no, ev.seed)
            for st in ev.seatings:
                s = _seat(s, st.player_id, st.table_id, st.seat, s.structure.starting_stack)
            return s
        case E.TournamentStarted():
            return s.evolve(status=Status.RUNNING, started_ms=ev.started_ms)
        case E.LevelStarted():
            return s.evolve(level=ev.level, level_started_ms=ev.at_ms)
        case E.RegistrationClosed():
            return s.evolve(registration_closed=True, pool=ev.pool, prizes=ev.prizes)
        case E.PlayersMoved():
            return _moved(s, ev)
        case E.PlayersEliminated():
            return _eliminated(s, ev)
        case E.PrizeRequested():
            return s.evolve(prize_requests=(*s.prize_requests, ev))
        case E.PrizePaid():
            return _with_entry(s, s.entry(ev.player_id, ev.entry_no).evolve(prize_paid=True))
        case E.FeesPaid() | E.OverlayPaid():
            return _house_paid(s, ev)
        case E.TournamentFinished():
            return s.evolve(status=Status.FINISHED, winner=ev.winner)
        case E.TournamentCancelled():
            return s.evolve(status=Status.CANCELLED)
    raise InvalidEvent(f"unknown event {type(ev).__name__}")


def fold(events: Iterable[E.TournamentEvent],
         state: TournamentState | None = None) -> TournamentState | None:
    for ev in events:
        state = apply(state, ev)
    return state
