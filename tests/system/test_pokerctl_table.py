"""`pokerctl table create|sit|act|state|watch` as a new operator and two players use it: a real
cluster (`pokerctl up`'s LocalCluster), the CLI as processes, a whole heads-up no-limit
hold'em hand played through the CLI alone, followed live by `watch`."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time

import pytest
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from services.pokerctl.table_cmd import Fail, resolve_action
from services.pokerctl.table_text import render
from services.pokerctl.up import LocalCluster
from shared.infra.identity import OPERATOR
from shared.infra.natsserver import free_port
from shared.poker.events import ActionKind

CLI = [sys.executable, "-m", "services.pokerctl"]
#: a command's longest run (a cold start of the interpreter on a busy machine included)
COMMAND_S = 60.0


def client_env(cluster: LocalCluster) -> dict[str, str]:
    """What `source DIR/env` gives a client of `pokerctl up` (no token of anyone's yet)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("POKER_TLS", "POKER_TOKEN", "POKER_SEAT_TOKEN"))
           and k != "POKER_INSECURE"}
    env.update(POKER_DATA_DIR=str(cluster.data_dir),
               POKER_TABLE_ADDR=cluster.client_address("table"),
               POKER_WALLET_ADDR=cluster.client_address("wallet"))
    return env


class Terminal:
    """One person's shell: their environment (POKER_TOKEN, POKER_SEAT_TOKEN) and a transcript
    of what they typed and saw."""

    def __init__(self, name: str, env: dict[str, str], transcript: list[str]) -> None:
        self.name, self.env, self.transcript = name, dict(env), transcript

    async def run(self, *argv: str, timeout: float = COMMAND_S) -> subprocess.CompletedProcess:
        started = time.monotonic()
        done = await asyncio.to_thread(subprocess.run, [*CLI, *argv], env=self.env,
                                       capture_output=True, text=True, timeout=timeout)
        done.elapsed = time.monotonic() - started  # type: ignore[attr-defined]
        self.transcript.append(f"[{self.name}]$ pokerctl {' '.join(argv)}   # exit "
                               f"{done.returncode}")
        self.transcript += [f"  {line}" for line in done.stdout.splitlines()]
        self.transcript += [f"  (stderr) {line}" for line in done.stderr.splitlines()]
        return done


def one_line_error(done: subprocess.CompletedProcess) -> str:
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    return lines[0]


async def read_until(proc: subprocess.Popen, text: str, seen: list[str],
                     timeout: float) -> None:
    """Lines of ``proc`` into ``seen`` until one has ``text`` (AssertionError at the deadline
    or if it exits)."""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {text!r} within {timeout} s: {''.join(seen)}")
        try:
            assert proc.stdout is not None
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), left)
        except TimeoutError:
            raise AssertionError(f"no {text!r} within {timeout} s: {''.join(seen)}") from None
        if not line:
            raise AssertionError(f"watch exited ({proc.poll()}): {''.join(seen)} "
                                 f"{proc.stderr.read() if proc.stderr else ''}")
        seen.append(line)
        if text in line:
            return


