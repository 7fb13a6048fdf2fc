"""What the web's pages read (:class:`Backend`): the table service as the web's own caller,
the log, the identity provider's check of a token, the compliance keyring and access log,
the sessions' bucket, the wallet's balance and the tournament director."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from poker.table.v1 import table_pb2_grpc

from shared.infra.eventstore import Stored
from shared.infra.identity import Principal
from shared.infra.secrecy import ComplianceKeyring

from .sessions import SessionStore


@dataclass
class Backend:
    """What the pages read: the table service (as the web service's own caller) and the
    log's tables."""

    stub: table_pb2_grpc.TableServiceStub
    #: every table of the log and its count of commits (EventStore.table_counts)
    table_counts: Callable[[], Awaitable[dict[str, int]]]
    read: Callable[[str], Awaitable[list[Stored]]]  # a table's commits
    #: a player's token checked (Unauthenticated if it is not the platform's, or expired)
    verify: Callable[[str], Awaitable[Principal]] | None = None
    #: the web service's own call metadata (its token, no role): what a spectator's calls
    #: carry; a signed-in player's carry theirs
    own: tuple = ()
    #: the compliance role's keyring (POKER_COMPLIANCE_KEY), and the access log's record of
    #: a view (purpose, table, key ids, hands, who): None, no compliance replay here
    keyring: ComplianceKeyring | None = None
    record_access: Callable[..., Awaitable[int]] | None = None
    #: the sessions (sessions.SessionStore over the POKER_WEB_SESSIONS bucket); None: kept in
    #: this process only (a MemoryKV: tests, one process)
    sessions: SessionStore | None = None
    #: a table's commits after a stream sequence (EventStore.read); None: ``read``, filtered
    read_after: Callable[[str, int], Awaitable[list[Stored]]] | None = None
    #: a player's wallet balance (the wallet's Balance); None: the pages show none
    balance: Callable[[str], Awaitable[int]] | None = None
    tournaments: object = None  # the director's stub (tournaments.py); None: no director
