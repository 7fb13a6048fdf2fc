"""`pokerctl up`, `pokerctl bots` and the networked demo, as an operator runs them: real
processes (nats-server from the wheel, `python -m services.<name>`), real ports."""

from __future__ import annotations

import asyncio
import io
import json
import os
import random
import re
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nats
import pytest

from services.pokerctl.bots_cmd import plan_tables, run_bots
from services.pokerctl.datadir import default_nats_url
from services.pokerctl.netdemo import run_networked_demo
from services.pokerctl.up_processes import port_in_use
from shared.infra import natsconn
from shared.infra.natsserver import free_port
from shared.infra.secrecy import ComplianceKeyring
from shared.infra.tls import TlsConfig

# `pokerctl up` until the lead registers it in cli.py GROUPS
UP = ("import argparse, sys\n"
      "from services.pokerctl import up_cmd\n"
      "p = argparse.ArgumentParser(prog='pokerctl')\n"
      "up_cmd.register(p.add_subparsers())\n"
      "a = p.parse_args(sys.argv[1:])\n"
      "sys.exit(a.run(a))\n")


def free_base_port() -> int:
    """A base port whose service, web and metrics ports are free, below the kernel's range of
    ephemeral ports: a port the OS hands out to outgoing connections (a browser's, a gRPC
    channel's) could be taken between this check and `up` binding it."""
    low = 32768
    try:
        low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        pass
    rng = random.Random()
    for _ in range(200):
        base = rng.randrange(10_000, max(low - 40, 10_001))
        # the services at base + 1..6, the web pages at base + 8, metrics at base + 11..16
        if not any(port_in_use(base + k) for k in (*range(1, 9), *range(11, 17))):
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


async def test_up_then_bots_then_sigterm(tmp_path, monkeypatch):
    base, nats_port = free_base_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", UP, "up", "--base-port", str(base), "--nats-port",
         str(nats_port), "--data-dir", str(tmp_path / "data"), "--log-level", "WARNING"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=dict(os.environ, GOMEMLIMIT="300MiB"))  # an operator's soft limit for NATS
    seen: list[str] = []
    try:
        await _line_with(proc, "Ctrl-C stops everything", seen, timeout=30)
        out = "".join(seen)
        assert f"table     127.0.0.1:{base + 1}" in out and f"127.0.0.1:{nats_port}" in out
        nats_pid = re.search(rf"^  nats +tls://127\.0\.0\.1:{nats_port} +pid (\d+)$", out, re.M)
        assert nats_pid, out
        environ = Path(f"/proc/{nats_pid[1]}/environ").read_bytes().split(b"\0")
        assert b"GOMEMLIMIT=300MiB" in environ  # nats-server has what `up` was given
        web = f"http://127.0.0.1:{base + 8}/"  # the web pages, served by `up` too
        assert f"web       {web}" in out
        assert f"table http://127.0.0.1:{base + 11}/metrics" in out  # Prometheus, printed
        lobby = await asyncio.to_thread(lambda: urllib.request.urlopen(web, timeout=5).read())
        assert b'id=lobby' in lobby
        assert (tmp_path / "data" / "keys" / "compliance.key").stat().st_mode & 0o077 == 0
        certs = tmp_path / "data" / "tls"  # up's CA, made on first use, printed for clients
        assert f"mutual TLS, CA {certs / 'ca.pem'}" in out and "INSECURE" not in out
        assert (certs / "ca.key").stat().st_mode & 0o077 == 0
        await _nats_is_secured(tmp_path / "data", nats_port, out)

        # client commands find up's NATS, its CA and the reader's password in its data dir
        monkeypatch.setenv("POKER_DATA_DIR", str(tmp_path / "data"))
        assert f"source {tmp_path / 'data' / 'env'}" in out
        await _clients_from_the_env_file(tmp_path / "data", base, nats_port)
        await _a_second_up_on_the_data_dir_is_refused(tmp_path / "data")
        report = io.StringIO()
        code = await run_bots(f"127.0.0.1:{base + 1}", default_nats_url(),
                              plan_tables(2), hands=2, seats=3, seed=1, out=report,
                              keyring=ComplianceKeyring.from_files(
                                  [str(tmp_path / "data" / "keys" / "compliance.key")]),
                              tls=TlsConfig.in_dir(certs, "client"),
                              wallet_addr=f"127.0.0.1:{base + 6}",
                              wallet_tls=TlsConfig.in_dir(certs, "admin"))
        assert code == 0, report.getvalue()
        assert "chips conserved at 2/2 tables; audit passed" in report.getvalue()
        await _clients_need_no_flags(tmp_path / "data", nats_port)
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = await asyncio.to_thread(proc.communicate, timeout=30)
    assert proc.returncode == 0, "".join(seen) + rest
    assert "stopping: table, then" in rest and rest.rstrip().endswith("stopped")
    for k in range(1, 6):  # every service is gone and its port free again
        assert not port_in_use(base + k)
    assert not port_in_use(nats_port)


def _sourced(env_file) -> dict[str, str]:
    """The environment a shell has after ``source env_file`` (and nothing else of POKER_*)."""
    shell = subprocess.run(["bash", "-c", f"source {env_file} && env -0"], check=True,
                           capture_output=True, text=True,
                           env={k: v for k, v in os.environ.items()
                                if not k.startswith("POKER_")})
    return dict(line.split("=", 1) for line in shell.stdout.split("\0") if "=" in line)


