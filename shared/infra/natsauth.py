"""Who may do what on NATS: the one source of the users and permissions of the poker account.

`pokerctl up` renders it into its nats-server config with the passwords it keeps
(:func:`accounts_conf` with ``passwords``); deploy/nats/accounts.conf is the same rendering
with each password taken from the environment (``$POKER_DEALER_PASSWORD``, ...), and the
Helm values (deploy/nats/values.yaml) hold the same users (tests/unit/test_nats_accounts.py
keeps both equal to this module; ``python -m shared.infra.natsauth`` writes accounts.conf).

The rules:

- nobody but the admin creates, edits, deletes or purges a stream, or deletes a message (the
  stream's own deny-delete/deny-purge flags do not stop a stream delete, nor an edit that
  clears them); the admin is the job that creates the stream and buckets, never a service;
- the services append commits to ``poker.table.>`` and read the log; the dealer alone reaches
  the running hands' decks (the POKER_DECKS bucket), the table service alone the clock leases
  (POKER_LEASES) and the countdown nudges (``poker.clock.>``);
- the wallet (services/wallet) alone appends to the money ledger (``POKER_WALLET`` over
  ``poker.wallet.>``) and reads it; it reaches no other stream, not even the table log;
- the reader (audit, history, bots' audit, the money audit) reads the log, a mirror's copy
  and the money ledger, and writes nothing;
- the mirror writes only its own stream (``POKER_MIRROR`` over ``poker.mirror.table.>``), and
  may look at the primary stream's info (to refuse a target that holds the primary);
- a connection without a user is refused (there is no ``no_auth_user``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .eventstore import MIRROR_PREFIX, MIRROR_STREAM, STREAM, SUBJECT_PREFIX
from .lease import DEFAULT_BUCKET as LEASES
from .vault import BUCKET as DECKS

ACCOUNT = "POKER"
ADMIN, DEALER, TABLE, SERVICE, READER, MIRROR, WALLET = (
    "poker-admin", "poker-dealer", "poker-table", "poker-service", "poker-reader",
    "poker-mirror", "poker-wallet")
SYS_USER = "sys"
#: the NATS user each service connects as
SERVICE_USERS = {"dealer": DEALER, "table": TABLE, "betting": SERVICE, "showdown": SERVICE,
                 "rake": SERVICE, "wallet": WALLET}
CLOCK_SUBJECTS = "poker.clock.>"
#: the money ledger (services/wallet/ledger.py's WALLET_STREAM and WALLET_PREFIX; a test keeps
#: them equal): one subject per account
WALLET_STREAM = "POKER_WALLET"
WALLET_SUBJECTS = "poker.wallet.>"
#: the compliance access log (shared/audit/access.py): every read that opens sealed cards
ACCESS_STREAM = "POKER_ACCESS"
ACCESS_SUBJECTS = "poker.access.>"


def _read(stream: str) -> list[str]:
    """Read a stream: its info, message and direct gets."""
    return [f"$JS.API.STREAM.INFO.{stream}", f"$JS.API.STREAM.MSG.GET.{stream}",
            f"$JS.API.DIRECT.GET.{stream}", f"$JS.API.DIRECT.GET.{stream}.>"]


def _bucket(bucket: str) -> list[str]:
    """Use a KV bucket: put, get, delete, watch (never create or remove it)."""
    stream = f"KV_{bucket}"
    return [f"$KV.{bucket}.>", f"$JS.API.STREAM.INFO.{stream}",
            f"$JS.API.STREAM.MSG.GET.{stream}", f"$JS.API.DIRECT.GET.{stream}",
            f"$JS.API.DIRECT.GET.{stream}.>", f"$JS.API.CONSUMER.CREATE.{stream}.>",
            f"$JS.API.CONSUMER.DELETE.{stream}.>"]


#: append commits and read the log (with the ephemeral consumers nats-py may make)
_LOG = [SUBJECT_PREFIX + ">", "$JS.API.INFO", *_read(STREAM),
        f"$JS.API.CONSUMER.CREATE.{STREAM}", f"$JS.API.CONSUMER.CREATE.{STREAM}.>",
        f"$JS.API.CONSUMER.INFO.{STREAM}.>", f"$JS.API.CONSUMER.MSG.NEXT.{STREAM}.>",
        f"$JS.API.CONSUMER.DELETE.{STREAM}.>", "$JS.FC.>", f"$JS.ACK.{STREAM}.>", "_INBOX.>"]
#: managing streams: the admin's alone
_EDIT_STREAMS = ["$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>",
                 "$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.MSG.DELETE.>",
                 "$JS.API.STREAM.RESTORE.>", "$JS.API.STREAM.SNAPSHOT.>"]
NEVER_EDIT = ["$JS.API.STREAM.CREATE.>", *_EDIT_STREAMS]
#: the running hands' decks: the dealer's alone
NOT_THE_DECKS = [f"$KV.{DECKS}.>", f"$JS.API.DIRECT.GET.KV_{DECKS}",
                 f"$JS.API.DIRECT.GET.KV_{DECKS}.>", f"$JS.API.STREAM.MSG.GET.KV_{DECKS}"]


@dataclass(frozen=True)
class User:
    name: str
    #: None: no permissions block, everything allowed (the admin)
    publish: list[str] | None = None
    publish_deny: list[str] = field(default_factory=list)
    subscribe: list[str] = field(default_factory=list)
    subscribe_deny: list[str] = field(default_factory=list)
    comment: str = ""

    @property
    def password_variable(self) -> str:
        """The environment variable deploy/'s configs read this user's password from."""
        if self.name == SYS_USER:
            return "NATS_SYS_PASSWORD"
        return re.sub(r"[^A-Z0-9]", "_", self.name.upper()) + "_PASSWORD"


USERS: tuple[User, ...] = (
    User(ADMIN, comment="creates the stream and the KV buckets (replicas 3); never a service"),
    User(DEALER, publish=[*_LOG, *_bucket(DECKS)], publish_deny=NEVER_EDIT,
         subscribe=["_INBOX.>", SUBJECT_PREFIX + ">"],
         comment="the dealer: the log, and the running hands' decks (it alone)"),
    User(TABLE, publish=[*_LOG, *_bucket(LEASES), CLOCK_SUBJECTS],
         publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS],
         subscribe=["_INBOX.>", SUBJECT_PREFIX + ">", CLOCK_SUBJECTS, f"$KV.{LEASES}.>"],
         subscribe_deny=[f"$KV.{DECKS}.>"],
         comment="the table service: the log, the clock leases and the countdown nudges"),
    User(SERVICE, publish=_LOG, publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS],
         subscribe=["_INBOX.>", SUBJECT_PREFIX + ">"], subscribe_deny=[f"$KV.{DECKS}.>"],
         comment="betting, showdown and rake: append to the log and read it"),
    User(WALLET, publish=[WALLET_SUBJECTS, "$JS.API.INFO", *_read(WALLET_STREAM), "_INBOX.>"],
         publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS], subscribe=["_INBOX.>"],
         comment="the wallet: appends to the money ledger and reads it; no other stream"),
    User(READER, publish=["$JS.API.INFO", *_read(STREAM), *_read(MIRROR_STREAM),
                          *_read(WALLET_STREAM), ACCESS_SUBJECTS, *_read(ACCESS_STREAM),
                          "_INBOX.>"],
         publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS], subscribe=["_INBOX.>"],
         comment="audit, history, bots' audit, the money audit: read the log (or a mirror's "
                 "copy) and the money ledger; append to the access log alone (each read "
                 "that opens sealed cards)"),
    User(MIRROR, publish=[MIRROR_PREFIX + ">", "$JS.API.INFO",
                          f"$JS.API.STREAM.CREATE.{MIRROR_STREAM}", *_read(MIRROR_STREAM),
                          f"$JS.API.STREAM.INFO.{STREAM}", "_INBOX.>"],
         publish_deny=[*_EDIT_STREAMS, *NOT_THE_DECKS], subscribe=["_INBOX.>"],
         comment="pokerctl mirror: writes its own stream only (it may make it), and looks at "
                 "the primary's stream info to refuse a server that holds the primary"),
)
SYS = User(SYS_USER)


def user(name: str) -> User:
    return next(u for u in (*USERS, SYS) if u.name == name)


# --- nats-server config ------------------------------------------------------------------


def _list(items: list[str], indent: str) -> str:
    inner = "".join(f'{indent}  "{s}"\n' for s in items)
    return f"[\n{inner}{indent}]"


def _user_block(u: User, password: str, indent: str) -> list[str]:
    head = [f"{indent}# {u.comment}"] if u.comment else []
    if u.publish is None:
        return [*head, f"{indent}{{user: {u.name}, password: {password}}}"]
    i2, i3, i4 = indent + "  ", indent + "    ", indent + "      "
    lines = [*head, f"{indent}{{", f"{i2}user: {u.name}", f"{i2}password: {password}",
             f"{i2}permissions: {{", f"{i3}publish: {{", f"{i4}allow: {_list(u.publish, i4)}"]
    if u.publish_deny:
        lines.append(f"{i4}deny: {_list(u.publish_deny, i4)}")
    lines += [f"{i3}}}", f"{i3}subscribe: {{", f"{i4}allow: {_list(u.subscribe, i4)}"]
    if u.subscribe_deny:
        lines.append(f"{i4}deny: {_list(u.subscribe_deny, i4)}")
    lines += [f"{i3}}}", f"{i2}}}", f"{indent}}}"]
    return lines


def _password(u: User, passwords: Mapping[str, str] | None) -> str:
    if passwords is None:
        return "$" + u.password_variable
    value = passwords[u.name]
    if not re.fullmatch(r"[A-Za-z0-9_-]+", value):
        raise ValueError(f"the password of {u.name} must be letters, digits, - or _")
    return f'"{value}"'


HEADER = """\
# Accounts of the poker cluster (included by cluster.conf; the Helm values hold the same).
# GENERATED from shared/infra/natsauth.py (python -m shared.infra.natsauth): edit that, not this.
#
# Nobody but the admin creates, edits, deletes or purges a stream, or deletes a message (the
# stream's deny-delete/deny-purge flags alone do not stop a stream delete or an edit that
# clears them). The dealer alone reaches the decks; the table service alone the leases and
# the clock nudges; the wallet alone the money ledger; the reader reads; the mirror writes its
# own stream only. There is no anonymous user. Passwords come from the environment (bcrypt
# them in production).
"""


def accounts_conf(passwords: Mapping[str, str] | None = None) -> str:
    """The ``accounts`` block of a nats-server config: each user's password from
    ``passwords`` (user -> password), or None: from its environment variable."""
    lines = ["accounts {", f"  {ACCOUNT} {{", "    jetstream: enabled", "    users: ["]
    for u in USERS:
        lines += _user_block(u, _password(u, passwords), "      ")
    lines += ["    ]", "  }", "  SYS {", "    users: ["]
    lines += _user_block(SYS, _password(SYS, passwords), "      ")
    lines += ["    ]", "  }", "}", "system_account: SYS"]
    return (HEADER if passwords is None else "") + "\n".join(lines) + "\n"


def helm_users() -> dict[str, list[dict]]:
    """The same accounts as the Helm chart's ``config.merge.accounts`` holds them (users with
    their permissions; passwords as ``<< $VAR >>``, compared as text by the tests)."""
    def one(u: User) -> dict:
        out: dict = {"user": u.name, "password": f"<< ${u.password_variable} >>"}
        if u.publish is not None:
            publish: dict = {"allow": list(u.publish)}
            if u.publish_deny:
                publish["deny"] = list(u.publish_deny)
            subscribe: dict = {"allow": list(u.subscribe)}
            if u.subscribe_deny:
                subscribe["deny"] = list(u.subscribe_deny)
            out["permissions"] = {"publish": publish, "subscribe": subscribe}
        return out
    return {ACCOUNT: [one(u) for u in USERS], "SYS": [one(SYS)]}


ACCOUNTS_FILE = Path(__file__).resolve().parents[2] / "deploy" / "nats" / "accounts.conf"


if __name__ == "__main__":
    ACCOUNTS_FILE.write_text(accounts_conf())
    print(f"wrote {ACCOUNTS_FILE}", file=sys.stderr)
