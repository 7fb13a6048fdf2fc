"""A Jepsen-style history of the commands clients sent to the table service, checked against
the log.

:class:`RecordingStub` wraps the stub the clients call (around tests/helpers/retrying.py's
``RetryingStub``): every mutating call is one :class:`Entry` per *logical* command, keyed by
its table and its command id as the log keeps it (one entry however many times the client
or the retrying stub attempts it), with its final outcome: **acknowledged** (an OK reply),
**refused** (a definite refusal: nothing was applied) or **unknown** (the reply never came
or says nothing definite: UNAVAILABLE, DEADLINE_EXCEEDED, ABORTED, CANCELLED, INTERNAL, the
client gave up or was cancelled).

Where the command id lives: each request's ``command_id`` (``TopUp`` and ``SitOut`` nest
theirs in ``seat``), kept in the log under the client's scope, as services/table/server.py
makes it (shared/infra/rpc.client_command_id): ``c.create.<id>`` (CreateTable),
``c.sit<seat>.<id>`` (SitDown), ``c.s<seat>.<id>`` (Act, Leave, SitOut, TopUp, Disconnect,
Reconnect), ``c.op.<id>`` (PauseTable, ConfigureTable, CloseTable). Every envelope of a
commit carries the id of the command that produced it (shared/infra/repository.build_commit;
an Act's commit is the betting service's, under the same id); the system's own steps carry
ids outside the ``c.`` namespace (``drv:``, ``timeout:``, ``wallet:<saga key>``).

Which acknowledged commands must be in the log (:data:`APPENDING`): all of them. Every
mutating call ends in ``TableRepository.execute`` with a decision (shared/poker/table.py,
shared/poker/decide.act) that raises or returns at least one event, so an OK reply means a
commit with the command's id was appended, or, for a retry (a duplicate by command id or
by JetStream's message id), that an earlier attempt's commit with that id is in the log
already. Nothing the clients send is acknowledged without a commit of its own.

A refusal that is in the log by design (:func:`check`'s ``voided``): a SitDown or TopUp
whose buy-in the wallet refused appends its request (BuyInRequested, under the command's
id) and the refusal (BuyInRefused, its saga key being that id) before it answers
FAILED_PRECONDITION: applied and then undone, not refused-but-applied.

:func:`check` is pure: the entries and each table's commits' command ids in, the counts
out (:class:`Verdict`).
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from poker.events.v1 import events_pb2 as pb

from shared.infra.rpc import CLIENT_PREFIX

ACKNOWLEDGED, REFUSED, UNKNOWN = "acknowledged", "refused", "unknown"

#: a definite answer that nothing was applied (the request was checked and turned down,
#: before or instead of an append); every other status leaves the outcome unknown
REFUSALS = frozenset({
    grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.ALREADY_EXISTS, grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.NOT_FOUND, grpc.StatusCode.OUT_OF_RANGE,
    grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.RESOURCE_EXHAUSTED,
})


def _seat_scope(seat) -> tuple[str, str, str]:
    return seat.table_id, f"s{seat.seat}", seat.command_id


#: each mutating method of TableService: its request -> (table id, scope, command id)
SCOPES: dict[str, Callable[[Any], tuple[str, str, str]]] = {
    "CreateTable": lambda r: (r.table_id, "create", r.command_id),
    "SitDown": lambda r: (r.table_id, f"sit{r.seat}", r.command_id),
    "Act": lambda r: (r.table_id, f"s{r.seat}", r.command_id),
    "Leave": _seat_scope,
    "Disconnect": _seat_scope,
    "Reconnect": _seat_scope,
    "SitOut": lambda r: _seat_scope(r.seat),
    "TopUp": lambda r: _seat_scope(r.seat),
    "PauseTable": lambda r: (r.table_id, "op", r.command_id),
    "ConfigureTable": lambda r: (r.table_id, "op", r.command_id),
    "CloseTable": lambda r: (r.table_id, "op", r.command_id),
}
#: the mutating methods whose acknowledgement means a commit with the command's id is in the
#: log (see the module docstring: every one of them)
APPENDING = frozenset(SCOPES)


def logged_id(method: str, request) -> tuple[str, str, str]:
    """(table id, the command id as the log keeps it, as the client sent it)."""
    table_id, scope, command_id = SCOPES[method](request)
    return table_id, f"{CLIENT_PREFIX}{scope}.{command_id}", command_id


def outcome_of(code: grpc.StatusCode | None) -> str:
    """An attempt's outcome: None is an OK reply."""
    if code is None:
        return ACKNOWLEDGED
    return REFUSED if code in REFUSALS else UNKNOWN


