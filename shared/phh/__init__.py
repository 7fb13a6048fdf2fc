"""Public hand histories (PHH, the phh-std TOML format) in and out of the engine.

- :mod:`.parse`: ``load(path)`` / ``loads(text)`` -> frozen :class:`HandHistory` values.
- :mod:`.replay`: ``replay(hand_history)`` -> :class:`ReplayResult`; the variant codes.
- :mod:`.export`: ``export(events, players=None, options=None)`` -> PHH text.
"""

from .export import export
from .parse import Action, HandHistory, PHHError, load, loads, loads_one
from .replay import VARIANTS, ReplayResult, replay

__all__ = ["VARIANTS", "Action", "HandHistory", "PHHError", "ReplayResult", "export", "load",
           "loads", "loads_one", "replay"]
