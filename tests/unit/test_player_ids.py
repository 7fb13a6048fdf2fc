"""Player ids (shared.poker.players, the security issue's finding 4): the normaliser refuses
each class of character that could forge a line, break a format or hide from the eye; look-
alikes that NFKC unifies are one player; seating compares the folded key."""

from __future__ import annotations

import unicodedata

import pytest

from shared.poker import events as E
from shared.poker import table as T
from shared.poker.driver import new_table
from shared.poker.errors import IllegalAction
from shared.poker.fold import fold
from shared.poker.options import table_options
from shared.poker.players import (
    PLAYER_ID_MAX,
    canonical_player_id,
    player_id_problem,
    player_key,
    printable,
)

BAD = [
    pytest.param("alice\nSeat 1: alice (9999999 in chips)", "control character", id="newline"),
    pytest.param("alice\r", "control character", id="carriage-return"),
    pytest.param("a\x00b", "control character", id="nul"),
    pytest.param("a\tb", "control character", id="tab"),
    pytest.param("\x1b[31mred\x1b[0m", "control character", id="ansi-escape"),
    pytest.param("a\x7fb", "control character", id="delete"),
    pytest.param("a\x85b", "control character", id="c1-next-line"),
    pytest.param("alice\u200b", "format character", id="zero-width-space"),
    pytest.param("al\u200dice", "format character", id="zero-width-joiner"),
    pytest.param("\u202eecila", "format character", id="right-to-left-override"),
    pytest.param("a\u2066b\u2069", "format character", id="bidi-isolate"),
    pytest.param("a\u00adb", "format character", id="soft-hyphen"),
    pytest.param("\ufeffalice", "format character", id="byte-order-mark"),
    pytest.param("a\U000e0041", "format character", id="tag-character"),
    pytest.param("a\u2028b", "line separator", id="line-separator"),
    pytest.param("a\u2029b", "paragraph separator", id="paragraph-separator"),
    pytest.param("a\ud800b", "surrogate", id="lone-surrogate"),
    pytest.param("a\ue000b", "private-use", id="private-use"),
    pytest.param("a\U000f0000", "private-use", id="supplementary-private-use"),
    pytest.param("a\u0378b", "unassigned", id="unassigned"),
    pytest.param("a\ufe0fb", "invisible character", id="variation-selector"),
    pytest.param("a\u034fb", "invisible character", id="grapheme-joiner"),
    pytest.param("\u3164", "invisible character", id="hangul-filler"),
    pytest.param("a\u1680b", "space other than", id="ogham-space"),
    pytest.param("\u0301alice", "combining mark", id="leading-combining-mark"),
    pytest.param(" alice", "start or end with a space", id="leading-space"),
    pytest.param("alice ", "start or end with a space", id="trailing-space"),
    pytest.param("alice\u00a0", "start or end with a space", id="trailing-no-break-space"),
    pytest.param("al  ice", "two spaces", id="double-space"),
    pytest.param("al\u3000 ice", "two spaces", id="ideographic-and-plain-space"),
    pytest.param("", "1 to 64", id="empty"),
    pytest.param("x" * (PLAYER_ID_MAX + 1), "1 to 64", id="too-long"),
    pytest.param("\ufdfa" * 4, "NFKC", id="too-long-after-nfkc"),
    pytest.param(None, "text", id="not-a-string"),
    pytest.param("\u0430lice", "mix the letters of cyrillic and latin", id="cyrillic-a"),
    pytest.param("p\u0430ypal", "cyrillic and latin", id="cyrillic-a-inside"),
    pytest.param("\u03bfscar", "greek and latin", id="greek-omicron"),
    pytest.param("al\u0131ce\u0456", "cyrillic and latin", id="dotless-i-and-cyrillic-i"),
]


@pytest.mark.parametrize("raw, why", BAD)
def test_bad_ids_are_refused_with_a_reason(raw, why):
    problem = player_id_problem(raw)
    assert problem is not None and why in problem, problem
    assert problem.startswith("a player id")
    assert problem.isprintable() and "\n" not in problem  # never echoes the raw id
    with pytest.raises(IllegalAction) as info:
        canonical_player_id(raw)
    assert info.value.reason == problem


@pytest.mark.parametrize("raw", ["alice", "Alice", "al ice", "o'brien", "Zoë", "李小龍",
                                 "محمد", "x" * PLAYER_ID_MAX, "a-b_c.d@e", "e\u0301", "Иван",
                                 "Ελένη", "ivan_99", "山田たろうタロウ", "김민준金", "user★1"])
