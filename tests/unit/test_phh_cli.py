"""pokerctl's command table (services.pokerctl.cli.COMMANDS) and its lazy imports, for
``pokerctl phh replay``: the listing is what every module registers, and a command imports
only its own module."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from services.pokerctl import cli
from tests.helpers.corpus import PHH_CORPUS

ROOT = Path(__file__).resolve().parents[2]
CORPUS = PHH_CORPUS


def test_the_listing_is_what_the_modules_register():
    """``pokerctl --help`` from the table's stand-ins prints what it would print with every
    command's module imported and registered (each under its own name, with the table's help
    line: the one place it is written)."""
    lazy = cli.build_parser()
    eager = argparse.ArgumentParser(prog=lazy.prog, description=lazy.description)
    sub = eager.add_subparsers(dest="command", required=True)
    for command in cli.COMMANDS:
        cli.command_module(command).register(sub, help=command.help)
    assert lazy.format_help() == eager.format_help()
    assert [c.name for c in cli.COMMANDS] == list(sub.choices)


def test_each_command_gets_its_real_parser():
    for command in cli.COMMANDS:
        parser = cli.build_parser(command.name)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        real = sub.choices[command.name]
        assert real.add_help  # the stand-ins have no -h
        others = [p for name, p in sub.choices.items() if name != command.name]
        assert not any(p.add_help or p._actions for p in others)


def test_phh_replay_imports_no_other_command(tmp_path: Path):
    probe = (
        "import json, sys\n"
        "from services.pokerctl.cli import main\n"
        "code = main(['phh', 'replay', '--json', sys.argv[1]])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('services.pokerctl.')\n"
        "                or m.split('.')[0] in ('grpc', 'nats', 'jwt', 'cryptography'))\n"
        "print(json.dumps({'code': code, 'loaded': loaded}))\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", probe, str(CORPUS / "wsop-2023-43-5" / "1.phh")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    *rows, last = done.stdout.splitlines()
    report = json.loads(last)
    assert report["code"] == 0 and json.loads(rows[0])["ok"]
    # the exit codes are a leaf module every command shares (it imports nothing)
    assert report["loaded"] == ["services.pokerctl.cli", "services.pokerctl.exitcodes",
                                "services.pokerctl.phh_cmd"]


def test_command_line_errors_are_argparse_own(capsys):
    for argv, message in ((["bogus"], "invalid choice: 'bogus'"),
                          ([], "the following arguments are required: command"),
                          (["phh"], "the following arguments are required: phh_command"),
                          (["phh", "replay", "--nope", "x"], "unrecognized arguments: --nope")):
        try:
            cli.main(argv)
        except SystemExit as exc:
            assert exc.code == 2
        else:
            raise AssertionError(f"{argv} did not exit")
        assert message in capsys.readouterr().err
