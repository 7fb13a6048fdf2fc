"""pokerctl: the operator's command line.

Each command lives in its own module, whose ``register(sub)`` adds the command's parser (its
arguments, its subcommands, ``run``); a command returns its process exit code. ``COMMANDS`` is
the one table of commands: name, module and the help line ``pokerctl --help`` lists. A module
is imported only when its command runs (some import gRPC, NATS or the whole audit, which
``pokerctl phh replay`` need not pay for): the command line is parsed twice, first against the
table alone to learn the command, then with that command's real parser.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from typing import NamedTuple


class Command(NamedTuple):
    name: str
    module: str  # in this package; its register(sub) adds the parser named ``name``
    help: str  # its line in `pokerctl --help` (given to the module's register)


COMMANDS: tuple[Command, ...] = (
    Command("up", "up_cmd", "run nats-server and every service here until Ctrl-C"),
    Command("bots", "bots_cmd", "bots play hands at new tables; the log is audited"),
    Command("demo", "demo_cmd", "start everything, bots play every game, audit the log"),
    Command("phh", "phh_cmd", "replay or export hands in the PHH format"),
    Command("table", "table_cmd", "create a table, sit down, act, read and follow a table "
                                  "(a player's or operator's client)"),
    Command("seat", "seat_cmd", "a seated player's commands: sit out, return, top up, "
                                "leave, disconnect, reconnect, commit and reveal a seed"),
    Command("mirror", "mirror_cmd", "copy the event log to an independent store; reconcile"),
    Command("history", "history_cmd", "hand histories of a table from the event log"),
    Command("audit", "audit_cmd", "audit the event log: chain, decisions, decks, chips"),
    Command("keys", "keys_cmd", "the compliance key pair that opens sealed cards; the "
                                "notary's and witnesses' signing keys"),
    Command("checkpoint", "checkpoint_cmd", "print the latest signed checkpoint of the "
                                            "hands' Merkle log"),
    Command("receipt", "receipt_cmd", "a player's receipt for a hand they played; verify one "
                                      "offline"),
    Command("witness", "witness_cmd", "run a witness that cosigns the hands' log's "
                                      "checkpoints; verify a checkpoint offline"),
    Command("certs", "certs_cmd", "the private CA and certificates for mutual TLS"),
    Command("wallet", "wallet_cmd", "the reference wallet's cashier: deposits, withdrawals, "
                                    "balances (as the admin)"),
    Command("tournament", "tournament_cmd", "create, register for, start and follow "
                                           "tournaments (sit-and-gos, multi-table)"),
    Command("token", "token_cmd", "print a token from the embedded setup's identity provider "
                                  "(for a player, an operator, compliance)"),
)


#: the commands that run servers (their logs keep gRPC's own lines)
SERVERS = frozenset({"up", "demo"})


def command_module(command: Command):
    return importlib.import_module(f"{__package__}.{command.module}")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command: ``command``'s from its module (imported now), every
    other one a stand-in with its name and help alone (``None``: stand-ins only, enough to
    list the commands and to tell which one a command line runs)."""
    parser = argparse.ArgumentParser(
        prog="pokerctl", description="Operate the poker table services and their event log.")
    sub = parser.add_subparsers(dest="command", required=True)
    for c in COMMANDS:
        if c.name == command:
            command_module(c).register(sub, help=c.help)
        else:
            sub.add_parser(c.name, help=c.help, add_help=False)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # the stand-ins take no arguments: what follows the command is left for its real parser
    chosen, _ = build_parser().parse_known_args(argv)
    if chosen.command not in SERVERS:
        # gRPC's own log lines (a refused TLS handshake's, four of them) are not a client's to
        # print: the command says what failed in one line of its own (failures.py); set before
        # the command's module brings gRPC in
        os.environ.setdefault("GRPC_VERBOSITY", "NONE")
    args = build_parser(chosen.command).parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
