"""`pokerctl mirror sync|check --from URL --to URL`: keep an independent copy of the event
log (another NATS JetStream, its own store) and reconcile it with the primary."""

from __future__ import annotations

import argparse
import asyncio
import json

from shared.infra.eventstore import EventStore, StoreError
from shared.infra.mirror import copy_new, reconcile

from .bots_cmd import connect_store
from .up import default_nats_url


async def _run(args: argparse.Namespace) -> int:
    primary = await connect_store(args.source)
    try:
        mirror = await EventStore.connect(args.to, name="pokerctl-mirror")
    except StoreError as exc:
        await primary.close()
        print(f"error: {exc}")
        return 2
    try:
        if args.action == "sync":
            report = await copy_new(primary, mirror)
            print(f"copied {report.copied} commits; the mirror holds the primary up to "
                  f"sequence {report.last_source_seq}")
        result = await reconcile(primary, mirror)
        if args.json:
            print(json.dumps({"ok": result.ok, "tables": len(result.primary),
                              "differences": result.differences}))
        else:
            print(f"{len(result.primary)} tables in the primary, {len(result.mirror)} in the "
                  f"mirror: " + ("reconciled (commit counts and digests match)" if result.ok
                                 else "DIFFERENT"))
            for line in result.differences:
                print(f"  {line}")
        return 0 if result.ok else 1
    finally:
        await mirror.close()
        await primary.close()


def run(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(_run(args))
    except StoreError as exc:
        print(f"error: {exc}")
        return 2


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mirror", help="copy the event log to an independent store; reconcile")
    p.add_argument("action", choices=("sync", "check"),
                   help="sync: copy what is new, then reconcile; check: reconcile only")
    p.add_argument("--from", dest="source", default=default_nats_url(),
                   help="the primary's NATS URL (default POKER_NATS_URL or %(default)s)")
    p.add_argument("--to", required=True, help="the mirror's NATS URL")
    p.add_argument("--json", action="store_true")
    p.set_defaults(run=run)
