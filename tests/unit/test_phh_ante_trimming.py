"""PHH's ``ante_trimming_status``: ``true`` counts the antes in the players' stakes, which is
how this engine plays per-seat antes; ``false`` makes them dead money. A file whose pots that
changes is refused with the reason, never replayed to another result (pokerkit, the oracle,
shows both results)."""

from __future__ import annotations

import pokerkit
import pytest

from shared.phh.parse import loads_one
from shared.phh.replay import replay

HAND = '''variant = "NT"
ante_trimming_status = {trimming}
antes = [10, 10, 10]
blinds_or_straddles = [10, 20, 0]
min_bet = 20
starting_stacks = [1000, 1000, {short}]
actions = [{actions}]
'''


def hand(trimming: bool, short: int) -> str:
    """p3 holds the best hand: all in from the ante when ``short`` < 10, else it folds."""
    p3_in = short < 10
    actions = ["d dh p1 KsKh", "d dh p2 QsQh", "d dh p3 AsAh", *([] if p3_in else ["p3 f"]),
               "p1 cc", "p2 cc", "d db 2s3c4d", "p1 cc", "p2 cc", "d db 9h", "p1 cc", "p2 cc",
               "d db Td", "p1 cc", "p2 cc", "p1 sm KsKh", "p2 sm QsQh",
               *(["p3 sm AsAh"] if p3_in else [])]
    return HAND.format(trimming=str(trimming).lower(), short=short,
                       actions=", ".join(f'"{a}"' for a in actions))


def pokerkit_stacks(text: str) -> list[int]:
    return list(list(pokerkit.HandHistory.loads(text))[-1].stacks)


def test_trimmed_antes_are_stakes_as_the_engine_plays_them():
    text = hand(True, 5)  # p3, all in from a short ante, holds the best hand
    result = replay(loads_one(text))
    assert result.ok, result.error
    assert [int(s) for s in result.finishing_stacks] == pokerkit_stacks(text) == [1020, 970, 15]


def test_untrimmed_antes_that_change_the_pots_are_refused_with_the_reason():
    text = hand(False, 5)
    assert pokerkit_stacks(text) == [1010, 970, 25]  # dead antes: p3 wins all of them
    result = replay(loads_one(text))
    assert not result.ok
    assert "ante_trimming_status = false" in result.error
    assert "changes this hand's pots" in result.error


@pytest.mark.parametrize("trimming", [True, False])
def test_antes_every_player_covers_replay_either_way(trimming):
    text = hand(trimming, 500)
    result = replay(loads_one(text))
    assert result.ok, result.error
    assert [int(s) for s in result.finishing_stacks] == pokerkit_stacks(text)
