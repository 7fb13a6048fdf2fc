"""`pokerctl token` (services/pokerctl/token_cmd.py): a token from the dev issuer in
<data dir>/identity, made on first use (the key owner-only) and reused after; the roles asked
for; bad input exits 2."""

from __future__ import annotations

import pytest

from services.pokerctl import cli
from shared.infra.devissuer import DevIssuer
from shared.infra.identity import COMPLIANCE, OPERATOR, PLAYER, Principal


def token(capsys, *argv: str) -> str:
    assert cli.main(["token", *argv]) == 0
    out = capsys.readouterr().out.strip()
    assert out.count("\n") == 0
    return out


def test_a_player_token_the_issuer_verifies_with_an_owner_only_key(tmp_path, capsys):
    printed = token(capsys, "--player", "alice", "--data-dir", str(tmp_path))
    key = tmp_path / "identity" / "issuer.key"
    assert key.stat().st_mode & 0o777 == 0o600
    verifier = DevIssuer.create(tmp_path / "identity").verifier()
    assert verifier.verify(printed) == Principal("alice", frozenset({PLAYER}))


def test_a_second_call_reuses_the_key_and_roles_are_as_asked(tmp_path, capsys):
    first = token(capsys, "--player", "alice", "--data-dir", str(tmp_path))
    key = (tmp_path / "identity" / "issuer.key").read_bytes()
    jwks = (tmp_path / "identity" / "jwks.json").read_bytes()
    ops = token(capsys, "--player", "ops", "--role", "operator", "--role", "compliance",
                "--ttl", "60", "--data-dir", str(tmp_path))
    assert (tmp_path / "identity" / "issuer.key").read_bytes() == key
    assert (tmp_path / "identity" / "jwks.json").read_bytes() == jwks
    verifier = DevIssuer.create(tmp_path / "identity").verifier()
    assert verifier.verify(first).subject == "alice"  # the first token still verifies
    assert verifier.verify(ops) == Principal("ops", frozenset({OPERATOR, COMPLIANCE}))


def test_the_default_data_dir(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("POKER_DATA_DIR", str(tmp_path / "up"))
    printed = token(capsys, "--player", "bob")
    assert DevIssuer.create(tmp_path / "up" / "identity").verifier().verify(printed).subject \
        == "bob"


@pytest.mark.parametrize("argv, message", [
    (["--player", "a\nb"], "not a valid subject"),
    (["--player", "alice", "--ttl", "0"], "--ttl must be"),
])
def test_bad_input_exits_2_with_a_message(tmp_path, capsys, argv, message):
    assert cli.main(["token", *argv, "--data-dir", str(tmp_path)]) == 2
    assert message in capsys.readouterr().err


def test_an_unknown_role_exits_2(tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["token", "--player", "alice", "--role", "admin", "--data-dir", str(tmp_path)])
    assert exit_.value.code == 2
    assert "invalid choice: 'admin'" in capsys.readouterr().err
