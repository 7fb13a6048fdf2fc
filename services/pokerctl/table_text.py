"""`pokerctl table`'s text: a table view as lines a person reads, the options of the player on
turn with the `pokerctl table act` lines that take them, and ``watch``'s line per view."""

from __future__ import annotations

import shlex
from collections.abc import Callable

from poker.table.v1 import table_pb2

from shared.infra.protomap import ACTION_KIND, GAME, STRUCTURE, legal_from
from shared.poker.players import printable


def seat_of(view: table_pb2.TableView, seat: int) -> table_pb2.SeatView | None:
    return next((s for s in view.seats if s.seat == seat), None)


def allows_raise_to(legal: table_pb2.Legal, to: int) -> bool:
    """Whether the view's legal actions let a bet or raise go to ``to``: the core's rule
    (:meth:`~shared.poker.betting.LegalActions.allows_raise_to`) on the view's numbers."""
    return legal_from(0, legal).allows_raise_to(to)


def _names(view: table_pb2.TableView) -> tuple[str, str, str]:
    game = GAME.from_pb(view.game).value if view.game else "?"
    structure = STRUCTURE.from_pb(view.structure).value if view.structure else "?"
    return game, structure, view.stakes


def options_text(view: table_pb2.TableView) -> str:
    return ", ".join(text for text, _ in legal_actions(view, ""))


def legal_actions(view: table_pb2.TableView, table: str) -> list[tuple[str, str]]:
    """The options of the player on turn: (what it is, the `pokerctl table act` line)."""
    if not view.to_act:
        return []
    legal, seat = view.legal, seat_of(view, view.to_act)
    stack = seat.stack if seat is not None else 0
    base = f"pokerctl table act --table {shlex.quote(table)} --seat {view.to_act} --action"
    out: list[tuple[str, str]] = []
    if legal.bring_in:
        out.append((f"bring in {legal.bring_in}", f"{base} bring_in"))
    if legal.can_fold:
        out.append(("fold", f"{base} fold"))
    if legal.can_check:
        out.append(("check", f"{base} check"))
    if legal.call:
        all_in = " (all in)" if legal.call >= stack else ""
        out.append((f"call {legal.call}{all_in}", f"{base} call"))
    if legal.raise_kind:
        kind = ACTION_KIND.from_pb(legal.raise_kind).value
        if legal.raise_sizes:
            for size in legal.raise_sizes:
                out.append((f"{kind} to {size}", f"{base} {kind} --amount {size}"))
        elif legal.min_to == legal.max_to:
            out.append((f"{kind} to {legal.min_to}", f"{base} {kind} --amount {legal.min_to}"))
        else:
            out.append((f"{kind} to {legal.min_to}..{legal.max_to}",
                        f"{base} {kind} --amount {legal.min_to}"))
        everything = stack + (seat.bet if seat is not None else 0)
        if allows_raise_to(legal, everything):
            out.append((f"all in ({kind} to {everything})", f"{base} all_in"))
    return out


def _cards(cards) -> str:
    return " ".join(cards) if cards else "-"


