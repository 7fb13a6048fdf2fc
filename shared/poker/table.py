"""Table-level decisions: creating a table, seats, and starting the next hand (RULES.md §7)."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from . import events as E
from .clock import on_turn
from .decide import start_hand
from .errors import IllegalAction
from .events import ActionKind
from .options import MAX_CHIPS, TableOptions, buy_in_limits
from .players import canonical_name, check_subject, name_key, name_problem
from .seating import plan_hand
from .state import Saga, SagaKind, Seat, TableState

TABLE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def create_table(table: TableState | None, table_id: str,
                 options: TableOptions) -> list[E.TableCreated]:
    if table is not None:
        raise IllegalAction(f"table {table_id} already exists")
    if not TABLE_ID.fullmatch(table_id):
        raise IllegalAction("a table id is 1 to 64 letters, digits, '-' or '_'")
    return [E.TableCreated(table_id, options)]


def table_chips(table: TableState) -> int:
    """All the chips at the table: the seats' stacks (during a hand, as it started: the hand
    only moves them between players and the rake)."""
    return sum(s.stack for s in table.seats)


def _check_table_total(table: TableState, adding: int) -> None:
    """The chips at a table stay within the engine's bound (a winner's stack grows as others
    buy in, beyond what the options alone bound), so every stack, pot and bet fits it."""
    if table_chips(table) + adding > MAX_CHIPS:
        raise IllegalAction(f"the table already holds {table_chips(table)} chips: it may hold "
                            f"at most {MAX_CHIPS} in all")


def _cash_table(table: TableState, what: str) -> None:
    """IllegalAction at a tournament's table: its director seats, moves and removes players
    (shared/poker/tournament/tables.py); chips never come or go through the players."""
    if table.options.tournament:
        raise IllegalAction(f"table {table.table_id} plays tournament "
                            f"{table.options.tournament}: no {what} (its director seats, "
                            f"moves and removes players)")


def _check_key(table: TableState, key: str) -> None:
    if table.options.wallet and not key:
        raise ValueError("a table with a wallet needs the saga's key (the command id)")


def sit_down(table: TableState, seat: int, player_id: str, buy_in: int,
             token_digest: str, post_big_blind: bool = False,
             key: str = "", name: str = "") -> list[E.PlayerSeated | E.BuyInRequested]:
    """Take a free seat with a buy-in inside the table's limits; one seat per player. At a
    running table the newcomer posts a big blind to be dealt in at once, or waits for it.

    ``player_id`` is the player's id exactly (the identity provider's subject: two ids that
    differ in case are two players); ``name``, what is printed for them (else the id, which
    must then be a valid name: :mod:`shared.poker.players`), is kept in its normal form and
    unique at the table (:func:`seat_name`). At a table with a wallet the seat is held and the
    buy-in asked of the wallet (saga ``key``); the chips come with :func:`settled`."""
    _cash_table(table, "sitting down")
    _check_key(table, key)
    if table.closing:
        raise IllegalAction(f"table {table.table_id} is closing: it takes no new players")
    max_seats = table.options.max_seats
    if isinstance(seat, bool) or not isinstance(seat, int) or not 1 <= seat <= max_seats:
        raise IllegalAction(f"seats at this table are numbered 1 to {max_seats}")
    player_id = check_subject(player_id)
    taken = table.seat(seat)
    if taken is not None and not taken.leaving:
        raise IllegalAction(f"seat {seat} is taken")
    if taken is not None or _in_hand(table, seat):
        raise IllegalAction(f"seat {seat} frees when the hand in progress ends")
    same = next((s for s in table.seats if s.player_id == player_id), None)
    if same is not None:
        raise IllegalAction(f"you already have a seat at this table (seat {same.seat})")
    shown = seat_name(table, seat, player_id, name)
    low, high = buy_in_limits(table.options)
    if isinstance(buy_in, bool) or not isinstance(buy_in, int) or not low <= buy_in <= high:
        raise IllegalAction(f"the buy-in at this table is {low} to {high} chips")
    if buy_in % table.options.chip_unit:
        raise IllegalAction(f"the buy-in must be a multiple of the chip unit "
                            f"{table.options.chip_unit}")
    _check_table_total(table, buy_in + _pending_chips(table))
    if table.options.wallet:
        return [E.BuyInRequested(key, seat, player_id, buy_in, token_digest,
                                 bool(post_big_blind), name=shown)]
    return [E.PlayerSeated(seat, player_id, buy_in, token_digest, bool(post_big_blind),
                           name=shown)]


def seat_name(table: TableState, seat: int, player_id: str, name: str) -> str:
    """The name seat ``seat`` is shown with: ``name`` (else the player id) in its normal form,
    with a number after it (``alice (2)``) when another seat's name is the same
    (:func:`~shared.poker.players.name_key`); "" when that is the id itself (the log keeps
    no second copy of it). IllegalAction when neither is a valid name."""
    if not name and name_problem(player_id) is not None:
        raise IllegalAction("your sign-in carries no name that can be shown at a table (the "
                            "token's name, preferred_username or subject): "
                            f"{name_problem(player_id)}")
    shown = canonical_name(name or player_id)
    others = {name_key(s.shown_name) for s in table.seats if s.seat != seat}
    unique, n = shown, 1
    while name_key(unique) in others:
        n += 1
        unique = f"{shown} ({n})"
    return "" if unique == player_id else unique


def replace_seat_token(table: TableState, seat: int, player_id: str,
                       token_digest: str) -> list[E.SeatTokenReplaced]:
    """The player who holds ``seat`` gets a new seat token (its digest): the old one stops
    proving the seat. For a player who lost theirs (a new sign-in, another device): they prove
    who they are, not the token."""
    held = table.seat(seat)
    if held is None or held.player_id != player_id:
        raise IllegalAction(f"seat {seat} at this table is not yours")
    if not token_digest:
        raise IllegalAction("a new seat token's digest is required")
    if token_digest == held.token_digest:
        return []  # (already so: nothing to record)
    return [E.SeatTokenReplaced(seat, player_id, token_digest)]


def _in_hand(table: TableState, seat: int) -> bool:
    """The seat is dealt into the hand in progress."""
    hand = table.hand
    return hand is not None and table.hand_running and any(p.seat == seat for p in hand.players)


def _pending_chips(table: TableState) -> int:
    """Chips asked of the wallet that have not reached their seats yet."""
    return sum(g.amount for g in table.sagas if g.kind in (SagaKind.BUY_IN, SagaKind.TOP_UP))


def _seated(table: TableState, seat: int) -> Seat:
    s = table.seat(seat)
    if s is None:
        raise IllegalAction(f"seat {seat} is empty")
    return s


def _no_open_buy_in(table: TableState, seat: int) -> None:
    saga = table.seat_saga(seat)
    if saga is not None:
        what = "buy-in" if saga.kind is SagaKind.BUY_IN else "top-up"
        raise IllegalAction(f"seat {seat}'s {what} of {saga.amount} is still with the wallet: "
                            f"try again once it is confirmed or refused")


def _freed(table: TableState, s: Seat, key: str) -> list[object]:
    """The seat frees; at a table with a wallet its chips are cashed out first (saga
    ``key``)."""
    if table.options.wallet and s.stack > 0:
        _check_key(table, key)
        return [E.CashOutRequested(key, s.seat, s.player_id, s.stack), E.PlayerLeft(s.seat)]
    return [E.PlayerLeft(s.seat)]


def leave(table: TableState, seat: int, key: str = "") -> list[object]:
    """Leave the table. During a hand the player is marked leaving: their hand is folded at
    their turn and the seat frees when the hand ends (RULES §7). At a table with a wallet the
    chips go back to it (a cash-out, saga ``key``)."""
    _cash_table(table, "leaving: a player stays in until busted")
    s = _seated(table, seat)
    _no_open_buy_in(table, seat)
    if _in_hand(table, seat):
        if s.leaving:
            raise IllegalAction("you are already leaving: the seat frees when the hand ends")
        return [E.PlayerLeaving(seat)]
    return _freed(table, s, key)


def disconnect(table: TableState, seat: int) -> list[E.PlayerDisconnected]:
    if not _seated(table, seat).connected:
        raise IllegalAction(f"seat {seat} is already disconnected")
    return [E.PlayerDisconnected(seat)]


def reconnect(table: TableState, seat: int) -> list[E.PlayerReconnected]:
    if _seated(table, seat).connected:
        raise IllegalAction(f"seat {seat} is connected")
    return [E.PlayerReconnected(seat)]


def restart_clock(table: TableState, seat: int,
                  refused_at_ms: int) -> list[E.ClockRestarted]:
    """The log refused the table's appends (out of space) from ``refused_at_ms`` while
    ``seat`` was on the clock: now that it accepts again, the decision starts again
    (shared/poker/clock.py)."""
    turn = on_turn(table)
    if turn is None or turn[1] != seat:
        raise IllegalAction(f"seat {seat} is not on the clock")
    return [E.ClockRestarted(seat, refused_at_ms)]


def sit_out(table: TableState, seat: int, sitting_out: bool,
            post_big_blind: bool = False) -> list[E.PlayerSatOut]:
    """Sit out from the next hand, or come back; a player who missed blinds posts them now
    (``post_big_blind``) or waits for the big blind."""
    _cash_table(table, "sitting out: an away player is dealt in and blinded away")
    s = _seated(table, seat)
    if s.sitting_out == sitting_out:
        raise IllegalAction("you are already sitting out" if sitting_out
                            else "you are not sitting out")
    return [E.PlayerSatOut(seat, sitting_out, bool(post_big_blind) and not sitting_out)]


def top_up(table: TableState, seat: int, amount: int,
           key: str = "") -> list[E.PlayerToppedUp | E.BuyInRequested]:
    """Add chips between hands, up to the table's maximum buy-in (table stakes). At a table
    with a wallet the chips are asked of it (saga ``key``) and come with :func:`settled`."""
    _cash_table(table, "top-up")
    _check_key(table, key)
    s = _seated(table, seat)
    _no_open_buy_in(table, seat)
    if _in_hand(table, seat):
        raise IllegalAction("chips are added between hands: wait for this hand to end")
    if isinstance(amount, bool) or not isinstance(amount, int) or amount <= 0:
        raise IllegalAction("a top-up is a positive whole number of chips")
    _, high = buy_in_limits(table.options)
    if s.stack + amount > high:
        raise IllegalAction(f"a stack may hold at most {high} chips: you may add up to "
                            f"{max(0, high - s.stack)}")
    if amount % table.options.chip_unit:
        raise IllegalAction(f"a top-up must be a multiple of the chip unit "
                            f"{table.options.chip_unit}")
    _check_table_total(table, amount + _pending_chips(table))
    if table.options.wallet:
        return [E.BuyInRequested(key, seat, s.player_id, amount, top_up=True)]
    return [E.PlayerToppedUp(seat, amount)]


def settleable(table: TableState) -> tuple[Saga, ...]:
    """The sagas the wallet can settle now, oldest first: all but a top-up of a seat in the
    running hand (its chips wait for the hand to end: table stakes)."""
    hand = table.hand
    running = ({p.seat for p in hand.players} if hand is not None and table.hand_running
               else set())
    return tuple(g for g in table.sagas
                 if not (g.kind is SagaKind.TOP_UP and g.seat in running))


def settled(table: TableState, key: str, refusal: str | None = None) -> list[object]:
    """The wallet answered saga ``key``: the event that closes it. ``refusal``: the wallet's
    reason for refusing a buy-in or top-up (a cash-out or the rake cannot be refused)."""
    saga = table.saga(key)
    if saga is None or saga not in settleable(table):
        raise IllegalAction(f"saga {key!r} is not open for settling")
    if refusal is not None:
        if saga.kind not in (SagaKind.BUY_IN, SagaKind.TOP_UP):
            raise IllegalAction(f"a {saga.kind.value} cannot be refused")
        return [E.BuyInRefused(key, refusal)]
    return [{SagaKind.BUY_IN: E.BuyInConfirmed, SagaKind.TOP_UP: E.BuyInConfirmed,
             SagaKind.CASH_OUT: E.CashOutConfirmed, SagaKind.RAKE: E.RakeCredited}[saga.kind](key)]


def pause(table: TableState, paused: bool) -> list[E.TablePaused]:
    """An operator pauses the table (the running hand plays out; no new one starts) or
    resumes it."""
    if table.closing:
        raise IllegalAction(f"table {table.table_id} is closing")
    if table.paused == paused:
        raise IllegalAction("the table is already paused" if paused
                            else "the table is not paused")
    return [E.TablePaused(bool(paused))]


def configure(table: TableState, options: TableOptions) -> list[E.TableConfigured]:
    """An operator changes the table's options between hands (pause the table, let the hand
    end, configure, resume): stakes, rake, clock, buy-in limits. The game, the structure and
    where the chips come from stay; the seats taken must still exist. Stacks are kept as
    they are (table stakes), whatever the new buy-in limits."""
    if table.closing:
        raise IllegalAction(f"table {table.table_id} is closing")
    if table.hand_running:
        raise IllegalAction("options change between hands: pause the table and let the "
                            "running hand end")
    old = table.options
    if (options.game, options.structure) != (old.game, old.structure):
        raise IllegalAction(f"the table plays {old.game.value} {old.structure.value}: a table "
                            f"keeps its game and structure (open another table)")
    if options.wallet != old.wallet:
        raise IllegalAction("where a table's chips come from does not change")
    taken = max((s.seat for s in table.seats), default=0)
    if options.max_seats < taken:
        raise IllegalAction(f"seat {taken} is taken: the table needs at least {taken} seats")
    if options == old:
        raise IllegalAction("those are the table's options already")
    return [E.TableConfigured(options)]


def close(table: TableState, reason: str = "") -> list[E.TableClosing]:
    """An operator closes the table: after the running hand everyone is cashed out."""
    if table.closing:
        raise IllegalAction(f"table {table.table_id} is already closing")
    return [E.TableClosing(reason)]


def start_next_hand(table: TableState) -> list[E.HandStarted]:
    if table.hand_running:
        raise IllegalAction("a hand is already running")
    if table.paused or table.closing:
        raise IllegalAction(f"table {table.table_id} is {'closing' if table.closing else 'paused'}")
    plan = plan_hand(table)
    if plan is None:
        raise IllegalAction("waiting for at least two players with chips")
    started = start_hand(table, table.last_hand_no + 1, plan.button, plan.dealt,
                         plan.forced_bets)
    return [replace(started[0], missed_big_blind=plan.missed_big_blind,
                    missed_small_blind=plan.missed_small_blind)]


# The table's own steps: shared/poker/steprules.py says when each is due, who takes it and
# how (``table_step``), beside the hand's.

@dataclass(frozen=True, slots=True)
class StartHand:
    """Nothing is running and at least two can play: the next hand starts."""


@dataclass(frozen=True, slots=True)
class FoldLeaver:
    """A player who left during the hand is on turn: their hand is folded (a stud bring-in,
    which cannot be folded, is posted)."""

    seat: int
    action: ActionKind = ActionKind.FOLD


@dataclass(frozen=True, slots=True)
class FreeSeat:
    """The hand is over: the seat of a player who left during it frees."""

    seat: int


def can_start_hand(table: TableState) -> bool:
    """Nothing is running, the table is neither paused nor closing, and at least two can
    play: the next hand starts (the table step :class:`StartHand`)."""
    if table.hand_running or table.paused or table.closing:
        return False
    return plan_hand(table) is not None


def waiting_to_be_freed(table: TableState, s: Seat) -> bool:
    """Between hands: the seat of a player who left during the hand frees, and at a closing
    table every seat does (once its chips are with it: no buy-in still with the wallet)."""
    return s.leaving or table.closing and table.seat_saga(s.seat) is None


def free_seat(table: TableState, seat: int, key: str = "") -> list[object]:
    s = _seated(table, seat)
    if not waiting_to_be_freed(table, s) or table.hand_running:
        raise IllegalAction(f"seat {seat} is not waiting to be freed")
    return _freed(table, s, key)
