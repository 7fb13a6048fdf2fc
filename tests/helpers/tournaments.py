"""Checks of a tournament played through the real services: chips conserved at every commit
of every table (with the chips a move carries between two tables), every entry seated at most
once at any point, the prizes paid once and equal to the payout table, the wallet's money."""

from __future__ import annotations

from shared.infra.commits import parse_commit
from shared.poker.fold import apply
from shared.poker.tournament.ranking import money_audit, placings
from shared.poker.tournament.state import TournamentState


async def table_events(store, table_id: str) -> list[tuple[int, list]]:
    """Every commit of the table: (stream sequence, events)."""
    out = []
    for c in await store.read(table_id):
        out.append((c.seq, parse_commit(c.data).events()))
    return out


async def check_tables(store, state: TournamentState) -> None:
    """Replay every table's log, commit by commit in stream order across the tables: no
    player is ever seated at two tables, and the chips at all the tables plus those carried by
    a move under way never exceed the field's; at the end one table holds them all."""
    total = state.paid_entries() * state.structure.starting_stack
    commits = []
    for t in state.tables:
        commits += [(seq, t.table_id, evs) for seq, evs in await table_events(store, t.table_id)]
    commits.sort(key=lambda c: c[0])
    folds: dict = {}
    for _, table_id, evs in commits:
        for ev in evs:
            folds[table_id] = apply(folds.get(table_id), ev)
        where: dict[str, str] = {}
        for tid, t in folds.items():
            for s in t.seats:
                assert s.player_id not in where, f"{s.player_id} seated at {tid} and " \
                                                 f"{where[s.player_id]}"
                where[s.player_id] = tid
        chips = sum(_chips(t) for t in folds.values())
        assert chips <= total, f"{chips} chips at the tables, of {total}"
    final = [t for t in folds.values() if t.seats]
    assert len(final) == 1
    holders = [s for s in final[0].seats if s.stack]
    assert [s.stack for s in holders] == [total] and holders[0].player_id == state.winner


def _chips(table) -> int:
    """The chips at a table: the seats' stacks between hands; during a hand, the hand's."""
    hand = table.hand
    if hand is not None and table.hand_running:
        in_hand = {p.seat for p in hand.players}
        return (sum(p.start_stack for p in hand.players)
                + sum(s.stack for s in table.seats if s.seat not in in_hand))
    return sum(s.stack for s in table.seats)


def check_prizes(state: TournamentState) -> None:
    """Prizes: asked once each, paid, equal to the locked payout table, adding up to the
    pool; the money audit balances with nothing held."""
    asked = [(p.player_id, p.entry_no) for p in state.prize_requests]
    assert len(asked) == len(set(asked))
    by_place = sorted((p.place, p.prize) for p in placings(state) if p.prize)
    assert [amount for _, amount in by_place] == list(state.prizes[:len(by_place)])
    assert sum(p.amount for p in state.prize_requests) == state.pool
    assert all(state.entry(*k).prize_paid for k in asked)
    audit = money_audit(state)
    assert audit.balanced and audit.held == 0, audit