@dataclass
class Entry:
    """One logical command: every attempt of it with the same command id."""

    table_id: str
    method: str
    command_id: str  # as the client sent it
    logged_id: str  # as the log keeps it (c.<scope>.<command id>)
    #: what each call of the wrapped stub ended with: a status name, "OK", or the exception
    #: that ended it ("CancelledError": the client gave up)
    calls: list[str] = field(default_factory=list)
    #: what each attempt ended with, as a stub inside the retries saw it (RecordingStub with
    #: ``attempts=True``); they do not decide the outcome
    attempts: list[str] = field(default_factory=list)
    acknowledged: bool = False
    refused: bool = False

    @property
    def outcome(self) -> str:
        """Acknowledged if any call was; else refused if any was; else unknown."""
        return ACKNOWLEDGED if self.acknowledged else REFUSED if self.refused else UNKNOWN


class History:
    """The entries, one per (table, logged command id), in the order first invoked."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str], Entry] = {}

    def invoke(self, method: str, request) -> Entry:
        table_id, logged, command_id = logged_id(method, request)
        entry = self._entries.get((table_id, logged))
        if entry is None:
            entry = self._entries[(table_id, logged)] = Entry(table_id, method, command_id,
                                                              logged)
        return entry

    @staticmethod
    def complete(entry: Entry, code: grpc.StatusCode | None, what: str = "",
                 attempt: bool = False) -> None:
        """One call of ``entry`` ended: OK (``code`` None), with a status, or (``what``
        says how) without one: unknown. ``attempt``: one attempt of the call, noted only."""
        said = what or (code.name if code is not None else "OK")
        if attempt:
            entry.attempts.append(said)
            return
        entry.calls.append(said)
        outcome = outcome_of(code) if not what else UNKNOWN
        entry.acknowledged |= outcome == ACKNOWLEDGED
        entry.refused |= outcome == REFUSED

    @property
    def entries(self) -> list[Entry]:
        return list(self._entries.values())


class RecordingStub:
    """The stub's mutating methods (:data:`SCOPES`) recorded in ``history``; the others
    (GetState, Watch) passed through as they are. Around the retries, the calls decide each
    command's outcome; ``attempts``: a stub inside the retries (around the gRPC stub), whose
    calls are the attempts, noted in the same entries."""

    def __init__(self, stub, history: History, attempts: bool = False) -> None:
        self._stub = stub
        self._history = history
        self._attempts = attempts

    def __getattr__(self, method: str):
        call = getattr(self._stub, method)
        if method not in SCOPES:
            return call
        history, attempt = self._history, self._attempts

        async def recorded(request, *args, **kwargs):
            entry = history.invoke(method, request)
            try:
                reply = await call(request, *args, **kwargs)
            except grpc.aio.AioRpcError as exc:
                history.complete(entry, exc.code(), attempt=attempt)
                raise
            except (Exception, asyncio.CancelledError) as exc:
                history.complete(entry, None, type(exc).__name__, attempt=attempt)
                raise
            history.complete(entry, None, attempt=attempt)
            return reply

        return recorded


# --- the log ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class TableLog:
    """What the check needs of one table's log: each commit's command id, in order, and the
    saga keys the wallet refused (BuyInRefused)."""

    command_ids: tuple[str, ...]
    voided: frozenset[str] = frozenset()


def table_log(commits: Iterable[bytes]) -> TableLog:
    """A table's commits (their stored bytes, in order) read for :func:`check`."""
    ids: list[str] = []
    voided: set[str] = set()
    for data in commits:
        commit = pb.Commit.FromString(data)
        envelopes = [pb.EventEnvelope.FromString(raw) for raw in commit.events]
        ids.extend(sorted({env.command_id for env in envelopes}))
        voided.update(env.buy_in_refused.key for env in envelopes
                      if env.WhichOneof("body") == "buy_in_refused")
    return TableLog(tuple(ids), frozenset(voided))


