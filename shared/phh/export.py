"""Write a hand played by the engine as PHH text (loadable by pokerkit's ``HandHistory.loads``).

Conventions (the inverse of :mod:`shared.phh.replay`):

- Players ``p1``..``pN`` are the dealt-in seats clockwise from the button's left, so p1 is the
  small blind (stud: the dealer's left) and, heads-up, p1 is the big blind and p2 the button.
  The engine's seat numbers go to the standard ``seats`` field, ``max_seats`` to ``seat_count``.
- ``antes`` and ``blinds_or_straddles`` are per position (index 0 the small blind, 1 the big
  blind), reversed heads-up. A dead small blind is dead money and is written as an ante.
  ``ante_trimming_status`` is true for uniform antes (the specification's advice).
- Burns are not written. Hole cards: one ``d dh`` per player per street, in deal order; board
  cards: one ``d db`` per street (in stud only the common card of a deck that ran out, which
  pokerkit's stud cannot load). Amounts are "to" amounts (``cbr``), in chips (integers).
- Showdown: ``pN sm CARDS`` or ``pN sm`` (muck). In an all-in showdown (no betting on the last
  street) the shows come right after the last betting action, before the run-out, which is
  where pokerkit holds the showdown.
- Table options PHH cannot express are written as user fields (``_suit_order``, ``_chip_unit``,
  ``_max_bets``, ``_heads_up_uncapped``) when they differ from PHH's assumptions (bridge suit
  order, one-chip unit, four bets a round); :mod:`shared.phh.replay` honours them, pokerkit
  ignores them. Rake is not expressible: ``finishing_stacks`` are after any rake.
- Strings (player names) are TOML literal strings when they can be, else basic strings with
  every control, format or invisible character escaped (:func:`_basic`): a name from an old
  log cannot make the file invalid TOML, add a field or hide characters.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import cast

from shared.poker import events as E
from shared.poker.cards import cards_str
from shared.poker.events import ActionKind, ForcedKind
from shared.poker.options import TableOptions
from shared.poker.players import unsafe_char

from .replay import VARIANTS

_CODES = {v: k for k, v in VARIANTS.items()}
_ACTION_WORDS = {ActionKind.FOLD: "f", ActionKind.CHECK: "cc", ActionKind.CALL: "cc",
                 ActionKind.BRING_IN: "pb"}


def export(events: Sequence[object], players: Mapping[int, str] | None = None,
           options: TableOptions | None = None) -> str:
    """PHH text for the (last) hand in ``events``: a ``TableCreated`` among them or
    ``options`` gives the table's rules; ``players`` names seats (seat -> name)."""
    for e in events:
        if isinstance(e, E.TableCreated):
            options = e.options
    if options is None:
        raise ValueError("export needs the table options (a TableCreated event or options=)")
    starts = [i for i, e in enumerate(events) if isinstance(e, E.HandStarted)]
    if not starts:
        raise ValueError("no HandStarted event: nothing to export")
    hand = list(events[starts[-1]:])
    start = cast(E.HandStarted, hand[0])  # the slice opens at a HandStarted
    code = _CODES[(options.game, options.structure)]
    order = _phh_order(start)
    label = {seat: f"p{i + 1}" for i, seat in enumerate(order)}
    fields: list[tuple[str, object]] = [("variant", code)]
    fields += _forced_fields(options, start, order)
    fields.append(("starting_stacks", [dict((p.seat, p.stack) for p in start.players)[s]
                                       for s in order]))
    fields.append(("actions", _actions(hand, label)))
    fields += [("hand", start.hand_no), ("seats", order), ("seat_count", options.max_seats)]
    if players:
        fields.append(("players", [players.get(s, "") for s in order]))
    ended = next((e for e in hand if isinstance(e, E.HandEnded)), None)
    if ended is not None:
        final = {x.seat: x.stack for x in ended.stacks}
        fields.append(("finishing_stacks", [final[s] for s in order]))
    fields += _extra_option_fields(options)
    return "\n".join(f"{k} = {_toml(v)}" for k, v in fields) + "\n"


def _phh_order(start: E.HandStarted) -> list[int]:
    seats = sorted(p.seat for p in start.players)
    after = [s for s in seats if s > start.button]
    return after + [s for s in seats if s <= start.button]


def _forced_fields(options: TableOptions, start: E.HandStarted,
                   order: list[int]) -> list[tuple[str, object]]:
    n = len(order)
    position = {seat: i for i, seat in enumerate(order)}
    if n == 2:  # heads-up the arrays are reverse-assigned
        position = {seat: 1 - i for seat, i in position.items()}
    antes = [0] * n
    blinds = [0] * n
    for f in start.forced_bets:
        at = position[f.seat]
        if f.kind in (ForcedKind.ANTE, ForcedKind.DEAD_SMALL_BLIND):
            antes[at] += f.amount
        else:
            want = 0 if f.kind is ForcedKind.SMALL_BLIND else 1
            if at != want or blinds[at]:
                raise ValueError(f"the {f.kind.value} of seat {f.seat} cannot be written in PHH "
                                 "(blinds sit left of the button, one small and one big)")
            blinds[at] = f.amount
    uniform = len({a for a in antes}) == 1 and antes[0] > 0
    out: list[tuple[str, object]] = [("ante_trimming_status", uniform), ("antes", antes)]
    if options.game.is_stud:
        out += [("bring_in", options.bring_in), ("small_bet", options.small_bet),
                ("big_bet", options.big_bet)]
    else:
        out.append(("blinds_or_straddles", blinds))
        if options.structure.value == "fixed_limit":
            out += [("small_bet", options.small_bet), ("big_bet", options.big_bet)]
        else:
            out.append(("min_bet", options.big_blind))
    return out


