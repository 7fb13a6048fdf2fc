"""What the transparency-log commands share (audit --checkpoint, checkpoint, witness): keys
given as a vkey or a file holding one, and where `pokerctl up` keeps the notary's."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from shared.tlog.note import NoteError, Verifier

from .datadir import default_data_dir


def vkey(value: str) -> Verifier:
    """A verifier key given as itself (``name+id+base64``) or as a file holding it."""
    text = value
    if "+" not in value or Path(value).is_file():
        try:
            text = Path(value).read_text().strip()
        except OSError as exc:
            raise NoteError(f"{value} is neither a verifier key nor a file holding one "
                            f"({exc.strerror})") from None
    return Verifier.parse(text)


def default_log_key() -> str | None:
    """POKER_NOTARY_VKEY, else the vkey of `pokerctl up`'s notary (its data directory)."""
    if os.environ.get("POKER_NOTARY_VKEY"):
        return os.environ["POKER_NOTARY_VKEY"]
    local = default_data_dir() / "keys" / "notary.vkey"
    return str(local) if local.exists() else None


def add_log_key_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--log-key", default=None, metavar="VKEY",
                   help="the notary's verifier key (or a file holding it) the checkpoint must "
                        "be signed with (default POKER_NOTARY_VKEY, else `pokerctl up`'s)")
    p.add_argument("--witness", action="append", default=[], metavar="VKEY",
                   help="a witness's cosignature key (or a file holding it) whose "
                        "cosignature the checkpoint must carry (repeatable)")


def log_key(args: argparse.Namespace) -> Verifier:
    chosen = args.log_key or default_log_key()
    if chosen is None:
        raise NoteError("no notary key to check the checkpoint's signature with: --log-key "
                        "VKEY (or POKER_NOTARY_VKEY)")
    return vkey(chosen)


def witness_keys(args: argparse.Namespace) -> list[Verifier]:
    return [vkey(w) for w in args.witness]
