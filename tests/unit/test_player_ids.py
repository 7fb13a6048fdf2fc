"""Players (shared.poker.players): a player's id is the identity provider's subject, exactly
(two subjects that differ in case are two players, with two seats and two wallets); a name,
what histories print, is checked by the normaliser, which refuses each class of character that
could forge a line, break a format or hide from the eye; names that fold to one key are shown
with a number at a table."""

from __future__ import annotations

import unicodedata

import pytest

from shared.poker import events as E
from shared.poker import table as T
from shared.poker.errors import IllegalAction
from shared.poker.fold import fold
from shared.poker.handrunner import new_table
from shared.poker.options import table_options
from shared.poker.players import (
    NAME_MAX,
    SUBJECT_MAX,
    canonical_name,
    check_subject,
    name_key,
    name_problem,
    printable,
    subject_problem,
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
    pytest.param("x" * (NAME_MAX + 1), "1 to 64", id="too-long"),
    pytest.param("\ufdfa" * 4, "NFKC", id="too-long-after-nfkc"),
    pytest.param(None, "text", id="not-a-string"),
    pytest.param("\u0430lice", "mix the letters of cyrillic and latin", id="cyrillic-a"),
    pytest.param("p\u0430ypal", "cyrillic and latin", id="cyrillic-a-inside"),
    pytest.param("\u03bfscar", "greek and latin", id="greek-omicron"),
    pytest.param("al\u0131ce\u0456", "cyrillic and latin", id="dotless-i-and-cyrillic-i"),
]


@pytest.mark.parametrize("raw, why", BAD)
def test_bad_names_are_refused_with_a_reason(raw, why):
    problem = name_problem(raw)
    assert problem is not None and why in problem, problem
    assert problem.startswith("a name")
    assert problem.isprintable() and "\n" not in problem  # never echoes the raw id
    with pytest.raises(IllegalAction) as info:
        canonical_name(raw)
    assert info.value.reason == problem


@pytest.mark.parametrize("raw", ["alice", "Alice", "al ice", "o'brien", "Zoë", "李小龍",
                                 "محمد", "x" * NAME_MAX, "a-b_c.d@e", "e\u0301", "Иван",
                                 "Ελένη", "ivan_99", "山田たろうタロウ", "김민준金", "user★1"])
def test_ordinary_names_are_valid_and_kept(raw):
    assert name_problem(raw) is None
    assert canonical_name(raw) == unicodedata.normalize("NFKC", raw)
    assert printable(canonical_name(raw)) == canonical_name(raw)


@pytest.mark.parametrize("raw", ["ａｌｉｃｅ", "𝐚𝐥𝐢𝐜𝐞", "𝒶𝓁𝒾𝒸ℯ", "ａlice", "alice"])
def test_compatibility_look_alikes_normalise_to_the_plain_name(raw):
    assert canonical_name(raw) == "alice"


def test_spaces_normalise_to_a_plain_space():
    assert canonical_name("al\u00a0ice") == "al ice"  # no-break space
    assert canonical_name("al\u3000ice") == "al ice"  # ideographic space


def test_the_length_bound_is_in_code_points_before_and_after_nfkc():
    assert name_problem("x" * NAME_MAX) is None
    assert name_problem("é" * NAME_MAX) is None  # 128 bytes of UTF-8, 64 characters
    assert name_problem("x" * (NAME_MAX + 1)) is not None
    assert name_problem("\ufdfa" * 3) is None  # 3 code points, 54 after NFKC
    assert name_problem("\ufdfa" * 4) is not None  # 72 after NFKC
    assert name_problem("x" * 100_000) is not None


@pytest.mark.parametrize("a, b", [("alice", "Alice"), ("alice", "ALICE"), ("alice", "ａｌｉｃｅ"),
                                  ("alice", "alice\u200b"), ("alice", "alice "),
                                  ("strasse", "STRASSE"), ("straße", "STRASSE"),
                                  ("kelvin", "\u212aelvin"), ("ﬁsh", "FISH"),
                                  ("al ice", "al\u00a0\u00a0ice")])
def test_names_that_differ_in_case_or_form_have_one_key(a, b):
    assert name_key(a) == name_key(b)


@pytest.mark.parametrize("a, b", [("alice", "alicf"), ("alice", "al ice"), ("alice", "alic")])
def test_different_names_have_different_keys(a, b):
    assert name_key(a) != name_key(b)


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


# --- ids -------------------------------------------------------------------------------------

@pytest.mark.parametrize("raw", ["alice", "Alice", "RTCASEX", "auth0|5f7c8ec7c33c6c004bbafe82",
                                 "248289761001", "alice@example.com", "ａｌｉｃｅ", "al  ice",
                                 " x ", "a\u200bb", "x" * SUBJECT_MAX])
