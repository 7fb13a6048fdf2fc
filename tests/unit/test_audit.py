"""The log auditor (shared/audit): a clean log of every game passes; each kind of tampering
(THREATS 18, 23) is caught and the first bad event is named. Tampered logs are re-chained
unless the test is about the chain, so the hash chain alone does not catch them."""

from __future__ import annotations

import dataclasses
import io

import pytest

from shared.audit import audit_table
from shared.audit.export import dump_lines, load_lines
from shared.audit.sample import MIXED, chain, play_decisions, sample_keyring
from shared.infra.eventstore import Stored
from shared.poker import events as E
from shared.poker.cards import DECK
from shared.poker.options import table_options

OPTIONS = table_options("holdem", "no_limit", small_blind=1, big_blind=2)


@pytest.fixture(scope="module")
def decisions() -> list[list]:
    return list(play_decisions("t1", OPTIONS, hands=40, seats=6, seed=14))


def commits(decisions: list[list], options=OPTIONS) -> list[Stored]:
    return list(chain("t1", decisions, options=options))


def first(decisions: list[list], pred) -> int:
    return next(i for i, d in enumerate(decisions) if pred(d))


def replaced(decisions: list[list], i: int, events: list | None) -> list[list]:
    out = list(decisions)
    if events is None:
        del out[i]
    else:
        out[i] = events
    return out


def failure_of(stored: list[Stored]):
    a = audit_table("t1", stored, sample_keyring())
    assert not a.ok, "the tampering was not caught"
    return a.failure


@pytest.mark.parametrize("game,structure,stakes", MIXED, ids=[f"{g}-{s}" for g, s, _ in MIXED])
def test_a_clean_log_of_every_game_passes(game, structure, stakes):
    options = table_options(game, structure, **stakes)
    stored = commits(list(play_decisions("t1", options, hands=25, seed=3)), options)
    a = audit_table("t1", stored, sample_keyring())
    assert a.ok, a.failure
    assert a.hands == 25 and a.decks >= 25 and a.cards > 0
    assert a.commits == len(stored) and a.conserved and not a.hand_open


def test_the_sample_covers_time_outs_leavers_and_top_ups(decisions):
    kinds = {type(e) for d in decisions for e in d}
    assert {E.PlayerTimedOut, E.PlayerLeaving, E.PlayerLeft, E.PlayerToppedUp,
            E.RakeTaken, E.HandShown, E.HandMucked} <= kinds


def test_a_changed_card_is_caught_at_its_cards_dealt(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.CardsDealt) and d[0].board)
    e = decisions[i][0]
    reveal = next(d[0] for d in decisions[i:] if isinstance(d[0], E.DeckRevealed))
    spare = reveal.decks[0][-1]  # the deck's last card is never dealt in hold'em
    changed = dataclasses.replace(e, board=(spare,) + e.board[1:])
    f = failure_of(commits(replaced(decisions, i, [changed])))
    assert (f.seq, f.event_type) == (i + 1, "CardsDealt"), f
    assert "revealed deck" in f.reason


def test_a_changed_amount_is_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.ActionTaken)
              and d[0].action in (E.ActionKind.BET, E.ActionKind.RAISE) and not d[0].all_in)
    e = decisions[i][0]
    changed = dataclasses.replace(e, added=e.added + 1)  # chips moved that the bet did not
    f = failure_of(commits(replaced(decisions, i, [changed, *decisions[i][1:]])))
    assert (f.seq, f.commit_index, f.event_type) == (i + 1, 0, "ActionTaken"), f
    assert "added is" in f.reason
    # another legal raise in its place: only what follows it (a call of the old amount) shows
    changed = dataclasses.replace(e, to=e.to + 1, added=e.added + 1)
    f = failure_of(commits(replaced(decisions, i, [changed, *decisions[i][1:]])))
    assert i + 1 < f.seq <= i + 8, f


def test_a_removed_event_is_caught(decisions):
    i = first(decisions, lambda d: len(d) > 1 and isinstance(d[-1], E.BettingRoundClosed))
    f = failure_of(commits(replaced(decisions, i, decisions[i][:-1])))
    assert f.seq == i + 1 and "BettingRoundClosed" in f.reason, f


