"""Checks of a tournament played through the real services: chips conserved at every commit
of every table (with the chips a move carries between two tables), every entry seated at most
once at any point, the prizes paid once and equal to the payout table, the wallet's money."""

from __future__ import annotations

from shared.infra.commits import parse_commit
from shared.poker import events as E
from shared.poker.fold import apply
from shared.poker.tournament import events as TE
from shared.poker.tournament.ranking import money_audit, placings, wallet_key
from shared.poker.tournament.state import TournamentState, fold

#: the services' settings for a tournament played in a test: the clock ticks every 20 ms
FAST = {"POKER_CLOCK_TICK_MS": "20"}


async def table_events(store, table_id: str) -> list[tuple[int, list]]:
    """Every commit of the table: (stream sequence, events)."""
    out = []
    for c in await store.read(table_id):
        out.append((c.seq, parse_commit(c.data).events()))
    return out


async def check_tables(store, state: TournamentState) -> None:
    """Replay every table's log, commit by commit in stream order across the tables: no
    player is ever seated at two tables; a player who leaves a table with chips (a move)
    sits down at the next with exactly those, a newcomer with the starting stack; chips are
    added only as a rebuy's or an add-on's; and the chips at all the tables plus those a move
    carries are the entries', the rebuys' and the add-ons' at every commit. At the end one table holds them all, the
    winner's."""
    start = state.structure.starting_stack
    commits = []
    for t in state.tables:
        commits += [(seq, t.table_id, evs) for seq, evs in await table_events(store, t.table_id)]
    commits.sort(key=lambda c: c[0])
    folds: dict = {}
    carried: dict[str, int] = {}  # player -> chips on the way between two tables
    brought = 0  # the starting stacks seated and the rebuys' chips added so far
    for _, table_id, evs in commits:
        for ev in evs:
            before = folds.get(table_id)
            if isinstance(ev, E.PlayerLeft) and before is not None:
                leaving = before.seat(ev.seat)
                if leaving is not None and leaving.stack:
                    carried[leaving.player_id] = leaving.stack
            if isinstance(ev, E.PlayerToppedUp):
                assert ev.amount in (state.structure.rebuy_chips,
                                     state.structure.add_on_chips), "chips not a rebuy's added"
                brought += ev.amount
            if isinstance(ev, E.PlayerSeated):
                if ev.player_id in carried:
                    assert ev.stack == carried.pop(ev.player_id), "a move changed a stack"
                else:
                    assert ev.stack == start, f"{ev.player_id} seated with {ev.stack}"
                    brought += start
            folds[table_id] = apply(before, ev)
        where: dict[str, str] = {}
        for tid, t in folds.items():
            for seat in t.seats:
                assert seat.player_id not in where, f"{seat.player_id} seated at {tid} and " \
                                                    f"{where[seat.player_id]}"
                where[seat.player_id] = tid
        chips = sum(_chips(t) for t in folds.values()) + sum(carried.values())
        assert chips == brought, f"{chips} chips at the tables and moving, of {brought}"
    added = sum(state.chips_of(r) for r in state.rebuys if r.added)
    assert brought == state.paid_entries() * start + added and not carried
    final = [t for t in folds.values() if t.seats]
    assert len(final) == 1
    holders = [seat for seat in final[0].seats if seat.stack]
    assert [seat.stack for seat in holders] == [brought]
    assert holders[0].player_id == state.winner


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
    # each place's prize as the table locked it; players tied on a place (out in one hand
    # with equal stacks) share the prizes of the places they take
    groups: dict[int, list[int]] = {}
    for p in placings(state):
        groups.setdefault(p.place, []).append(p.prize)
    for place, prizes in groups.items():
        assert sum(prizes) == sum(state.prizes[place - 1:place - 1 + len(prizes)]), place
    assert sum(p.amount for p in state.prize_requests) == state.pool
    assert all(state.entry(*k).prize_paid for k in asked)
    audit = money_audit(state)
    assert audit.balanced and audit.held == 0, audit


