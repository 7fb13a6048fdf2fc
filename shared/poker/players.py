"""Player ids: what one may be, the one key that says two ids are the same player, and how an
id is printed where it was never checked (an old log).

A player id is written into every hand history the log is rendered as, so it must not be able
to forge a line, break a file format or hide from the eye:

- It is stored in Unicode normal form NFKC (:func:`canonical_player_id`): compatibility forms
  become their plain letters (``ａｌｉｃｅ``, ``𝐚𝐥𝐢𝐜𝐞`` and ``alice`` are all ``alice``; a
  no-break or ideographic space is a space). A client may send any form; the log holds the
  normal one.
- After NFKC it is 1 to :data:`PLAYER_ID_MAX` characters (the request too, before normalising),
  each one visible: no control characters (newline, NUL, escape), no format characters
  (category Cf: zero-width spaces and joiners, bidi overrides and isolates, soft hyphen), no
  other default-ignorable code points (variation selectors, Hangul fillers), no line or
  paragraph separators, surrogates, private-use or unassigned code points, and no space other
  than U+0020. It may not start with a combining mark.
- Whitespace is refused, not edited: a leading or trailing space, or two spaces in a row, make
  the id invalid (a space between words is fine). Trimming silently would store an id other
  than the one the client believes it has.
- Its letters are of one script (Latin, Cyrillic, Greek, Arabic ...), or Han with the
  Japanese kana, Hangul or Bopomofo: a Cyrillic ``а`` cannot stand in for the Latin ``a`` of
  ``alice`` (the script is the first word of the letter's Unicode name; digits, punctuation
  and symbols go with any script). A whole id in another script that happens to look Latin
  (Cyrillic ``аре``) is not caught: that needs a confusables skeleton (Unicode TR39) and its
  data tables.
- One player, one seat: :func:`player_key` is the id folded for comparison (NFKC, case folded,
  default-ignorables dropped, whitespace collapsed), so ``Alice`` cannot sit where ``alice``
  sits; the seating rule compares keys, never raw ids.

Renderers print ids (and any text from the log) through :func:`printable`, which escapes what
an id may not hold, so ids in logs written before these rules cannot forge lines either.
"""

from __future__ import annotations

import functools
import unicodedata

from .errors import IllegalAction

#: the longest player id, in code points, as sent and after NFKC
PLAYER_ID_MAX = 64

_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible format character (zero-width, bidi control, soft hyphen)",
    "Cs": "a surrogate",
    "Co": "a private-use character",
    "Cn": "an unassigned code point",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}

