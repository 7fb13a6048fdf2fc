"""Who may call each RPC of the table service: the roles of the caller's token, checked by
shared/infra/authz.py before any handler runs (services/table/server.py ``access``)."""

from __future__ import annotations

from shared.infra.authz import Rule
from shared.infra.identity import OPERATOR, PLAYER

from . import tournament

_PLAYERS, _OPERATORS = Rule(frozenset({PLAYER})), Rule(frozenset({OPERATOR}))
#: who may call each RPC (one rule each; a method without one is refused): the roles of the
#: caller's token; an empty set: any valid token. The handlers check the rest: a seat is its
#: player's, a private table's spectators are operators, compliance or its players.
ACCESS: dict[str, Rule] = {
    "CreateTable": _OPERATORS, "PauseTable": _OPERATORS, "ConfigureTable": _OPERATORS,
    "CloseTable": _OPERATORS,
    "SitDown": _PLAYERS, "ResumeSeat": _PLAYERS, "Leave": _PLAYERS, "SitOut": _PLAYERS, "TopUp": _PLAYERS,
    "Act": _PLAYERS, "Disconnect": _PLAYERS, "Reconnect": _PLAYERS,
    "GetState": Rule(frozenset()), "Watch": Rule(frozenset()), "GetReceipt": _PLAYERS,
    "CommitSeed": _PLAYERS, "RevealSeed": _PLAYERS,
    **tournament.ACCESS,  # a tournament's director: TournamentTables
}
