"""Every real hand under tests/data/phh replays through the engine to its recorded result.

The corpus is the repository's own (``tests/data/phh``, copied from the briefing); a missing corpus
is a failure, not a skip. Variants the engine does not play must be reported as unsupported.
Hands that fail because of a known engine bug are listed in ``KNOWN_ENGINE_BUGS``: the test
asserts they still fail, so fixing the bug forces the entry's removal.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from shared.phh.parse import load
from shared.phh.replay import VARIANTS, replay
from tests.helpers.corpus import PHH_CORPUS

CORPUS = PHH_CORPUS
FILES = sorted(CORPUS.rglob("*.phh")) + sorted(CORPUS.rglob("*.phhs"))

KNOWN_ENGINE_BUGS: dict[str, str] = {}

#: The corpus as shipped: hands per variant (a changed corpus should be looked at).
EXPECTED_VARIANTS = {"NT": 291, "PO": 8, "FO/8": 14, "F7S": 13, "F7S/8": 7, "FT": 7,
                     "FB": 1, "F2L3D": 1, "NS": 1}


def rel(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def test_the_corpus_is_there():
    assert CORPUS.is_dir(), f"the PHH corpus is missing at {CORPUS}"
    variants = Counter(hh.variant for f in FILES for hh in load(f))
    assert dict(variants) == EXPECTED_VARIANTS


def test_known_bugs_name_real_files():
    assert set(KNOWN_ENGINE_BUGS) <= {rel(f) for f in FILES}


@pytest.mark.parametrize("path", FILES, ids=[rel(f) for f in FILES])
def test_replays_to_the_recorded_result(path: Path):
    for hh in load(path):
        r = replay(hh)
        if hh.variant not in VARIANTS:
            assert not r.ok and not r.supported
            assert r.error == f"variant {hh.variant} is not played by this engine"
            continue
        assert r.supported
        if rel(path) in KNOWN_ENGINE_BUGS:
            assert not r.ok, (f"{rel(path)} now replays correctly: remove it from "
                              f"KNOWN_ENGINE_BUGS ({KNOWN_ENGINE_BUGS[rel(path)]})")
            continue
        assert r.ok, f"{hh.where}: {r.error}"
        assert r.finishing_stacks is not None
        if r.expected is None:  # no recorded result: the hand completed legally
            assert sum(r.finishing_stacks) == sum(hh.starting_stacks)
        else:
            assert r.finishing_stacks == hh.finishing_stacks


def test_hands_without_recorded_stacks_complete_legally():
    (hh,) = load(CORPUS / "famous" / "dwan-ivey-2009.phh")
    r = replay(hh)
    assert r.ok and r.expected is None and r.compared == ""
    assert r.finishing_stacks == (572100, 1997500, 1109500)
