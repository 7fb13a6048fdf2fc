"""shared.phh.toml_subset reads what tomllib reads, or leaves the text to tomllib.

On every corpus file, every construct of the subset and texts mutated at random: when the
subset reader gives a document, ``tomllib.loads(text, parse_float=Decimal)`` gives the same
values of the same types; when tomllib refuses a text, the subset reader does too (``None``).
"""

from __future__ import annotations

import random
import tomllib
from decimal import Decimal

import pytest

from shared.phh.parse import PHHError, loads, parse_hand
from shared.phh.toml_subset import read
from tests.helpers.corpus import PHH_CORPUS

CORPUS = PHH_CORPUS
TEXTS = {f.relative_to(CORPUS).as_posix(): f.read_text(encoding="utf-8")
         for f in sorted(CORPUS.rglob("*.phh"))}


def typed(value):
    """A value with the type of every leaf (1 == Decimal(1) == True must not pass)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def tomllib_or_none(text: str):
    try:
        return tomllib.loads(text, parse_float=Decimal)
    except tomllib.TOMLDecodeError:
        return None


def agrees(text: str) -> bool:
    """The subset's rule: the same document, or None (then tomllib decides)."""
    doc = read(text)
    expected = tomllib_or_none(text)
    if doc is None:
        return True
    return expected is not None and typed(doc.root) == typed(expected)


def test_every_corpus_file_is_inside_the_subset_and_reads_as_tomllib_does():
    assert len(TEXTS) > 300
    for name, text in TEXTS.items():
        doc = read(text)
        assert doc is not None, name
        assert typed(doc.root) == typed(tomllib.loads(text, parse_float=Decimal)), name


INSIDE = [
    "",
    "\n\n# only a comment\n",
    "a = 'x'\nb = \"y\"\nc = 1\nd = -2\ne = +3\nf = 0\ng = 1_000\n",
    "a = 1.5\nb = -0.0\nc = 1e5\nd = 2.5E-3\ne = 1_0.0_1\nf = 0.1\n",
    "a = true\nb = false\n",
    "a = []\nb = [ ]\nc = [1,]\nd = [ 'x' , \"y\" ]\ne = [[1, 2], [], ['a']]\n",
    "a = [\n  # a comment\n  'x',  # another, with 'quotes', commas ] and brackets [\n\n  'y'\n]\n",
    "a = [1\n, 2\n,\n]\n",
    "a = [\n 1, # x, 2\n 3]\n",
    "\t a\t=\t'x' \t# trailing comment\n",
    "a = 'x'\r\nb = [1,\r\n 2]\r\n",
    "[1]\na = 1\n[2]\na = 2\n\n[ three ]\nb = 'c'\n",
    "key-with_dash = 1\n123 = 2\ntrue = 3\n",
    "a = 'héllo wörld ♠'  # ünïcode\n",
    "a = '# not a comment'\nb = \"it's\"\nc = 'say \"hi\"'\n",
    "a = 1 # no newline at the end",
]

OUTSIDE_BUT_TOML = [
    "a = 1979-05-27\n", "a = 07:32:00\n", "a = 1979-05-27T07:32:00Z\n",
    "a = 0x1F\n", "a = 0o17\n", "a = 0b101\n", "a = inf\n", "a = -nan\n",
    "a = \"esc\\\"aped\"\n", "a = \"tab\\tx\"\n", "a = '''multi\nline'''\n", 'a = """x"""\n',
    "a = { b = 1 }\n", "a.b = 1\n", "'quoted' = 1\n", "\"q\" = 1\n",
    "[a.b]\nc = 1\n", "[[a]]\nb = 1\n", "['q']\nb = 1\n",
]

NOT_TOML = [
    "a = \n", "a = 'x\n", "a = 'x'y\n", "a = 1 2\n", "a = [1 2]\n", "a = [1,,2]\n",
    "a = [,]\n", "a = [1\n", "a = [1 # x, 2, 3]\n", "a = [\n 1 # x, 2\n 3]\n",
    "a = 1\na = 2\n", "[t]\n[t]\n", "a = 1\n[a]\n", "a = 01\n", "a = 1__0\n", "a = 1_\n",
    "a = _1\n", "a = 1.\n", "a = .5\n", "a = 1.e5\n", "a = 1e\n", "a = ++1\n",
    "a = True\n", "a = truex\n", "a = 'x\x01'\n", "# ctrl \x7f\n", "a = 'x'\rb = 1\n",
    "a\n", "= 1\n", "a == 1\n", "[]\n", "[a\n", "a = [1]]\n", "a = 1 ]\n", "\ufeffa = 1\n",
    "a = '''\n", "a = 'x''y'\n",
]


