"""One hand as a JSON-ready object (``pokerctl history --json``, the web's hand pages): the
same facts as the PokerStars text (:class:`~shared.history.render.HandFacts`), ids kept
exact."""

from __future__ import annotations

from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, Card

from .record import HandRecord
from .render import HandFacts, hand_id, stakes


def _street_name(h: HandFacts, street: int) -> str:
    if h.stud:
        return ("third", "fourth", "fifth", "sixth", "seventh")[street]
    return ("preflop", "flop", "turn", "river")[street]


def to_json(record: HandRecord, viewer: int | None = None) -> dict:
    """One hand as a JSON-ready object: the table's ``hand_no`` and the PokerStars
    ``hand_id``, players, forced bets, streets (cards and actions), uncalled bets, pots (before
    rake, with the rake taken from each), shows, awards, final stacks.
    ``total_pot == sum(awards) + rake``."""
    h = HandFacts(record)
    r = record

    def cs(cards: list[Card] | tuple[Card, ...]) -> list[str]:
        return [str(c) for c in cards]

    forced, streets = _json_streets(h, viewer)
    shows = _json_shows(r)
    awards = [{"pot_index": a.pot_index, "portion": a.portion.value, "hand": a.hand,
               "shares": [{"seat": s.seat, "name": r.name(s.seat), "amount": s.amount}
                          for s in a.shares]} for a in h.awards]
    return {
        "table_id": r.table_id,
        "hand_no": r.hand_no,
        "hand_id": hand_id(r),
        "started_at_unix_ms": r.started_at_ms,
        "game": r.options.game.value,
        "structure": r.options.structure.value,
        "stakes": stakes(r),
        "button": r.button,
        "players": [{"seat": s, "name": r.name(s), "stack": h.stacks[s]} for s in h.order],
        "forced_bets": forced,
        "streets": streets,
        "board": cs(h.board),
        "uncalled": [{"seat": s, "name": r.name(s), "amount": a}
                     for s, a in h.returned.items()],
        "pots": [{"amount": p.amount, "eligible": list(p.eligible), "rake": rk}
                 for p, rk in zip(h.pots, h.rake_from)],
        "total_pot": h.total_pot,
        "rake": h.rake,
        "shows": shows,
        "awards": awards,
        "won": {str(s): w for s, w in sorted(h.won.items())},
        "final_stacks": ([{"seat": s, "name": r.name(s), "stack": st}
                          for s, st in h.final.items()] if h.final is not None else None),
        "complete": r.complete,
    }


def _json_streets(h: HandFacts, viewer: int | None) -> tuple[list[dict], list[dict]]:
    """The forced bets, and each street with its cards (as ``viewer`` sees them) and
    actions, for :func:`to_json`."""
    r = h.r
    streets: list[dict] = []
    forced = []
    for e in r.events:
        if isinstance(e, E.ForcedBetPosted):
            forced.append({"seat": e.seat, "name": r.name(e.seat), "kind": e.kind.value,
                           "amount": e.amount, "all_in": e.all_in})
        elif isinstance(e, E.CardsDealt):
            hole = []
            for d in e.hole:
                own = h.sees(d.seat, viewer)
                hole.append({"seat": d.seat, "name": r.name(d.seat),
                             "cards": [str(c) if own or up else str(UNKNOWN_CARD)
                                       for c, up in zip(d.cards, d.face_up)],
                             "face_up": list(d.face_up)})
            streets.append({"street": e.street, "name": _street_name(h, e.street),
                            "board": [str(c) for c in e.board], "hole": hole, "actions": []})
        elif isinstance(e, (E.ActionTaken, E.PlayerTimedOut, E.BetReturned)) and streets:
            streets[-1]["actions"].append(_json_action(r, e))
    return forced, streets


def _json_action(r: HandRecord, e: E.ActionTaken | E.PlayerTimedOut | E.BetReturned) -> dict:
    if isinstance(e, E.ActionTaken):
        return {"seat": e.seat, "name": r.name(e.seat), "action": e.action.value,
                "to": e.to, "added": e.added, "all_in": e.all_in}
    if isinstance(e, E.PlayerTimedOut):
        return {"seat": e.seat, "name": r.name(e.seat), "action": "timed_out",
                "all_in": e.all_in}
    return {"seat": e.seat, "name": r.name(e.seat), "action": "uncalled_returned",
            "amount": e.amount}


def _json_shows(r: HandRecord) -> list[dict]:
    """The hands shown (cards, high and low values) and mucked, in order."""
    shows: list[dict] = []
    for e in r.events:
        if isinstance(e, E.HandShown):
            shows.append({"seat": e.seat, "name": r.name(e.seat),
                          "cards": [str(c) for c in e.cards], "high": e.high, "low": e.low})
        elif isinstance(e, E.HandMucked):
            shows.append({"seat": e.seat, "name": r.name(e.seat), "mucked": True})
    return shows
