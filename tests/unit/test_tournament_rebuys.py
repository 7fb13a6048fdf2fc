"""Rebuys (issue 30): the structure's options, the window, the count, the stack rule, the
pool they go to, their chips added once at the player's table, and the audits of both."""

from __future__ import annotations

import pytest

from shared.audit.tournament import audit_tournament
from shared.poker import events as TE
from shared.poker.errors import IllegalAction, InvalidEvent, InvalidOptions
from shared.poker.fold import apply as apply_table
from shared.poker.handrunner import new_table
from shared.poker.tournament import decide as D
from shared.poker.tournament import events as E
from shared.poker.tournament.payouts import prizes, shares_for
from shared.poker.tournament.ranking import money_audit, wallet_key, wallet_movements
from shared.poker.tournament.state import RebuyStatus, TournamentState, fold
from shared.poker.tournament.structure import Kind, Level, Structure, add_on_window
from shared.poker.tournament.tables import add_chips, release, seat_entrant
from shared.poker.tournament.tables import tournament_table_options as options

DIGEST = "ab" * 32
SEED = b"\x07" * 32


def _structure(**kw) -> Structure:
    rebuys = {"rebuy_levels": 2, "rebuy_chips": 1000, "rebuy_price": 100, "max_rebuys": 2}
    return Structure(Kind.SIT_AND_GO, (Level(10, 20, 0, 1), Level(20, 40, 0, 1),
                                       Level(50, 100, 0, 1)),
                     1000, 100, 10, 3, min_players=3, seats_per_table=3, **{**rebuys, **kw})


def _start(structure: Structure | None = None) -> TournamentState:
    s = fold(D.create(None, "r1", structure or _structure(), "rebuys", 0))
    assert s is not None
    for p in ("a", "b", "c"):
        s = fold([*D.register(s, p, DIGEST, p), E.EntryPaid(p, 1)], s)  # type: ignore
    s = fold(D.commit_seed(s, SEED), s)  # type: ignore[arg-type]
    s = fold(D.start(s, SEED, ["r1-1"], 1000), s)  # type: ignore[arg-type]
    assert s is not None
    return s


def _rebought(s: TournamentState, player: str, stack: int = 1000) -> TournamentState:
    (asked,) = D.rebuy(s, player, stack)
    assert isinstance(asked, E.RebuyRequested)
    s = fold([asked, *D.settle_rebuy(fold([asked], s), player, asked.rebuy_no, True)],  # type: ignore
             s)
    s = fold(D.rebuy_chips_added(s, player, asked.rebuy_no, "r1-1"), s)  # type: ignore
    assert s is not None
    return s


def test_structure_rebuy_options_are_checked():
    assert _structure().rebuy_levels == 2
    for kw, msg in (({"rebuy_levels": 0}, "need a rebuy period"),
                    ({"rebuy_levels": 4}, "lasts 1 to 3 levels"),
                    ({"rebuy_chips": 0}, "adds 1 to"),
                    ({"rebuy_price": -1}, "price is 0 to"),
                    ({"max_rebuys": 0}, "1 to 10 times"),
                    ({"max_rebuys": 11}, "1 to 10 times")):
        with pytest.raises(InvalidOptions, match=msg):
            _structure(**kw)
    with pytest.raises(InvalidOptions, match="rebuys' and add-on's chips"):
        _structure(rebuy_chips=10**9)
    # no rebuys: every option 0
    assert Structure(Kind.SIT_AND_GO, (Level(10, 20, 0, 1),), 1000, 1, 0, 3).max_rebuys == 0


def test_rebuys_only_during_the_rebuy_period():
    no_rebuys = _start(_structure(rebuy_levels=0, rebuy_chips=0, rebuy_price=0, max_rebuys=0))
    with pytest.raises(IllegalAction, match="has no rebuys"):
        D.rebuy(no_rebuys, "a", 1000)
    s = fold(D.create(None, "r1", _structure(), "x", 0))
    assert s is not None
    with pytest.raises(IllegalAction, match="rebuys open when r1 starts"):
        D.rebuy(s, "a", 1000)
    s = _start()
    assert not s.registration_closed  # the payouts wait for the rebuy period's end
    assert D.rebuy(s, "a", 1000) == [E.RebuyRequested("a", 1, 1, 1000)]
    s = fold(D.next_level(s, 1000 + 60_000), s)  # type: ignore  # level 2: still open
    assert s is not None and s.level == 1 and D.rebuy(s, "a", 0)
    s = fold(D.next_level(s, 1000 + 120_000), s)  # type: ignore  # level 3: over
    assert s is not None and s.registration_closed
    with pytest.raises(IllegalAction, match="rebuy period of r1 is over"):
        D.rebuy(s, "a", 10)