@pytest.mark.parametrize("text", INSIDE)
def test_inside_the_subset(text):
    doc = read(text)
    assert doc is not None
    assert typed(doc.root) == typed(tomllib.loads(text, parse_float=Decimal))


@pytest.mark.parametrize("text", OUTSIDE_BUT_TOML)
def test_valid_toml_outside_the_subset_is_left_to_tomllib(text):
    assert tomllib_or_none(text) is not None
    assert read(text) is None


@pytest.mark.parametrize("text", NOT_TOML)
def test_what_tomllib_refuses_the_subset_refuses(text):
    assert tomllib_or_none(text) is None
    assert read(text) is None


def test_item_lines():
    text = "variant = 'NT'\nactions = [\n  # pre-flop\n  'd dh p1 AhKh', 'd dh p2 ????',\n\n" \
           "  'p2 f',  # folds\n]\nstacks = [1, 2]\n[2]\nactions = ['x',\n 'y']\n"
    doc = read(text)
    assert doc.lines(("actions",)) == [4, 4, 6]
    assert doc.lines(("stacks",)) == [8, 8]
    assert doc.lines(("2", "actions")) == [10, 11]
    assert doc.lines(("variant",)) is None


ALPHABET = "'\"[],=#\n \t0123456789._+-eEtrufalsxp\\{}:"


def mutate(rng: random.Random, text: str) -> str:
    for _ in range(rng.randint(1, 3)):
        at = rng.randrange(len(text) + 1)
        edit = rng.random()
        if edit < 0.4:
            text = text[:at] + rng.choice(ALPHABET) + text[at:]
        elif edit < 0.7:
            text = text[:at] + text[at + rng.randint(1, 3):]
        else:
            text = text[:at] + rng.choice(ALPHABET) + text[at + 1:]
    return text


def test_mutated_texts():
    rng = random.Random(13)
    seeds = list(TEXTS.values())[::7] + INSIDE[2:]
    inside = 0
    for _ in range(4000):
        text = mutate(rng, rng.choice(seeds))
        assert agrees(text), repr(text)
        inside += read(text) is not None
    assert inside > 1000  # most mutations stay inside (in comments, strings, digits)


# --- through shared.phh.parse ------------------------------------------------------------------


def test_hands_read_through_the_subset_are_the_hands_read_through_tomllib():
    """The same HandHistory either way, action lines included (the subset reader knows
    them; after tomllib they are searched for in the text)."""
    for name, text in TEXTS.items():
        fast = loads(text, name)
        slow = [parse_hand(tomllib.loads(text, parse_float=Decimal), name, 1, text)]
        assert fast == slow, name
        assert [a.line for a in fast[0].actions] == [a.line for a in slow[0].actions]


def test_a_file_outside_the_subset_is_read_by_tomllib():
    text = TEXTS["wsop-2023-43-5/1.phh"]
    dated = text + "\n_date = 2023-06-22\n_note = \"tab\\there\"\n"
    assert read(dated) is None
    (hh,) = loads(dated, "dated.phh")
    assert hh.field("_note") == "tab\there" and str(hh.field("_date")) == "2023-06-22"
    assert hh.actions == loads(text, "dated.phh")[0].actions


def test_bad_toml_is_named_with_line_and_column():
    with pytest.raises(PHHError) as err:
        loads("variant = 'NT'\nstarting_stacks = [1, 2\nactions = []\n", "bad.phh")
    assert str(err.value).startswith("bad.phh: not valid TOML: ")
    assert "line 3" in str(err.value)
    with pytest.raises(PHHError, match="nested too deeply"):
        loads("a = " + "[" * 100_000 + "]" * 100_000 + "\n", "deep.phh")
