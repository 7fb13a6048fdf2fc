"""pokerctl's failures, each one line with an exit code that says what happened: the flags of
before refused with a hint (a table id is ``--table`` everywhere, the table service's address
``--table-addr``), servers that do not answer (NATS, the table service) named after a bounded
retry and never a traceback, nothing found is not a success, and "audit passed" is printed
over hands audited only. Real processes: `python -m services.pokerctl`, a real nats-server."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from services.pokerctl.failures import NOT_FOUND, UNREACHABLE
from shared.infra.secrecy import ComplianceKey

ROOT = Path(__file__).resolve().parents[2]
#: the subprocess's bound: a command that hangs fails the test (the retry is a few seconds)
BOUND_S = 15
HINT = ("--table is now a table id; the table service's address is --table-addr (or "
        "POKER_TABLE_ADDR)")


def pokerctl(*args: str, env: dict | None = None, cwd: Path = ROOT
             ) -> subprocess.CompletedProcess:
    full = {**os.environ, "PYTHONPATH": str(ROOT), "POKER_INSECURE": "1", **(env or {})}
    return subprocess.run([sys.executable, "-m", "services.pokerctl", *args], cwd=cwd,
                          env=full, capture_output=True, text=True, timeout=BOUND_S)


def one_line(done: subprocess.CompletedProcess, says: str) -> None:
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = done.stderr.splitlines()
    assert 1 <= len(lines) <= 3 and says in done.stderr, done.stderr


@pytest.fixture
def key(tmp_path) -> str:
    ComplianceKey.generate().write(tmp_path / "keys")
    return str(tmp_path / "keys" / "compliance.key")


def dead_port() -> int:
    """A port nothing listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- the flags ---------------------------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["bots", "--table", "127.0.0.1:50051"],
    ["bots", "--table", "127.0.0.1:50051,127.0.0.1:50071"],
    ["bots", "--table", "holdem-1"],  # bots takes no table id: the same hint
])
def test_bots_refuses_the_old_table_flag_with_a_hint(argv):
    done = pokerctl(*argv)
    assert done.returncode == 2
    one_line(done, f"pokerctl bots: {HINT}")


@pytest.mark.parametrize(("argv", "says"), [
    (["--table-id", "t1"], "pokerctl seat: --table-id is now --table"),
    (["--table-id", "t1", "--table", "127.0.0.1:50051"],
     "pokerctl seat: --table-id is now --table"),
    (["--table", "127.0.0.1:50051"], f"pokerctl seat: {HINT}"),
    (["--table", "table:50051"], f"pokerctl seat: {HINT}"),
    (["--table", "dns:///table:50051"], f"pokerctl seat: {HINT}"),
    ([], "pokerctl seat: --table T (the table's id) is required"),
])
def test_seat_refuses_the_old_flags_with_a_hint(argv, says):
    done = pokerctl("seat", "leave", "--seat", "1", "--seat-token", "s", "--token", "a.b.c",
                    *argv)
    assert done.returncode == 2
    one_line(done, says)
    assert done.stdout == ""


def test_the_table_id_and_the_address_are_separate_flags():
    from services.pokerctl.cli import build_parser
    args = build_parser("seat").parse_args(
        ["seat", "leave", "--table", "t1", "--seat", "1", "--table-addr", "127.0.0.1:9"])
    assert (args.table, args.table_addr) == ("t1", "127.0.0.1:9")
    args = build_parser("bots").parse_args(["bots", "--table-addr", "127.0.0.1:9"])
    assert args.table_addr == "127.0.0.1:9" and args.retired_table is None


# --- servers that do not answer ---------------------------------------------------------------


@pytest.mark.parametrize("argv", [
    ["audit", "--all"],
    ["audit", "--table", "t1"],
    ["history", "--table", "t1"],
])
def test_nats_that_does_not_answer_is_one_line(argv, key):
    url = f"nats://127.0.0.1:{dead_port()}"
    done = pokerctl(*argv, "--nats", url, "--key", key)
    assert done.returncode == UNREACHABLE, done.stderr
    one_line(done, f"cannot reach NATS at {url}")
    assert "is `pokerctl up` running?" in done.stderr and "POKER_NATS_URL" in done.stderr
    assert "POKER_DATA_DIR" in done.stderr and done.stdout == ""


def test_mirror_with_no_nats_is_one_line():
    url = f"nats://127.0.0.1:{dead_port()}"
    done = pokerctl("mirror", "sync", "--from", url, "--to", url)
    assert done.returncode == UNREACHABLE
    one_line(done, f"cannot reach NATS at {url}")
    assert "--from, or POKER_NATS_URL" in done.stderr


