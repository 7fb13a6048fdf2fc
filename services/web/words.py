"""What the lobby and the table pages say of a table's phase and of an action, in a
player's words ("pre-flop", "3rd street", "showdown", "alice raises to 40"), never the
engine's steps ("commit", "rake")."""

from __future__ import annotations

from poker.table.v1 import table_pb2

from shared.poker.options import Game

#: the streets as players name them
BOARD_STREETS = ("pre-flop", "flop", "turn", "river")
STUD_STREETS = ("3rd street", "4th street", "5th street", "6th street", "7th street")
STUD_GAMES = (Game.STUD.value, Game.STUD_HILO.value)
#: the engine's phases (shared/poker/state.Phase) that are not a street's
PHASE_WORDS = {"commit": "shuffling", "forced": "blinds and antes", "pots": "showdown",
               "showdown": "showdown", "rake": "paying the pots", "award": "paying the pots",
               "reveal": "paying the pots", "done": "hand over"}


def phase_words(game: str, phase: str, street: int, hand_no: int, players: int) -> str:
    """A table's phase as a player says it: "waiting for players" with no hand running and
    fewer than two players, the street while it is dealt and bet, else PHASE_WORDS."""
    if (not hand_no or phase in ("done", "waiting")) and players < 2:
        return "waiting for players"
    if not hand_no or phase == "waiting":
        return "starting a hand"
    if phase in ("deal", "bet"):
        streets = STUD_STREETS if game in STUD_GAMES else BOARD_STREETS
        return streets[min(max(street, 0), len(streets) - 1)]
    return PHASE_WORDS.get(phase, phase)


def view_words(view: table_pb2.TableView, game: str) -> str:
    """:func:`phase_words` of a table view (its players: the seats not sitting out)."""
    return phase_words(game, view.phase, view.street, view.hand_no,
                       sum(1 for s in view.seats if not s.sitting_out))


_WORDS = {"fold": "folds", "check": "checks", "call": "calls", "bet": "bets",
          "raise": "raises to", "bring_in": "brings in", "complete": "completes to",
          "timed_out": "runs out of time", "uncalled_returned": "takes back"}


def action_line(item: dict) -> str:
    """An action of to_json's streets in words: "alice raises to 40 (all in)"."""
    action = item["action"]
    amount = item.get("to") if action in ("raise", "complete") else \
        item.get("amount") if action == "uncalled_returned" else item.get("added")
    words = f"{item['name']} {_WORDS.get(action, action)}"
    if amount and action not in ("fold", "check", "timed_out"):
        words += f" {amount}"
    return words + (" (all in)" if item.get("all_in") else "")