def test_any_subject_without_a_control_character_is_an_id_kept_exactly(raw):
    assert subject_problem(raw) is None
    assert check_subject(raw) == raw  # never normalised, folded or trimmed


@pytest.mark.parametrize("raw, why", [("", "1 to 255"), ("x" * (SUBJECT_MAX + 1), "1 to 255"),
                                      ("a\nb", "control character"), ("a\x00b", "control"),
                                      ("a\ud800b", "surrogate"), (None, "text"), (7, "text")])
def test_a_subject_that_is_no_id_is_refused_with_a_reason(raw, why):
    problem = subject_problem(raw)
    assert problem is not None and why in problem and problem.isprintable()
    with pytest.raises(IllegalAction):
        check_subject(raw)


# --- seating ---------------------------------------------------------------------------------

def _table():
    return new_table(table_options("holdem", "no_limit", small_blind=1, big_blind=2))


def test_sit_down_keeps_the_id_exactly_and_the_name_in_normal_form():
    table = _table()
    [seated] = T.sit_down(table, 1, "auth0|ＡＢＣ", 200, "d", name="ａｌｉｃｅ")
    assert seated.player_id == "auth0|ＡＢＣ" and seated.name == "alice"
    [plain] = T.sit_down(table, 1, "bob", 200, "d")
    assert plain.player_id == "bob" and plain.name == ""  # the id is the name: no copy


@pytest.mark.parametrize("raw, why", [b.values for b in BAD if isinstance(b.values[0], str)
                                      and b.values[0] and "control" not in b.values[1]
                                      and "surrogate" not in b.values[1]
                                      and len(b.values[0]) <= SUBJECT_MAX])
def test_an_id_that_cannot_be_printed_needs_a_name(raw, why):
    table = _table()
    with pytest.raises(IllegalAction) as info:
        T.sit_down(table, 1, raw, 200, "d")
    assert why in info.value.reason and "no name that can be shown" in info.value.reason
    [seated] = T.sit_down(table, 1, raw, 200, "d", name="Alice")
    assert seated.player_id == raw and seated.name == "Alice"


@pytest.mark.parametrize("raw, why", [b.values for b in BAD
                                      if isinstance(b.values[0], str) and b.values[0]])
def test_a_bad_name_is_refused(raw, why):
    table = _table()
    with pytest.raises(IllegalAction) as info:
        T.sit_down(table, 1, "player-1", 200, "d", name=raw)
    assert why in info.value.reason


@pytest.mark.parametrize("other", ["Alice", "ALICE", "ａｌｉｃｅ", "𝐀𝐥𝐢𝐜𝐞"])
def test_ids_that_differ_in_case_or_form_are_two_players_shown_apart(other):
    """OpenID Connect's ``sub`` is case-sensitive: ``RTCASEX`` and ``rtcasex`` may be two
    people. Each gets a seat; the second name that folds to the first's is numbered."""
    table = _table()
    table = fold(T.sit_down(table, 1, "alice", 200, "d"), table)
    [second] = T.sit_down(table, 2, other, 200, "e")
    assert second.player_id == other
    assert second.name == f"{canonical_name(other)} (2)"
    table = fold([second], table)
    shown = {s.seat: s.shown_name for s in table.seats}
    assert shown[1] == "alice" and name_key(shown[2]) != name_key(shown[1])
    with pytest.raises(IllegalAction) as info:  # but one id, one seat
        T.sit_down(table, 3, "alice", 200, "f")
    assert "already have a seat" in info.value.reason and "seat 1" in info.value.reason


def test_a_name_numbered_at_one_table_is_plain_where_it_is_alone():
    table = fold(T.sit_down(_table(), 1, "sub-1", 200, "d", name="Alice"), _table())
    [again] = T.sit_down(table, 2, "sub-2", 200, "e", name="alice")
    assert again.name == "alice (2)"
    [third] = T.sit_down(fold([again], table), 3, "sub-3", 200, "f", name="ALICE")
    assert third.name == "ALICE (3)"
    [alone] = T.sit_down(_table(), 1, "sub-2", 200, "e", name="alice")
    assert alone.name == "alice"


def test_an_old_seat_without_a_name_is_shown_by_its_id():
    """A log from before names holds the id alone (name ""): it is what is printed."""
    table = fold([E.PlayerSeated(1, "alice", 200, "d")], _table())
    assert table.seat(1).shown_name == "alice"
    [second] = T.sit_down(table, 2, "Alice", 200, "e")
    assert second.name == "Alice (2)"
