"""`pokerctl up`, `pokerctl bots` and the networked demo, as an operator runs them: real
processes (nats-server from the wheel, `python -m services.<name>`), real ports."""

from __future__ import annotations

import asyncio
import io
import os
import signal
import subprocess
import sys
import time

from services.pokerctl.bots_cmd import plan_tables, run_bots
from shared.infra.secrecy import ComplianceKeyring
from services.pokerctl.netdemo import run_networked_demo
from services.pokerctl.up import port_in_use
from shared.infra.natsserver import free_port

# `pokerctl up` until the lead registers it in cli.py GROUPS
UP = ("import argparse, sys\n"
      "from services.pokerctl import up_cmd\n"
      "p = argparse.ArgumentParser(prog='pokerctl')\n"
      "up_cmd.register(p.add_subparsers())\n"
      "a = p.parse_args(sys.argv[1:])\n"
      "sys.exit(a.run(a))\n")


def free_base_port() -> int:
    for _ in range(50):
        base = free_port()
        # the services at base + 1..5, their metrics at base + 11..15
        if base < 65000 and not any(port_in_use(base + k)
                                    for k in (*range(1, 6), *range(11, 16))):
            return base
    raise RuntimeError("no free ports for the services and their metrics")


async def _line_with(proc: subprocess.Popen, text: str, seen: list[str], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline),
                                      deadline - time.monotonic())
        if not line:
            raise AssertionError(f"`pokerctl up` exited: {''.join(seen)}")
        seen.append(line)
        if text in line:
            return
    raise AssertionError(f"no {text!r} within {timeout} s: {''.join(seen)}")


async def test_up_then_bots_then_sigterm(tmp_path):
    base, nats_port = free_base_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", UP, "up", "--base-port", str(base), "--nats-port",
         str(nats_port), "--data-dir", str(tmp_path / "data"), "--log-level", "WARNING"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "POKER_SEAT_SECRET": ""})
    seen: list[str] = []
    try:
        await _line_with(proc, "Ctrl-C stops everything", seen, timeout=30)
        out = "".join(seen)
        assert f"table     127.0.0.1:{base + 1}" in out and f"127.0.0.1:{nats_port}" in out
        assert (tmp_path / "data" / "seat-secret").stat().st_mode & 0o077 == 0
        assert (tmp_path / "data" / "keys" / "compliance.key").stat().st_mode & 0o077 == 0

        report = io.StringIO()
        code = await run_bots(f"127.0.0.1:{base + 1}", f"nats://127.0.0.1:{nats_port}",
                              plan_tables(2), hands=2, seats=3, seed=1, out=report,
                              keyring=ComplianceKeyring.from_files(
                                  [str(tmp_path / "data" / "keys" / "compliance.key")]))
        assert code == 0, report.getvalue()
        assert "chips conserved at 2/2 tables; audit passed" in report.getvalue()
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.to_thread(proc.communicate, timeout=30)
    assert proc.returncode == 0, "".join(seen) + rest
    assert "stopping: table, then" in rest and rest.rstrip().endswith("stopped")
    for k in range(1, 6):  # every service is gone and its port free again
        assert not port_in_use(base + k)
    assert not port_in_use(nats_port)


async def test_the_networked_demo(capsys):
    code = await run_networked_demo(hands=2, seats=3, seed=5)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "10 tables" in out and "chips conserved at 10/10 tables; audit passed" in out
    assert "stopped cleanly" in out
