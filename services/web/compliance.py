"""The compliance replay (``/compliance/tables/{id}/hands/{n}``): hand N opened with the
compliance key; exactly its commits, from its ``HandStarted`` to its ``DeckRevealed``, each
with its time, who decided it, its events and amounts, its hash and the one before; each deck
commitment against the deck and salt revealed after the hand; and the audit's verdict. The
rows are the hand's evidence file's (shared/audit/evidence.py), which
``/api/compliance/tables/{id}/hands/{n}/evidence.json`` serves (recorded as opening hand N
alone: the file holds that hand's key only).

It opens exactly the hands the access log records, and no other: the verdict is the audit
(shared/audit) of the table's log from its start to the end of hand N, which has to open the
cards of hands 1..N (every deal is checked against its deck), and the hash chain of the rest
of the log, which needs no key. So the log is read first, the hands whose decks the audited
commits hold are named in the access record (``hands``), and only then is anything opened,
through a keyring that opens those hands and no other (:class:`OnlyHands`). No record, no
view (shared/audit/access.py)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Sequence
from dataclasses import dataclass

from shared.audit import audit_table
from shared.audit.evidence import Span, build, evidence_of, hand_span
from shared.history.log import table_hands
from shared.history.pots import replay_json
from shared.infra.commits import parse_commit, read_envelopes
from shared.infra.eventstore import Stored
from shared.infra.repository import CorruptLog, LoadedTable, fold_commit
from shared.infra.secrecy import HandKey, Keyring

from .replies import Refused


class OnlyHands:
    """``keyring`` limited to ``hands`` of ``table_id``: any other hand stays sealed."""

    def __init__(self, keyring: Keyring, table_id: str, hands: Sequence[int]) -> None:
        self.keyring, self.table_id, self.hands = keyring, table_id, frozenset(hands)

    def _allowed(self, table_id: str, hand_no: int) -> bool:
        return table_id == self.table_id and hand_no in self.hands

    def hand_key(self, table_id: str, hand_no: int) -> HandKey | None:
        if not self._allowed(table_id, hand_no):
            return None
        return self.keyring.hand_key(table_id, hand_no)

    def learn(self, table_id: str, hand_no: int, key_id: str, wrapped: bytes) -> None:
        if self._allowed(table_id, hand_no):
            self.keyring.learn(table_id, hand_no, key_id, wrapped)


@dataclass(frozen=True)
class Scope:
    """What a replay of hand N reads: the commits through the hand's last (audited with the
    key), the hands whose decks those hold (opened), and the rest (chain checked, no key)."""

    audited: list[Stored]
    rest: list[Stored]
    opened: list[int]
    span: Span  # the hand's commits: audited[span.first:]


def scope_of(stored: list[Stored], hand_no: int, table_id: str = "") -> Scope | None:
    """The scope of hand ``hand_no``'s replay, None if the log never started it: the hand
    runs from its ``HandStarted`` commit to its ``DeckRevealed`` one (evidence.hand_span)."""
    span = hand_span(table_id, stored, hand_no)
    if span is None:
        return None
    opened: set[int] = set()
    for s in stored[:span.last + 1]:
        try:
            _, envelopes = read_envelopes(s.data)
        except Exception:  # noqa: BLE001 - a commit that does not parse: the audit names it
            continue
        opened.update(env.hand_no for env in envelopes
                      if env.WhichOneof("body") == "deck_committed" and env.hand_no > 0)
    return Scope(stored[:span.last + 1], stored[span.last + 1:], sorted(opened), span)


def _log_breaks(stored: list[Stored]) -> str:
    """Why the table's log does not fold ("" if it does): the repository's fold, with no key,
    checks the hash chain of every commit, the ones after the hand too."""
    lt = LoadedTable()
    try:
        for s in stored:
            lt = fold_commit(lt, s)
    except CorruptLog as exc:
        return str(exc)
    return ""


def compliance_view(table_id: str, hand_no: int, stored: list[Stored], scope: Scope,
                    keyring: Keyring) -> dict:
    """The replay of a hand (``keyring``: one that opens ``scope.opened`` only): the verdict
    (the audit through the hand, the chain of the rest), the hand opened (shared/history's
    JSON), and the hand's commits exactly (from its ``HandStarted`` to its end), each with its
    time, who decided it, its events, its hash and the one before, and each deck commitment
    against the deck and salt revealed after the hand: the rows of the hand's evidence
    (shared/audit/evidence.py), which the page offers to download."""
    audit = audit_table(table_id, scope.audited, keyring)
    span = scope.span
    commits = scope.audited[span.first:]
    for s in commits:  # decoding the DeckCommitted has the keyring learn the hand's key
        with contextlib.suppress(ValueError):
            parse_commit(s.data).events(keyring)
    doc = build(table_id, hand_no, scope.audited[:span.first], commits,
                keyring.hand_key(table_id, hand_no))
    failure = str(audit.failure or "") or _log_breaks(stored)
    rows = [{k: v for k, v in r.items() if k != "data"} for r in doc["commits"]]
    out: dict = {"table_id": table_id, "hand_no": hand_no,
                 "audit": {"ok": not failure, "failure": failure,
                           "audited_through_hand": hand_no, "hands_opened": scope.opened},
                 "hand_audit": doc["verdict"], "link_before": doc["link_before"],
                 "leaf": doc["leaf"], "commits": rows, "decks": doc["reveal"], "hand": None,
                 "evidence": f"/api/compliance/tables/{table_id}/hands/{hand_no}/evidence.json"}
    try:
        records = [r for r in table_hands(scope.audited, keyring) if r.hand_no == hand_no]
    except CorruptLog as exc:
        out["audit"].update(ok=False, failure=str(exc))
        return out
    if not records:
        raise Refused(404, f"table {table_id} has no hand {hand_no}")
    out["hand"] = replay_json(records[0])
    return out


class Replays:
    """The replays of this process: one at a time, each in a worker thread (an audit from a
    table's start is seconds of work for a long table; the event loop keeps serving)."""

    def __init__(self, read, keyring: Keyring | None, record_access) -> None:
        self.read, self.keyring, self.record_access = read, keyring, record_access
        self.lock = asyncio.Lock()

    async def replay(self, table_id: str, hand_no: int, who: str) -> dict:
        """Hand ``hand_no`` of the table for ``who``, recorded in the access log first (the
        exact hands opened); Refused with the status otherwise."""
        if self.keyring is None or self.record_access is None:
            raise Refused(503, "no compliance key is configured here (POKER_COMPLIANCE_KEY)")
        stored = await self.read(table_id)
        if not stored:
            raise Refused(404, f"there is no table {table_id!r}")
        scope = scope_of(stored, hand_no, table_id)
        if scope is None:
            raise Refused(404, f"table {table_id} has no hand {hand_no}")
        key_ids = getattr(self.keyring, "key_ids", [])
        await self.record_access("web-replay", [table_id], key_ids, scope.opened, who)
        only = OnlyHands(self.keyring, table_id, scope.opened)
        async with self.lock:
            return await asyncio.to_thread(compliance_view, table_id, hand_no, stored, scope,
                                           only)

    async def evidence(self, table_id: str, hand_no: int, who: str) -> bytes:
        """Hand ``hand_no``'s evidence file (shared/audit/evidence.py) for ``who``, recorded
        in the access log first: it opens that hand alone (its key goes in the file)."""
        if self.keyring is None or self.record_access is None:
            raise Refused(503, "no compliance key is configured here (POKER_COMPLIANCE_KEY)")
        stored = await self.read(table_id)
        if not stored:
            raise Refused(404, f"there is no table {table_id!r}")
        if hand_span(table_id, stored, hand_no) is None:
            raise Refused(404, f"table {table_id} has no hand {hand_no}")
        key_ids = getattr(self.keyring, "key_ids", [])
        await self.record_access("web-evidence", [table_id], key_ids, [hand_no], who)
        only = OnlyHands(self.keyring, table_id, [hand_no])
        async with self.lock:
            data = await asyncio.to_thread(evidence_of, table_id, hand_no, stored, only)
        assert data is not None  # the hand is in the log (checked above)
        return data
