"""Where `pokerctl up` keeps what it makes (its NATS store and passwords, CA and certificates,
compliance key, token issuer, wallet), and how client commands find the `up` there (its NATS
URL as a user, its CA, its table service): one place that every command reads, and that
imports nothing of the CLI's own."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from shared.infra import natsauth, natsconn
from shared.infra.config import DEFAULT_NATS_URL, service_address


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


def client_nats_url(data_dir: Path, user: str = natsauth.READER) -> str | None:
    """The URL of the NATS that `up` runs on ``data_dir``, as ``user`` (None: `up` has not
    run there, or its files cannot be read)."""
    try:
        address = (data_dir / "nats" / "url").read_text().strip()
        password = json.loads((data_dir / "nats" / "passwords.json").read_text())[user]
    except (OSError, ValueError, KeyError):
        return None
    return natsconn.with_user(address, user, password)


#: the help of a client command's --nats (its default holds a password: not shown)
NATS_HELP = ("NATS URL (default POKER_NATS_URL, else the NATS of `pokerctl up` as its "
             "compliance user, who may record the reads that open sealed cards, found with "
             "the compliance key in its data directory)")


def default_nats_url(user: str = natsauth.COMPLIANCE) -> str:
    """What client commands connect to unless told: POKER_NATS_URL, else the NATS of `up`
    (its data directory: POKER_DATA_DIR, else the default) as ``user`` (compliance: audit,
    history and the bots' audit may open sealed cards with the key kept beside it, and only
    compliance may record such a read in the access log), else nats://127.0.0.1:4222."""
    return (os.environ.get("POKER_NATS_URL") or client_nats_url(default_data_dir(), user)
            or DEFAULT_NATS_URL)


def client_ca() -> str | None:
    """The CA client commands check NATS against: POKER_NATS_CA (or the services' CA, see
    shared/infra/natsconn.py), else the one in `up`'s data directory, if any."""
    ca = natsconn.ca_file(os.environ)
    if ca is None and (up_cert_dir() / "ca.pem").exists():
        ca = str(up_cert_dir() / "ca.pem")
    return ca


def default_table_addr() -> str:
    """POKER_TABLE_ADDR, else the table service of the `up` whose data directory this is (the
    addresses its env file lists: every instance), else POKER_BASE_PORT + 1: the address the
    services themselves would use (shared/infra/config.service_address)."""
    if os.environ.get("POKER_TABLE_ADDR"):
        return service_address("table", os.environ)
    return up_env(default_data_dir()).get("POKER_TABLE_ADDR") or service_address("table",
                                                                             os.environ)


def up_env(data_dir: Path) -> dict[str, str]:
    """The variables an `up` wrote in ``data_dir/env`` for its clients ({}: none there)."""
    try:
        text = (data_dir / "env").read_text()
    except OSError:
        return {}
    out = {}
    for line in text.splitlines():
        if line.startswith("export ") and "=" in line:
            name, _, value = line[len("export "):].partition("=")
            try:
                words = shlex.split(value)
            except ValueError:
                continue
            if len(words) == 1 and name.startswith("POKER_"):
                out[name] = words[0]
    return out
