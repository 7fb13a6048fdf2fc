"""pokerctl: the operator's command line.

Each command group lives in its own module and registers its subcommands here; a command
returns its process exit code.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from . import (
    audit_cmd,
    bots_cmd,
    certs_cmd,
    demo_cmd,
    history_cmd,
    keys_cmd,
    mirror_cmd,
    phh_cmd,
    table_cmd,
    token_cmd,
    up_cmd,
    wallet_cmd,
)

GROUPS = (up_cmd, bots_cmd, demo_cmd, phh_cmd, table_cmd, mirror_cmd, history_cmd, audit_cmd,
          keys_cmd, certs_cmd, wallet_cmd, token_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pokerctl", description="Operate the poker table services and their event log.")
    sub = parser.add_subparsers(dest="command", required=True)
    for group in GROUPS:
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
