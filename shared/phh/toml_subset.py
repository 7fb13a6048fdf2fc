"""A fast reader for the part of TOML that PHH files are written in.

PHH files are TOML, but a small part of it: ``key = value`` lines, comments, and in a
``.phhs`` file one ``[table]`` header per hand; values are one-line strings, integers,
decimal floats, booleans and (possibly multi-line, nested) arrays of them. The standard
library's ``tomllib`` reads all of TOML a character class at a time; this reader reads the
subset a token at a time (a whole ``key = scalar`` line, an array item with its comma), in
about half the time.

The subset, exactly (everything else is "outside"):

- whitespace is spaces and tabs; a line is blank, a comment (``#`` to the end of the line),
  a key/value pair or a table header, each optionally followed by a comment; ``\\r\\n`` ends
  a line as ``\\n`` does; no control character other than tab and newline appears anywhere;
- a key is a bare key (``A-Z a-z 0-9 _ -``), defined once per table; a table header is
  ``[bare-key]`` naming a table (of the root) not defined before;
- a value is a literal string ``'...'`` or a basic string ``"..."`` without escapes, on one
  line; ``true`` or ``false``; a decimal integer (``+``/``-``, ``_`` between digits, no
  leading zero); a float with a fraction and/or an exponent on such an integer; an array
  ``[v, v, ...]`` of values, with newlines, comments and a trailing comma allowed between
  the items. A value is followed by whitespace, a comment, a newline, the end, or in an
  array ``,`` or ``]``.

:func:`read` returns ``None`` for a text outside the subset: it never decides that a text is
not TOML. The caller then parses the text with ``tomllib``, which reads every valid TOML
document (dates, inline tables, escapes ...) and names the line and column of the error in
an invalid one. On a text inside the subset the result is what
``tomllib.loads(text, parse_float=Decimal)`` returns (``tests/unit/test_phh_toml_subset.py``
compares the two on the corpus, on every construct above and on mutated files).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, NamedTuple

# The tokens, each by the TOML grammar's own rule (toml.io, v1.0.0), matched at a position.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # tab and newline are allowed
_SPACE = re.compile(r"[ \t]*")
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_KEY = r"([A-Za-z0-9_-]+)[ \t]*=[ \t]*"  # 1: a bare key, and the "=" after it
_KEY_EQUALS = re.compile(_KEY)
_TAIL = r"[ \t]*+(?:#[^\n]*+)?"  # what may follow a statement on its line
_LINE_END = re.compile(_TAIL)
# Between the items of an array. Possessive (``*+``): a comment runs to the end of its line,
# never shortened to let what it says be read as an item or a comma.
_ARRAY_SPACE = r"(?:[ \t\n]++|#[^\n]*+)*+"
_SCALAR = (r"('([^'\n]*)'"  # 1 the scalar: 2 a literal string's text
           r'|"([^"\\\n]*)"'  # 3 a basic string's text (no escapes)
           r"|([+-]?(?:0|[1-9](?:_?[0-9])*)"  # 4 a decimal integer (no leading zero)
           r"(\.[0-9](?:_?[0-9])*)?"  # 5 its fraction
           r"([eE][+-]?[0-9](?:_?[0-9])*)?)"  # 6 its exponent
           r"|(true|false))")  # 7
_VALUE = re.compile(_SCALAR)
#: a whole ``key = scalar`` line, the common statement (1 the key, 2..8 the scalar's groups)
_KEY_SCALAR_LINE = re.compile(r"[ \t]*" + _KEY + _SCALAR + _TAIL + r"(?:\n|\Z)")
#: space, a scalar item of an array, and the ``,`` or ``]`` after it (8) if on its line
_ITEM = re.compile(_ARRAY_SPACE + _SCALAR + r"[ \t]*([,\]])?")
_SEPARATOR = re.compile(_ARRAY_SPACE + r"([,\]])")  # 1
_BETWEEN_ITEMS = re.compile(_ARRAY_SPACE)


class Document(NamedTuple):
    """``root``: the tables and values, as ``tomllib`` gives them. ``starts``: for each array
    that is the value of a key, where each of its items starts (an index into the text), by
    the key's path (``("actions",)`` in a ``.phh``; ``("1", "actions")`` in a ``.phhs``)."""

    root: dict[str, Any]
    text: str
    starts: dict[tuple[str, ...], list[int]]

    def lines(self, path: tuple[str, ...]) -> list[int] | None:
        """The 1-based line each item of the array at ``path`` starts on."""
        starts = self.starts.get(path)
        if starts is None:
            return None
        lines, line, at = [], 1, 0
        for start in starts:
            line += self.text.count("\n", at, start)
            lines.append(line)
            at = start
        return lines


