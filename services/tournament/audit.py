"""What `pokerctl audit` and `pokerctl bots` read of the tournaments (shared/audit/money.py
matches their money with the wallet's ledger; shared/audit/tournament.py re-decides each
against its tables' logs)."""

from __future__ import annotations

from nats.js.errors import NotFoundError

from shared.audit.tournament import audit_tournament
from shared.infra.commits import parse_commit
from shared.infra.eventstore import StoreError
from shared.infra.repository import CorruptLog
from shared.poker.errors import InvalidEvent

from .codec import CodecError
from .log import TournamentLog

#: what a tournament's log that does not hold raises on reading: a broken hash chain, a
#: commit that does not decode, an event that does not fold
UNREADABLE = (CorruptLog, CodecError, InvalidEvent)


async def read_tournaments(store) -> list:
    """Every tournament of the server's POKER_TOURNAMENTS whose log folds (none without the
    stream); :func:`audit_tournaments` reports the others."""
    tlog = TournamentLog(store.nc, store.js, lambda: 0)
    try:
        ids = await tlog.ids()
    except (StoreError, NotFoundError):  # no stream: no tournament
        return []
    out = []
    for tid in ids:
        try:
            out.append((await tlog.get(tid)).state)
        except UNREADABLE:
            continue
    return out


async def audit_tournaments(store, tournaments: list) -> list[str]:
    """Every tournament of the stream re-decided against its tables' logs
    (shared/audit/tournament.py), its hash chain checked: the problems, each named by the
    tournament. ``tournaments``: their states (:func:`read_tournaments`)."""
    tlog = TournamentLog(store.nc, store.js, lambda: 0)
    states = {s.tournament_id: s for s in tournaments}
    try:
        ids = await tlog.ids()
    except (StoreError, NotFoundError):
        return []
    problems = []
    for tid in ids:
        try:
            events = await tlog.events(tid)
        except UNREADABLE as exc:
            problems.append(f"tournament {tid}: its log does not hold: {exc}")
            continue
        state = states.get(tid)
        tables = {t.table_id: [e for c in await store.read(t.table_id)
                               for e in parse_commit(c.data).events()]
                  for t in (state.tables if state is not None else ())}
        problems += [f"tournament {tid}: {p}" for p in audit_tournament(events, tables)]
    return problems