def test_at_most_max_rebuys_one_at_a_time_and_only_with_the_starting_stack_or_less():
    s = _start()
    with pytest.raises(IllegalAction, match="your stack is 1001: .* at most the starting "
                                            "stack, 1000"):
        D.rebuy(s, "a", 1001)
    with pytest.raises(IllegalAction, match="no seat yet"):
        D.rebuy(s, "a", None)
    with pytest.raises(IllegalAction, match="stranger has no entry in play"):
        D.rebuy(s, "stranger", 0)
    asked = fold(D.rebuy(s, "a", 1000), s)
    assert asked is not None
    with pytest.raises(IllegalAction, match="last rebuy's chips"):
        D.rebuy(asked, "a", 0)  # the first is being settled
    paid = fold([E.RebuyPaid("a", 1)], asked)
    assert paid is not None
    with pytest.raises(IllegalAction, match="last rebuy's chips"):
        D.rebuy(paid, "a", 0)  # its chips are not on the stack yet
    s = _rebought(_rebought(s, "a"), "a", 500)
    with pytest.raises(IllegalAction, match="a has made 2 of the 2 rebuys allowed"):
        D.rebuy(s, "a", 0)
    assert D.rebuy(s, "b", 0)  # the others are not held up
    refused = fold([*D.rebuy(s, "b", 0), E.RebuyRefused("b", 1, "poor")], s)
    assert refused is not None and D.rebuy(refused, "b", 0)  # a refusal is not a rebuy
    eliminated = fold(D.eliminate(s, "r1-1", 3, [("c", 800)], 0), s)
    with pytest.raises(IllegalAction, match="c has no entry in play"):
        D.rebuy(eliminated, "c", 0)  # type: ignore[arg-type]


def test_the_fold_takes_a_rebuy_and_its_chips_once():
    s = _start()
    with pytest.raises(InvalidEvent, match="cannot ask for rebuy 2"):
        fold([E.RebuyRequested("a", 1, 2, 0)], s)
    s = fold(D.rebuy(s, "a", 0), s)
    assert s is not None
    with pytest.raises(InvalidEvent, match="owes no chips"):
        fold([E.RebuyChipsAdded("a", 1, "r1-1", 1000)], s)  # not paid
    s = fold([E.RebuyPaid("a", 1)], s)
    assert s is not None and D.settle_rebuy(s, "a", 1, False) == []  # settled once
    with pytest.raises(InvalidEvent, match="owes no chips"):
        fold([E.RebuyChipsAdded("a", 1, "r1-1", 999)], s)  # not the structure's chips
    s = fold(D.rebuy_chips_added(s, "a", 1, "r1-1"), s)
    assert s is not None and s.rebuys[0].added and s.rebuys[0].status is RebuyStatus.PAID
    assert D.rebuy_chips_added(s, "a", 1, "r1-1") == []
    with pytest.raises(InvalidEvent, match="owes no chips"):
        fold([E.RebuyChipsAdded("a", 1, "r1-1", 1000)], s)


def test_the_pool_holds_the_rebuys_and_locks_when_the_period_ends():
    s = _rebought(_rebought(_start(), "a"), "b")
    pending = fold(D.rebuy(s, "c", 0), s)
    assert pending is not None
    late = D.next_level(pending, 1000 + 120_000)
    assert late == [E.LevelStarted(2, 121_000)]  # a rebuy being settled holds the lock
    closing = D.next_level(s, 1000 + 120_000)
    pool = 3 * 100 + 2 * 100
    assert closing[1] == E.RegistrationClosed(3, pool, prizes(pool, shares_for(3)), 2)
    s = fold(closing, s)
    assert s is not None and s.pool == 500 and s.house_due() == (30, 0)
    audit = money_audit(s)  # 330 of buy-ins and fees + 200 of rebuys = 30 fees + 500 held
    assert (audit.buy_ins, audit.rebuys, audit.held) == (330, 200, 530) and audit.balanced
    keys = {k for k, *_ in wallet_movements(s)}
    assert wallet_key("r1", "rebuy", "a", 1) in keys and wallet_key("r1", "rebuy", "b", 1) \
        in keys
    # a guarantee above buy-ins and rebuys: the house pays only the difference
    g = _rebought(_start(_structure(guarantee=800)), "a")
    g = fold(D.next_level(g, 1000 + 120_000), g)
    assert g is not None and g.pool == 800 and g.house_due() == (30, 800 - 300 - 100)