class _Outside(Exception):
    """The text uses TOML outside the subset (or is not TOML): ``tomllib`` decides."""


def read(text: str) -> Document | None:
    """The document, or ``None`` when ``text`` is outside the subset (see the module)."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")  # as tomllib does; a lone "\r" is a control char
    if _CONTROL.search(text):
        return None
    try:
        return _document(text)
    except (_Outside, RecursionError, ValueError):  # ValueError: an int of > 4300 digits
        return None


def _past(pattern: re.Pattern[str], text: str, pos: int) -> int:
    """Where ``pattern``, which matches the empty string too, ends when matched at ``pos``."""
    m = pattern.match(text, pos)
    assert m is not None  # it cannot fail: it matches nothing as well
    return m.end()


def _document(text: str) -> Document:
    end = len(text)
    root: dict[str, Any] = {}
    starts: dict[tuple[str, ...], list[int]] = {}
    table: dict[str, Any] = root
    path: tuple[str, ...] = ()
    pos = 0
    while pos < end:
        m = _KEY_SCALAR_LINE.match(text, pos)
        if m is not None:  # the common case, in one match; else each part on its own below
            name = m.group(1)
            if name in table:
                raise _Outside
            table[name] = _scalar(*m.groups()[2:])
            pos = m.end()
            continue
        pos = _past(_LINE_END, text, pos)  # a blank line, a comment, a statement's indent
        if pos == end:
            break
        c = text[pos]
        if c == "\n":
            pos += 1
            continue
        if c == "[":  # [name]: a new table of the root (not [[name]], dotted or quoted)
            key = _BARE_KEY.match(text, _past(_SPACE, text, pos + 1))
            if key is None:
                raise _Outside
            name = key.group()
            pos = _past(_SPACE, text, key.end())
            if not text.startswith("]", pos) or name in root:
                raise _Outside
            table = root[name] = {}
            path = (name,)
            pos += 1
        else:  # key = value (not a dotted or quoted key, not defined before)
            key = _KEY_EQUALS.match(text, pos)
            if key is None or key.group(1) in table:
                raise _Outside
            name, pos = key.group(1), key.end()
            if text.startswith("[", pos):
                at: list[int] = []
                starts[(*path, name)] = at
                table[name], pos = _array(text, pos + 1, at)
            else:
                table[name], pos = _value(text, pos)
        pos = _past(_LINE_END, text, pos)
        if pos < end and text[pos] != "\n":
            raise _Outside
    return Document(root, text, starts)


def _scalar(lit: str | None, basic: str | None, number: str | None, fraction: str | None,
            exponent: str | None, boolean: str | None) -> Any:
    """The value of a scalar token, from the groups of ``_SCALAR``."""
    if lit is not None:
        return lit
    if basic is not None:
        return basic
    if number is not None:
        if fraction is None and exponent is None:
            return int(number)
        return Decimal(number.replace("_", ""))  # as tomllib passes it to parse_float
    return boolean == "true"


def _value(text: str, pos: int) -> tuple[Any, int]:
    """The value at ``pos`` and the position after it."""
    if text.startswith("[", pos):
        return _array(text, pos + 1, None)
    m = _VALUE.match(text, pos)
    if m is None:  # multi-line or escaped string, inline table, date, inf, nan, not TOML
        raise _Outside
    return _scalar(*m.groups()[1:]), m.end()


def _array(text: str, pos: int, starts: list[int] | None) -> tuple[list, int]:
    """The items after ``[`` and the position after its ``]``; where the items start."""
    items: list[Any] = []
    item = _ITEM.match
    while True:  # at the start of the array or after a comma: an item or "]"
        m = item(text, pos)
        if m is not None:  # the common case: a scalar, often with its separator
            _, lit, basic, number, fraction, exponent, boolean, separator = m.groups()
            if starts is not None:
                starts.append(m.start(1))
            if lit is not None:  # _scalar's cases, inline: this loop is the hot one
                items.append(lit)
            elif number is not None and fraction is None and exponent is None:
                items.append(int(number))
            else:
                items.append(_scalar(lit, basic, number, fraction, exponent, boolean))
            pos = m.end()
        else:  # an array in the array, the "]" of [] or after a trailing comma, or outside
            pos = _past(_BETWEEN_ITEMS, text, pos)
            if text.startswith("]", pos):
                return items, pos + 1
            if starts is not None:
                starts.append(pos)
            value, pos = _value(text, pos)
            items.append(value)
            separator = None
        if separator is None:  # on a later line, after a comment, or missing
            m = _SEPARATOR.match(text, pos)
            if m is None:
                raise _Outside
            separator, pos = m.group(1), m.end()
        if separator == "]":
            return items, pos
