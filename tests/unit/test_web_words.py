"""What the lobby and the table pages say of a phase and an action (services/web/words.py):
a player's words, never the engine's steps."""

from services.web.words import action_line, phase_words

ENGINE_STEPS = ("commit", "forced", "deal", "bet", "pots", "rake", "award", "reveal", "done",
                "waiting")


def test_the_phases_are_a_players_words():
    assert phase_words("holdem", "waiting", 0, 0, 1) == "waiting for players"
    assert phase_words("holdem", "done", 0, 7, 1) == "waiting for players"
    assert phase_words("holdem", "bet", 0, 3, 2) == "pre-flop"
    assert phase_words("omaha", "deal", 1, 3, 2) == "flop"
    assert phase_words("holdem", "bet", 3, 3, 6) == "river"
    assert phase_words("stud", "bet", 0, 3, 4) == "3rd street"
    assert phase_words("stud_hilo", "bet", 4, 3, 4) == "7th street"
    assert phase_words("holdem", "showdown", 3, 3, 2) == "showdown"
    for game in ("holdem", "stud"):
        for phase in ENGINE_STEPS:
            for street in range(5):
                said = phase_words(game, phase, street, 2, 3)
                assert said not in ENGINE_STEPS and "rake" not in said, (game, phase, said)


def test_an_action_reads_as_a_player_says_it():
    assert action_line({"name": "alice", "action": "fold"}) == "alice folds"
    assert action_line({"name": "bob", "action": "check", "added": 0}) == "bob checks"
    assert action_line({"name": "bob", "action": "call", "added": 10}) == "bob calls 10"
    assert action_line({"name": "cy", "action": "raise", "to": 40, "added": 38,
                        "all_in": True}) == "cy raises to 40 (all in)"
    assert action_line({"name": "cy", "action": "bet", "to": 8, "added": 8}) == "cy bets 8"
