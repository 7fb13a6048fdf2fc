"""Who may do what on NATS: the one source of the users and permissions of the poker account.

`pokerctl up` renders it into its nats-server config with the passwords it keeps
(:func:`accounts_conf` with ``passwords``); deploy/nats/accounts.conf is the same rendering
with each password taken from the environment (``$POKER_DEALER_PASSWORD``, ...), and the
Helm values (deploy/nats/values.yaml) hold the same users (tests/unit/test_nats_accounts.py
keeps both equal to this module; ``python -m shared.infra.natsauth`` writes accounts.conf).
Those files are for a log of one stream; a log split over N shard streams
(POKER_STREAM_SHARDS=N, shared/infra/eventstore.py) needs the rendering for N, which names
every shard stream (``python -m shared.infra.natsauth --shards N``; `pokerctl up --shards N`
renders its own).

The rules:

- nobody but the admin creates, edits, deletes or purges a stream, or deletes a message (the
  stream's own deny-delete/deny-purge flags do not stop a stream delete, nor an edit that
  clears them); the admin is the job that creates the stream and buckets, never a service;
- the services append commits to ``poker.table.>`` (and each shard's ``poker.s<k>.table.>``)
  and read the log, on every stream of it; the dealer alone reaches
  the running hands' decks (the POKER_DECKS bucket), the table service alone the clock leases
  (POKER_LEASES), the countdown nudges (``poker.clock.>``) and the live feed of the commits
  the log's streams republish (``poker.live.>``, to which no user may publish);
- the wallet (services/wallet) alone appends to the money ledger (``POKER_WALLET`` over
  ``poker.wallet.>``) and reads it; it reaches no other stream, not even the table log;
- the reader (audit, history, bots' audit, the money audit) reads the log, a mirror's copy,
  the money ledger and the access log, and writes nothing;
- compliance (whoever holds the compliance key: `pokerctl audit`/`history` with a key, the
  bots' audit, the web's compliance replay) reads as the reader does and alone appends to the
  access log (``POKER_ACCESS``), so no record of a read can be made up by anyone else;
- the web pages read the log and keep their visitors' sessions in the ``POKER_WEB_SESSIONS``
  bucket, which nobody else reaches;
- the notary (services/notary) reads the log and alone writes the hands' Merkle log and its
  checkpoints (``POKER_HANDS`` over ``poker.hands.>``, ``POKER_CHECKPOINTS`` over
  ``poker.checkpoints``, which it may make) and its lease bucket (``POKER_NOTARY``); the
  reader and compliance read those two streams (an audit against a checkpoint), and so does
  the table service (players' receipts);
- the mirror writes only its own streams (``POKER_MIRROR`` over ``poker.mirror.table.>``, and
  ``POKER_MIRROR_S<k>`` over ``poker.mirror.s<k>.table.>``), and may look at the primary
  streams' info (to refuse a target that holds the primary);
- whoever reads the log may list the streams' names (``$JS.API.STREAM.NAMES``): that is how
  a process finds whether the log is one stream or shards;
- a connection without a user is refused (there is no ``no_auth_user``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from .eventstore import LIVE_PREFIX, STREAM, SUBJECT_PREFIX, LogLayout
from .lease import DEFAULT_BUCKET as LEASES
from .services import (
    DEALER_USER,
    DIRECTOR_USER,
    NOTARY_USER,
    SERVICES,
    STEPS_USER,
    TABLE_USER,
    WALLET_USER,
)
from .vault import BUCKET as DECKS
from .vault import SEEDS_BUCKET as SEEDS

ACCOUNT = "POKER"
#: the services' users (the registry names them: shared/infra/services.py)
DEALER, TABLE, SERVICE, WALLET, NOTARY, DIRECTOR = (
    DEALER_USER, TABLE_USER, STEPS_USER, WALLET_USER, NOTARY_USER, DIRECTOR_USER)
#: the users of the tools, the mirror and the web pages
ADMIN, READER, MIRROR, COMPLIANCE, WEB = (
    "poker-admin", "poker-reader", "poker-mirror", "poker-compliance", "poker-web")
SYS_USER = "sys"
#: the NATS user each service connects as (the web pages too)
SERVICE_USERS = {**{s.name: s.nats_user for s in SERVICES}, "web": WEB}
CLOCK_SUBJECTS = "poker.clock.>"
#: the commits the log's streams republish as they store them (eventstore.LIVE_PREFIX)
LIVE_SUBJECTS = LIVE_PREFIX + ">"
#: the money ledger (services/wallet/ledger.py's WALLET_STREAM and WALLET_PREFIX; a test keeps
#: them equal): one subject per account
WALLET_STREAM = "POKER_WALLET"
WALLET_SUBJECTS = "poker.wallet.>"
#: the compliance access log (shared/audit/access.py): every read that opens sealed cards
ACCESS_STREAM = "POKER_ACCESS"
ACCESS_SUBJECTS = "poker.access.>"
#: the web pages' sessions (services/web/sessions.py): a KV bucket only the web reaches
WEB_SESSIONS = "POKER_WEB_SESSIONS"
#: the notary's (shared/tlog/store.py; a test keeps them equal): the hands' Merkle log, its
#: checkpoints and the notaries' lease bucket
HANDS_STREAM, HANDS_SUBJECTS = "POKER_HANDS", "poker.hands.>"
CHECKPOINT_STREAM, CHECKPOINT_SUBJECT = "POKER_CHECKPOINTS", "poker.checkpoints"
NOTARY_BUCKET = "POKER_NOTARY"
#: the tournament director's (services/tournament: log.py's STREAM and PREFIX, director.py's
#: SEEDS): its log and the seeds of its draws
TOURNAMENT_STREAM, TOURNAMENT_SUBJECTS = "POKER_TOURNAMENTS", "poker.tournament.>"
TOURNAMENT_SEEDS, TOURNAMENT_LEASES = "POKER_TOURNAMENT_SEEDS", "POKER_TOURNAMENT_LEASES"


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


#: list the streams' names: how a process finds the log's layout (one stream or shards,
#: shared/infra/eventstore.py); names only, no stream's contents or config
STREAM_NAMES = "$JS.API.STREAM.NAMES"


def primary_layout(shards: int = 1) -> LogLayout:
    """The primary log's streams a deployment of ``shards`` shards may hold: ``POKER`` alone,
    or ``POKER`` (its legacy stream, if it was one stream before) and ``POKER_S0``.. ."""
    return LogLayout(STREAM, SUBJECT_PREFIX, shards, legacy=shards > 1)


def _log(shards: int) -> list[str]:
    """Append commits and read the log, on every stream of it (with the ephemeral consumers
    nats-py may make). NATS wildcards match whole tokens only (``POKER_S*`` is no pattern),
    so every shard stream is named."""
    streams = primary_layout(shards).streams
    out = [*(s.subjects for s in streams), "$JS.API.INFO", STREAM_NAMES]
    for s in streams:
        out += [*_read(s.name), f"$JS.API.CONSUMER.CREATE.{s.name}",
                f"$JS.API.CONSUMER.CREATE.{s.name}.>", f"$JS.API.CONSUMER.INFO.{s.name}.>",
                f"$JS.API.CONSUMER.MSG.NEXT.{s.name}.>", f"$JS.API.CONSUMER.DELETE.{s.name}.>"]
    return [*out, "$JS.FC.>", *(f"$JS.ACK.{s.name}.>" for s in streams), "_INBOX.>"]


def _log_subjects(shards: int) -> list[str]:
    """The log's subjects, to subscribe to (a Watch follows its table's)."""
    return [s.subjects for s in primary_layout(shards).streams]


#: managing streams: the admin's alone
_EDIT_STREAMS = ["$JS.API.STREAM.UPDATE.>", "$JS.API.STREAM.DELETE.>",
                 "$JS.API.STREAM.PURGE.>", "$JS.API.STREAM.MSG.DELETE.>",
                 "$JS.API.STREAM.RESTORE.>", "$JS.API.STREAM.SNAPSHOT.>"]
NEVER_EDIT = ["$JS.API.STREAM.CREATE.>", *_EDIT_STREAMS]
#: the running hands' decks and the tables' master seeds: the dealer's alone
NOT_THE_DECKS = [s for b in (DECKS, SEEDS)
                 for s in (f"$KV.{b}.>", f"$JS.API.DIRECT.GET.KV_{b}",
                           f"$JS.API.DIRECT.GET.KV_{b}.>", f"$JS.API.STREAM.MSG.GET.KV_{b}")]


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


def users(shards: int = 1) -> tuple[User, ...]:
    """Every user of the poker account, for a log of ``shards`` shard streams
    (POKER_STREAM_SHARDS): whoever may read or write the ``POKER`` stream has the same rights
    on each shard stream, and the mirror on each of its streams."""
    primary = primary_layout(shards)
    mirror = primary.mirrored()
    log, log_subjects = _log(shards), _log_subjects(shards)
    #: what the reader and compliance read: the log, a mirror's copy, the money ledger and
    #: the access log
    reads = ["$JS.API.INFO", STREAM_NAMES, *(r for s in primary.streams for r in _read(s.name)),
             *(r for s in mirror.streams for r in _read(s.name)), *_read(WALLET_STREAM),
             *_read(ACCESS_STREAM), *_read(HANDS_STREAM), *_read(CHECKPOINT_STREAM),
             *_read(TOURNAMENT_STREAM), "_INBOX.>"]
    return (
        User(ADMIN, comment="creates the streams and the KV buckets (replicas 3); never a "
                            "service"),
        User(DEALER, publish=[*log, *_bucket(DECKS), *_bucket(SEEDS)], publish_deny=NEVER_EDIT,
             subscribe=["_INBOX.>", *log_subjects],
             comment="the dealer: the log, the running hands' decks and the tables' seeds "
                     "(it alone)"),
        User(TABLE, publish=[*log, *_bucket(LEASES), CLOCK_SUBJECTS, *_read(HANDS_STREAM),
                             *_read(CHECKPOINT_STREAM)],
             publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS],
             subscribe=["_INBOX.>", *log_subjects, LIVE_SUBJECTS, CLOCK_SUBJECTS,
                        f"$KV.{LEASES}.>"],
             subscribe_deny=[f"$KV.{DECKS}.>", f"$KV.{SEEDS}.>"],
             comment="the table service: the log (and its live feed), the clock leases, "
                     "the countdown nudges; it reads the hands' Merkle log and its "
                     "checkpoints (players' receipts)"),
        User(SERVICE, publish=log, publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS],
             subscribe=["_INBOX.>", *log_subjects], subscribe_deny=[f"$KV.{DECKS}.>", f"$KV.{SEEDS}.>"],
             comment="betting, showdown and rake: append to the log and read it"),
        User(WALLET, publish=[WALLET_SUBJECTS, "$JS.API.INFO", *_read(WALLET_STREAM),
                              "_INBOX.>"],
             publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS], subscribe=["_INBOX.>"],
             comment="the wallet: appends to the money ledger and reads it; no other stream"),
        User(READER, publish=reads,
             publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS, ACCESS_SUBJECTS],
             subscribe=["_INBOX.>"],
             comment="audit, history, bots' audit, the money audit: read the log (or a "
                     "mirror's copy), the money ledger and the access log; write nothing"),
        User(COMPLIANCE, publish=[*reads, ACCESS_SUBJECTS],
             publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS], subscribe=["_INBOX.>"],
             comment="whoever holds the compliance key: reads as the reader does and alone "
                     "records each read that opens sealed cards in the access log"),
        User(WEB, publish=["$JS.API.INFO", STREAM_NAMES,
                           *(r for s in primary.streams for r in _read(s.name)),
                           *_bucket(WEB_SESSIONS), "_INBOX.>"],
             publish_deny=[*NEVER_EDIT, *NOT_THE_DECKS, ACCESS_SUBJECTS],
             subscribe=["_INBOX.>"],
             comment="the web pages: read the log, keep their sessions (their bucket alone)"),
        User(NOTARY, publish=["$JS.API.INFO", STREAM_NAMES,
                              *(r for s in primary.streams for r in _read(s.name)),
                              HANDS_SUBJECTS, CHECKPOINT_SUBJECT,
                              f"$JS.API.STREAM.CREATE.{HANDS_STREAM}",
                              f"$JS.API.STREAM.CREATE.{CHECKPOINT_STREAM}",
                              *_read(HANDS_STREAM), *_read(CHECKPOINT_STREAM),
                              f"$JS.API.STREAM.CREATE.KV_{NOTARY_BUCKET}",
                              *_bucket(NOTARY_BUCKET), "_INBOX.>"],
             publish_deny=[*_EDIT_STREAMS, *NOT_THE_DECKS, ACCESS_SUBJECTS],
             subscribe=["_INBOX.>", *log_subjects],
             comment="the notary: reads the log (woken by its subjects), writes the hands' "
                     "Merkle log and its checkpoints (it may make those streams) and its "
                     "lease bucket; nothing else"),
        User(DIRECTOR, publish=["$JS.API.INFO", STREAM_NAMES,
                                *(r for s in primary.streams for r in _read(s.name)),
                                TOURNAMENT_SUBJECTS, *_read(TOURNAMENT_STREAM),
                                f"$JS.API.STREAM.CREATE.{TOURNAMENT_STREAM}",
                                f"$JS.API.STREAM.CREATE.KV_{TOURNAMENT_SEEDS}",
                                f"$JS.API.STREAM.CREATE.KV_{TOURNAMENT_LEASES}",
                                *_bucket(TOURNAMENT_SEEDS), *_bucket(TOURNAMENT_LEASES),
                                "_INBOX.>"],
             publish_deny=[*_EDIT_STREAMS, *NOT_THE_DECKS, ACCESS_SUBJECTS],
             subscribe=["_INBOX.>", f"$KV.{TOURNAMENT_LEASES}.>",
                        f"$KV.{TOURNAMENT_SEEDS}.>"],
             comment="the tournament director: reads the log, writes its tournaments' log "
                     "(it may make that stream), its draws' seeds and its tournaments' "
                     "leases (buckets of its own); nothing else"),
        User(MIRROR, publish=[*(s.subjects for s in mirror.streams), "$JS.API.INFO",
                              STREAM_NAMES,
                              *(f"$JS.API.STREAM.CREATE.{s.name}" for s in mirror.streams),
                              *(r for s in mirror.streams for r in _read(s.name)),
                              *(f"$JS.API.STREAM.INFO.{s.name}" for s in primary.streams),
                              "_INBOX.>"],
             publish_deny=[*_EDIT_STREAMS, *NOT_THE_DECKS], subscribe=["_INBOX.>"],
             comment="pokerctl mirror: writes its own streams only (it may make them), and "
                     "looks at the primary's stream info to refuse a server that holds the "
                     "primary"),
    )


#: the users of a log of one stream (deploy/nats/accounts.conf, the Helm values)
USERS: tuple[User, ...] = users()
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
# clears them). The dealer alone reaches the decks; the table service alone the leases, the
# clock nudges and the live feed; the wallet alone the money ledger; the reader reads;
# compliance alone records reads in the access log; the web alone keeps its sessions; the
# notary alone writes the hands' Merkle log and its checkpoints; the mirror writes its own
# stream only. There is no anonymous user. Passwords come from the
# environment (bcrypt them in production).
"""


