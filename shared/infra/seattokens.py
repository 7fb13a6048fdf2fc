"""Seat tokens: the proof of a seat for Act, Leave, SitOut and private views, beside the
player's identity (the seat is bound to the player who took it: :func:`check_holder`).

The log keeps only a token's SHA-256. A client makes its own token (:func:`new_seat_token`)
and sends the digest with SitDown, so the token never travels in a reply and a replayed
SitDown yields nothing; a client that does not gets one made by the table service, at random,
in the first reply only.
"""

from __future__ import annotations

import hashlib
import secrets

from shared.infra.rpc import Denied


def token_digest(token: str) -> str:
    """What the log keeps of a seat token (SitDown's ``seat_token_sha256``)."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_seat_token() -> tuple[str, str]:
    """A fresh seat token (256 random bits) and its digest, for SitDown."""
    # hex: it never begins with '-', which a command line would take for an option
    token = secrets.token_hex(32)
    return token, token_digest(token)


def check_holder(table, seat: int, player_id: str) -> None:
    """The seat is ``player_id``'s (the authenticated player a service acts for): Denied
    otherwise. One place for the table, betting and dealer services."""
    s = table.seat(seat) if table is not None else None
    if s is None or not player_id or s.player_id != player_id:  # the id exactly
        whose = f"{player_id}'s" if player_id else "yours"
        raise Denied(f"seat {seat} at this table is not {whose}")
