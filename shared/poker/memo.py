"""What a hand asks twice of the same immutable state, kept by whoever asks: a driver playing
a hand, an audit checking one. The next step is derived, then its decision derives the same
options or deal plan again; a decision folds its own event to see what follows, then the
caller folds the same event. Each result is a pure function of immutable values, so the last
one is kept by the identity of what it was made from.

A :class:`Memo` belongs to its caller (one per driver or auditor, used by one thread): the
rules keep no state of their own between calls. Without one, each result is computed afresh.
"""

from __future__ import annotations

from typing import Any


class Memo:
    """The last legal actions, deal plan and hand event folded that a caller asked for."""

    __slots__ = ("legal", "plan", "folded")

    def __init__(self) -> None:
        #: (state, its legal actions)
        self.legal: tuple[Any, Any] = (None, None)
        #: (state, its deal plan)
        self.plan: tuple[Any, Any] = (None, None)
        #: (state, event, the state after it)
        self.folded: tuple[Any, Any, Any] = (None, None, None)