async def _clients_from_the_env_file(data, base: int, nats_port: int) -> None:
    """`source DIR/env` is all a client's shell needs: bots play and audit with the key
    (sealed cards opened), history renders the cards, for a data dir that is not the
    default."""
    env = _sourced(data / "env")
    assert env["POKER_DATA_DIR"] == str(data.resolve())
    # two table-service processes by default (up --table-services)
    assert env["POKER_TABLE_ADDR"] == f"127.0.0.1:{base + 1},127.0.0.1:{base + 21}"
    assert env["POKER_COMPLIANCE_KEY"] == str((data / "keys" / "compliance.key").resolve())
    assert f"# NATS: tls://127.0.0.1:{nats_port}" in (data / "env").read_text()
    assert "password" not in (data / "env").read_text().lower()
    cli = [sys.executable, "-m", "services.pokerctl"]
    bots = await asyncio.to_thread(subprocess.run, [*cli, "bots", "--tables", "1", "--hands",
                                                    "2", "--seats", "2"],
                                   env=env, capture_output=True, text=True, timeout=180)
    assert bots.returncode == 0, bots.stdout + bots.stderr
    assert "audit passed" in bots.stdout and "no compliance key" not in bots.stdout
    table = json.loads(subprocess.run(
        [*cli, "audit", "--all", "--json"], env=env, capture_output=True, text=True,
        timeout=120).stdout)["tables"][-1]["table_id"]
    history = await asyncio.to_thread(subprocess.run, [*cli, "history", "--table", table],
                                      env=env, capture_output=True, text=True, timeout=120)
    assert history.returncode == 0, history.stderr
    assert "Dealt to" in history.stdout and "??" not in history.stdout, history.stdout[:2000]


async def _a_second_up_on_the_data_dir_is_refused(data) -> None:
    base, nats_port = free_base_port(), free_port()
    second = await asyncio.to_thread(subprocess.run, [
        sys.executable, "-c", UP, "up", "--base-port", str(base), "--nats-port",
        str(nats_port), "--data-dir", str(data)], capture_output=True, text=True, timeout=60)
    assert second.returncode == 1, second.stdout + second.stderr
    assert "is in use by another `pokerctl up` (pid " in second.stderr, second.stderr
    assert not port_in_use(nats_port)  # no second nats-server on the store


async def _clients_need_no_flags(data, nats_port: int) -> None:
    """`pokerctl audit` finds up's NATS, CA, reader and key in POKER_DATA_DIR; a mirror aimed
    at up's own NATS (as its mirror user, by another address) is refused, nothing written."""
    env = {**os.environ, "POKER_DATA_DIR": str(data)}
    env.pop("POKER_NATS_URL", None)
    cli = [sys.executable, "-m", "services.pokerctl"]
    audit = await asyncio.to_thread(subprocess.run, [*cli, "audit", "--all", "--json"],
                                    env=env, capture_output=True, text=True, timeout=120)
    assert audit.returncode == 0, audit.stdout + audit.stderr
    report = json.loads(audit.stdout)
    assert report["ok"] and len(report["tables"]) == 3  # the env file's bots, then 2
    held = report["source"]["messages"]
    password = json.loads((data / "nats" / "passwords.json").read_text())["poker-mirror"]
    to = f"tls://poker-mirror:{password}@localhost:{nats_port}"
    mirror = await asyncio.to_thread(subprocess.run, [*cli, "mirror", "sync", "--to", to,
                                                      "--json"],
                                     env=env, capture_output=True, text=True, timeout=60)
    assert mirror.returncode == 1, mirror.stdout + mirror.stderr  # refused (failures.py)
    assert "holds the primary log itself" in json.loads(mirror.stdout)["refused"]
    again = await asyncio.to_thread(subprocess.run, [*cli, "audit", "--all", "--json"],
                                    env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)["source"]["messages"] == held


async def _nats_is_secured(data, nats_port: int, out: str) -> None:
    """up's NATS: TLS with the data directory's CA, a user for every connection, passwords
    kept owner-only and never printed."""
    passwords = data / "nats" / "passwords.json"
    assert passwords.stat().st_mode & 0o077 == 0
    assert (data / "jetstream" / "poker-nats.conf").stat().st_mode & 0o077 == 0
    assert (data / "nats" / "url").read_text().strip() == f"tls://127.0.0.1:{nats_port}"
    assert not any(pw in out for pw in json.loads(passwords.read_text()).values())
    ca = str(data / "tls" / "ca.pem")
    with pytest.raises(nats.errors.Error, match="Authorization Violation"):  # no user
        await natsconn.connect(f"tls://127.0.0.1:{nats_port}", name="nobody", ca=ca,
                               allow_reconnect=False, max_reconnect_attempts=0)
    with pytest.raises((ssl.SSLError, OSError, nats.errors.Error)):  # not its CA
        await nats.connect(f"nats://127.0.0.1:{nats_port}", allow_reconnect=False,
                           max_reconnect_attempts=0, connect_timeout=5)


async def test_the_networked_demo(capsys):
    code = await run_networked_demo(hands=2, seats=3, seed=5)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "10 tables" in out and "chips conserved at 10/10 tables; audit passed" in out
    assert "stopped cleanly" in out