def test_a_removed_commit_breaks_the_chain(decisions):
    stored = commits(decisions)
    f = failure_of(stored[:30] + stored[31:])
    assert (f.seq, f.commit_index) == (32, 0) and "hash chain" in f.reason, f


def test_two_events_swapped_are_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.ActionTaken)
              and isinstance(decisions[decisions.index(d) + 1][0], E.ActionTaken))
    swapped = list(decisions)
    swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
    f = failure_of(commits(swapped))
    assert (f.seq, f.event_type) == (i + 1, "ActionTaken"), f
    # not re-chained: the chain breaks
    stored = commits(decisions)
    stored[i], stored[i + 1] = (Stored(i + 1, stored[i + 1].data), Stored(i + 2, stored[i].data))
    f = failure_of(stored)
    assert f.seq == i + 1 and "hash chain" in f.reason, f


def test_a_changed_rake_is_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.RakeTaken) and d[0].amount > 0)
    e = decisions[i][0]
    changed = dataclasses.replace(e, amount=e.amount + 1,
                                  from_pots=(e.from_pots[0] + 1, *e.from_pots[1:]))
    f = failure_of(commits(replaced(decisions, i, [changed])))
    assert (f.seq, f.event_type) == (i + 1, "RakeTaken") and "amount" in f.reason, f


def test_a_reveal_that_does_not_match_its_commitment_is_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.DeckRevealed))
    e = decisions[i][0]
    deck = list(e.decks[0])
    deck[-1], deck[-2] = deck[-2], deck[-1]  # undealt cards: only the commitment shows it
    changed = dataclasses.replace(e, decks=(tuple(deck),))
    f = failure_of(commits(replaced(decisions, i, [changed])))
    assert (f.seq, f.event_type) == (i + 1, "DeckRevealed") and "commitment" in f.reason, f


def test_an_illegal_action_is_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.ActionTaken)
              and d[0].action is E.ActionKind.CALL)
    e = decisions[i][0]
    check = E.ActionTaken(e.seat, E.ActionKind.CHECK, e.to - e.added, 0, False)
    f = failure_of(commits(replaced(decisions, i, [check])))
    assert (f.seq, f.event_type) == (i + 1, "ActionTaken"), f
    assert "refuses" in f.reason and "call, raise or fold" in f.reason, f
    assert not f.engine_bug  # a refusal is a finding about the log, not a bug


def test_an_action_out_of_turn_is_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.ActionTaken)
              and d[0].action is E.ActionKind.FOLD)
    e = decisions[i][0]
    other = next(d[0].seat for d in decisions[i + 1:] if isinstance(d[0], E.ActionTaken)
                 and d[0].seat != e.seat)
    f = failure_of(commits(replaced(decisions, i, [dataclasses.replace(e, seat=other)])))
    assert f.seq == i + 1 and "turn" in f.reason, f


def test_a_changed_byte_breaks_the_chain(decisions):
    stored = commits(decisions)
    s = stored[40]
    at = s.data.find(b"t1")  # an envelope's table id, inside the first event
    data = s.data[:at] + b"t2" + s.data[at + 2:]
    stored[40] = Stored(s.seq, data)
    f = failure_of(stored)
    assert f.seq == 41, f  # the envelope names another table, or the chain breaks after it


def test_a_decision_applied_twice_is_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.PlayerToppedUp))
    stored = commits(decisions)
    twice = stored[: i + 1] + [Stored(i + 2, stored[i].data)]
    f = failure_of(twice)
    assert f.seq == i + 2 and "hash chain" in f.reason, f


def test_a_time_out_before_the_deadline_is_caught(decisions):
    i = first(decisions, lambda d: isinstance(d[0], E.PlayerTimedOut))
    fast = list(chain("t1", decisions[: i + 1], options=None))  # default: 120 s late, fine
    assert audit_table("t1", fast, sample_keyring()).ok
    from shared.infra.repository import build_commit, digest
    prev = audit_table("t1", fast[:i], sample_keyring())
    early = build_commit("t1", 0, "early", digest("x"), "test", decisions[i],
                         bytes.fromhex(prev.head_hash),
                         now_ms=1_700_000_000_000 + 1000 * (i + 1))
    f = failure_of(fast[:i] + [Stored(i + 1, early)])
    assert f.seq == i + 1 and "before their time ran out" in f.reason, f


