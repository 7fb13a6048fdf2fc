"""`pokerctl seat ...` against the services (in process, real gRPC and NATS): every seat
command, its output, refusals and bad arguments. Each command sends the player's token
(``--token``, the identity provider's) and the seat token (``--seat-token``)."""

from __future__ import annotations

import asyncio
import json

from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from services.pokerctl.cli import main


async def pokerctl(capsys, *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, list(argv))
    out, err = capsys.readouterr()
    return code, out, err


async def test_seat_commands(stack, table_stub, capsys, monkeypatch):
    monkeypatch.setenv("POKER_TLS_DIR", str(stack.tls_dir))  # the stack's CA, as a client
    settings = tpb.TableSettings(game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_NO_LIMIT,
                                 small_blind=1, big_blind=2)
    await table_stub.CreateTable(tpb.CreateTableRequest(table_id="cli", settings=settings,
                                                        command_id="c"))
    tokens = {}
    for seat in (1, 2):
        await stack.deposit(f"p{seat}", 110)  # the buy-in and a top-up of 10
        reply = await table_stub.SitDown(tpb.SitDownRequest(
            table_id="cli", seat=seat, buy_in=100, command_id=f"s{seat}"))
        tokens[seat] = reply.seat_token
    on_turn = (await table_stub.GetState(tpb.ViewRequest(table_id="cli"))).to_act

    def seat_args(seat: int, *rest: str, token: str | None = None) -> list[str]:
        """A command for ``seat`` as its player (``token``: another token; "": none)."""
        token = stack.token(f"p{seat}") if token is None else token
        return ["seat", *rest, "--table", "cli", "--seat", str(seat), "--seat-token",
                tokens[seat], *(("--token", token) if token else ()),
                "--table-addr", stack.addresses["table"]]

    code, out, _ = await pokerctl(capsys, *seat_args(on_turn, "disconnect"))
    assert code == 0 and f"seat {on_turn} p{on_turn}: " in out and "disconnected" in out
    assert "on the clock" in out and "s left" in out
    code, out, _ = await pokerctl(capsys, *seat_args(on_turn, "reconnect", "--json"))
    view = json.loads(out)["view"]
    assert code == 0 and view["clockBonus"] is True and view["deadlineUnixMs"]

    code, out, _ = await pokerctl(capsys, *seat_args(1, "sit-out"))
    assert code == 0 and "sitting out" in out
    code, _, err = await pokerctl(capsys, *seat_args(1, "sit-out"))
    assert code == 1 and "FAILED_PRECONDITION" in err and "already sitting out" in err
    code, out, _ = await pokerctl(capsys, *seat_args(1, "return", "--post-big-blind"))
    assert code == 0 and "playing" in out

    code, _, err = await pokerctl(capsys, *seat_args(2, "top-up", "--amount", "10"))
    assert code == 1 and "between hands" in err  # seat 2 is in the hand
    code, _, err = await pokerctl(capsys, *seat_args(2, "top-up"))
    assert code == 2 and "--amount" in err

    code, _, err = await pokerctl(capsys, "seat", "leave", "--table", "cli", "--seat", "2",
                                  "--seat-token", "not-the-token", "--token", stack.token("p2"),
                                  "--table-addr", stack.addresses["table"])
    assert code == 1 and "PERMISSION_DENIED" in err
    # the seat's own token, but another player's identity: not their seat
    code, _, err = await pokerctl(capsys, *seat_args(2, "leave", token=stack.token("p1")))
    assert code == 1 and "PERMISSION_DENIED" in err and "seat 2" in err
    # no identity, or one that is not a token: refused before anything is sent
    monkeypatch.delenv("POKER_TOKEN", raising=False)
    code, _, err = await pokerctl(capsys, *seat_args(2, "leave", token=""))
    assert code == 2 and "--token" in err and "POKER_TOKEN" in err
    code, _, err = await pokerctl(capsys, *seat_args(2, "leave", token="not a jwt"))
    assert code == 2 and "--token" in err
    # a token that does not verify: the service says so
    code, _, err = await pokerctl(capsys, *seat_args(2, "leave", token=stack.token("p2") + "x"))
    assert code == 1 and "UNAUTHENTICATED" in err

    # Both leave: the hand is folded for the leaver, the seats free, the table waits.
    code, out, _ = await pokerctl(capsys, *seat_args(on_turn, "leave"))
    assert code == 0
    other = 3 - on_turn
    view = await table_stub.GetState(tpb.ViewRequest(table_id="cli"))
    stack_before = next(s.stack for s in view.seats if s.seat == other)
    assert stack_before > 100 and view.phase == "done"  # won the blinds; no next hand
    code, out, _ = await pokerctl(capsys, *seat_args(other, "top-up", "--amount", "10"))
    assert code == 0  # between hands now
    # (the view shows the ended hand's stacks until the next hand: read the fold instead)
    lt = await stack.keeper.repo.load("cli")
    assert lt.state.seat(other).stack == stack_before + 10
    # both tokens from the environment (out of the process list)
    monkeypatch.setenv("POKER_TOKEN", stack.token(f"p{other}"))
    monkeypatch.setenv("POKER_SEAT_TOKEN", tokens[other])
    code, out, _ = await pokerctl(capsys, "seat", "leave", "--table", "cli", "--seat",
                                  str(other), "--table-addr", stack.addresses["table"])
    assert code == 0 and "empty (left)" in out
