"""Seat tokens: the proof of a seat for Act, Leave, SitOut and private views.

The log keeps only a token's SHA-256. A client makes its own token (:func:`new_seat_token`)
and sends the digest with SitDown, so the token never travels in a reply and a replayed
SitDown yields nothing; a client that does not gets one made by the table service, at random,
in the first reply only.
"""

from __future__ import annotations

import hashlib
import secrets


def token_digest(token: str) -> str:
    """What the log keeps of a seat token (SitDown's ``seat_token_sha256``)."""
    return hashlib.sha256(token.encode()).hexdigest()


def new_seat_token() -> tuple[str, str]:
    """A fresh seat token (256 random bits) and its digest, for SitDown."""
    token = secrets.token_urlsafe(32)
    return token, token_digest(token)
