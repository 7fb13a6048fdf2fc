"""`pokerctl wallet`: the reference wallet's cashier (services/wallet), as the admin.

    pokerctl wallet deposit  --player P --amount N [--key K] [--reference R]
    pokerctl wallet withdraw (--player P | --house) --amount N [--key K] [--reference R]
    pokerctl wallet balance  [--player P | --house] [--json]

A deposit is money into a player's account; a withdrawal money out of it, or the operator
taking the house's rake out. ``balance`` without an account lists every account and the
totals (deposits, withdrawals, the chips on the tables). ``--key``: the idempotency key; the
default is a fresh one, printed on stderr, so that a call whose answer was lost can be retried
with ``--key`` and moves the money once.

--wallet: the wallet's address (default POKER_WALLET_ADDR, else what `pokerctl up` runs:
127.0.0.1 at POKER_BASE_PORT (50050) + 6). TLS: the admin's certificate, POKER_TLS_* (or
POKER_INSECURE=1), else `pokerctl up`'s. Exit 0: done; 1: refused (the status and the reason
on stderr); 2: usage.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid

import grpc
from poker.wallet.v1 import wallet_pb2 as pb
from poker.wallet.v1 import wallet_pb2_grpc

from shared.infra.config import service_address
from shared.infra.tls import sync_channel
from shared.poker.players import printable

from .certs_cmd import client_tls_or_exit
from .failures import USAGE, status_exit

ADDR_ENV = "POKER_WALLET_ADDR"
IDENTITY = "admin"
TIMEOUT_S = 10.0


def default_wallet_addr() -> str:
    """POKER_WALLET_ADDR, else the wallet of `up` (POKER_BASE_PORT + 6): the address the
    services themselves would use (shared/infra/config.service_address)."""
    return service_address("wallet", os.environ)


def _account(args: argparse.Namespace) -> pb.Account | None:
    if getattr(args, "house", False):
        return pb.Account(house=True)
    if args.player is not None:
        return pb.Account(player_id=args.player)
    return None


def _name(account: pb.Account) -> str:
    return "the house" if account.house else printable(account.player_id)


def _as_json(account: pb.Account, balance: int) -> dict:
    who = {"house": True} if account.house else {"player_id": account.player_id}
    return {**who, "balance": balance}


def _move(stub: wallet_pb2_grpc.WalletServiceStub, args: argparse.Namespace) -> None:
    if args.key is None:
        args.key = f"cli-{uuid.uuid4().hex}"
        print(f"idempotency key {args.key} (to retry: --key {args.key})", file=sys.stderr)
    request = pb.Transfer(account=_account(args), amount=args.amount,
                          idempotency_key=args.key, reference=args.reference)
    method = stub.Deposit if args.action == "deposit" else stub.Withdraw
    r = method(request, timeout=TIMEOUT_S)
    if args.json:
        print(json.dumps({**_as_json(r.account, r.balance), "amount": r.amount,
                          "duplicate": r.duplicate, "sequence": r.sequence, "key": args.key}))
        return
    word, way = ("deposit", "to") if args.action == "deposit" else ("withdrawal", "from")
    line = (f"{word} of {r.amount} chips {way} {_name(r.account)}: balance {r.balance} "
            f"(ledger sequence {r.sequence})")
    if r.duplicate:
        line = f"already made with key {args.key}, nothing moved now: {line}"
    print(line)


def _balance(stub: wallet_pb2_grpc.WalletServiceStub, args: argparse.Namespace) -> None:
    account = _account(args)
    if account is not None:
        r = stub.Balance(pb.BalanceRequest(account=account), timeout=TIMEOUT_S)
        print(json.dumps(_as_json(r.account, r.balance)) if args.json
              else f"{_name(r.account)}: {r.balance} chips")
        return
    r = stub.Balances(pb.BalancesRequest(), timeout=TIMEOUT_S)
    total = sum(a.balance for a in r.accounts)
    on_tables = r.deposits - r.withdrawals - total
    if args.json:
        print(json.dumps({"accounts": [_as_json(a.account, a.balance) for a in r.accounts],
                          "deposits": r.deposits, "withdrawals": r.withdrawals,
                          "balances": total, "on_tables": on_tables}))
        return
    names = [_name(a.account) for a in r.accounts]
    width = max((len(n) for n in names), default=0)
    for name, a in zip(names, r.accounts, strict=True):
        print(f"{name:<{width}}  {a.balance}")
    count = f"{len(names)} account" + ("" if len(names) == 1 else "s")
    print(f"{count}; deposits {r.deposits}, withdrawals {r.withdrawals}, balances {total}, "
          f"on the tables {on_tables}")


def run(args: argparse.Namespace) -> int:
    if args.action != "balance" and args.amount <= 0:
        print(f"pokerctl wallet {args.action}: --amount must be a positive number of chips",
              file=sys.stderr)
        return USAGE
    address = args.wallet or default_wallet_addr()
    with sync_channel(address, client_tls_or_exit(IDENTITY), service="wallet") as channel:
        stub = wallet_pb2_grpc.WalletServiceStub(channel)
        try:
            (_balance if args.action == "balance" else _move)(stub, args)
        except grpc.RpcError as exc:
            print(f"pokerctl wallet {args.action}: {exc.code().name}: {exc.details()}",
                  file=sys.stderr)
            return status_exit(exc.code())
    return 0


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("wallet", help=help)
    wsub = p.add_subparsers(dest="action", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--wallet", default=None,
                        help=f"the wallet's address (default {ADDR_ENV}, else 127.0.0.1 at "
                             "POKER_BASE_PORT + 6)")
    common.add_argument("--json", action="store_true", help="one JSON object on stdout")
    moves = argparse.ArgumentParser(add_help=False)
    moves.add_argument("--amount", type=int, required=True, help="whole chips")
    moves.add_argument("--key", default=None,
                       help="idempotency key (default: a fresh one, printed); the same key "
                            "makes a retry harmless")
    moves.add_argument("--reference", default="", help="a note kept in the ledger")

    d = wsub.add_parser("deposit", parents=[common, moves],
                        help="money into a player's account")
    d.add_argument("--player", required=True, metavar="P")
    w = wsub.add_parser("withdraw", parents=[common, moves],
                        help="money out of a player's account, or the house's rake out")
    who = w.add_mutually_exclusive_group(required=True)
    who.add_argument("--player", metavar="P")
    who.add_argument("--house", action="store_true")
    b = wsub.add_parser("balance", parents=[common],
                        help="an account's balance, or every account and the totals")
    one = b.add_mutually_exclusive_group()
    one.add_argument("--player", metavar="P")
    one.add_argument("--house", action="store_true")
    p.set_defaults(run=run)
