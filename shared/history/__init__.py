"""Hand histories from a table's event log.

:func:`hands` splits a table's events into :class:`HandRecord`s (pure: no I/O); the
renderers write one hand as PokerStars text (:func:`pokerstars`, with the hand's id
:func:`hand_id` and hands named by :func:`pokerstars_high`/:func:`pokerstars_low`), a
JSON-ready object (:func:`to_json`) or PHH (:func:`phh`, through
:func:`shared.phh.export.export`).
"""

from .record import HandRecord, hands
from .render import hand_id, phh, pokerstars, pokerstars_high, pokerstars_low
from .render_json import to_json

__all__ = ["HandRecord", "hand_id", "hands", "phh", "pokerstars", "pokerstars_high",
           "pokerstars_low", "to_json"]
