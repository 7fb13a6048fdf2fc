"""A stored commit parsed once (shared/infra/commits.py): the commit, its envelopes and their
events; bytes that do not parse name where they fail; events decode once per keyring."""

from __future__ import annotations

import pytest
from poker.events.v1 import events_pb2 as pb

from shared.audit.sample import sample_keyring, sample_table
from shared.infra.codec import CodecError, decode_body
from shared.infra.commits import CommitParseError, parse_commit
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD


def test_a_commit_parses_into_its_envelopes_and_events():
    stored = sample_table(hands=2)
    for s in stored:
        parsed = parse_commit(s.data)
        commit = pb.Commit.FromString(s.data)
        assert parsed.commit == commit
        assert parsed.raws == list(commit.events)
        assert len(parsed) == len(commit.events)
        envelopes = [pb.EventEnvelope.FromString(raw) for raw in commit.events]
        assert parsed.envelopes() == envelopes
        assert parsed.events() == [decode_body(env) for env in envelopes]


def test_events_decode_once_per_keyring():
    stored = sample_table(hands=1)
    keyring = sample_keyring()
    dealt = 0
    for s in stored:  # in order: the keyring learns the hand's key from its DeckCommitted
        parsed = parse_commit(s.data)
        opened = parsed.events(keyring)
        assert all(a is b for a, b in zip(parsed.events(keyring), opened))  # decoded once
        blind = parsed.events()
        for e, b in zip(opened, blind):
            if isinstance(e, E.CardsDealt) and any(d.cards for d in e.hole):
                assert UNKNOWN_CARD not in e.hole[0].cards
                assert set(b.hole[0].cards) == {UNKNOWN_CARD}  # decoded again, without keys
                dealt += 1
        assert parsed.event(0, keyring) == opened[0]
    assert dealt


def test_a_commit_that_does_not_parse():
    with pytest.raises(CommitParseError, match="the commit does not parse") as info:
        parse_commit(b"\xff\xff\xff")
    assert info.value.index is None and info.value.cause
    assert isinstance(info.value, CodecError)


def test_an_event_that_does_not_parse_is_named_when_it_is_reached():
    good = pb.EventEnvelope(table_id="t1", player_timed_out=pb.PlayerTimedOut(seat=2))
    data = pb.Commit(events=[good.SerializeToString(), b"\xff\xff", good.SerializeToString()]
                     ).SerializeToString()
    parsed = parse_commit(data)  # the commit itself parses
    assert parsed.envelope(0) == good and parsed.envelope(2) == good
    assert parsed.event(0) == E.PlayerTimedOut(2)
    with pytest.raises(CommitParseError, match="event 1 of the commit does not parse") as info:
        parsed.envelope(1)
    assert info.value.index == 1
    with pytest.raises(CommitParseError):
        parsed.event(1)
    with pytest.raises(CommitParseError, match="event 1"):
        parsed.envelopes()


def test_an_event_that_parses_but_does_not_decode():
    data = pb.Commit(events=[pb.EventEnvelope(action_taken=pb.ActionTaken(seat=1, action=0))
                             .SerializeToString()]).SerializeToString()
    with pytest.raises(CodecError, match="ActionKind value 0 is not known") as info:
        parse_commit(data).event(0)
    assert not isinstance(info.value, CommitParseError)