# --- the check --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    commands: int
    acknowledged: int
    refused: int
    unknown: int
    unknown_applied: int
    unknown_not_applied: int
    #: acknowledged (of a method in APPENDING), and no commit carries the command id
    lost: tuple[Entry, ...]
    #: (table, logged command id, commits that carry it): a client's id in more than one
    doubled: tuple[tuple[str, str, int], ...]
    #: refused, and a commit carries the command id (not undone by the wallet's refusal)
    refused_applied: tuple[Entry, ...]
    #: (table, logged command id): a client's id in the log that no entry sent
    unrecorded: tuple[tuple[str, str], ...]
    #: every entry checked
    entries: tuple[Entry, ...] = ()
    #: the commands attempted more than once (of entries whose attempts were noted)
    retried: tuple[Entry, ...] = ()

    @property
    def ok(self) -> bool:
        return not (self.lost or self.doubled or self.refused_applied or self.unrecorded)

    def line(self) -> str:
        return (f"history: {self.commands} commands ({len(self.retried)} retried): "
                f"{self.acknowledged} acknowledged, "
                f"{self.refused} refused, {self.unknown} unknown ({self.unknown_applied} "
                f"applied, {self.unknown_not_applied} not); lost {len(self.lost)}, doubled "
                f"{len(self.doubled)}, refused-but-applied {len(self.refused_applied)}, "
                f"unrecorded {len(self.unrecorded)}")

    def details(self, most: int = 10) -> str:
        """The line, and the first ``most`` of each anomaly."""
        out = [self.line(), *self.outcomes()]
        for name, items in (("lost", self.lost), ("doubled", self.doubled),
                            ("refused-but-applied", self.refused_applied),
                            ("unrecorded", self.unrecorded)):
            out += [f"  {name}: {item}" for item in items[:most]]
        return "\n".join(out)

    def outcomes(self) -> list[str]:
        """A line per kind of refused, unknown and retried command: its method and what its
        calls and attempts ended with, and how many."""
        kinds = Counter((e.outcome, e.method, _runs(e.calls), _runs(e.attempts))
                        for e in self.entries if e.outcome != ACKNOWLEDGED
                        or len(e.attempts) > 1)
        return [f"  {n} x {outcome} {method}: calls {calls}; attempts {attempts or '-'}"
                for (outcome, method, calls, attempts), n in sorted(kinds.items())]


def _runs(said: Sequence[str]) -> str:
    """``UNAVAILABLE x6, OK`` for six UNAVAILABLE and an OK."""
    out: list[list[Any]] = []
    for what in said:
        if out and out[-1][0] == what:
            out[-1][1] += 1
        else:
            out.append([what, 1])
    return ", ".join(what if n == 1 else f"{what} x{n}" for what, n in out)


def check(entries: Iterable[Entry], logs: Mapping[str, TableLog | Sequence[str]]) -> Verdict:
    """Classify the history against each table's log (``logs``: table id -> its
    :class:`TableLog`, or just its commits' command ids in order). System ids (outside
    ``c.``) are not clients' and are left out."""
    tables = {t: log if isinstance(log, TableLog) else TableLog(tuple(log))
              for t, log in logs.items()}
    counts = {t: Counter(i for i in log.command_ids if i.startswith(CLIENT_PREFIX))
              for t, log in tables.items()}
    entries = list(entries)
    by_outcome = Counter(e.outcome for e in entries)

    def applied(e: Entry) -> bool:
        return counts.get(e.table_id, Counter())[e.logged_id] > 0

    unknown = [e for e in entries if e.outcome == UNKNOWN]
    empty = TableLog(())
    sent = {(e.table_id, e.logged_id) for e in entries}
    return Verdict(
        commands=len(entries), acknowledged=by_outcome[ACKNOWLEDGED],
        refused=by_outcome[REFUSED], unknown=by_outcome[UNKNOWN],
        unknown_applied=sum(applied(e) for e in unknown),
        unknown_not_applied=sum(not applied(e) for e in unknown),
        lost=tuple(e for e in entries if e.outcome == ACKNOWLEDGED and e.method in APPENDING
                   and not applied(e)),
        doubled=tuple((t, i, n) for t, c in sorted(counts.items())
                      for i, n in sorted(c.items()) if n > 1),
        refused_applied=tuple(
            e for e in entries if e.outcome == REFUSED and applied(e)
            and e.logged_id not in tables.get(e.table_id, empty).voided),
        unrecorded=tuple((t, i) for t, c in sorted(counts.items()) for i in sorted(c)
                         if (t, i) not in sent),
        entries=tuple(entries),
        retried=tuple(e for e in entries if len(e.attempts) > 1),
    )