def _extra_option_fields(options: TableOptions) -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = []
    if options.suit_order.value != "bridge":
        out.append(("_suit_order", options.suit_order.value))
    if options.chip_unit != 1:
        out.append(("_chip_unit", options.chip_unit))
    if options.max_bets != 4:
        out.append(("_max_bets", options.max_bets))
    if options.heads_up_uncapped:
        out.append(("_heads_up_uncapped", True))
    return out


def _actions(hand: list[object], label: dict[int, str]) -> list[str]:
    """Deals and actions in order; the shows last, or (all in) after the last action."""
    lines: list[str] = []
    held: dict[int, int] = {}  # cards dealt to each seat so far
    at_last_action: tuple[int, dict[int, int]] | None = None
    at_first_deal: tuple[int, dict[int, int]] | None = None
    shown: list[E.HandShown | E.HandMucked] = []
    for e in hand:
        if isinstance(e, E.CardsDealt):
            for deal in sorted(e.hole, key=lambda d: int(label[d.seat][1:])):
                lines.append(f"d dh {label[deal.seat]} {cards_str(deal.cards)}")
                held[deal.seat] = held.get(deal.seat, 0) + len(deal.cards)
            if e.board:
                lines.append(f"d db {cards_str(e.board)}")
            at_first_deal = at_first_deal or (len(lines), dict(held))
        elif isinstance(e, E.ActionTaken):
            word = _ACTION_WORDS.get(e.action) or f"cbr {e.to}"
            lines.append(f"{label[e.seat]} {word}")
            at_last_action = (len(lines), dict(held))
        elif isinstance(e, (E.HandShown, E.HandMucked)):
            shown.append(e)
    if not shown or not _no_betting_on_last_street(hand):
        return lines + [_show_line(e, label, None) for e in shown]
    # All in: the showdown comes before the run-out, showing the cards held at that point;
    # in stud, a face-down card dealt after it (7th street) is shown again at the end.
    at, count = at_last_action or at_first_deal or (len(lines), held)
    early = [_show_line(e, label, count) for e in shown]
    out = lines[:at] + early + lines[at:]
    if any(_show_line(e, label, None) != line for e, line in zip(shown, early, strict=True)) \
            and _down_card_after(hand, sum(count.values())):
        out += [_show_line(e, label, None) for e in shown]
    return out


def _down_card_after(hand: list[object], dealt: int) -> bool:
    """Whether a face-down hole card is dealt after the first ``dealt`` hole cards."""
    seen = 0
    for e in hand:
        if isinstance(e, E.CardsDealt):
            for deal in e.hole:
                for up in deal.face_up:
                    seen += 1
                    if seen > dealt and not up:
                        return True
    return False


def _show_line(e: E.HandShown | E.HandMucked, label: dict[int, str], count: dict[int, int] | None) -> str:
    if isinstance(e, E.HandMucked):
        return f"{label[e.seat]} sm"
    cards = e.cards if count is None else e.cards[:count[e.seat]]
    return f"{label[e.seat]} sm {cards_str(cards)}"


def _no_betting_on_last_street(hand: list[object]) -> bool:
    """Whether the showdown is an all-in one: the last street dealt had no betting round."""
    last_dealt = max((e.street for e in hand if isinstance(e, E.CardsDealt)), default=0)
    closed = {e.street for e in hand if isinstance(e, E.BettingRoundClosed)}
    return last_dealt not in closed


def _toml(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return f"'{value}'" if _literal_ok(value) else _basic(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def _literal_ok(value: str) -> bool:
    """Whether ``value`` can be a TOML literal string as it is: no quote, nothing TOML forbids
    there (controls) and nothing a reader should not get raw (see :func:`_basic`)."""
    return "'" not in value and not any(unsafe_char(ch) for ch in value)


_TOML_ESCAPES = {"\\": "\\\\", '"': '\\"', "\b": "\\b", "\t": "\\t", "\n": "\\n",
                 "\f": "\\f", "\r": "\\r"}


def _basic(value: str) -> str:
    """A TOML basic string that reads back as ``value``: quotes and backslashes escaped, and
    every control, format (bidi, zero-width), separator or other invisible character (a
    player id in an old log may hold any) written as a ``\\uXXXX`` escape. A lone surrogate,
    which no TOML string can hold, is written as U+FFFD."""
    out = []
    for ch in value:
        if ch in _TOML_ESCAPES:
            out.append(_TOML_ESCAPES[ch])
        elif unsafe_char(ch):
            cp = 0xFFFD if 0xD800 <= ord(ch) <= 0xDFFF else ord(ch)
            out.append(f"\\u{cp:04X}" if cp <= 0xFFFF else f"\\U{cp:08X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'
