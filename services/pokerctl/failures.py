"""How a pokerctl command fails: one line on stderr, an exit code that says what happened.

The exit codes, one per meaning, the same in every command, are :mod:`.exitcodes`'s (0 ok,
1 no, 2 usage, 3 not found, 4 unreachable; the README's table).

- A server that does not answer (NATS: :class:`shared.infra.natsconn.NatsUnreachable`, after
  the bounded retry of :func:`shared.infra.natsconn.connect_once`; the table service:
  :class:`TableUnreachable`) ends the command with one line naming what was unreachable and
  what to check, exit :data:`UNREACHABLE`, never a traceback: :func:`reports_unreachable`
  wraps a command's ``run``.
- The flags that changed meaning (``--table`` was the table service's address in `bots` and
  `seat`, and `seat` took the table id as ``--table-id``) are refused for one release with a
  hint, exit :data:`USAGE`: :func:`old_table_flag`.

Flags, the same in every command: a table id is ``--table``; the table service's address
``--table-addr`` (POKER_TABLE_ADDR); NATS ``--nats`` (POKER_NATS_URL).
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable

import grpc

from shared.infra.natsconn import NatsUnreachable

from .exitcodes import FAILED, NOT_FOUND, UNREACHABLE, USAGE
from .exitcodes import OK as OK  # every code is imported from here by the commands
from .table_addresses import AddressError, parse_addresses

#: what to check when NATS does not answer
NATS_CHECK = ("is `pokerctl up` running? Else check the URL ({flag}; without one, "
              "`pokerctl up`'s data directory: POKER_DATA_DIR)")
#: what to check when the table service does not answer
TABLE_CHECK = "is `pokerctl up` running? Else give its address with --table-addr or " \
              "POKER_TABLE_ADDR"


class TableUnreachable(Exception):
    """No instance of the table service at ``address`` answered (``reason``: gRPC's)."""

    def __init__(self, address: str, reason: str) -> None:
        self.address, self.reason = address, reason
        super().__init__(f"cannot reach the table service at {address} ({reason})")


def is_unreachable(exc: grpc.RpcError) -> bool:
    """Whether a failed call never reached a server (no connection, a deadline, TLS), as
    opposed to a server's refusal."""
    code = exc.code() if callable(getattr(exc, "code", None)) else None
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return True
    details = (exc.details() if callable(getattr(exc, "details", None)) else "") or ""
    return code is grpc.StatusCode.UNAVAILABLE and any(
        w in details.lower() for w in ("connect", "dns", "resolv", "unreachable", "socket",
                                       "handshake", "ssl", "addresses", "refused"))


def one_line(text: str, limit: int = 200) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


#: where a command's NATS URL comes from
NATS_FLAG = "--nats, or POKER_NATS_URL"


#: what a refused TLS handshake says (gRPC's and OpenSSL's words)
_TLS_WORDS = ("certificate", "ssl", "handshake", "tls")


def untrusted(reason: str) -> bool:
    """Whether a connection failed because the server's certificate was not trusted (or the
    TLS handshake failed), not because nothing answered."""
    return any(w in reason.lower() for w in _TLS_WORDS)


def unreachable_line(prog: str, exc: Exception, nats_flag: str = NATS_FLAG) -> str:
    """The one line a command ends with when ``exc`` (NatsUnreachable, TableUnreachable)
    stopped it: a server that answered with a certificate this client does not trust is
    named as that (with the CA the client checked it against), not as one that is down."""
    if isinstance(exc, NatsUnreachable):
        if untrusted(exc.reason):
            return (f"{prog}: NATS at {exc.url} did not prove itself with a certificate of "
                    f"the CA this client trusts ({_nats_ca()}): {one_line(exc.reason)}: give "
                    f"the CA that signed its certificate (POKER_NATS_CA)")
        return f"{prog}: {one_line(str(exc))}: {NATS_CHECK.format(flag=nats_flag)}"
    if isinstance(exc, TableUnreachable) and untrusted(exc.reason):
        return (f"{prog}: the table service at {exc.address} did not prove itself with a "
                f"certificate of the CA this client trusts ({_table_ca()}): "
                f"{one_line(exc.reason)}: give the CA that signed its certificate "
                f"(POKER_TLS_CA or POKER_TLS_DIR)")
    return f"{prog}: {one_line(str(exc))}: {TABLE_CHECK}"


def log_away_line(prog: str, address: str, details: str) -> str:
    """The one line for a service that answered that its event log does not (NATS down or
    frozen behind a running service): what is down is the log, not the service."""
    return (f"{prog}: the table service at {address} answered, but its event log (NATS) did "
            f"not: {one_line(details)} (is NATS up? `pokerctl up` logs it in "
            f"DIR/logs/nats.log)")


def _table_ca() -> str:
    """The CA file a client command checks the table service against (certs_cmd)."""
    from .certs_cmd import client_tls
    try:
        tls = client_tls()
    except Exception:  # noqa: BLE001 - it is only named here
        return "none found"
    return str(tls.ca) if tls is not None else "none: POKER_INSECURE is set"


def _nats_ca() -> str:
    from .datadir import client_ca
    return client_ca() or "the system's"


def reports_unreachable(prog: str, nats_flag: str = NATS_FLAG
                        ) -> Callable[[Callable[[argparse.Namespace], int]],
                                      Callable[[argparse.Namespace], int]]:
    """Decorate a command's ``run``: a server that does not answer ends it with one line on
    stderr (:func:`unreachable_line`) and exit :data:`UNREACHABLE`."""
    def wrap(run: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
        @functools.wraps(run)
        def guarded(args: argparse.Namespace) -> int:
            try:
                return run(args)
            except (NatsUnreachable, TableUnreachable) as exc:
                print(unreachable_line(prog, exc, nats_flag), file=sys.stderr, flush=True)
                return UNREACHABLE
        return guarded
    return wrap


def status_exit(code: grpc.StatusCode | None) -> int:
    """The exit code of a call a server refused with ``code``: NOT_FOUND (no such table) is
    :data:`NOT_FOUND`, INVALID_ARGUMENT (what the command line gave) :data:`USAGE`, a server
    or its log away :data:`UNREACHABLE`, any other refusal :data:`FAILED`."""
    if code is grpc.StatusCode.NOT_FOUND:
        return NOT_FOUND
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        return USAGE
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return UNREACHABLE
    return FAILED


def read_exit(exc: BaseException) -> int:
    """The exit code of a command whose read of the log (or of a file it was given) stopped
    on ``exc``: the log not answering (a StoreError, a time-out, a lost connection)
    :data:`UNREACHABLE`; the access log refusing the record (the cards stay sealed)
    :data:`FAILED`; a file that cannot be read, or is not an export, :data:`USAGE`."""
    from shared.audit.access import AccessNotRecorded
    from shared.audit.export import ExportError
    from shared.infra.eventstore import StoreError
    if isinstance(exc, (TimeoutError, ConnectionError, StoreError, NatsUnreachable,
                        TableUnreachable)):
        return UNREACHABLE
    if isinstance(exc, AccessNotRecorded):
        return FAILED
    if isinstance(exc, (OSError, ExportError)):
        return USAGE
    return FAILED


def no_table(prog: str, table_id: str, where: str = "in the log") -> int:
    """The one line for a table nobody holds, and :data:`NOT_FOUND` (every command says it
    so)."""
    print(f"{prog}: no table {table_id!r} {where}", file=sys.stderr, flush=True)
    return NOT_FOUND


def looks_like_address(text: str) -> bool:
    """Whether ``text`` reads as the table service's address (host:port, a list of them, a
    gRPC target): what ``--table`` meant in `bots` and `seat` before it was a table id."""
    if ":" not in (text or ""):
        return False
    try:
        parse_addresses(text)
    except AddressError:
        return False
    return True


def old_table_flag(prog: str) -> str:
    """The hint for ``--table ADDRESS`` (the table service's address under its old flag)."""
    return (f"{prog}: --table is now a table id; the table service's address is --table-addr "
            "(or POKER_TABLE_ADDR)")


def add_retired_flag(p: argparse.ArgumentParser, flag: str) -> None:
    """A flag refused for one release (hidden from --help; the command's ``run`` refuses it
    with a hint): its value lands in ``retired_<name>``."""
    p.add_argument(flag, dest="retired_" + flag.lstrip("-").replace("-", "_"),
                   default=None, help=argparse.SUPPRESS)


def refuse(line: str, code: int = USAGE) -> int:
    """Print ``line`` (the command's one line) on stderr; the exit ``code`` (bad usage)."""
    print(line, file=sys.stderr, flush=True)
    return code
