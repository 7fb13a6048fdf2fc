"""The Makefile says what it has: ``make help`` names every target a person runs, and the
README's commands for one test and the unit tests point at files and targets that exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: targets that other targets use and nobody needs to type
INTERNAL = {"help", "tools", "protos"}


def _makefile() -> str:
    return (ROOT / "Makefile").read_text()


def test_make_help_names_every_target():
    text = _makefile()
    (phony,) = re.findall(r"^\.PHONY: (.+)$", text, re.M)
    helped = set(re.findall(r'^\t@echo "make (\w+)', text, re.M))
    assert set(phony.split()) - INTERNAL <= helped, set(phony.split()) - INTERNAL - helped
    assert helped <= set(phony.split())


def test_make_unit_runs_the_unit_tests_without_lint_or_apt_get():
    text = _makefile()
    (deps, recipe) = re.findall(r"^unit: (.*)\n((?:\t.*\n)+)", text, re.M)[0]
    assert deps.split() == ["install"]
    assert "pytest" in recipe and "tests/unit" in recipe and "apt-get" not in recipe


def test_the_readme_s_one_test_command_names_a_test_that_exists():
    readme = (ROOT / "README.md").read_text()
    (path,) = re.findall(r"pytest -q (tests/unit/\S+\.py) -k", readme)
    assert (ROOT / path).is_file()
