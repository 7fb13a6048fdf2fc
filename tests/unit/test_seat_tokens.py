"""Seat tokens (shared/infra/seattokens.py): 256 random bits, only their digest logged, and
safe on a command line (`pokerctl seat --seat-token T`: never read as an option)."""

from __future__ import annotations

import re

from shared.infra.seattokens import new_seat_token, token_digest


def test_a_seat_token_is_256_random_bits_that_no_command_line_takes_for_an_option():
    tokens = set()
    for _ in range(2000):
        token, digest = new_seat_token()
        assert re.fullmatch(r"[0-9a-f]{64}", token) and not token.startswith("-")
        assert digest == token_digest(token) and digest != token
        tokens.add(token)
    assert len(tokens) == 2000
