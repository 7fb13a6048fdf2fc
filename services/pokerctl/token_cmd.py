"""`pokerctl token`: a token from the embedded setup's identity provider, for trying the
client-facing API as a player, an operator or compliance.

    pokerctl token --player P [--role player|operator|compliance|service|relay ...]
                   [--ttl SECONDS] [--data-dir DIR]

Prints one JWT (EdDSA) signed by the dev issuer in DIR/identity (made on first use, as
`pokerctl up` makes it; DIR defaults to `up`'s data directory), for subject P with the roles
given (default: player) and valid for --ttl seconds (default 3600). The subject is a valid
player id whatever the role (``--player ops --role operator``). Send it as gRPC metadata
``authorization: Bearer <token>``. Exit 2 for bad input.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from shared.infra.devissuer import DevIssuer
from shared.infra.identity import PLAYER, ROLES

from .datadir import default_data_dir
from .failures import USAGE

#: the longest a dev token may live: a day
MAX_TTL_S = 86_400


def identity_dir(data_dir: str | None) -> Path:
    """Where the dev issuer lives: ``<data dir>/identity``."""
    if data_dir:
        return Path(data_dir) / "identity"
    return default_data_dir() / "identity"


def _token(args: argparse.Namespace) -> int:
    if not 0 < args.ttl <= MAX_TTL_S:
        print(f"pokerctl token: --ttl must be 1 to {MAX_TTL_S} seconds, not {args.ttl}",
              file=sys.stderr)
        return USAGE
    roles = tuple(dict.fromkeys(args.role or (PLAYER,)))
    try:
        issuer = DevIssuer.create(identity_dir(args.data_dir))
        token = issuer.token(args.player, roles=roles, ttl_s=args.ttl)
    except (OSError, ValueError) as exc:
        print(f"pokerctl token: {exc}", file=sys.stderr)
        return USAGE
    print(token)
    return 0


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("token", help=help)
    p.add_argument("--player", required=True, metavar="ID",
                   help="the token's subject: a player id (also an operator's name)")
    p.add_argument("--role", action="append", choices=ROLES, metavar="ROLE",
                   help=f"a role the token carries (repeatable; {', '.join(ROLES)}; "
                        "default player)")
    p.add_argument("--ttl", type=int, default=3600, metavar="SECONDS",
                   help="how long the token is valid (default %(default)s)")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="`pokerctl up`'s data directory (default: POKER_DATA_DIR, else "
                        "$XDG_DATA_HOME/pokerctl); the issuer is in DIR/identity")
    p.set_defaults(run=_token)