def test_ordinary_ids_are_valid_and_kept(raw):
    assert player_id_problem(raw) is None
    assert canonical_player_id(raw) == unicodedata.normalize("NFKC", raw)
    assert printable(canonical_player_id(raw)) == canonical_player_id(raw)


@pytest.mark.parametrize("raw", ["ａｌｉｃｅ", "𝐚𝐥𝐢𝐜𝐞", "𝒶𝓁𝒾𝒸ℯ", "ａlice", "alice"])
def test_compatibility_look_alikes_normalise_to_the_plain_id(raw):
    assert canonical_player_id(raw) == "alice"


def test_spaces_normalise_to_a_plain_space():
    assert canonical_player_id("al\u00a0ice") == "al ice"  # no-break space
    assert canonical_player_id("al\u3000ice") == "al ice"  # ideographic space


def test_the_length_bound_is_in_code_points_before_and_after_nfkc():
    assert player_id_problem("x" * PLAYER_ID_MAX) is None
    assert player_id_problem("é" * PLAYER_ID_MAX) is None  # 128 bytes of UTF-8, 64 characters
    assert player_id_problem("x" * (PLAYER_ID_MAX + 1)) is not None
    assert player_id_problem("\ufdfa" * 3) is None  # 3 code points, 54 after NFKC
    assert player_id_problem("\ufdfa" * 4) is not None  # 72 after NFKC
    assert player_id_problem("x" * 100_000) is not None


@pytest.mark.parametrize("a, b", [("alice", "Alice"), ("alice", "ALICE"), ("alice", "ａｌｉｃｅ"),
                                  ("alice", "alice\u200b"), ("alice", "alice "),
                                  ("strasse", "STRASSE"), ("straße", "STRASSE"),
                                  ("kelvin", "\u212aelvin"), ("ﬁsh", "FISH"),
                                  ("al ice", "al\u00a0\u00a0ice")])
def test_ids_that_differ_in_case_or_form_have_one_key(a, b):
    assert player_key(a) == player_key(b)


@pytest.mark.parametrize("a, b", [("alice", "alicf"), ("alice", "al ice"), ("alice", "alic")])
def test_different_ids_have_different_keys(a, b):
    assert player_key(a) != player_key(b)


def test_printable_escapes_every_bad_class_and_keeps_texts_distinct():
    hostile = [b.values[0] for b in BAD if isinstance(b.values[0], str)]
    for raw in hostile:
        out = printable(raw)
        assert out.isprintable() or out == ""
        assert "\n" not in out and "\r" not in out and "\x1b" not in out and "\u202e" not in out
        assert len(out.splitlines()) <= 1
    assert printable("a\nb") == "a\\x0ab" and printable("a\u202eb") == "a\\u202eb"
    assert printable(" a ") == "\\x20a\\x20"
    assert printable("a\\x0ab") == "a\\\\x0ab" != printable("a\nb")  # injective
    assert len({printable(r) for r in hostile}) == len(set(hostile))


# --- seating ---------------------------------------------------------------------------------

def _table():
    return new_table(table_options("holdem", "no_limit", small_blind=1, big_blind=2))


def test_sit_down_seats_the_normal_form():
    table = _table()
    [seated] = T.sit_down(table, 1, "ａｌｉｃｅ", 200, "d")
    assert seated.player_id == "alice"


@pytest.mark.parametrize("raw, why", [b.values for b in BAD])
def test_sit_down_refuses_bad_ids(raw, why):
    table = _table()
    with pytest.raises(IllegalAction) as info:
        T.sit_down(table, 1, raw, 200, "d")
    assert why in info.value.reason


@pytest.mark.parametrize("other", ["Alice", "ALICE", "ａｌｉｃｅ", "𝐀𝐥𝐢𝐜𝐞"])
def test_one_player_one_seat_by_the_folded_key(other):
    table = _table()
    table = fold(T.sit_down(table, 1, "alice", 200, "d"), table)
    with pytest.raises(IllegalAction) as info:
        T.sit_down(table, 2, other, 200, "d")
    assert "already has a seat" in info.value.reason and "seat 1" in info.value.reason
    assert T.sit_down(table, 2, "bob", 200, "d")


def test_an_old_bad_id_already_seated_still_holds_its_player():
    """A log from before the rules may hold ``alice\\u200b`` or ``alice `` in a seat: the key
    drops invisibles and blanks, so plain ``alice`` cannot take a second seat."""
    table = _table()
    for raw in ("alice\u200b", "alice "):
        old = fold([E.PlayerSeated(1, raw, 200, "d")], table)
        with pytest.raises(IllegalAction):
            T.sit_down(old, 2, "Alice", 200, "d")
