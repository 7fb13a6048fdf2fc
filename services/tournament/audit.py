"""What `pokerctl audit` and `pokerctl bots` read of the tournaments (shared/audit/money.py
matches their money with the wallet's ledger; shared/audit/tournament.py re-decides each
against its tables' logs)."""

from __future__ import annotations

from nats.js.errors import NotFoundError

from shared.audit.tournament import audit_tournament
from shared.infra.commits import parse_commit
from shared.infra.eventstore import StoreError

from .log import TournamentLog


async def read_tournaments(store) -> list:
    """Every tournament of the server's POKER_TOURNAMENTS (none without the stream)."""
    tlog = TournamentLog(store.nc, store.js, lambda: 0)
    try:
        return [(await tlog.get(tid)).state for tid in await tlog.ids()]
    except (StoreError, NotFoundError):  # no stream: no tournament
        return []


async def audit_tournaments(store, tournaments: list) -> list[str]:
    """Each tournament re-decided against its tables' logs (shared/audit/tournament.py):
    its problems, each named by the tournament."""
    tlog = TournamentLog(store.nc, store.js, lambda: 0)
    problems = []
    for state in tournaments:
        tables = {t.table_id: [e for c in await store.read(t.table_id)
                               for e in parse_commit(c.data).events()] for t in state.tables}
        problems += [f"tournament {state.tournament_id}: {p}" for p in audit_tournament(
            await tlog.events(state.tournament_id), tables)]
    return problems