def test_an_export_round_trips_and_a_change_in_it_is_caught(decisions):
    stored = commits(decisions)
    text = "".join(dump_lines(("t1", s) for s in stored))
    back = [s for _, s in load_lines(io.StringIO(text))]
    assert back == stored and audit_table("t1", back, sample_keyring()).ok
    i = first(decisions, lambda d: isinstance(d[-1], E.HandEnded))
    e = decisions[i][-1]
    s0 = e.stacks[0]
    bad = dataclasses.replace(e, stacks=(E.SeatStack(s0.seat, s0.stack + 5), *e.stacks[1:]))
    tampered = commits(replaced(decisions, i, [*decisions[i][:-1], bad]))
    text = "".join(dump_lines(("t1", s) for s in tampered))
    f = failure_of([s for _, s in load_lines(io.StringIO(text))])
    assert (f.seq, f.event_type) == (i + 1, "HandEnded") and "stacks is" in f.reason, f


def test_the_full_deck_is_52_cards():
    assert len(DECK) == 52


def test_an_event_that_does_not_decode_or_parse_is_named(decisions):
    from poker.events.v1 import events_pb2 as pb
    i = first(decisions, lambda d: isinstance(d[0], E.ActionTaken))
    stored = commits(decisions)
    head = bytes.fromhex(audit_table("t1", stored[:i], sample_keyring()).head_hash)
    commit = pb.Commit()
    commit.ParseFromString(stored[i].data)
    env = pb.EventEnvelope()
    env.ParseFromString(commit.events[0])
    env.prev_hash = head
    env.action_taken.action = 99  # no ActionKind
    unknown = pb.Commit(events=[env.SerializeToString()]).SerializeToString()
    f = failure_of(stored[:i] + [Stored(i + 1, unknown)])
    assert (f.seq, f.commit_index, f.event_type) == (i + 1, 0, "action_taken"), f
    assert "does not decode" in f.reason and "ActionKind value 99" in f.reason, f
    garbage = pb.Commit(events=[b"\xff\xff\xff"]).SerializeToString()
    f = failure_of(stored[:i] + [Stored(i + 1, garbage)])
    assert (f.seq, f.commit_index, f.event_type) == (i + 1, 0, "?"), f
    assert "does not parse" in f.reason, f


def test_the_chips_at_the_table_are_counted_after_every_commit(decisions):
    from shared.audit.auditor import TableAuditor
    auditor = TableAuditor("t1", sample_keyring())
    for s in commits(decisions):
        assert auditor.feed(s), auditor.audit.failure
        table = auditor.state
        hand = table.hand if table.hand_running else None
        dealt = {p.seat for p in hand.players} if hand else set()
        want = sum(s.stack for s in table.seats if s.seat not in dealt)
        if hand:
            want += sum(p.stack for p in hand.players) + hand.pot_total
        assert auditor._in_play(table) == want
    # a chip missing from the books is caught at the next commit, hand or not
    auditor = TableAuditor("t1", sample_keyring())
    stored = commits(decisions)
    for s in stored[:30]:
        auditor.feed(s)
    auditor.audit.top_ups += 1
    assert not auditor.feed(stored[30])
    assert "chips are not conserved" in auditor.audit.failure.reason


def test_an_engine_failure_is_reported_as_a_bug_not_as_tampering(decisions, monkeypatch):
    """The engine raising (not refusing) while it re-decides a commit says nothing about the
    log: the audit stops there, names the commit and the exception, and marks it a bug."""
    import shared.audit.auditor as auditor

    stored = commits(decisions)
    real = auditor.decide_again
    broken_at = first(decisions, lambda d: isinstance(d[0], E.ActionTaken))

    def engine(hand, step, recorded, memo=None):
        if recorded == decisions[broken_at][0] and hand.hand_no == 1:
            raise KeyError("a bug in the engine")
        return real(hand, step, recorded, memo)

    monkeypatch.setattr(auditor, "decide_again", engine)
    f = failure_of(stored)
    assert f.engine_bug and f.seq == stored[broken_at].seq
    assert "KeyError" in f.reason and "bug in the engine" in f.reason
    assert "tamper" not in f.reason and "refuses" not in f.reason