async def check_audits(store, state: TournamentState, keyring) -> None:
    """Every table of the tournament passes the table audit (its director's seatings
    re-decided), and the money audit matches every entry and prize, the house's fees and
    overlay with the wallet's ledger: buy-ins + overlay = prizes + fees + held; a ledger
    without one prize's credit fails it."""
    from services.wallet.ledger import fold_ledger, read_ledger
    from shared.audit.auditor import audit_table
    from shared.audit.money import audit_money
    audits = []
    for t in state.tables:
        audit = audit_table(t.table_id, await store.read(t.table_id), keyring)
        assert audit.ok, audit.failure
        audits.append(audit)
    ledger_events = await read_ledger(store.js)
    money = audit_money(audits, fold_ledger(ledger_events), [state])
    assert money.ok, money.problems
    # everything paid out: the prizes to the players, the fees to the house
    assert money.in_tournaments == 0 and state.fees_paid == state.paid_entries() * \
        state.structure.fee
    assert money.house == state.fees_paid - state.overlay_paid
    prize = wallet_key(state.tournament_id, "prize", state.winner, 1)
    # the winner's prize is the last movement of their account: the ledger folds without it
    without = fold_ledger([(seq, e) for seq, e in ledger_events
                           if e.idempotency_key != prize])
    assert not audit_money(audits, without, [state]).ok
    # the tournament re-decided against its tables' logs
    from services.tournament.log import TournamentLog
    from shared.audit.tournament import audit_tournament
    events = await TournamentLog(store.nc, store.js, lambda: 0).events(state.tournament_id)
    tables = {t.table_id: [e for _, evs in await table_events(store, t.table_id) for e in evs]
              for t in state.tables}
    assert audit_tournament(events, tables) == []
    # a bust whose starting stack the table's log does not say, a seating the seed did not
    # draw: each found
    k, busted = next((k, e) for k, e in enumerate(events)
                     if isinstance(e, TE.PlayersEliminated))
    lie = busted.evolve(busts=(busted.busts[0].evolve(
        start_stack=busted.busts[0].start_stack + 1), *busted.busts[1:]))
    assert audit_tournament([*events[:k], lie, *events[k + 1:]], tables)
    k, drawn = next((k, e) for k, e in enumerate(events) if isinstance(e, TE.PlayersSeated))
    first, second = drawn.seatings[:2]
    swapped = drawn.evolve(seatings=(first.evolve(player_id=second.player_id),
                                     second.evolve(player_id=first.player_id),
                                     *drawn.seatings[2:]))
    assert audit_tournament([*events[:k], swapped, *events[k + 1:]], tables)
    breaks = [(k, e) for k, e in enumerate(events) if isinstance(e, TE.PlayersMoved) and e.broken]
    if breaks:  # a table broken that the seed did not choose
        k, moved = breaks[0]
        other = next(t.table_id for t in state.tables if t.table_id != moved.broken)
        assert audit_tournament([*events[:k], moved.evolve(broken=other), *events[k + 1:]],
                                tables)
    # a move (the first balancing one, the first break's) to another free seat than the one
    # the tables' logs seat its player at: found, and named
    firsts = {e.broken == "": (k, e) for k, e in reversed(list(enumerate(events)))
              if isinstance(e, TE.PlayersMoved)}
    for k, moved in firsts.values():
        m, before = moved.moves[0], fold(events[:k])
        taken = {x.to_seat for x in moved.moves if x.to_table == m.to_table}
        seat = next((x for x in before.table(m.to_table).free_seats() if x not in taken), None)
        if seat is None:
            continue
        forged = moved.evolve(moves=(m.evolve(to_seat=seat), *moved.moves[1:]))
        assert any(f"the move {m.player_id} {m.from_table} seat {m.from_seat} -> "
                   f"{m.to_table} seat {seat}:" in p
                   for p in audit_tournament([*events[:k], forged, *events[k + 1:]], tables))
    # a log that says a prize was another amount than the wallet paid fails it too
    first, *rest = state.prize_requests
    other = state.evolve(prize_requests=(first.evolve(amount=first.amount + 1), *rest))
    assert not audit_money(audits, fold_ledger(ledger_events), [other]).ok
