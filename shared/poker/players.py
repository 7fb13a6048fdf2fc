"""Players: who a player is (their id), and the name pages and histories print for them.

A player's id is the identity provider's subject (the token's ``sub``), exactly as the provider
wrote it: the seat's owner and the wallet account are that text byte for byte, so two subjects
that differ in case or form are two players (OpenID Connect's ``sub`` is case-sensitive, and a
provider may give ``Alice`` and ``alice`` to two people). An id is text of 1 to
:data:`SUBJECT_MAX` characters with no control character (:func:`subject_problem`); it is never
edited, and never printed where a person reads a history.

What is printed is a name (a token's ``name`` or ``preferred_username``, else the id when it
is one): a name is written into every hand history, so it must not be able to forge a line,
break a file format or hide from the eye:

- It is stored in Unicode normal form NFKC (:func:`canonical_name`): compatibility forms
  become their plain letters (``ａｌｉｃｅ``, ``𝐚𝐥𝐢𝐜𝐞`` and ``alice`` are all ``alice``; a
  no-break or ideographic space is a space).
- After NFKC it is 1 to :data:`NAME_MAX` characters (the request too, before normalising),
  each one visible: no control characters (newline, NUL, escape), no format characters
  (category Cf: zero-width spaces and joiners, bidi overrides and isolates, soft hyphen), no
  other default-ignorable code points (variation selectors, Hangul fillers), no line or
  paragraph separators, surrogates, private-use or unassigned code points, and no space other
  than U+0020. It may not start with a combining mark.
- Whitespace is refused, not edited: a leading or trailing space, or two spaces in a row, make
  the name invalid (a space between words is fine).
- Its letters are of one script (Latin, Cyrillic, Greek, Arabic ...), or Han with the
  Japanese kana, Hangul or Bopomofo: a Cyrillic ``а`` cannot stand in for the Latin ``a`` of
  ``alice`` (the script is the first word of the letter's Unicode name; digits, punctuation
  and symbols go with any script). A whole name in another script that happens to look Latin
  (Cyrillic ``аре``) is not caught: that needs a confusables skeleton (Unicode TR39) and its
  data tables.
- Names are unique at a table by :func:`name_key` (NFKC, case folded, default-ignorables
  dropped, whitespace collapsed): a second ``Alice`` at a table where ``alice`` sits is shown
  with a number (shared/poker/table.py).

Renderers print names (and any text from the log) through :func:`printable`, which escapes what
a name may not hold, so names in logs written before these rules cannot forge lines either.
"""

from __future__ import annotations

import functools
import unicodedata

from .errors import IllegalAction

#: the longest name, in code points, as sent and after NFKC
NAME_MAX = 64
#: the longest player id (a subject: OpenID Connect's limit)
SUBJECT_MAX = 255

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
    """Why ``ch`` may not be in a name, or None."""
    category = unicodedata.category(ch)
    if category in _REFUSED_CATEGORIES:
        return _REFUSED_CATEGORIES[category]
    if category == "Zs" and ch != " ":
        return "a space other than U+0020"
    if _ignorable(ch):
        return "an invisible character"
    return None


def unsafe_char(ch: str) -> bool:
    """Whether a renderer must escape ``ch``: anything a name may not hold, whitespace
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


def subject_problem(raw: object) -> str | None:
    """Why ``raw`` is not a player id (the identity provider's subject), or None: text of 1
    to :data:`SUBJECT_MAX` characters with no control character."""
    if not isinstance(raw, str):
        return f"a player id is text, not {type(raw).__name__}"
    if not 0 < len(raw) <= SUBJECT_MAX:
        return f"a player id (the token's subject) is 1 to {SUBJECT_MAX} characters"
    for i, ch in enumerate(raw):
        if unicodedata.category(ch) in ("Cc", "Cs"):
            return (f"a player id may not contain {_REFUSED_CATEGORIES[unicodedata.category(ch)]}"
                    f" ({_code(ch)} at position {i + 1})")
    return None


def check_subject(raw: object) -> str:
    """``raw`` as a player id, unchanged; ``IllegalAction`` with the reason if it is none."""
    why = subject_problem(raw)
    if why is not None:
        raise IllegalAction(why)
    assert isinstance(raw, str)  # subject_problem refuses anything else
    return raw


def name_problem(raw: object) -> str | None:
    """Why ``raw`` is not a valid name (a readable reason), or None if it is one. Valid
    means its NFKC form is: see the module's rules."""
    if not isinstance(raw, str):
        return f"a name is text, not {type(raw).__name__}"
    if not 0 < len(raw) <= NAME_MAX:
        return f"a name is 1 to {NAME_MAX} characters"
    pid = unicodedata.normalize("NFKC", raw)
    if len(pid) > NAME_MAX:
        return (f"a name is 1 to {NAME_MAX} characters "
                f"(in Unicode normal form NFKC this one has {len(pid)})")
    for i, ch in enumerate(pid):
        why = _char_problem(ch)
        if why is not None:
            return f"a name may not contain {why} ({_code(ch)} at position {i + 1})"
    if unicodedata.category(pid[0]).startswith("M"):
        return f"a name may not start with a combining mark ({_code(pid[0])})"
    if pid[0] == " " or pid[-1] == " ":
        return "a name may not start or end with a space"
    if "  " in pid:
        return "a name may not hold two spaces in a row"
    mixed = _mixed_scripts(pid)
    if mixed is not None:
        return (f"a name may not mix the letters of {' and '.join(mixed).lower()} "
                f"scripts (look-alike letters could pass for another player's name)")
    return None


def canonical_name(raw: object) -> str:
    """The name as the log stores it (NFKC); ``IllegalAction`` with the reason if invalid."""
    why = name_problem(raw)
    if why is not None:
        raise IllegalAction(why)
    assert isinstance(raw, str)  # name_problem refuses anything else
    return unicodedata.normalize("NFKC", raw)


@functools.lru_cache(maxsize=1 << 16)
def name_key(name: str) -> str:
    """The form two names are compared in: equal keys are one name (a table shows the second
    with a number). NFKC, case folded (``Alice`` is ``alice``), default-ignorables dropped and
    whitespace collapsed, so a name in an old log with a zero-width space or a trailing blank
    still matches its plain form. Remembered for the names seen last."""
    visible = "".join(ch for ch in name if not _ignorable(ch))
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
    doubled, every character a name may not hold (controls, format and bidi characters,
    separators, other spaces, invisibles) is written as a Python-style escape (``\\n`` as
    ``\\x0a``, U+202E as ``\\u202e``), and a leading or trailing space as ``\\x20``. Distinct
    texts stay distinct; a valid name without a backslash prints unchanged."""
    if text.isascii() and text.isprintable() and "\\" not in text \
            and not text.startswith(" ") and not text.endswith(" "):
        return text  # the usual id: nothing to do
    out = ["\\\\" if ch == "\\" else _escape(ch) if unsafe_char(ch) else ch for ch in text]
    if out and out[0] == " ":
        out[0] = "\\x20"
    if len(out) > 1 and out[-1] == " ":
        out[-1] = "\\x20"
    return "".join(out)
