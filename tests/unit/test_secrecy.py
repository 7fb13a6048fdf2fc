"""Secrecy at rest (shared/infra/secrecy.py, the codec's sealing): the cards nobody has seen are
sealed in the log under a per-hand key; only the dealer (the hand key) and the compliance role
(its private key) open them; every other reader folds them as unknown; a sealed blob changed or
moved does not open."""

from __future__ import annotations

import dataclasses

import pytest
from poker.events.v1 import events_pb2 as pb

from shared.audit import audit_table
from shared.audit.sample import MIXED, SAMPLE_KEY, chain, play_decisions, sample_keyring
from shared.infra.codec import CodecError, decode_body, encode_body, is_sealed
from shared.infra.secrecy import (
    ComplianceKey,
    ComplianceKeyring,
    CompliancePublicKey,
    DealerKeyring,
    HandKey,
    Sealing,
    SecrecyError,
)
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, cards
from shared.poker.options import table_options

COMPLIANCE = ComplianceKey.generate()
HAND = HandKey.generate("t1", 7)
SEALING = Sealing(HAND, COMPLIANCE.public)

HOLDEM_DEAL = E.CardsDealt(0, cards("2c"), (E.HoleDeal(1, cards("AhKh"), (False, False)),
                                            E.HoleDeal(2, cards("QsQd"), (False, False))), ())
FLOP = E.CardsDealt(1, cards("3c"), (), cards("Th9h8h"))
STUD_DEAL = E.CardsDealt(0, (), (E.HoleDeal(1, cards("AhKhQh"), (False, False, True)),
                                 E.HoleDeal(2, cards("2c3c4c"), (False, False, True))), ())
REVEAL = E.DeckRevealed((cards("2cAhQsKhQd3cTh9h8h"),), ("ab" * 16,))


def envelope(event, sealing: Sealing | None = SEALING, table_id: str = "t1",
             hand_no: int = 7) -> pb.EventEnvelope:
    env = pb.EventEnvelope(table_id=table_id, hand_no=hand_no)
    encode_body(event, env, sealing)
    back = pb.EventEnvelope()
    back.ParseFromString(env.SerializeToString())
    return back


def compliance_reader(*keys: ComplianceKey) -> ComplianceKeyring:
    """A compliance keyring that has read the hand's DeckCommitted."""
    ring = ComplianceKeyring(list(keys) or [COMPLIANCE])
    decode_body(envelope(E.DeckCommitted("c" * 64, 52)), ring)
    return ring


def test_hole_cards_and_burns_are_not_in_the_bytes_and_read_unknown_without_a_key():
    env = envelope(HOLDEM_DEAL)
    assert list(env.cards_dealt.burned) == [52]
    assert [list(d.cards) for d in env.cards_dealt.hole] == [[52, 52], [52, 52]]
    assert is_sealed(env) is True
    for reader in (None, DealerKeyring(), ComplianceKeyring([COMPLIANCE])):  # no hand key
        e = decode_body(env, reader)
        assert e.burned == (UNKNOWN_CARD,)
        assert all(h.cards == (UNKNOWN_CARD, UNKNOWN_CARD) for h in e.hole)


def test_the_dealer_and_compliance_open_what_they_sealed():
    dealer = DealerKeyring()
    dealer.add(HAND)
    compliance = compliance_reader()
    for event in (HOLDEM_DEAL, FLOP, STUD_DEAL, REVEAL):
        env = envelope(event)
        assert decode_body(env, dealer) == event
        assert decode_body(env, compliance) == event


def test_the_board_and_face_up_stud_cards_stay_public():
    flop = decode_body(envelope(FLOP))
    assert flop.board == FLOP.board and flop.burned == (UNKNOWN_CARD,)
    stud = decode_body(envelope(STUD_DEAL))
    assert [h.cards for h in stud.hole] == [(UNKNOWN_CARD, UNKNOWN_CARD, cards("Qh")[0]),
                                            (UNKNOWN_CARD, UNKNOWN_CARD, cards("4c")[0])]


def test_a_reveal_is_sealed_whole():
    env = envelope(REVEAL)
    assert not env.deck_revealed.decks and not env.deck_revealed.salts
    assert decode_body(env) == E.DeckRevealed((), ())


def test_without_sealing_secret_cards_are_in_the_clear_and_is_sealed_says_so():
    assert is_sealed(envelope(HOLDEM_DEAL, sealing=None)) is False
    assert is_sealed(envelope(REVEAL, sealing=None)) is False
    assert is_sealed(envelope(E.DeckCommitted("c" * 64, 52), sealing=None)) is False
    assert is_sealed(envelope(E.HandShown(1, cards("AhKh")))) is None  # shown: public


@pytest.mark.parametrize("where", ["another seat", "another hand", "another table",
                                   "a changed byte"])
def test_a_sealed_blob_changed_or_moved_does_not_open(where):
    dealer = DealerKeyring()
    dealer.add(HAND)
    dealer.add(HandKey("t1", 8, HAND.key))  # even under the same key bytes
    dealer.add(HandKey("t2", 7, HAND.key))
    env = envelope(HOLDEM_DEAL)
    hole = env.cards_dealt.hole
    if where == "another seat":
        hole[0].sealed, hole[1].sealed = hole[1].sealed, hole[0].sealed
    elif where == "another hand":
        env.hand_no = 8
    elif where == "another table":
        env.table_id = "t2"
    else:
        blob = bytearray(hole[0].sealed)
        blob[-1] ^= 1
        hole[0].sealed = bytes(blob)
    with pytest.raises(CodecError, match="changed, moved or sealed under another key"):
        decode_body(env, dealer)


