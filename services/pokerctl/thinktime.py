"""A bot's pace: how long it thinks before each action (:class:`ThinkTime`, ``--think``)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

#: the longest think time a bot may be given: a table's action clock is at most 10 minutes
#: (shared/poker/options.py), and a bot that thinks longer than its clock is timed out
MAX_THINK_MS = 600_000
_WHOLE = re.compile(r"[0-9]+")


class ThinkTimeError(ValueError):
    """A think time that does not parse; the message says what is wrong and what to give."""


@dataclass(frozen=True)
class ThinkTime:
    """How long a bot waits before each action: uniformly random in [``min_ms``,
    ``max_ms``] milliseconds, a person's pace (0-0: at once, as fast as replies come)."""

    min_ms: int = 0
    max_ms: int = 0

    @classmethod
    def parse(cls, text: str) -> ThinkTime:
        """``MIN-MAX`` in whole milliseconds (``1000-3000``; ``500-500`` for a fixed wait;
        spaces around either number are dropped). :class:`ThinkTimeError` for anything else:
        no dash, a number that is not a whole number of milliseconds (negative, a fraction),
        MIN above MAX, or MAX above :data:`MAX_THINK_MS`."""
        low, dash, high = text.strip().partition("-")
        if not dash:
            raise ThinkTimeError(f"think time {text!r} is not MIN-MAX: give two whole numbers "
                                 "of milliseconds, e.g. 1000-3000 (0-0: no wait)")
        for what, part in (("MIN", low), ("MAX", high)):
            if not _WHOLE.fullmatch(part.strip()):
                raise ThinkTimeError(f"think time {text!r}: {what} {part.strip()!r} is not a "
                                     "whole number of milliseconds of at least 0 (MIN-MAX, "
                                     "e.g. 1000-3000)")
        min_ms, max_ms = int(low), int(high)
        if min_ms > max_ms:
            raise ThinkTimeError(f"think time {text!r}: MIN {min_ms} is above MAX {max_ms} "
                                 f"(give {max_ms}-{min_ms})")
        if max_ms > MAX_THINK_MS:
            raise ThinkTimeError(f"think time {text!r}: at most {MAX_THINK_MS} ms (a table's "
                                 "action clock is at most 10 minutes)")
        return cls(min_ms, max_ms)

    def seconds(self, rng: random.Random) -> float:
        """One wait, drawn from ``rng`` (nothing drawn at 0-0: a seeded bot's choices are the
        same with and without this)."""
        if not self.max_ms:
            return 0.0
        return rng.uniform(self.min_ms, self.max_ms) / 1000


NO_THINKING = ThinkTime()
