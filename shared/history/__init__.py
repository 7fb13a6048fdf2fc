"""Hand histories from a table's event log.

:func:`hands` splits a table's events into :class:`HandRecord`s (pure: no I/O); the
renderers write one hand as PokerStars text (:func:`pokerstars`), a JSON-ready object
(:func:`to_json`) or PHH (:func:`phh`, through :func:`shared.phh.export.export`).
"""

from .record import HandRecord, hands
from .render import phh, pokerstars, to_json

__all__ = ["HandRecord", "hands", "phh", "pokerstars", "to_json"]
