"""PHH parsing (shared.phh.parse) and the replay's conventions and error reports
(shared.phh.replay), on real corpus files and small hand-written hands. No network."""

from __future__ import annotations

from decimal import Decimal

import pytest

from shared.phh.parse import PHHError, load, loads, loads_one, parse_action
from shared.phh.replay import amount_scale, replay
from shared.poker.cards import UNKNOWN_CARD, cards
from tests.helpers.corpus import PHH_CORPUS

CORPUS = PHH_CORPUS


def corpus_text(rel: str) -> str:
    return (CORPUS / rel).read_text(encoding="utf-8")


# --- files and fields --------------------------------------------------------------------------


def test_real_file_fields():
    (hh,) = load(CORPUS / "wsop-2023-43-5" / "1.phh")
    assert hh.index == 1 and hh.variant == "NT"
    assert hh.antes == (0, 120000, 0, 0, 0)
    assert hh.blinds_or_straddles == (40000, 80000, 0, 0, 0)
    assert hh.min_bet == 80000 and hh.player_count == 5
    assert hh.finishing_stacks == (7340000, 3775000, 5110000, 8935000, 4545000)
    first = hh.actions[0]
    assert (first.kind, first.player, first.cards) == ("dh", 1, cards("7s4s"))
    assert hh.players[0] == "Matthew Ashton"
    assert dict(hh.other_fields)["hand"] == 1


def test_fractional_amounts_are_exact_decimals():
    (hh,) = load(CORPUS / "famous" / "antonius-blom-2009.phh")
    assert hh.starting_stacks == (Decimal("1259450.25"), Decimal("678473.5"))
    assert all(isinstance(v, Decimal) for v in hh.starting_stacks)
    assert amount_scale(hh) == 2  # 10**2 makes every amount whole


def test_comments_and_unknown_cards():
    (hh,) = load(CORPUS / "famous" / "dwan-ivey-2009.phh")
    antonius = hh.actions[1]
    assert antonius.text == "d dh p2 ????" and antonius.cards == (UNKNOWN_CARD,) * 2
    assert antonius.line == 14  # the line the action is written on


def test_phhs_holds_several_hands_in_numbered_tables():
    a = corpus_text("wsop-2023-43-5/1.phh")
    b = corpus_text("pluribus/100/0.phh")
    hands = loads(f"[1]\n{a}\n\n[2]\n{b}\n", "session.phhs", multi=True)
    assert [(h.index, h.variant, h.player_count) for h in hands] == [(1, "NT", 5), (2, "NT", 6)]
    assert all(replay(h).ok for h in hands)


def test_scalar_and_short_arrays_pad_like_pokerkit():
    hh = loads_one("variant='NT'\nantes=5\nblinds_or_straddles=[1, 2]\nmin_bet=2\n"
                   "starting_stacks=[100, 100, 100]\nactions=[]\n")
    assert hh.antes == (5, 5, 5) and hh.blinds_or_straddles == (1, 2, 0)


# --- action notation ---------------------------------------------------------------------------


@pytest.mark.parametrize("text, kind, player, extra", [
    ("d db 4s5c2h", "db", None, {"cards": cards("4s5c2h")}),
    ("d dh p3 ??????", "dh", 3, {"cards": (UNKNOWN_CARD,) * 3}),
    ("p2 cbr 1,000", "cbr", 2, {"amount": Decimal(1000)}),
    ("p2 cbr 12.5", "cbr", 2, {"amount": Decimal("12.5")}),
    ("p1 cc # a comment", "cc", 1, {}),
    ("p4 f", "f", 4, {}),
    ("p5 pb", "pb", 5, {}),
    ("p1 sd", "sd", 1, {"cards": ()}),
    ("p1 sm", "sm", 1, {"cards": ()}),  # a muck
    ("p1 sm -", "sm", 1, {"cards": None}),  # show the cards already dealt
    ("p1 sm AhKd", "sm", 1, {"cards": cards("AhKd")}),
    ("# burn card exposed", "noop", None, {}),
    ("   ", "noop", None, {}),
])
def test_action_notation(text, kind, player, extra):
    a = parse_action(text, 0, 6)
    assert (a.kind, a.player) == (kind, player)
    for name, value in extra.items():
        assert getattr(a, name) == value
    assert a.is_muck == (text == "p1 sm")


@pytest.mark.parametrize("text, why", [
    ("p7 f", "'p7' is not a player"),
    ("p0 cc", "'p0' is not a player"),
    ("d dh p1 AhXx", "not a card"),
    ("p1 cbr", "unknown action"),
    ("p1 cbr -5", "positive"),
    ("p1 raise 5", "unknown action"),
    ("d deal AhKd", "the dealer deals"),
])
def test_bad_actions_name_file_hand_and_action(text, why):
    with pytest.raises(PHHError) as err:
        loads_one("variant='NT'\nantes=[0,0]\nblinds_or_straddles=[1,2]\nmin_bet=2\n"
                  f"starting_stacks=[10,10]\nactions=['d dh p1 AhKh', {text!r}]\n", "x.phh")
    message = str(err.value)
    assert message.startswith("x.phh hand 1: action 1 ") and why in message
    assert "(line 6)" in message