def test_a_rebuy_adds_chips_between_hands_to_the_players_own_seat():
    t = new_table(options("r1", Level(10, 20, 0, 1), 3), "r1-1")
    for seat, who in ((1, "a"), (2, "b")):
        for ev in seat_entrant(t, seat, who, 1000, DIGEST):
            t = apply_table(t, ev)
    assert add_chips(t, 1, "a", 1000) == [TE.PlayerToppedUp(1, 1000)]
    with pytest.raises(IllegalAction, match="b is not at seat 1"):
        add_chips(t, 1, "b", 1000)
    with pytest.raises(IllegalAction, match="positive whole number"):
        add_chips(t, 1, "a", 0)
    for ev in release(t):
        t = apply_table(t, ev)
    t = apply_table(t, TE.HandStarted(1, 1, (TE.SeatStack(1, 1000), TE.SeatStack(2, 1000)),
                                      ()))
    with pytest.raises(IllegalAction, match="waits for the running hand"):
        add_chips(t, 1, "a", 1000)


def _audited(events: list[E.TournamentEvent], top_ups: list[tuple[int, int]]) -> list[str]:
    opts = options("r1", Level(10, 20, 0, 1), 3)
    t = new_table(opts, "r1-1")
    table_events: list[object] = [TE.TableCreated("r1-1", opts)]
    s = fold(events)
    assert s is not None
    for seat, who in s.tables[0].players:  # where the tournament seats them
        table_events += seat_entrant(t, seat, who, 1000, DIGEST)
    table_events += [TE.PlayerToppedUp(seat, chips) for seat, chips in top_ups]
    return audit_tournament(events, {"r1-1": table_events})


def _started_events(structure: Structure) -> list[E.TournamentEvent]:
    s = fold(D.create(None, "r1", structure, "rebuys", 0))
    events: list[E.TournamentEvent] = [*D.create(None, "r1", structure, "rebuys", 0)]
    for p in ("a", "b", "c"):
        events += [*D.register(s, p, DIGEST, p), E.EntryPaid(p, 1)]  # type: ignore
        s = fold(events[-2:], s)
    events += D.commit_seed(s, SEED)  # type: ignore[arg-type]
    s = fold(events[-1:], s)
    return [*events, *D.start(s, SEED, ["r1-1"], 1000)]  # type: ignore[arg-type]


def test_the_audit_redecides_rebuys_and_counts_every_chip_added():
    events = _started_events(_structure())
    seat_a = dict((p, n) for n, p in fold(events).tables[0].players)["a"]  # type: ignore
    rebuy = [E.RebuyRequested("a", 1, 1, 1000), E.RebuyPaid("a", 1),
             E.RebuyChipsAdded("a", 1, "r1-1", 1000)]
    assert _audited([*events, *rebuy], [(seat_a, 1000)]) == []
    # chips at the table that no rebuy added, or a rebuy's chips missing
    assert "are not the rebuys'" in _audited([*events, *rebuy], [(seat_a, 1000)] * 2)[0]
    assert "are not the rebuys'" in _audited([*events, *rebuy], [])[0]
    # a rebuy the rules refuse (a stack above the starting stack)
    (problem,) = _audited([*events, E.RebuyRequested("a", 1, 1, 1500)], [])
    assert "the rules refuse this rebuy" in problem and "your stack is 1500" in problem
    # the payouts locked without the rebuys paid
    s = fold([*events, *rebuy])
    assert s is not None
    closed = [e for e in D.next_level(s, 1000 + 120_000) if isinstance(e, E.LevelStarted)]
    short = E.RegistrationClosed(3, 300, prizes(300, shares_for(3)), 0)
    (problem,) = _audited([*events, *rebuy, *closed, short], [(seat_a, 1000)])
    assert "the payouts locked are" in problem


# --- the add-on --------------------------------------------------------------------------

def _with_add_on() -> Structure:
    """Rebuys for 2 levels, then a break: the add-on during level 2 and the break."""
    return Structure(Kind.SIT_AND_GO, (Level(10, 20, 0, 1), Level(20, 40, 0, 1),
                                       Level(0, 0, 0, 0.5, True), Level(50, 100, 0, 1)),
                     1000, 100, 10, 3, min_players=3, seats_per_table=3, rebuy_levels=2,
                     rebuy_chips=1000, rebuy_price=100, max_rebuys=1, add_on_chips=2000,
                     add_on_price=150)


