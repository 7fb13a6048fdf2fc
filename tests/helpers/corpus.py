"""Where the repository keeps the PHH corpus the tests replay (copied from the briefing's
``shared/phh``, with its README naming the sources): a clone alone has it."""

from __future__ import annotations

from pathlib import Path

PHH_CORPUS = Path(__file__).resolve().parents[1] / "data" / "phh"
