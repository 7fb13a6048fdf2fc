"""Parse PHH hand histories (TOML; the phh-std specification) into frozen values.

Conventions (from the specification's ``required.rst`` and pokerkit's ``notation.py``):

- A ``.phh`` file holds one hand; a ``.phhs`` file holds several, one TOML table per hand
  (``[1]``, ``[2]`` ...). ``HandHistory.index`` is the hand's 1-based position in its file
  (1 for a ``.phh``).
- Amounts stay exact: TOML floats are read as :class:`decimal.Decimal` and every amount is a
  ``Decimal``. Arrays shorter than the number of players are padded with zeros and a single
  number stands for every player, as pokerkit does; longer arrays are an error.
- Players are ``p1`` .. ``pN`` in the order of ``starting_stacks`` (from the small blind; in stud
  from the dealer's left). Heads-up, ``antes`` and ``blinds_or_straddles`` are reverse-assigned:
  the parser keeps the arrays as written, :mod:`shared.phh.replay` applies the rule.
- Action notation: ``d dh pN cards``, ``d db cards``, ``pN pb``, ``pN f``, ``pN cc``,
  ``pN cbr AMOUNT`` (to AMOUNT, the player's total this round), ``pN sd [cards]``,
  ``pN sm`` (muck), ``pN sm -`` (show the cards already dealt), ``pN sm cards`` (show), and
  no-ops (empty or ``# commentary``). Text after `` # `` is commentary. ``??`` is an unknown card.

Errors are :class:`PHHError`, naming the file, the hand and the line or action.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path

from shared.poker.cards import RANK_CHARS, SUIT_CHARS, UNKNOWN_CARD, Card, InvalidCard, card
from shared.poker.cards import cards as parse_cards

from . import toml_subset

#: Fields this module reads; any other field is kept in ``HandHistory.other_fields``.
_KNOWN = ("variant", "antes", "blinds_or_straddles", "bring_in", "small_bet", "big_bet",
          "min_bet", "starting_stacks", "actions", "finishing_stacks", "winnings", "players",
          "ante_trimming_status")
_PLAYER = re.compile(r"p([1-9][0-9]*)$")
_PLAYER_LABELS = {f"p{n}": n for n in range(1, 100)}  # what _PLAYER reads, looked up
#: Every card as written the usual way ("Ah", "td", "??"); any other text is read by
#: :func:`shared.poker.cards.cards` (spaces, "10s", and its errors).
_CARD_TEXTS = {r + s: card(r + s) for r in RANK_CHARS + RANK_CHARS.lower()
               for s in SUIT_CHARS + SUIT_CHARS.upper()} | {"??": UNKNOWN_CARD}


class PHHError(ValueError):
    """A file or hand that does not follow the PHH format (the message names where)."""


@dataclass(frozen=True, slots=True)
class Action:
    """One entry of ``actions``.

    ``kind``: ``dh``, ``db``, ``pb``, ``f``, ``cc``, ``cbr``, ``sd``, ``sm`` or ``noop``.
    ``player``: 1-based player number (the dealt-to player for ``dh``; None for ``db``).
    ``cards``: dealt, discarded or shown cards; for ``sm``: ``()`` is a muck, ``None`` with
    ``kind == "sm"`` is ``sm -`` (show the cards already dealt).
    """

    index: int  # 0-based position in ``actions``
    text: str
    kind: str
    player: int | None = None
    cards: tuple[Card, ...] | None = None
    amount: Decimal | None = None
    line: int | None = None  # line of the file the action is written on, when found

    @property
    def where(self) -> str:
        at = f" (line {self.line})" if self.line else ""
        return f"action {self.index} {self.text!r}{at}"

    @property
    def is_muck(self) -> bool:
        return self.kind == "sm" and self.cards == ()


@dataclass(frozen=True, slots=True)
class HandHistory:
    """One hand as written. Amounts are exact ``Decimal``; arrays have one entry per player."""

    path: str
    index: int
    variant: str
    starting_stacks: tuple[Decimal, ...]
    actions: tuple[Action, ...]
    antes: tuple[Decimal, ...] = ()
    blinds_or_straddles: tuple[Decimal, ...] = ()
    bring_in: Decimal | None = None
    small_bet: Decimal | None = None
    big_bet: Decimal | None = None
    min_bet: Decimal | None = None
    finishing_stacks: tuple[Decimal, ...] | None = None
    winnings: tuple[Decimal, ...] | None = None
    players: tuple[str, ...] | None = None
    ante_trimming_status: bool = False
    other_fields: tuple[tuple[str, object], ...] = ()

    @property
    def player_count(self) -> int:
        return len(self.starting_stacks)

    @property
    def where(self) -> str:
        return f"{self.path} hand {self.index}"

    def field(self, name: str, default: object = None) -> object:
        """An optional or user-defined field (e.g. ``_suit_order``) by name."""
        for key, value in self.other_fields:
            if key == name:
                return value
        return default


# --- files -----------------------------------------------------------------------------------


def load(path: str | Path) -> list[HandHistory]:
    """Every hand of a ``.phh`` or ``.phhs`` file."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PHHError(f"{p}: cannot read: {exc}") from None
    return loads(text, str(p), multi=p.suffix == ".phhs")