def accounts_conf(passwords: Mapping[str, str] | None = None, shards: int = 1) -> str:
    """The ``accounts`` block of a nats-server config: each user's password from
    ``passwords`` (user -> password), or None: from its environment variable; the rights on
    a log of ``shards`` shard streams (:func:`users`)."""
    lines = ["accounts {", f"  {ACCOUNT} {{", "    jetstream: enabled", "    users: ["]
    for u in users(shards):
        lines += _user_block(u, _password(u, passwords), "      ")
    lines += ["    ]", "  }", "  SYS {", "    users: ["]
    lines += _user_block(SYS, _password(SYS, passwords), "      ")
    lines += ["    ]", "  }", "}", "system_account: SYS"]
    header = ""
    if passwords is None:
        header = HEADER if shards == 1 else \
            HEADER + f"# For a log of {shards} shard streams (POKER_STREAM_SHARDS={shards}).\n"
    return header + "\n".join(lines) + "\n"


def helm_users(shards: int = 1) -> dict[str, list[dict]]:
    """The same accounts as the Helm chart's ``config.merge.accounts`` holds them (users with
    their permissions; passwords as ``<< $VAR >>``, compared as text by the tests), for a log
    of ``shards`` shard streams."""
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
    return {ACCOUNT: [one(u) for u in users(shards)], "SYS": [one(SYS)]}


ACCOUNTS_FILE = Path(__file__).resolve().parents[2] / "deploy" / "nats" / "accounts.conf"


def main(argv: list[str]) -> None:
    """No arguments: write deploy/nats/accounts.conf (a log of one stream). ``--shards N``:
    print the rendering for a log of N shard streams (POKER_STREAM_SHARDS=N) on stdout, for a
    deployment's own accounts.conf (its Helm values: :func:`helm_users` of N)."""
    if not argv:
        ACCOUNTS_FILE.write_text(accounts_conf())
        print(f"wrote {ACCOUNTS_FILE}", file=sys.stderr)
        return
    from .config import stream_shards
    if len(argv) != 2 or argv[0] != "--shards":
        raise SystemExit("usage: python -m shared.infra.natsauth [--shards N]")
    try:
        shards = stream_shards({"POKER_STREAM_SHARDS": argv[1]})
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    sys.stdout.write(accounts_conf(shards=shards))


if __name__ == "__main__":
    main(sys.argv[1:])
