"""The compliance replay (``/compliance/tables/{id}/hands/{n}``): hand N opened with the
compliance key, each of its commits with its hash-chain link, each deck commitment against
the deck and salt revealed after the hand, and the audit's verdict.

It opens exactly the hands the access log records, and no other: the verdict is the audit
(shared/audit) of the table's log from its start to the end of hand N, which has to open the
cards of hands 1..N (every deal is checked against its deck), and the hash chain of the rest
of the log, which needs no key. So the log is read first, the hands whose decks the audited
commits hold are named in the access record (``hands``), and only then is anything opened,
through a keyring that opens those hands and no other (:class:`OnlyHands`). No record, no
view (shared/audit/access.py)."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from shared.audit import audit_table
from shared.history import to_json
from shared.history.log import table_hands
from shared.infra.commits import read_envelopes
from shared.infra.eventstore import Stored
from shared.infra.repository import CorruptLog
from shared.infra.secrecy import HandKey, Keyring
from shared.poker import events as E
from shared.poker.deck import commitment as deck_commitment

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


def scope_of(stored: list[Stored], hand_no: int) -> Scope | None:
    """The scope of hand ``hand_no``'s replay, None if no commit of the log is of it."""
    last: int | None = None
    decks: list[tuple[int, ...]] = []
    for i, s in enumerate(stored):
        try:
            _, envelopes = read_envelopes(s.data)
        except Exception:  # noqa: BLE001 - a commit that does not parse: the audit names it
            decks.append(())
            continue
        decks.append(tuple(env.hand_no for env in envelopes
                           if env.WhichOneof("body") == "deck_committed"))
        if any(env.hand_no == hand_no for env in envelopes):
            last = i
    if last is None:
        return None
    opened = sorted({n for held in decks[:last + 1] for n in held if n > 0})
    return Scope(stored[:last + 1], stored[last + 1:], opened)


def compliance_view(table_id: str, hand_no: int, stored: list[Stored], scope: Scope,
                    keyring: Keyring) -> dict:
    """The replay of a hand (``keyring``: one that opens ``scope.opened`` only): the verdict
    (the audit through the hand, the chain of the rest), the hand opened (shared/history's
    JSON), each of its commits with its hash-chain link checked, and each deck commitment
    against the deck and salt revealed after the hand."""
    audit = audit_table(table_id, scope.audited, keyring)
    steps: list[dict] = []
    last_hash, rest_broken = b"", ""
    for k, s in enumerate(stored):
        try:
            commit, envelopes = read_envelopes(s.data)
        except Exception:  # noqa: BLE001 - a commit that does not parse: the audit names it
            steps.append({"seq": s.seq, "hand_no": None, "events": [], "link_ok": False})
            if k >= len(scope.audited) and not rest_broken:
                rest_broken = f"stream seq {s.seq}: the commit does not parse"
            continue
        links = []
        for raw, env in zip(commit.events, envelopes):
            links.append(env.prev_hash == last_hash)
            last_hash = hashlib.sha256(raw).digest()
        if k >= len(scope.audited) and not all(links) and not rest_broken:
            rest_broken = f"stream seq {s.seq}: the hash chain breaks (an event was changed, " \
                          f"removed, inserted or reordered)"
        if envelopes and envelopes[0].hand_no == hand_no:
            steps.append({"seq": s.seq, "hand_no": hand_no,
                          "events": [env.WhichOneof("body") or "" for env in envelopes],
                          "link_ok": all(links), "hash": last_hash.hex()})
    failure = str(audit.failure or "") or rest_broken
    out: dict = {"table_id": table_id, "hand_no": hand_no,
                 "audit": {"ok": not failure, "failure": failure,
                           "audited_through_hand": hand_no, "hands_opened": scope.opened},
                 "commits": steps, "decks": [], "hand": None}
    try:
        records = [r for r in table_hands(scope.audited, keyring) if r.hand_no == hand_no]
    except CorruptLog as exc:
        out["audit"].update(ok=False, failure=str(exc))
        return out
    if not records:
        raise Refused(404, f"table {table_id} has no hand {hand_no}")
    record = records[0]
    out["hand"] = to_json(record)
    committed = [e.commitment for e in record.events if isinstance(e, E.DeckCommitted)]
    revealed = next((e for e in record.events if isinstance(e, E.DeckRevealed)), None)
    for i, c in enumerate(committed):
        ok = revealed is not None and i < len(revealed.decks) and \
            deck_commitment(revealed.decks[i], revealed.salts[i]) == c
        out["decks"].append({"commitment": c, "verified": ok,
                             "revealed": revealed is not None})
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
        scope = scope_of(stored, hand_no)
        if scope is None:
            raise Refused(404, f"table {table_id} has no hand {hand_no}")
        key_ids = getattr(self.keyring, "key_ids", [])
        await self.record_access("web-replay", [table_id], key_ids, scope.opened, who)
        only = OnlyHands(self.keyring, table_id, scope.opened)
        async with self.lock:
            return await asyncio.to_thread(compliance_view, table_id, hand_no, stored, scope,
                                           only)
