"""The director's decisions: each returns the events to append, or raises IllegalAction with
a reason the caller can act on. The caller passes the time, each draw's seed (committed
before, :mod:`.draw`) and the tables' last big blinds; nothing here reads a clock or a random
source."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..errors import IllegalAction, InvalidEvent
from . import events as E
from .balance import (
    TableSeats,
    balance,
    break_table,
    breakable,
    first_seating,
    late_seat,
    tables_needed,
)
from .draw import check_reveal, commitment
from .payouts import prize_pool, prizes, shares_for
from .ranking import placings
from .state import EntryStatus, Rebuy, RebuyStatus, Status, TournamentState
from .structure import (
    Kind,
    Structure,
    add_on_window,
    late_registration_open,
    level_at,
    rebuy_period,
)

TOURNAMENT_ID = re.compile(r"[A-Za-z0-9_-]{1,48}")
TOKEN_SHA256 = re.compile(r"[0-9a-f]{64}")
#: entries a player may withdraw (or have refused by the wallet) in one tournament: each is
#: in its log for ever, so registering and unregistering in a loop is bounded (a player's
#: entries are at most ``max_entries`` bought and these undone; the field at most
#: ``max_players`` at once)
MAX_UNDONE_ENTRIES = 3


def create(state: TournamentState | None, tournament_id: str, structure: Structure,
           name: str, now_ms: int) -> list[E.TournamentEvent]:
    if state is not None:
        raise IllegalAction(f"tournament {tournament_id} already exists")
    if not TOURNAMENT_ID.fullmatch(tournament_id):
        raise IllegalAction("a tournament id is 1 to 48 letters, digits, '-' or '_'")
    return [E.TournamentCreated(tournament_id, structure, name, now_ms)]


def _registration_open(s: TournamentState) -> bool:
    if s.status is Status.REGISTERING:
        return True
    return (s.status is Status.RUNNING and not s.registration_closed
            and late_registration_open(s.structure, s.level))


def register(s: TournamentState, player: str, token_digest: str,
             name: str) -> list[E.TournamentEvent]:
    """An entry (or a re-entry, for a busted player while late registration is open)."""
    if not TOKEN_SHA256.fullmatch(token_digest):
        raise IllegalAction("the seat token's SHA-256 is 64 lowercase hex digits")
    if not _registration_open(s):
        raise IllegalAction(f"registration for {s.tournament_id} is closed")
    latest = s.latest(player)
    if latest is not None and latest.status in (EntryStatus.REQUESTED, EntryStatus.PAID):
        raise IllegalAction(f"{player} is already registered")
    bought = sum(e.player_id == player and e.status in (EntryStatus.PAID, EntryStatus.BUSTED)
                 for e in s.entries)
    if bought >= s.structure.max_entries:
        raise IllegalAction(f"{player} has had {bought} of the {s.structure.max_entries} "
                            f"entries allowed")
    undone = sum(e.player_id == player and e.status in (EntryStatus.WITHDRAWN,
                                                        EntryStatus.REFUSED)
                 for e in s.entries)
    if undone >= MAX_UNDONE_ENTRIES:
        raise IllegalAction(f"{player} has withdrawn or been refused {undone} entries to "
                            f"{s.tournament_id}: it takes no more from {player}")
    taken = sum(e.status in (EntryStatus.REQUESTED, EntryStatus.PAID, EntryStatus.BUSTED)
                for e in s.entries)
    if taken >= s.structure.max_players:
        raise IllegalAction(f"the field is full ({s.structure.max_players} entries)")
    entry_no = latest.entry_no + 1 if latest is not None else 1
    return [E.EntryRequested(player, entry_no, token_digest, name)]


def settle_entry(s: TournamentState, player: str, entry_no: int, paid: bool,
                 reason: str = "") -> list[E.TournamentEvent]:
    """The wallet's answer to an entry's debit."""
    if s.entry(player, entry_no).status is not EntryStatus.REQUESTED:
        return []
    if paid:
        return [E.EntryPaid(player, entry_no)]
    return [E.EntryRefused(player, entry_no, reason or "the wallet refused the buy-in")]


def unregister(s: TournamentState, player: str) -> list[E.TournamentEvent]:
    """Withdraw a paid entry before the start: the buy-in and fee are refunded."""
    e = s.latest(player)
    if e is None or e.status is not EntryStatus.PAID:
        raise IllegalAction(f"{player} has no paid entry in {s.tournament_id}")
    if s.status is not Status.REGISTERING:
        raise IllegalAction("the tournament has started: entries stand")
    return [E.Unregistered(player, e.entry_no)]


def cancel(s: TournamentState, reason: str) -> list[E.TournamentEvent]:
    """Cancel before the start: every paid entry is refunded."""
    if s.status is not Status.REGISTERING:
        raise IllegalAction("only a tournament that has not started can be cancelled")
    return [*(E.Unregistered(e.player_id, e.entry_no) for e in s.in_field()),
            E.TournamentCancelled(reason)]


def commit_seed(s: TournamentState, seed: bytes) -> list[E.TournamentEvent]:
    if s.pending_commitment:
        raise IllegalAction("a committed seed is waiting for its draw")
    return [E.SeedCommitted(s.draws + 1, commitment(seed))]


def ready_to_start(s: TournamentState) -> bool:
    """A sit-and-go starts when full (every buy-in settled)."""
    return (s.status is Status.REGISTERING and s.structure.kind is Kind.SIT_AND_GO
            and s.paid_entries() >= s.structure.max_players
            and not any(e.status is EntryStatus.REQUESTED for e in s.entries))


def revealed(s: TournamentState, seed: bytes) -> tuple[int, str]:
    """The draw a decision reveals ``seed`` for, and the seed as the log keeps it (hex).
    The seed must be the one committed last and not revealed yet: a decision on any other
    (a director that made a seed of its own while another committed theirs) appends nothing,
    so every reveal in the log folds (state.py checks it again)."""
    if not s.pending_commitment:
        raise IllegalAction(f"draw {s.draws + 1} has no committed seed yet: commit one first")
    try:
        check_reveal(seed, s.pending_commitment)
    except InvalidEvent:
        raise IllegalAction(f"this seed is not the one committed for draw {s.draws}: the "
                            f"draw uses the seed kept before its commitment") from None
    return s.draws, seed.hex()


def check_start(s: TournamentState) -> None:
    """IllegalAction unless the tournament may start now (before a seed is committed for
    the first seating: a refused start commits nothing)."""
    if s.status is not Status.REGISTERING:
        raise IllegalAction(f"tournament {s.tournament_id} has already started")
    field = len(s.in_field())
    if field < s.structure.min_players:
        raise IllegalAction(f"{field} entries: it needs at least {s.structure.min_players}")
    if any(e.status is EntryStatus.REQUESTED for e in s.entries):
        raise IllegalAction("a buy-in is being settled with the wallet: try again")


def start(s: TournamentState, seed: bytes, table_ids: Sequence[str],
          now_ms: int) -> list[E.TournamentEvent]:
    """The first seating at ``table_ids`` (as many as :func:`tables_for_start`) drawn with
    the committed ``seed``, level 1; registration closes now unless it stays open for late
    levels."""
    check_start(s)
    if len(table_ids) != tables_for_start(s):
        raise IllegalAction(f"the start needs {tables_for_start(s)} tables")
    draw_no, seed_hex = revealed(s, seed)
    per_table = s.structure.seats_per_table
    field = [e.player_id for e in s.in_field()]
    seatings = first_seating(field, [(t, per_table) for t in table_ids], seed)
    out: list[E.TournamentEvent] = [E.TournamentStarted(now_ms)]
    out += [E.TableOpened(t, per_table) for t in table_ids]
    out += [E.PlayersSeated(draw_no, seed_hex, seatings), E.LevelStarted(0, now_ms)]
    if not s.structure.late_levels and not s.structure.rebuy_levels:
        out.append(lock_payouts(s))
    return out


def tables_for_start(s: TournamentState) -> int:
    return tables_needed(len(s.in_field()), s.structure.seats_per_table)


def lock_payouts(s: TournamentState) -> E.RegistrationClosed:
    """The payouts locked on the field and the paid rebuys and add-ons (the table by the
    field)."""
    entries, st = s.paid_entries(), s.structure
    pool = prize_pool(entries, st.buy_in, st.guarantee, s.rebuy_money())
    return E.RegistrationClosed(entries, pool, prizes(pool, shares_for(entries)),
                                s.paid_rebuys(), s.paid_rebuys(add_on=True))


def _may_close(s: TournamentState, level_index: int) -> bool:
    """Late registration, the rebuy period and the add-on over, no rebuy's price being
    settled."""
    return (not late_registration_open(s.structure, level_index)
            and not rebuy_period(s.structure, level_index)
            and not add_on_window(s.structure, level_index)
            and not any(r.status is RebuyStatus.REQUESTED for r in s.rebuys))


def next_level(s: TournamentState, now_ms: int) -> list[E.TournamentEvent]:
    """The level due at ``now_ms`` when it is not the current one (it applies from each
    table's next hand), and the close of registration when late registration ends."""
    if s.status is not Status.RUNNING:
        return []
    due, _ = level_at(s.structure, now_ms - s.started_ms)
    out: list[E.TournamentEvent] = []
    if due > s.level:
        out.append(E.LevelStarted(due, now_ms))
    if not s.registration_closed and _may_close(s, due):
        out.append(lock_payouts(s))
    return out


def rebuy(s: TournamentState, player: str, stack: int | None) -> list[E.TournamentEvent]:
    """A rebuy by ``player``, whose stack at their table is ``stack`` (None: not seated):
    during the rebuy period, at most the starting stack, up to ``max_rebuys``; its chips are
    added between hands once the wallet has paid."""
    st, tid = s.structure, s.tournament_id
    if not st.rebuy_levels:
        raise IllegalAction(f"{tid} has no rebuys")
    if s.status is Status.REGISTERING:
        raise IllegalAction(f"rebuys open when {tid} starts")
    if (s.status is not Status.RUNNING or s.registration_closed
            or not rebuy_period(st, s.level)):
        raise IllegalAction(f"the rebuy period of {tid} is over (it lasted "
                            f"{st.rebuy_levels} level(s))")
    entry_no, mine = _buyer(s, player, stack)
    bought = sum(r.status is RebuyStatus.PAID and not r.add_on for r in mine)
    if bought >= st.max_rebuys:
        raise IllegalAction(f"{player} has made {bought} of the {st.max_rebuys} rebuys "
                            f"allowed")
    if stack is not None and stack > st.starting_stack:
        raise IllegalAction(f"your stack is {stack}: a rebuy needs a stack of at most the "
                            f"starting stack, {st.starting_stack}")
    return [E.RebuyRequested(player, entry_no, len(mine) + 1, stack or 0)]


def add_on(s: TournamentState, player: str, stack: int | None) -> list[E.TournamentEvent]:
    """The add-on by ``player`` (``stack``: as for :func:`rebuy`): once a player, any stack,
    during the last rebuy level and the break right after it."""
    st, tid = s.structure, s.tournament_id
    if not st.add_on_chips:
        raise IllegalAction(f"{tid} has no add-on")
    offered = (f"the add-on is offered during level {st.rebuy_levels} (the last rebuy level) "
               f"and a break right after it")
    if (s.status is not Status.RUNNING or s.registration_closed
            or not add_on_window(st, s.level)):
        raise IllegalAction(f"{offered}; {tid} is "
                            + (f"at level {s.level + 1}" if s.status is Status.RUNNING
                               else s.status.value))
    entry_no, mine = _buyer(s, player, stack)
    if any(r.add_on and r.status is RebuyStatus.PAID for r in mine):
        raise IllegalAction(f"{player} has taken the add-on: one a player")
    return [E.RebuyRequested(player, entry_no, len(mine) + 1, stack or 0, add_on=True)]


def _buyer(s: TournamentState, player: str, stack: int | None) -> tuple[int, list[Rebuy]]:
    """The entry of ``player`` buying chips (a rebuy or the add-on) and their rebuys so far;
    IllegalAction when out of the field, not seated, with chips still on their way, or
    refused by the wallet too often."""
    tid = s.tournament_id
    e = s.latest(player)
    if e is None or e.status is not EntryStatus.PAID:
        raise IllegalAction(f"{player} has no entry in play in {tid}")
    mine = [r for r in s.rebuys if r.player_id == player]
    if any(r.status is RebuyStatus.REQUESTED or (r.status is RebuyStatus.PAID and not r.added)
           for r in mine):
        raise IllegalAction("your last rebuy's chips reach your stack between hands: buy "
                            "again after that")
    refused = sum(r.status is RebuyStatus.REFUSED for r in mine)
    if refused >= MAX_UNDONE_ENTRIES:
        raise IllegalAction(f"the wallet refused {player} {refused} rebuys: {tid} takes no "
                            f"more from {player}")
    if stack is None:
        raise IllegalAction(f"{player} has no seat yet: buy chips once seated")
    return e.entry_no, mine


def settle_rebuy(s: TournamentState, player: str, rebuy_no: int, paid: bool,
                 reason: str = "") -> list[E.TournamentEvent]:
    """The wallet's answer to a rebuy's debit."""
    if s.rebuy(player, rebuy_no).status is not RebuyStatus.REQUESTED:
        return []
    if paid:
        return [E.RebuyPaid(player, rebuy_no)]
    return [E.RebuyRefused(player, rebuy_no, reason or "the wallet refused the rebuy")]


def rebuy_chips_added(s: TournamentState, player: str, rebuy_no: int,
                      table_id: str) -> list[E.TournamentEvent]:
    """A paid rebuy's (or add-on's) chips added at ``table_id`` (once)."""
    r = s.rebuy(player, rebuy_no)
    if r.status is not RebuyStatus.PAID or r.added:
        return []
    return [E.RebuyChipsAdded(player, rebuy_no, table_id, s.chips_of(r))]


def seat_late(s: TournamentState, player: str, seed: bytes,
              tables: Sequence[TableSeats]) -> list[E.TournamentEvent]:
    """A seat for a paid entry that has none (late registration, re-entry)."""
    e = s.latest(player)
    if e is None or e.status is not EntryStatus.PAID or e.table_id:
        raise IllegalAction(f"{player} has no entry waiting for a seat")
    draw_no, seed_hex = revealed(s, seed)
    return [E.PlayersSeated(draw_no, seed_hex, (late_seat(tables, player, seed),))]


def needs_break(s: TournamentState) -> bool:
    return bool(breakable(s.live_tables()))


def _with_big_blinds(s: TournamentState, big_blinds: Mapping[str, int]) -> list[TableSeats]:
    return [t.evolve(last_big_blind=big_blinds.get(t.table_id, 0)) for t in s.live_tables()]


def tables_moving(s: TournamentState, big_blinds: Mapping[str, int]) -> frozenset[str]:
    """The tables the next :func:`rebalance` involves (none: the tables are balanced): every
    live table for a break (which one breaks is drawn, and its players may go to any other),
    else the tables the balancing moves leave and join. A move is made only when all of
    them are between hands; until then they are held (no next hand), so that the move
    happens between two hands of each."""
    tables = _with_big_blinds(s, big_blinds)
    if breakable(tables):
        return frozenset(t.table_id for t in tables)
    return frozenset(x for m in balance(tables) for x in (m.from_table, m.to_table))


def rebalance(s: TournamentState, big_blinds: Mapping[str, int], seed: bytes | None,
              stacks: Mapping[str, int] | None = None) -> list[E.TournamentEvent]:
    """Break a table (``seed``: the draw committed for it) when the others can seat its
    players, else balance; [] when the tables are balanced. ``big_blinds``: each table's last
    big blind, ``stacks``: each player's stack (both from the tables' logs, between hands)."""
    tables = _with_big_blinds(s, big_blinds)
    stacks = stacks or {}
    if breakable(tables):
        if seed is None:
            raise IllegalAction("breaking a table needs a committed seed")
        draw_no, seed_hex = revealed(s, seed)
        broken, moves = break_table(tables, seed)
        return [E.PlayersMoved(moves, broken, draw_no, seed_hex,
                               tuple(stacks.get(m.player_id, 0) for m in moves))]
    moves = balance(tables)
    return [E.PlayersMoved(moves, stacks=tuple(stacks.get(m.player_id, 0) for m in moves))
            ] if moves else []


def hand_for_hand(s: TournamentState) -> bool:
    """On the bubble (one entry more than the places paid) at more than one table: every
    table waits for the others before its next hand."""
    return (s.registration_closed and len(s.live_tables()) > 1
            and len(s.in_field()) == len(s.prizes) + 1)


def eliminate(s: TournamentState, table_id: str, hand_no: int,
              busts: Sequence[tuple[str, int]], now_ms: int) -> list[E.TournamentEvent]:
    """``busts``: (player, stack at the hand's start) of those the hand left without chips;
    then the prizes their places (and the winner's, if one is left) earn."""
    if not busts:
        return []
    seated = {p for _, p in s.table(table_id).players}
    out: list[E.TournamentEvent] = []
    bust_list = []
    for player, start_stack in busts:
        e = s.latest(player)
        if player not in seated or e is None or e.status is not EntryStatus.PAID:
            raise IllegalAction(f"{player} is not in the field at {table_id}")
        bust_list.append(E.Bust(player, e.entry_no, start_stack))
    out.append(E.PlayersEliminated(table_id, hand_no, tuple(bust_list)))
    return out


def prizes_due(s: TournamentState, now_ms: int) -> list[E.TournamentEvent]:
    """The prizes of places decided and not yet asked for, and the end when one is left."""
    asked = {(p.player_id, p.entry_no) for p in s.prize_requests}
    out: list[E.TournamentEvent] = [
        E.PrizeRequested(p.player_id, p.entry_no, p.place, p.prize) for p in placings(s)
        if p.prize and (p.player_id, p.entry_no) not in asked]
    left = s.in_field()
    if (s.status is Status.RUNNING and s.registration_closed and len(left) == 1):
        out.append(E.TournamentFinished(left[0].player_id, now_ms))
    return out


def prize_paid(s: TournamentState, player: str, entry_no: int) -> list[E.TournamentEvent]:
    return [] if s.entry(player, entry_no).prize_paid else [E.PrizePaid(player, entry_no)]


def refund_paid(s: TournamentState, player: str, entry_no: int) -> list[E.TournamentEvent]:
    return [] if s.entry(player, entry_no).refunded else [E.RefundPaid(player, entry_no)]


def fees_paid(s: TournamentState) -> list[E.TournamentEvent]:
    """The house credited with the fees due (TournamentState.house_due), once."""
    fees, _ = s.house_due()
    return [E.FeesPaid(fees)] if fees and not s.fees_paid else []


def overlay_paid(s: TournamentState) -> list[E.TournamentEvent]:
    """The house debited with the overlay due (TournamentState.house_due), once."""
    _, overlay = s.house_due()
    return [E.OverlayPaid(overlay)] if overlay and not s.overlay_paid else []
