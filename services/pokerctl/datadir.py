"""Where `pokerctl up` keeps what it makes (its NATS store and passwords, CA and certificates,
compliance key, token issuer, wallet): one place that every command reads, and that imports
nothing of the CLI's own."""

from __future__ import annotations

import os
from pathlib import Path


def default_data_dir() -> Path:
    """`up`'s data directory, where client commands also look for its NATS credentials, CA
    and compliance key: POKER_DATA_DIR, else $XDG_DATA_HOME/pokerctl (~/.local/share)."""
    if os.environ.get("POKER_DATA_DIR"):
        return Path(os.environ["POKER_DATA_DIR"])
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local",
                                                           "share")
    return Path(base) / "pokerctl"


def up_cert_dir() -> Path:
    """Where `pokerctl up` keeps its CA and certificates (its data directory's ``tls``)."""
    return default_data_dir() / "tls"