#: Default_Ignorable_Code_Point (Unicode DerivedCoreProperties): drawn as nothing
_IGNORABLE = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
              (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
              (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
              (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
              (0xE0000, 0xE0FFF))


def _ignorable(ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in _IGNORABLE)


def _char_problem(ch: str) -> str | None:
    """Why ``ch`` may not be in a player id, or None."""
    category = unicodedata.category(ch)
    if category in _REFUSED_CATEGORIES:
        return _REFUSED_CATEGORIES[category]
    if category == "Zs" and ch != " ":
        return "a space other than U+0020"
    if _ignorable(ch):
        return "an invisible character"
    return None


def unsafe_char(ch: str) -> bool:
    """Whether a renderer must escape ``ch``: anything a player id may not hold, whitespace
    other than the plain space included."""
    return _char_problem(ch) is not None


#: scripts that one name may mix: Han with the Japanese kana, with Hangul, with Bopomofo
_MIXABLE = (frozenset({"CJK", "IDEOGRAPHIC", "HIRAGANA", "KATAKANA"}),
            frozenset({"CJK", "IDEOGRAPHIC", "HANGUL"}),
            frozenset({"CJK", "IDEOGRAPHIC", "BOPOMOFO"}))
_LETTERS = ("Lu", "Ll", "Lt", "Lo")


def _mixed_scripts(pid: str) -> list[str] | None:
    """The scripts of ``pid``'s letters when they are more than one script may mix, else None."""
    scripts = {unicodedata.name(ch, "?").split(" ", 1)[0] for ch in pid
               if unicodedata.category(ch) in _LETTERS}
    if len(scripts) <= 1 or any(scripts <= ok for ok in _MIXABLE):
        return None
    return sorted(scripts)


def _code(ch: str) -> str:
    return f"U+{ord(ch):04X}"


def player_id_problem(raw: object) -> str | None:
    """Why ``raw`` is not a valid player id (a readable reason), or None if it is one.
    Valid means its NFKC form is: see the module's rules."""
    if not isinstance(raw, str):
        return f"a player id is text, not {type(raw).__name__}"
    if not 0 < len(raw) <= PLAYER_ID_MAX:
        return f"a player id is 1 to {PLAYER_ID_MAX} characters"
    pid = unicodedata.normalize("NFKC", raw)
    if len(pid) > PLAYER_ID_MAX:
        return (f"a player id is 1 to {PLAYER_ID_MAX} characters "
                f"(in Unicode normal form NFKC this one has {len(pid)})")
    for i, ch in enumerate(pid):
        why = _char_problem(ch)
        if why is not None:
            return f"a player id may not contain {why} ({_code(ch)} at position {i + 1})"
    if unicodedata.category(pid[0]).startswith("M"):
        return f"a player id may not start with a combining mark ({_code(pid[0])})"
    if pid[0] == " " or pid[-1] == " ":
        return "a player id may not start or end with a space"
    if "  " in pid:
        return "a player id may not hold two spaces in a row"
    mixed = _mixed_scripts(pid)
    if mixed is not None:
        return (f"a player id may not mix the letters of {' and '.join(mixed).lower()} "
                f"scripts (look-alike letters could pass for another player's id)")
    return None


def canonical_player_id(raw: object) -> str:
    """The id as the log stores it (NFKC); ``IllegalAction`` with the reason if invalid."""
    why = player_id_problem(raw)
    if why is not None:
        raise IllegalAction(why)
    assert isinstance(raw, str)  # player_id_problem refuses anything else
    return unicodedata.normalize("NFKC", raw)


@functools.lru_cache(maxsize=1 << 16)
def player_key(player_id: str) -> str:
    """The form two ids are compared in: equal keys are one player. NFKC, case folded
    (``Alice`` is ``alice``), default-ignorables dropped and whitespace collapsed, so an id in
    an old log with a zero-width space or a trailing blank still matches its plain form.
    Remembered for the ids seen last (every view a hub hands out checks its watcher's)."""
    visible = "".join(ch for ch in player_id if not _ignorable(ch))
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())
    return " ".join(folded.split())


def _escape(ch: str) -> str:
    cp = ord(ch)
    if cp <= 0xFF:
        return f"\\x{cp:02x}"
    if cp <= 0xFFFF:
        return f"\\u{cp:04x}"
    return f"\\U{cp:08x}"


def printable(text: str) -> str:
    """``text`` safe to print on one line of a hand history or a terminal: a backslash is
    doubled, every character a player id may not hold (controls, format and bidi characters,
    separators, other spaces, invisibles) is written as a Python-style escape (``\\n`` as
    ``\\x0a``, U+202E as ``\\u202e``), and a leading or trailing space as ``\\x20``. Distinct
    texts stay distinct; a valid player id without a backslash prints unchanged."""
    if text.isascii() and text.isprintable() and "\\" not in text \
            and not text.startswith(" ") and not text.endswith(" "):
        return text  # the usual id: nothing to do
    out = ["\\\\" if ch == "\\" else _escape(ch) if unsafe_char(ch) else ch for ch in text]
    if out and out[0] == " ":
        out[0] = "\\x20"
    if len(out) > 1 and out[-1] == " ":
        out[-1] = "\\x20"
    return "".join(out)