def render(view: table_pb2.TableView, viewer: int, table: str) -> str:
    """The table as text: the hand, the board, the pots, each seat, and the options of the
    player on turn with the commands that take them."""
    game, structure, stakes = _names(view)
    flags = [f for f, on in (("paused", view.paused), ("closing", view.closing)) if on]
    lines = [f"table {view.table_id}: {game} {structure} {stakes}, {view.max_seats} seats"
             f"{' (' + ', '.join(flags) + ')' if flags else ''}; version {view.version}",
             f"hand {view.hand_no}: {view.phase}" + (f", street {view.street}, button seat "
                                                    f"{view.button}" if view.hand_no else "")]
    if view.hand_no:
        pots = ", ".join(f"{p.amount} (seats {','.join(map(str, p.eligible))})"
                         for p in view.pots)
        lines.append(f"board: {_cards(view.board)}   pot {view.pot}"
                     + (f" [{pots}]" if len(view.pots) > 1 else "")
                     + f"   current bet {view.current_bet}"
                     + (f"   rake {view.rake}" if view.rake else ""))
    for s in view.seats:
        notes = []
        if s.in_hand:
            notes.append("folded" if s.folded else "all in" if s.all_in else "in the hand")
        if s.sitting_out:
            notes.append("sitting out")
        if not s.connected:
            notes.append("disconnected")
        if s.pending:
            notes.append(f"{s.pending} chips on their way")
        if s.shown:
            notes.append("shown")
        if s.seat == viewer:
            notes.append("you")
        turn = "-> " if s.seat == view.to_act else "   "
        cards = f"  cards {_cards(s.cards)}" if s.cards else ""
        shown = printable(s.name or s.player_id)
        lines.append(f"{turn}seat {s.seat}  {shown:<12} stack {s.stack:<7} bet "
                     f"{s.bet:<6}{cards}  ({', '.join(notes) or 'waiting'})")
    if view.to_act:
        seat = seat_of(view, view.to_act)
        who = f"seat {view.to_act}" + (
            f" ({printable(seat.name or seat.player_id)})" if seat is not None else "")
        clock = ""
        if view.deadline_unix_ms and view.server_unix_ms:
            left = max(0, view.deadline_unix_ms - view.server_unix_ms) / 1000
            clock = f", {left:.1f} s on the clock"
        legal = view.legal
        lines.append(f"{who} to act{clock}: call {legal.call}, can check "
                     f"{'yes' if legal.can_check else 'no'}, "
                     + (f"{ACTION_KIND.from_pb(legal.raise_kind).value} "
                        + (f"sizes {list(legal.raise_sizes)}" if legal.raise_sizes
                           else f"min_to {legal.min_to} max_to {legal.max_to}")
                        if legal.raise_kind else "no bet or raise")
                     + (f", bring-in {legal.bring_in}" if legal.bring_in else ""))
        options = legal_actions(view, table)
        width = max(len(text) for text, _ in options) if options else 0
        for text, command in options:
            lines.append(f"  {text:<{width}}   {command}")
    elif view.hand_no and view.phase != "done":
        lines.append("nobody to act: the dealer carries on")
    return "\n".join(lines)


class Follower:
    """The line of each new view, and a line when a hand is over (said once per hand, even
    when the stream skipped its last view)."""

    def __init__(self, table: str, viewer: int, full: bool,
                 out: Callable[[str], None]) -> None:
        self.table, self.viewer, self.full, self.out = table, viewer, full, out
        self.hand = 0
        self.ended: set[int] = set()

    def show(self, view: table_pb2.TableView) -> None:
        if self.hand and view.hand_no != self.hand and self.hand not in self.ended:
            self.ended.add(self.hand)
            self.out(f"hand {self.hand} is over")
        self.hand = view.hand_no
        if self.full:
            self.out(render(view, self.viewer, self.table) + "\n")
        else:
            self.out(self.line(view))
        if view.phase == "done" and view.hand_no not in self.ended:
            self.ended.add(view.hand_no)
            stacks = ", ".join(f"seat {s.seat} {printable(s.name or s.player_id)} {s.stack}"
                               for s in view.seats)
            self.out(f"hand {view.hand_no} is over: {stacks}")

    def line(self, view: table_pb2.TableView) -> str:
        text = f"v{view.version} hand {view.hand_no} {view.phase}"
        if view.hand_no:
            text += f"  board {_cards(view.board)}  pot {view.pot}"
        for s in view.seats:
            if s.shown and s.cards:
                text += f"  seat {s.seat} shows {_cards(s.cards)}"
        mine = seat_of(view, self.viewer) if self.viewer else None
        if mine is not None and mine.cards:
            text += f"  your cards {_cards(mine.cards)}"
        if view.to_act:
            seat = seat_of(view, view.to_act)
            who = printable(seat.name or seat.player_id) if seat is not None else "?"
            text += f"  to act: seat {view.to_act} ({who}): {options_text(view)}"
        return text