def test_bots_with_no_nats_is_one_line_before_any_table(tmp_path):
    url = f"nats://127.0.0.1:{dead_port()}"
    done = pokerctl("bots", "--tables", "1", "--hands", "1", "--nats", url, "--table-addr",
                    f"127.0.0.1:{dead_port()}", env={"POKER_DATA_DIR": str(tmp_path)})
    assert done.returncode == UNREACHABLE
    one_line(done, f"pokerctl bots: cannot reach NATS at {url}")
    assert done.stdout == ""


def test_a_table_service_that_does_not_answer_is_one_line_naming_it(tmp_path):
    addr = f"127.0.0.1:{dead_port()}"
    done = pokerctl("seat", "leave", "--table", "t1", "--seat", "1", "--seat-token", "s",
                    "--token", "a.b.c", "--table-addr", addr)
    assert done.returncode == UNREACHABLE
    one_line(done, f"pokerctl seat: cannot reach the table service at {addr}")
    assert "--table-addr or POKER_TABLE_ADDR" in done.stderr and done.stdout == ""


# --- nothing found, nothing played ------------------------------------------------------------


async def test_an_export_of_a_table_not_in_the_log_fails_and_writes_nothing(
        store, nats_server, tmp_path):
    export = tmp_path / "nope.jsonl"
    done = await asyncio.to_thread(pokerctl, "audit", "--table", "nope", "--export", str(export), "--nats",
                    nats_server.url)
    assert done.returncode == NOT_FOUND
    one_line(done, "no table 'nope' in the log")
    assert not export.exists() and not list(tmp_path.glob("nope.jsonl*"))


async def test_an_audit_of_a_table_not_in_the_log_fails(store, nats_server, key):
    done = await asyncio.to_thread(pokerctl, "audit", "--table", "nope", "--nats", nats_server.url, "--key", key)
    assert done.returncode == NOT_FOUND and "audit passed" not in done.stdout
    one_line(done, "no table 'nope' in the log")


async def test_an_audit_of_an_empty_log_is_not_a_pass(store, nats_server, key):
    done = await asyncio.to_thread(pokerctl, "audit", "--all", "--nats", nats_server.url, "--key", key, "--quiet")
    assert done.returncode == 1, done.stdout + done.stderr
    assert "audit passed" not in done.stdout and "no hand to audit" in done.stdout


@pytest.mark.parametrize("hands", ["-1", "0"])
@pytest.mark.parametrize("where", [["--in-process"], []])
def test_demo_refuses_no_hands(hands, where):
    done = pokerctl("demo", *where, "--hands", hands)
    assert done.returncode == 2 and "audit passed" not in done.stdout
    one_line(done, "pokerctl demo: --hands must be at least 1")


def test_bots_report_no_pass_over_no_hands():
    from services.pokerctl.botclient import BotTable
    from services.pokerctl.bots_cmd import Played, plan_tables, print_report
    from shared.audit import TableAudit

    class Out:
        text = ""

        def write(self, s: str) -> None:
            self.text += s

        def flush(self) -> None:
            pass

    (plan,) = plan_tables(1, "holdem", "no_limit", run_id="x")
    played = [Played(plan, BotTable(plan.table_id, buy_in=100), 0.1)]
    out = Out()
    assert print_report(played, [TableAudit(plan.table_id)], 0.1, out) is False
    assert "audit passed" not in out.text and "no hand was played" in out.text
    out = Out()
    played[0].error = "INTERNAL: boom"
    assert print_report(played, [TableAudit(plan.table_id)], 0.1, out) is False
    assert "audit passed" not in out.text and "stopped with an error" in out.text


@pytest.mark.parametrize(("argv", "says"), [
    (["--game", "holdem", "--seats", "12"], "table seats at most 10"),
    (["--seats", "9"], "a stud FL table seats at most 8"),  # every game: the fewest seats
    (["--game", "stud", "--seats", "9"], "a stud FL table seats at most 8"),
])
def test_bots_refuse_more_seats_than_a_table_has(argv, says):
    """--seats above a table's seats is refused (it was capped silently), nothing started."""
    done = pokerctl("bots", "--nats", f"nats://127.0.0.1:{dead_port()}", *argv)
    assert done.returncode == 2
    one_line(done, says)