@pytest.mark.parametrize("text, why", [
    ("variant = 'NT'\nactions = []\n", "'starting_stacks' is missing"),
    ("variant = 'NT'\nstarting_stacks = [1]\nactions = []\n", "at least two players"),
    ("variant = 'NT'\nstarting_stacks = [1, 2]\nantes = [0, 0, 0]\nactions = []\n",
     "antes has 3 entries for 2 players"),
    ("variant = 'NT'\nstarting_stacks = [1, 2]\nactions = [1]\n", "array of strings"),
    ("variant = 'NT'\nstarting_stacks = [1, -2]\nactions = []\n", "must not be negative"),
    ("variant = 'NT'\nstarting_stacks = [1, 2]\nactions = []\nfinishing_stacks = [3]\n",
     "one entry per player"),
    ("variant = 'NT\n", "not valid TOML"),
])
def test_bad_files(text, why):
    with pytest.raises(PHHError, match=why) as err:
        loads_one(text, "bad.phh")
    assert str(err.value).startswith("bad.phh")


# --- replay conventions and error reports -----------------------------------------------------

_NT3 = ("variant = 'NT'\nantes = [0, 0, 0]\nblinds_or_straddles = [1, 2, 0]\nmin_bet = 2\n"
        "starting_stacks = [100, 100, 100]\n")


def nt3(actions: list[str], extra: str = "") -> str:
    return _NT3 + f"actions = {actions!r}\n" + extra


DEAL3 = ["d dh p1 AhAd", "d dh p2 KhKd", "d dh p3 QhQd"]


def test_folded_around_to_the_big_blind():
    r = replay(loads_one(nt3(DEAL3 + ["p3 f", "p1 f"], "finishing_stacks = [99, 101, 100]\n")))
    assert r.ok and r.finishing_stacks == (99, 101, 100) and r.compared == "finishing_stacks"


def test_heads_up_blinds_are_reverse_assigned():
    # [1, 2]: p1 posts the big blind, p2 (the button) the small blind and acts first.
    text = ("variant='NT'\nantes=[0,0]\nblinds_or_straddles=[1,2]\nmin_bet=2\n"
            "starting_stacks=[50,50]\nactions=['d dh p1 AhAd','d dh p2 KhKd','p2 f']\n"
            "finishing_stacks=[51,49]\n")
    assert replay(loads_one(text)).ok


def test_an_illegal_action_is_reported_with_position_and_reason():
    r = replay(loads_one(nt3(DEAL3 + ["p3 cbr 3"])))
    assert not r.ok and r.finishing_stacks is None
    assert r.error.startswith("action 3 'p3 cbr 3' (line 6): ")
    assert "raise to between 4 and 100" in r.error


def test_out_of_turn_is_reported():
    r = replay(loads_one(nt3(DEAL3 + ["p1 f"])))
    assert r.error == "action 3 'p1 f' (line 6): it is p3's turn, not p1's"


def test_a_file_that_ends_early_is_reported():
    r = replay(loads_one(nt3(DEAL3 + ["p3 cc"])))
    assert not r.ok and "the file ends before the hand does: p1 is to act" in r.error


def test_actions_after_the_end_are_reported():
    r = replay(loads_one(nt3(DEAL3 + ["p3 f", "p1 f", "p2 sm KhKd"])))
    assert r.error == "action 5 'p2 sm KhKd' (line 6): the hand is already over"


def test_missing_hole_cards_are_not_invented():
    r = replay(loads_one(nt3(DEAL3[:2] + ["p3 f"])))
    assert "street 0 deals hole cards to p3 first" in r.error


def test_an_unshown_hand_that_must_be_shown_is_an_error():
    actions = ["d dh p1 AhAd", "d dh p2 ????", "d dh p3 QhQd", "p3 f", "p1 cbr 100", "p2 cc",
               "p1 sm AhAd", "d db 2c3c4d", "d db 9s", "d db Jd"]
    r = replay(loads_one(nt3(actions)))
    assert not r.ok and "p2 must show (all-in showdown), but the file never shows" in r.error


def test_mismatched_finishing_stacks_are_reported():
    r = replay(loads_one(nt3(DEAL3 + ["p3 f", "p1 f"], "finishing_stacks = [99, 100, 101]\n")))
    assert not r.ok and r.finishing_stacks == (99, 101, 100)
    assert r.error == "finishing_stacks differ: engine [99, 101, 100], file [99, 100, 101]"


def test_winnings_are_the_pots_collected():
    # The specification's winnings are the pots collected: the big blind's uncalled chip comes
    # back as a returned bet, the pot it collects is 2 (as "collected 2 from pot" in rooms).
    r = replay(loads_one(nt3(DEAL3 + ["p3 f", "p1 f"], "winnings = [0, 2, 0]\n")))
    assert r.ok and r.compared == "winnings" and r.finishing_stacks == (99, 101, 100)


def test_unsupported_variant_and_straddles():
    r = replay(loads_one(corpus_text("famous/alice-carol-wikipedia.phh")))
    assert (r.ok, r.supported, r.error) == (False, False, "variant FB is not played by this engine")
    straddle = _NT3.replace("[1, 2, 0]", "[1, 2, 4]") + f"actions = {DEAL3!r}\n"
    r = replay(loads_one(straddle))
    assert r.supported and not r.ok and "straddles" in r.error