def loads(text: str, path: str = "<string>", multi: bool = False) -> list[HandHistory]:
    """Hands from PHH text; ``multi``: a ``.phhs`` text of ``[1]``, ``[2]`` ... tables.

    The text is read by :mod:`.toml_subset` (the TOML that PHH files are written in, read
    fast); a text outside it by ``tomllib``, which reads any TOML and names the line and
    column of what is not."""
    subset = toml_subset.read(text)
    if subset is not None:
        doc = subset.root
    else:
        try:
            doc = tomllib.loads(text, parse_float=Decimal)
        except ValueError as exc:  # TOMLDecodeError; an integer of more than 4300 digits
            raise PHHError(f"{path}: not valid TOML: {exc}") from None
        except RecursionError:
            raise PHHError(f"{path}: not valid TOML: arrays nested too deeply") from None

    def action_lines(*table: str) -> list[int] | None:
        return subset.lines((*table, "actions")) if subset is not None else None

    if not multi:
        return [parse_hand(doc, path, 1, text, action_lines())]
    hands = []
    for i, (name, table) in enumerate(doc.items(), start=1):
        if not isinstance(table, dict):
            raise PHHError(f"{path}: {name!r} is not a hand table ([1], [2] ...)")
        hands.append(parse_hand(table, path, i, text, action_lines(name)))
    return hands


def loads_one(text: str, path: str = "<string>") -> HandHistory:
    return loads(text, path)[0]


# --- one hand --------------------------------------------------------------------------------


def parse_hand(doc: dict, path: str, index: int, text: str = "",
               action_lines: list[int] | None = None) -> HandHistory:
    """One hand's table. ``action_lines``: the line of each action (else they are looked
    for in ``text``)."""
    where = f"{path} hand {index}"

    def need(name: str) -> object:
        if name not in doc:
            raise PHHError(f"{where}: the required field {name!r} is missing")
        return doc[name]

    variant = need("variant")
    if not isinstance(variant, str):
        raise PHHError(f"{where}: variant must be a string, not {variant!r}")
    stacks = _amounts(need("starting_stacks"), "starting_stacks", where, None)
    n = len(stacks)
    if n < 2:
        raise PHHError(f"{where}: starting_stacks needs at least two players")
    raw_actions = need("actions")
    if not isinstance(raw_actions, list) or not all(isinstance(a, str) for a in raw_actions):
        raise PHHError(f"{where}: actions must be an array of strings")
    actions = _parse_actions(raw_actions, where, n, text, action_lines)
    players = doc.get("players")
    if players is not None and (not isinstance(players, list) or len(players) != n):
        raise PHHError(f"{where}: players must name all {n} players")
    return HandHistory(
        path=path, index=index, variant=variant, starting_stacks=stacks, actions=actions,
        antes=_amounts(doc.get("antes", 0), "antes", where, n),
        blinds_or_straddles=_amounts(doc.get("blinds_or_straddles", 0),
                                     "blinds_or_straddles", where, n),
        bring_in=_amount(doc.get("bring_in"), "bring_in", where),
        small_bet=_amount(doc.get("small_bet"), "small_bet", where),
        big_bet=_amount(doc.get("big_bet"), "big_bet", where),
        min_bet=_amount(doc.get("min_bet"), "min_bet", where),
        finishing_stacks=_optional_amounts(doc, "finishing_stacks", where, n),
        winnings=_optional_amounts(doc, "winnings", where, n),
        players=tuple(str(x) for x in players) if players is not None else None,
        ante_trimming_status=bool(doc.get("ante_trimming_status", False)),
        other_fields=tuple((k, v) for k, v in doc.items() if k not in _KNOWN),
    )


def _amount(value: object, name: str, where: str) -> Decimal | None:
    return None if value is None else _number(value, name, where)


def _number(value: object, name: str, where: str, i: int | None = None) -> Decimal:
    """``value`` as an amount; ``name`` (``name[i]``) says which in an error."""
    if value.__class__ is int:  # the common case, ahead of the checks below
        if value >= 0:
            return Decimal(value)
    elif isinstance(value, bool) or not isinstance(value, (int, Decimal)):
        raise PHHError(f"{where}: {_name(name, i)} must be a number, not {value!r}")
    d = Decimal(value)
    if d < 0:
        raise PHHError(f"{where}: {_name(name, i)} must not be negative ({value})")
    return d