def test_the_compliance_wrap_opens_only_with_the_right_key_and_place():
    env = envelope(E.DeckCommitted("c" * 64, 52))
    assert env.deck_committed.compliance_key_id == COMPLIANCE.public.key_id
    other = ComplianceKey.generate()
    ring = ComplianceKeyring([other])
    decode_body(env, ring)
    assert ring.hand_key("t1", 7) is None and ring.missing == {COMPLIANCE.public.key_id}
    ring = ComplianceKeyring([other, COMPLIANCE])  # a rotated key among several
    decode_body(env, ring)
    assert ring.hand_key("t1", 7).key == HAND.key
    env.hand_no = 9  # the wrap of hand 7 put on hand 9
    with pytest.raises(CodecError, match="does not open with the compliance key"):
        decode_body(env, ComplianceKeyring([COMPLIANCE]))


def test_key_files_round_trip_and_the_private_one_is_owner_only(tmp_path):
    private, public = COMPLIANCE.write(tmp_path / "keys")
    assert private.stat().st_mode & 0o077 == 0
    assert ComplianceKey.from_file(private).public == COMPLIANCE.public
    assert CompliancePublicKey.from_file(public) == COMPLIANCE.public
    with pytest.raises(SecrecyError, match="is not a poker-compliance-private-key-v1 file"):
        ComplianceKey.from_file(public)
    with pytest.raises(SecrecyError, match="cannot read the key file"):
        ComplianceKey.from_file(tmp_path / "missing")
    (tmp_path / "short").write_text("poker-compliance-public-key-v1 AAAA\n")
    with pytest.raises(SecrecyError, match="a key is 32 bytes"):
        CompliancePublicKey.from_file(tmp_path / "short")


def test_every_hand_gets_its_own_key_and_nonces_never_repeat():
    a, b = HandKey.generate("t1", 1), HandKey.generate("t1", 2)
    assert a.key != b.key
    assert a.seal(b"x", "p") != a.seal(b"x", "p")


# --- the audit -------------------------------------------------------------------------------

OPTIONS = table_options(MIXED[4][0], MIXED[4][1], **MIXED[4][2])  # stud: face-up cards too


@pytest.fixture(scope="module")
def decisions():
    return list(play_decisions("t1", OPTIONS, hands=6, seed=4))


def test_a_sealed_sample_audits_with_the_key_and_hides_every_unshown_card(decisions):
    stored = list(chain("t1", decisions, options=OPTIONS))
    assert audit_table("t1", stored, sample_keyring()).ok
    shown: set[tuple[int, int]] = set()
    hand_no = 0
    for s in stored:
        commit = pb.Commit()
        commit.ParseFromString(s.data)
        for raw in commit.events:
            env = pb.EventEnvelope()
            env.ParseFromString(raw)
            e = decode_body(env)  # what every service but the dealer reads
            if isinstance(e, E.HandStarted):
                hand_no = e.hand_no
            elif isinstance(e, E.HandShown):
                shown.add((hand_no, e.seat))
            elif isinstance(e, E.CardsDealt):
                assert set(e.burned) <= {UNKNOWN_CARD}
                for h in e.hole:
                    assert all((c == UNKNOWN_CARD) != up for c, up in zip(h.cards, h.face_up))
            elif isinstance(e, E.DeckRevealed):
                assert e == E.DeckRevealed((), ())
    assert shown  # hands were shown, in plain (the audit re-decided them from sealed cards)


def test_the_audit_refuses_secret_cards_in_the_clear(decisions):
    stored = list(chain("t1", decisions, options=OPTIONS, compliance=None))
    a = audit_table("t1", stored, sample_keyring())
    assert not a.ok and a.failure.event_type == "DeckCommitted"
    assert "secret cards in the clear" in a.failure.reason


def test_the_audit_without_a_key_or_with_another_key_names_the_sealed_hand(decisions):
    stored = list(chain("t1", decisions, options=OPTIONS))
    a = audit_table("t1", stored)
    assert not a.ok and "no compliance key was given" in a.failure.reason
    a = audit_table("t1", stored, ComplianceKeyring([ComplianceKey.generate()]))
    assert not a.ok and SAMPLE_KEY.public.key_id in a.failure.reason


def test_a_hole_card_resealed_by_a_forger_without_the_deck_is_caught(decisions):
    """Someone holding a hand key (not the deck) swaps a seat's sealed cards for others: the
    chain breaks; and re-chained from there on, the reveal names the deal."""
    i = next(k for k, d in enumerate(decisions) if isinstance(d[0], E.CardsDealt))
    deal = decisions[i][0]
    seat = deal.hole[0]
    used = {c for h in deal.hole for c in h.cards} | set(deal.burned)
    spare = next(c for c in cards("2c2d2h2s3c3d3h3s") if c not in used)
    forged = dataclasses.replace(deal, hole=(dataclasses.replace(
        seat, cards=(spare,) + seat.cards[1:]),) + deal.hole[1:])
    stored = list(chain("t1", decisions[:i] + [[forged]] + decisions[i + 1:], options=OPTIONS))
    a = audit_table("t1", stored, sample_keyring())
    assert not a.ok and a.failure.event_type == "CardsDealt", a.failure
