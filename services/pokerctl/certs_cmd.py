"""pokerctl certs: the private CA and the certificates the services and clients present, and
where client commands find them.

    pokerctl certs generate DIR [--identity NAME ...] [--host H ...]

DIR/ca.pem and DIR/ca.key (owner-only; made on first use, reused after), and per identity
DIR/<identity>.pem and DIR/<identity>.key (default: every service, nats, client, admin).
Give each service POKER_TLS_DIR=DIR (it uses ca.pem and its own name's files); a real
deployment gives each its own files only (POKER_TLS_CA, POKER_TLS_CERT, POKER_TLS_KEY) and
keeps ca.key off the cluster. Client commands (bots, seat, ...) use POKER_TLS_DIR's
client.pem, else the CA `pokerctl up` keeps in its data directory; POKER_INSECURE=1 connects
in plaintext (debugging only).
"""

from __future__ import annotations

import argparse
import os
import sys

from shared.infra.tls import DEFAULT_HOSTS, DEFAULT_IDENTITIES, TlsConfig, TlsError, generate

from .datadir import up_cert_dir
from .exitcodes import USAGE

CLIENT = "client"


def client_tls(identity: str = CLIENT) -> TlsConfig | None:
    """What a client command presents: POKER_TLS_* if set (or None with POKER_INSECURE=1),
    else `pokerctl up`'s certificates. TlsError when there are none: the message says what
    to set."""
    env = os.environ
    if not any(env.get(k) for k in ("POKER_TLS_DIR", "POKER_TLS_CA", "POKER_INSECURE")) and \
            (up_cert_dir() / "ca.pem").exists():
        return TlsConfig.in_dir(up_cert_dir(), identity).checked()
    return TlsConfig.from_env(identity, env)


def client_tls_or_exit(identity: str = CLIENT) -> TlsConfig | None:
    """:func:`client_tls`, or exit USAGE (2) with its message (for commands)."""
    try:
        return client_tls(identity)
    except TlsError as exc:
        print(f"pokerctl: {exc} (or start `pokerctl up`, which makes {up_cert_dir()})",
              file=sys.stderr)
        raise SystemExit(USAGE) from None


def _generate(args: argparse.Namespace) -> int:
    identities = tuple(args.identity) if args.identity else DEFAULT_IDENTITIES
    hosts = tuple(args.host) if args.host else DEFAULT_HOSTS
    try:
        target = generate(args.dir, identities, hosts)
    except (OSError, TlsError, ValueError) as exc:
        print(f"pokerctl certs: {exc}", file=sys.stderr)
        return USAGE
    print(f"CA          {target / 'ca.pem'} (every service and client trusts it)")
    print(f"CA key      {target / 'ca.key'} (signs certificates: keep it off the cluster)")
    for identity in identities:
        print(f"{identity:<11} {target / (identity + '.pem')} + .key")
    print(f"services: POKER_TLS_DIR={target}")
    return 0


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    certs = sub.add_parser("certs", help=help)
    csub = certs.add_subparsers(dest="certs_command", required=True)
    g = csub.add_parser("generate", help="make a CA (or reuse DIR's) and certificates in DIR")
    g.add_argument("dir", metavar="DIR")
    g.add_argument("--identity", action="append", metavar="NAME",
                   help="an identity to issue a certificate for (repeatable; default: "
                        f"{', '.join(DEFAULT_IDENTITIES)})")
    g.add_argument("--host", action="append", metavar="HOST",
                   help="a host name or IP address every certificate is valid for "
                        f"(repeatable; default {', '.join(DEFAULT_HOSTS)})")
    g.set_defaults(run=_generate)