async def test_a_whole_hand_from_two_terminals(tmp_path):
    cluster = LocalCluster(tmp_path, base_port=None, log_level="WARNING")
    await cluster.start()
    transcript: list[str] = []
    watch: subprocess.Popen | None = None
    try:
        env = client_env(cluster)
        ops = Terminal("ops", {**env, "POKER_TOKEN": cluster.issuer.token("ops", (OPERATOR,))},
                       transcript)
        players = {1: Terminal("alice", {**env, "POKER_TOKEN": cluster.issuer.token("alice")},
                               transcript),
                   2: Terminal("bob", {**env, "POKER_TOKEN": cluster.issuer.token("bob")},
                               transcript)}
        alice = players[1]

        # --- the operator makes a table: the defaults are NL hold'em 1/2 ---
        done = await ops.run("table", "create", "--table", "t1", "--decision-seconds", "300")
        assert done.returncode == 0, done.stderr
        assert "table t1: holdem no_limit 1/2" in done.stdout
        assert "buy-in 40 to 400 chips" in done.stdout
        # bad arguments: exit 2 before anything is sent
        done = await ops.run("table", "create", "--table", "t2", "--game", "stud",
                             "--structure", "no_limit")
        assert done.returncode == 2 and "not played no_limit" in one_line_error(done)

        # --- no money yet: the wallet refuses, and the hint says how to deposit ---
        done = await alice.run("table", "sit", "--table", "t1", "--seat", "1", "--buy-in", "100")
        assert done.returncode == 1 and done.stdout == ""
        line = one_line_error(done)
        assert line.startswith("pokerctl table sit: FAILED_PRECONDITION: ")
        assert "pokerctl wallet deposit --player alice --amount N" in line
        for player in ("alice", "bob"):
            done = await ops.run("wallet", "deposit", "--player", player, "--amount", "100")
            assert done.returncode == 0, done.stderr

        # --- both sit: the seat token alone on stdout, the line that keeps it on stderr ---
        for seat, player in players.items():
            done = await player.run("table", "sit", "--table", "t1", "--seat", str(seat),
                                    "--buy-in", "100")
            assert done.returncode == 0, done.stderr
            token = done.stdout.strip()
            assert len(token) == 64 and done.stdout == token + "\n"
            assert f"export POKER_SEAT_TOKEN={token}" in done.stderr
            player.env["POKER_SEAT_TOKEN"] = token

        # --- a spectator follows the table live ---
        watch = subprocess.Popen([*CLI, "table", "watch", "--table", "t1"], env=ops.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        watched: list[str] = []
        await read_until(watch, "hand 1 ", watched, COMMAND_S)  # the first view

        # --- play: whoever is on turn checks or calls, until the hand is over ---
        refused_once = checked_text = False
        for _ in range(40):
            done = await ops.run("table", "state", "--table", "t1", "--json")
            assert done.returncode == 0, done.stderr
            view = json.loads(done.stdout)
            if int(view["handNo"]) > 1 or view["phase"] == "done":
                break
            on_turn = int(view["toAct"])
            if not on_turn:
                continue  # the dealer is between steps: look again
            legal = view["legal"]
            if not checked_text:
                # the text shows the options of the player on turn, amounts and commands
                done = await players[on_turn].run("table", "state", "--table", "t1",
                                                  "--seat", str(on_turn))
                assert done.returncode == 0, done.stderr
                text = done.stdout
                assert f"seat {on_turn} ({players[on_turn].name}) to act" in text
                assert f"call {legal['call']}" in text
                assert f"min_to {legal['minTo']} max_to {legal['maxTo']}" in text
                assert f"raise to {legal['minTo']}..{legal['maxTo']}" in text
                assert (f"pokerctl table act --table t1 --seat {on_turn} --action call"
                        in text)
                own = next(line for line in text.splitlines() if line.endswith(", you)"))
                assert "cards " in own and "??" not in own  # the seat sees its own cards
                checked_text = True
            if not refused_once:
                # out of turn: refused by the service, one line, exit 1
                other = players[3 - on_turn]
                done = await other.run("table", "act", "--table", "t1", "--seat",
                                       str(3 - on_turn), "--action", "check")
                assert done.returncode == 1
                assert one_line_error(done).startswith(
                    "pokerctl table act: FAILED_PRECONDITION: ")
                refused_once = True
            action = "check" if legal["canCheck"] else "call"
            done = await players[on_turn].run("table", "act", "--table", "t1", "--seat",
                                              str(on_turn), "--action", action)
            assert done.returncode == 0, done.stderr
            assert done.stdout.startswith(f"seat {on_turn}: {action} (hand 1")
        else:
            raise AssertionError("the hand did not end in 40 looks")
        assert checked_text and refused_once

        # the watcher saw the hand to its end
        await read_until(watch, "hand 1 is over", watched, COMMAND_S)
        assert sum(line.startswith("v") for line in watched) >= 3, watched
        transcript.append("[ops]$ pokerctl table watch --table t1   # until Ctrl-C")
        transcript += [f"  {line.rstrip()}" for line in watched]

        done = await ops.run("table", "state", "--table", "t1")
        assert done.returncode == 0 and "table t1: holdem no_limit 1/2" in done.stdout

        # --- nobody at that address: one line naming it, exit 4, within seconds ---
        nowhere = f"127.0.0.1:{free_port()}"
        done = await ops.run("table", "state", "--table", "t1", "--table-addr", nowhere)
        assert done.returncode == 4  # unreachable (failures.py)
        line = one_line_error(done)
        assert nowhere in line and "pokerctl up" in line and "POKER_TABLE_ADDR" in line
        assert done.elapsed < 20, done.elapsed
    finally:
        if watch is not None:
            watch.terminate()
            await asyncio.to_thread(watch.wait, 10)
        print("\n".join(transcript))
        await cluster.stop()


def test_act_resolves_all_in_and_single_sizes():
    """all_in is the whole stack (a raise, or a call that covers it); a bet or raise without
    --amount is taken only when one size is legal, else exit 2 with the options."""
    view = tpb.TableView(table_id="t", hand_no=3, phase="bet", to_act=2, stakes="1/2",
                         legal=tpb.Legal(can_fold=True, call=1,
                                         raise_kind=ev.ACTION_KIND_RAISE, min_to=4, max_to=98))
    view.seats.add(seat=1, player_id="a", stack=98, bet=2, in_hand=True)
    view.seats.add(seat=2, player_id="b", stack=97, bet=1, in_hand=True)

    def args(action: str, amount: int | None = None) -> argparse.Namespace:
        return argparse.Namespace(action=action, amount=amount, seat=2, table_command="act")

    assert resolve_action(args("all_in"), view) == (ActionKind.RAISE, 98)
    assert resolve_action(args("call"), view) == (ActionKind.CALL, None)
    assert resolve_action(args("raise", 10), view) == (ActionKind.RAISE, 10)
    with pytest.raises(Fail) as refused:
        resolve_action(args("raise"), view)
    assert refused.value.code == 2 and "raise to 4..98" in refused.value.line
    with pytest.raises(Fail):
        resolve_action(args("call", 3), view)
    view.legal.CopyFrom(tpb.Legal(can_fold=True, call=1, raise_kind=ev.ACTION_KIND_RAISE,
                                  raise_sizes=[6]))  # fixed limit: one size
    assert resolve_action(args("raise"), view) == (ActionKind.RAISE, 6)
    view.legal.CopyFrom(tpb.Legal(can_fold=True, call=97))  # the call is all in
    assert resolve_action(args("all_in"), view) == (ActionKind.CALL, None)
    text = render(view, 2, "t")
    assert "call 97 (all in)" in text and "--seat 2 --action call" in text
