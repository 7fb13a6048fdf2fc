"""The README cannot drift from the code (issue 16): its first-hour block runs as written
against a real `pokerctl up` (a fresh home directory, nothing but what `up` printed, and a
PATH that does not hold the venv: the env file `up` writes puts its `pokerctl` there), and
every `pokerctl` line in its code blocks names a real command, subcommand and flags."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from services.pokerctl import cli
from shared.infra.natsserver import free_port
from tests.system.test_pokerctl_up import _line_with, free_base_port

README = Path(__file__).resolve().parents[2] / "README.md"
BIN = Path(sys.executable).parent


def blocks(text: str) -> list[tuple[str, str]]:
    """(info string, body) of every fenced code block."""
    return re.findall(r"^```(\w*)\n(.*?)^```", text, flags=re.M | re.S)


def first_hour() -> str:
    section = README.read_text().split("## The first hour", 1)[1]
    return next(body for info, body in blocks(section) if info == "sh")


async def test_the_first_hour_runs_as_written(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    # a shell with nothing of the venv: pokerctl comes from sourcing up's env file
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p).resolve() != BIN.resolve())
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("POKER_", "XDG_", "VIRTUAL_ENV"))} | {
        "HOME": str(home), "PATH": path}
    base = free_base_port()
    up = subprocess.Popen(
        [str(BIN / "pokerctl"), "up", "--base-port", str(base), "--nats-port",
         str(free_port()), "--log-level", "WARNING"], stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env=env)
    seen: list[str] = []
    try:
        await _line_with(up, "Ctrl-C stops everything", seen, timeout=60)
        data = home / ".local" / "share" / "pokerctl"
        assert f"source {data / 'env'}" in "".join(seen)  # the line the README sources
        run = await asyncio.to_thread(
            subprocess.run, ["bash", "-euo", "pipefail", "-c", first_hour()], env=env,
            capture_output=True, text=True, timeout=300, cwd=tmp_path)
    finally:
        up.send_signal(signal.SIGTERM)
        await asyncio.to_thread(up.communicate, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    out = run.stdout
    assert "buy-in 40 to 400" in out
    assert "pokerctl table act --table t1 --seat 1 --action call" in out  # state's options
    assert re.search(r"\*\*\* SHOW ?DOWN \*\*\*", out), out[-3000:]  # checked down to the river
    assert "??" not in out.split("*** SUMMARY", 1)[0].split("Hand #", 1)[1]
    assert ": shows [" in out  # the winner's cards, opened with up's key
    assert out.rstrip().endswith("audit passed")


def _commands(text: str) -> list[list[str]]:
    """Every `pokerctl ...` command line of the README's code blocks, as words (comments,
    shell substitutions and usage brackets taken off)."""
    out = []
    for _info, body in blocks(text):
        for line in body.splitlines():
            line = re.sub(r"\s#.*$", "", line)
            for m in re.finditer(r"(?:^|[$(;&]\s*|\.venv/bin/)pokerctl\s+([^)`;&]*)", line):
                words = m.group(1).replace("[", " ").replace("]", " ").split()
                out.append(["pokerctl", *words])
    return out


def _parser_options(parser) -> tuple[set[str], dict]:
    import argparse
    flags, subs = set(), {}
    for action in parser._actions:
        flags.update(action.option_strings)
        if isinstance(action, argparse._SubParsersAction):
            subs.update(action.choices)
    return flags, subs


def check_commands(text: str) -> int:
    """Every `pokerctl` line of ``text``'s code blocks names a real command, subcommand and
    flags (AssertionError naming the line otherwise); how many lines were checked."""
    commands = _commands(text)
    for words in commands:
        name = words[1]
        assert name in {c.name for c in cli.COMMANDS}, f"no command {name!r}: {words}"
        _, top = _parser_options(cli.build_parser(name))
        flags, subs = _parser_options(top[name])
        rest = words[2:]
        if subs and rest and not rest[0].startswith("-"):
            for choice in rest[0].split("|"):  # sit-out|return|...: each a subcommand
                assert choice in subs, f"`pokerctl {name}` has no {choice!r}: {words}"
            flags, _ = _parser_options(subs[rest[0].split("|")[0]])
        for word in rest:
            for flag in re.findall(r"^(--[a-z][a-z0-9-]*)", word.split("=", 1)[0]):
                assert flag in flags, f"`pokerctl {name}` has no {flag}: {' '.join(words)}"
    return len(commands)


def test_every_pokerctl_line_names_real_commands_and_flags():
    assert check_commands(README.read_text()) > 30  # the README's blocks are found at all


@pytest.mark.parametrize("line", ["pokerctl up --bogus", "pokerctl nope",
                                  "pokerctl table sit-down --table t1",
                                  "A=$(pokerctl table sit --table t1 --chair 1)"])
def test_the_check_catches_drift(line):
    """The check can fail: a command, subcommand or flag that does not exist is caught."""
    assert check_commands("```\npokerctl up --data-dir D\n```\n") == 1
    with pytest.raises(AssertionError):
        check_commands(f"```\n{line}\n```\n")