def _name(name: str, i: int | None) -> str:
    return name if i is None else f"{name}[{i}]"


def _amounts(value: object, name: str, where: str, n: int | None) -> tuple[Decimal, ...]:
    if n is not None and not isinstance(value, list):
        value = [value] * n  # one number for every player
    if not isinstance(value, list):
        raise PHHError(f"{where}: {name} must be an array of numbers")
    if n is not None:
        if len(value) > n:
            raise PHHError(f"{where}: {name} has {len(value)} entries for {n} players")
        value = value + [0] * (n - len(value))
    return tuple([_number(v, name, where, i) for i, v in enumerate(value)])


def _optional_amounts(doc: dict, name: str, where: str, n: int) -> tuple[Decimal, ...] | None:
    if name not in doc:
        return None
    values = doc[name]
    if not isinstance(values, list) or len(values) != n:
        raise PHHError(f"{where}: {name} must have one entry per player ({n})")
    return _amounts(values, name, where, n)


def _line_finder(text: str):
    """Finds, in order, the line each action string is written on (None when not found)."""
    pos = 0

    def find(action: str) -> int | None:
        nonlocal pos
        for quote in ("'", '"'):
            at = text.find(quote + action + quote, pos)
            if at >= 0:
                pos = at + len(action) + 2
                return text.count("\n", 0, at) + 1
        return None

    return find


def _parse_actions(raw: list[str], where: str, n: int, text: str,
                   lines: list[int] | None) -> tuple[Action, ...]:
    if lines is not None:
        return tuple([parse_action(s, i, n, where, line)
                      for i, (s, line) in enumerate(zip(raw, lines, strict=True))])
    find_line = _line_finder(text)
    return tuple([parse_action(s, i, n, where, find_line(s) if text else None)
                  for i, s in enumerate(raw)])


def parse_action(text: str, index: int = 0, players: int = 10, where: str = "",
                 line: int | None = None) -> Action:
    """One action notation; ``players`` bounds the ``pN`` labels."""
    words = text.split("#", 1)[0].split()
    if not words:
        return Action(index, text, "noop", line=line)
    actor, verb, args = words[0], words[1] if len(words) > 1 else "", words[2:]
    if actor == "d":
        if verb == "db" and len(args) == 1:
            return Action(index, text, "db", None, _cards(args[0], text, index, where, line),
                          line=line)
        if verb == "dh" and len(args) == 2:
            return Action(index, text, "dh", _player(args[0], players, text, index, where, line),
                          _cards(args[1], text, index, where, line), line=line)
        raise _fail(text, index, where, line, "the dealer deals 'd db CARDS' or 'd dh pN CARDS'")
    who = _player(actor, players, text, index, where, line)
    if verb in ("pb", "f", "cc") and not args:
        return Action(index, text, verb, who, line=line)
    if verb == "cbr" and len(args) == 1:
        try:
            amount = Decimal(args[0].replace(",", ""))
        except InvalidOperation:
            raise _fail(text, index, where, line, f"{args[0]!r} is not an amount") from None
        if not amount.is_finite() or amount <= 0:
            raise _fail(text, index, where, line, "the amount must be a positive number")
        return Action(index, text, "cbr", who, amount=amount, line=line)
    if verb in ("sd", "sm") and len(args) <= 1:
        if verb == "sm" and args == ["-"]:
            return Action(index, text, "sm", who, None, line=line)
        shown = _cards(args[0], text, index, where, line) if args else ()
        return Action(index, text, verb, who, shown, line=line)
    raise _fail(text, index, where, line,
                f"unknown action {verb!r} (pb, f, cc, cbr AMOUNT, sd [CARDS], sm [CARDS|-])")


def _fail(text: str, index: int, where: str, line: int | None, why: str) -> PHHError:
    at = f" (line {line})" if line else ""
    return PHHError(f"{where}: action {index} {text!r}{at}: {why}")


def _player(label: str, players: int, text: str, index: int, where: str,
            line: int | None) -> int:
    n = _PLAYER_LABELS.get(label)
    if n is None:
        m = _PLAYER.match(label)
        n = int(m.group(1)) if m else 0
    if not 1 <= n <= players:
        raise _fail(text, index, where, line, f"{label!r} is not a player (p1 to p{players})")
    return n


def _cards(s: str, text: str, index: int, where: str, line: int | None) -> tuple[Card, ...]:
    try:
        if len(s) % 2 == 0:
            return tuple([_CARD_TEXTS[s[i:i + 2]] for i in range(0, len(s), 2)])
    except KeyError:
        pass
    try:
        return parse_cards(s)
    except InvalidCard as exc:
        raise _fail(text, index, where, line, str(exc)) from None
