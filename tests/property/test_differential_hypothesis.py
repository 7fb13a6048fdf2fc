"""Differential test driven by hypothesis: the comparison of tests/helpers/differential.py on
hands hypothesis draws (and shrinks when one fails), every variant."""

from __future__ import annotations

from tests.helpers.differential_runs import hypothesis_check
from tests.helpers.pokerkit_oracle import VARIANTS


def test_differential_hypothesis() -> None:
    """RULES §3-§6: the same comparison as the variant tests, driven by hypothesis, which
    shrinks a failing hand."""
    hypothesis_check(list(VARIANTS))
