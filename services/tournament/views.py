"""Tournaments to and from their protobuf messages (protos/poker/tournament/v1)."""

from __future__ import annotations

from poker.tournament.v1 import tournament_pb2 as pb

from shared.infra.rpc import BadRequest
from shared.poker.errors import InvalidOptions
from shared.poker.tournament import decide as D
from shared.poker.tournament.ranking import placings
from shared.poker.tournament.state import RebuyStatus, TournamentState
from shared.poker.tournament.structure import Kind, Level, Structure, level_at, sit_and_go
from shared.poker.tournament.tables import DECISION_SECONDS


def structure_from(msg: pb.Structure | None) -> Structure:
    """The structure asked for (unset: a 9-player sit-and-go)."""
    if msg is None:
        return sit_and_go()
    try:
        levels = tuple(Level(lv.small_blind, lv.big_blind, lv.ante, lv.minutes, lv.is_break)
                       for lv in msg.levels)
        base = sit_and_go(players=msg.max_players or 9)
        return Structure(
            Kind.SCHEDULED if msg.scheduled else Kind.SIT_AND_GO, levels or base.levels,
            msg.starting_stack or base.starting_stack, msg.buy_in, msg.fee,
            msg.max_players or 9, min_players=msg.min_players or (
                2 if msg.scheduled else msg.max_players or 9),
            seats_per_table=msg.seats_per_table or min(msg.max_players or 9, 9),
            late_levels=msg.late_levels, max_entries=msg.max_entries or 1,
            guarantee=msg.guarantee, decision_seconds=msg.decision_seconds or DECISION_SECONDS,
            rebuy_levels=msg.rebuy_levels, rebuy_chips=msg.rebuy_chips,
            rebuy_price=msg.rebuy_price, max_rebuys=msg.max_rebuys,
            add_on_chips=msg.add_on_chips, add_on_price=msg.add_on_price)
    except InvalidOptions as exc:
        raise BadRequest(exc.reason) from None


def structure_message(s: Structure) -> pb.Structure:
    return pb.Structure(
        scheduled=s.kind is Kind.SCHEDULED,
        levels=[pb.Level(small_blind=lv.small_blind, big_blind=lv.big_blind, ante=lv.ante,
                         minutes=lv.minutes, is_break=lv.is_break) for lv in s.levels],
        starting_stack=s.starting_stack, buy_in=s.buy_in, fee=s.fee,
        max_players=s.max_players, min_players=s.min_players,
        seats_per_table=s.seats_per_table, late_levels=s.late_levels,
        max_entries=s.max_entries, guarantee=s.guarantee,
        decision_seconds=s.decision_seconds, rebuy_levels=s.rebuy_levels,
        rebuy_chips=s.rebuy_chips, rebuy_price=s.rebuy_price, max_rebuys=s.max_rebuys,
        add_on_chips=s.add_on_chips, add_on_price=s.add_on_price)


def view(s: TournamentState, version: int) -> pb.TournamentView:
    places = {(p.player_id, p.entry_no): p for p in placings(s)}
    rebuys = {(r.player_id, r.entry_no): 0 for r in s.rebuys}
    for r in s.rebuys:
        rebuys[r.player_id, r.entry_no] += r.status is RebuyStatus.PAID and not r.add_on
    add_ons = {(r.player_id, r.entry_no) for r in s.rebuys
               if r.add_on and r.status is RebuyStatus.PAID}
    ends = 0
    if s.level >= 0:
        _, left = level_at(s.structure, s.level_started_ms - s.started_ms)
        ends = s.level_started_ms + left
    return pb.TournamentView(
        tournament_id=s.tournament_id, name=s.name, status=s.status.value,
        structure=structure_message(s.structure),
        entries=[pb.EntryView(
            player_id=e.player_id, entry_no=e.entry_no, status=e.status.value,
            table_id=e.table_id, seat=e.seat,
            place=places[e.key].place if e.key in places else 0,
            prize=places[e.key].prize if e.key in places else 0,
            rebuys=rebuys.get(e.key, 0), add_on=e.key in add_ons) for e in s.entries],
        tables=[pb.TableSeatsView(table_id=t.table_id, seats=[x for x, _ in t.players],
                                  players=[p for _, p in t.players]) for t in s.tables],
        level=s.level + 1, level_ends_unix_ms=ends, registration_closed=s.registration_closed,
        prize_pool=s.pool, prizes=list(s.prizes), winner=s.winner,
        hand_for_hand=D.hand_for_hand(s), version=version)