def test_a_server_of_another_ca_is_named_as_untrusted_not_as_down(tmp_path):
    """A table service whose certificate another CA signed is not "unreachable": the one line
    says its certificate is not of the CA this client trusts, names that CA file, and no
    gRPC log line of the failed handshake reaches the client's stderr."""
    from shared.infra.natsserver import free_port
    from shared.infra.tls import generate
    theirs, ours = generate(tmp_path / "theirs"), generate(tmp_path / "ours")
    port = free_port()
    server = subprocess.Popen([sys.executable, "-c", SERVER, str(port), str(theirs)],
                              cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == "serving"
        done = pokerctl("seat", "leave", "--table", "t1", "--seat", "1", "--seat-token", "s",
                        "--token", "a.b.c", "--table-addr", f"127.0.0.1:{port}",
                        env={"POKER_INSECURE": "", "POKER_TLS_DIR": str(ours)})
    finally:
        server.terminate()
        server.wait(timeout=10)
    assert done.returncode == UNREACHABLE
    one_line(done, f"did not prove itself with a certificate of the CA this client trusts "
                   f"({ours / 'ca.pem'})")
    assert len(done.stderr.splitlines()) == 1, done.stderr  # not gRPC's own lines
    assert "cannot reach" not in done.stderr


#: a table service's TLS server (its certificate from the CA in argv[2]) that serves nothing
SERVER = """
import asyncio, sys
from pathlib import Path
from shared.infra.rpc import Server
from shared.infra.tls import TlsConfig
async def main():
    s = Server("table", port=int(sys.argv[1]), tls=TlsConfig.in_dir(Path(sys.argv[2]), "table"))
    await s.server.start()
    print("serving", flush=True)
    await s.server.wait_for_termination()
asyncio.run(main())
"""


async def test_a_frozen_event_log_is_named_within_seconds(stack, nats_server):
    """NATS frozen behind a running table service: the service answers UNAVAILABLE naming
    the log, and the command says that the log, not the table service, is down, within the
    command's bound (it took 21 s and blamed the table service)."""
    token = stack.token("ops", "operator")
    os.kill(nats_server.proc.pid, signal.SIGSTOP)
    try:
        done = await asyncio.to_thread(
            pokerctl, "table", "create", "--table", "frozen", "--token", token,
            "--table-addr", stack.addresses["table"],
            env={"POKER_INSECURE": "", "POKER_TLS_DIR": str(stack.tls_dir)})
    finally:
        os.kill(nats_server.proc.pid, signal.SIGCONT)
    assert done.returncode == UNREACHABLE
    one_line(done, "answered, but its event log (NATS) did not")
    assert "is NATS up?" in done.stderr and "cannot reach the table service" not in done.stderr


# --- one exit code per meaning ------------------------------------------------------------------


async def test_no_such_table_is_the_same_code_and_one_line_in_every_command(stack, nats_server,
                                                                            key):
    """history and audit said "no such table" with exits 1 and 2; now every command that
    names a table (history, audit, table, seat) says it in one line with exit 3."""
    tls = {"POKER_INSECURE": "", "POKER_TLS_DIR": str(stack.tls_dir)}
    token = stack.token("pat")
    at = ("--table-addr", stack.addresses["table"])
    runs = {
        "history": (["history", "--table", "nosuch", "--nats", nats_server.url, "--key", key],
                    {}),
        "audit": (["audit", "--table", "nosuch", "--nats", nats_server.url, "--key", key], {}),
        "table state": (["table", "state", "--table", "nosuch", "--token", token, *at], tls),
        "table sit": (["table", "sit", "--table", "nosuch", "--seat", "1", "--buy-in", "100",
                       "--token", token, *at], tls),
        "seat sit-out": (["seat", "sit-out", "--table", "nosuch", "--seat", "1",
                          "--seat-token", "s", "--token", token, *at], tls),
    }
    for what, (argv, env) in runs.items():
        done = await asyncio.to_thread(pokerctl, *argv, env=env)
        assert done.returncode == NOT_FOUND == 3, (what, done.returncode, done.stderr)
        assert len(done.stderr.splitlines()) == 1 and "nosuch" in done.stderr, (what,
                                                                                 done.stderr)
        assert "Traceback" not in done.stderr and done.stdout == "", what


def test_the_readme_lists_the_exit_codes_failures_gives():
    """The README's table of exit codes is failures.py's, code for code."""
    from services.pokerctl import failures
    text = (ROOT / "README.md").read_text()
    table = text[text.index("| exit |"):].split("\n\n", 1)[0]
    listed = {int(row.split("|")[1]) for row in table.splitlines()[2:]}
    assert listed == {failures.OK, failures.FAILED, failures.USAGE, failures.NOT_FOUND,
                      failures.UNREACHABLE} == {0, 1, 2, 3, 4}