def _at(s: TournamentState, level: int) -> TournamentState:
    """``s`` once level ``level`` (0-based) of _with_add_on has started (1 s in: the start)."""
    out = fold(D.next_level(s, 1000 + (0, 60_000, 120_000, 150_000)[level]), s)
    assert out is not None and out.level == level
    return out


def test_add_on_options_are_checked():
    with pytest.raises(InvalidOptions, match="need a rebuy period"):
        _structure(rebuy_levels=0, rebuy_chips=0, rebuy_price=0, max_rebuys=0,
                   add_on_chips=100)
    with pytest.raises(InvalidOptions, match="needs its chips"):
        _structure(add_on_price=10)
    with pytest.raises(InvalidOptions, match="an add-on adds 0"):
        _structure(add_on_chips=-1)


def test_the_add_on_is_offered_in_the_last_rebuy_level_and_the_break_after_it():
    with pytest.raises(IllegalAction, match="has no add-on"):
        D.add_on(_start(), "a", 0)
    s = _start(_with_add_on())
    with pytest.raises(IllegalAction, match="offered during level 2 .*r1 is at level 1"):
        D.add_on(s, "a", 0)
    s = _at(s, 1)
    assert D.add_on(s, "a", 5000) == [E.RebuyRequested("a", 1, 1, 5000, add_on=True)]
    s = _at(s, 2)  # the break after the last rebuy level: still offered, rebuys are not
    assert D.add_on(s, "a", 5000)
    with pytest.raises(IllegalAction, match="rebuy period of r1 is over"):
        D.rebuy(s, "a", 0)
    assert not s.registration_closed  # the payouts wait for the add-on
    s = _at(s, 3)
    assert s.registration_closed
    with pytest.raises(IllegalAction, match="offered during level 2"):
        D.add_on(s, "a", 0)
    # no break after the last rebuy level: the add-on ends with it, and the payouts lock
    played = _start(_structure(add_on_chips=500))
    played = fold(D.next_level(played, 1000 + 60_000), played)
    assert played is not None and D.add_on(played, "a", 0)
    played = fold(D.next_level(played, 1000 + 120_000), played)
    assert played is not None and played.registration_closed
    with pytest.raises(IllegalAction, match="offered during level 2 .*r1 is at level 3"):
        D.add_on(played, "a", 0)
    assert not add_on_window(played.structure, 2)


def test_the_add_on_once_a_player_at_any_stack_its_price_in_the_pool():
    s = _at(_start(_with_add_on()), 1)
    (asked,) = D.add_on(s, "a", 2500)  # above the starting stack: an add-on takes any
    s = fold([asked, E.RebuyPaid("a", 1)], s)
    assert s is not None
    with pytest.raises(IllegalAction, match="last rebuy's chips"):
        D.add_on(s, "a", 2500)
    (added,) = D.rebuy_chips_added(s, "a", 1, "r1-1")
    assert added == E.RebuyChipsAdded("a", 1, "r1-1", 2000)  # the add-on's chips
    s = fold([added], s)
    with pytest.raises(IllegalAction, match="a has taken the add-on: one a player"):
        D.add_on(s, "a", 0)  # type: ignore[arg-type]
    with pytest.raises(InvalidEvent, match="cannot ask"):
        fold([E.RebuyRequested("a", 1, 2, 0, add_on=True)], s)
    s = _rebought(s, "b")  # type: ignore[arg-type]  # a rebuy of 100, 1000 chips
    closing = D.next_level(_at(s, 2), 1000 + 150_000)
    pool = 3 * 100 + 100 + 150
    assert closing[1] == E.RegistrationClosed(3, pool, prizes(pool, shares_for(3)), 1, 1)
    s = fold(closing, _at(s, 2))
    assert s is not None
    audit = money_audit(s)
    assert audit.rebuys == 250 and audit.held == 330 + 250 and audit.balanced
    keys = {k for k, *_ in wallet_movements(s)}
    assert {wallet_key("r1", "addon", "a", 1), wallet_key("r1", "rebuy", "b", 1)} <= keys


def test_the_audit_redecides_the_add_on():
    events = _started_events(_with_add_on())
    early = [E.RebuyRequested("a", 1, 1, 1000, add_on=True)]  # level 1: not offered yet
    (problem,) = _audited([*events, *early], [])
    assert "the rules refuse this rebuy: the add-on is offered during level 2" in problem
    s = fold(events)
    assert s is not None
    in_time = [*D.next_level(s, 1000 + 60_000), E.RebuyRequested("a", 1, 1, 5000, add_on=True)]
    assert _audited([*events, *in_time], []) == []
