"""Hand histories of logs holding hostile player ids (the security issue's finding 4).

The renderers are fed the events directly, as a log written before player ids were checked
would give them: PokerStars text has no forged or extra line and no raw control, bidi or
invisible character; the JSON form keeps every id exact on one line; PHH stays valid TOML
(``tomllib``) that reads back the exact names, with no field added, also through our parser.
"""

from __future__ import annotations

import json
import tomllib

import pytest

from shared.history import hands, phh, pokerstars, to_json
from shared.phh.parse import loads_one
from shared.phh.replay import replay
from shared.poker import events as E
from shared.poker.players import printable, unsafe_char
from tests.unit.test_history import (
    NAMES,
    omaha_hilo,
    stud_bring_in,
    three_way_all_in,
    uncalled_and_rake,
)

FORGED = "Seat 1: alice (9999999 in chips)"
HOSTILE = {
    1: f"alice\n{FORGED}",
    2: "bob\x00\x1b[2J\x1b[31m\r*** SUMMARY ***\u2028Total pot 1 | Rake 0",
    3: "\u202eloracl\u200b\u2029'\"\\ \tfinishing_stacks = [1]",
}
SCENARIOS = [uncalled_and_rake, three_way_all_in, stud_bring_in, omaha_hilo]


def record(scenario, names, table_id="t1"):
    s = scenario()
    seated = [E.PlayerSeated(seat, name, 0, "") for seat, name in names.items()]
    (r,) = hands([E.TableCreated(table_id, s.options), *seated, *s.events])
    return r


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_pokerstars_text_has_no_forged_line(scenario):
    plain = pokerstars(record(scenario, NAMES))
    hostile = pokerstars(record(scenario, HOSTILE))
    # the same lines, however a reader splits them (\n, \r, U+2028 ...)
    assert len(hostile.split("\n")) == len(plain.split("\n"))
    assert len(hostile.splitlines()) == len(plain.splitlines())
    assert FORGED not in hostile.split("\n")
    assert not [line for line in hostile.split("\n") if line.startswith("*** SUMMARY")][1:]
    assert not any(unsafe_char(ch) for ch in hostile if ch != "\n")
    assert "\x1b" not in hostile and "\u202e" not in hostile and "\x00" not in hostile
    # each line is the plain one with the names swapped for their escaped forms
    for a, b in zip(plain.split("\n"), hostile.split("\n"), strict=True):
        for seat, name in NAMES.items():
            a = a.replace(name, printable(HOSTILE[seat]))
        assert a == b


def test_pokerstars_text_escapes_a_hostile_table_id():
    out = pokerstars(record(uncalled_and_rake, NAMES, table_id="t1' 6-max\nSeat 9: x"))
    assert out.split("\n")[1].startswith("Table 't1' 6-max\\x0aSeat 9: x' 6-max")
    assert len(out.split("\n")) == len(pokerstars(record(uncalled_and_rake, NAMES)).split("\n"))


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_json_keeps_hostile_ids_exact_on_one_line(scenario):
    r = record(scenario, HOSTILE)
    line = json.dumps(to_json(r))  # as pokerctl history --format json writes it
    assert "\n" not in line and line.isascii()
    back = json.loads(line)
    assert {p["seat"]: p["name"] for p in back["players"]} == \
        {s: HOSTILE[s] for s in (p["seat"] for p in back["players"])}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_phh_stays_valid_toml_and_reads_back_the_names(scenario):
    plain = tomllib.loads(phh(record(scenario, NAMES)))
    r = record(scenario, HOSTILE)
    text = phh(r)
    doc = tomllib.loads(text)
    assert doc.keys() == plain.keys()  # no field added
    order = doc["seats"]
    assert doc["players"] == [HOSTILE[s] for s in order]
    assert doc["finishing_stacks"] == plain["finishing_stacks"]
    assert not any(unsafe_char(ch) for ch in text if ch != "\n")
    assert len(text.split("\n")) == len(phh(record(scenario, NAMES)).split("\n"))
    hh = loads_one(text)  # our own parser (tomllib underneath) reads the same names
    assert list(hh.players) == [HOSTILE[s] for s in order]
    mine, theirs = replay(hh), replay(loads_one(phh(record(scenario, NAMES))))
    assert (mine.ok, mine.finishing_stacks, mine.error) == \
        (theirs.ok, theirs.finishing_stacks, theirs.error)  # the names change nothing


def test_phh_writes_a_lone_surrogate_as_the_replacement_character():
    text = phh(record(uncalled_and_rake, {1: "a\ud800", 2: "bob", 3: "carol"}))
    assert tomllib.loads(text)["players"][0] == "a\ufffd"


def test_phh_keeps_plain_names_as_literal_strings():
    text = phh(record(uncalled_and_rake, {1: "alice", 2: "o\"brien", 3: "c:\\x"}))
    assert "players = ['alice', 'o\"brien', 'c:\\x']" in text
    assert tomllib.loads(text)["players"] == ["alice", 'o"brien', "c:\\x"]
