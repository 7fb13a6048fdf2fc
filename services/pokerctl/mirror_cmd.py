"""`pokerctl mirror sync|check [--from URL] --to URL [--json]`: keep an independent copy of the
event log (another NATS JetStream, its own store) and reconcile it with the primary.

The copy goes to the mirror's own stream, POKER_MIRROR (a sharded primary's: POKER_MIRROR_S<k>
for each shard stream POKER_S<k>, shared/infra/mirror.py). A target
that holds the primary log itself (the primary's server under any address) or a mirror of
another log is refused before anything is read or written.

--from: the primary (default POKER_NATS_URL, else `pokerctl up`'s NATS as its reader).
--to: the mirror (default POKER_MIRROR_URL); under deploy/'s accounts, as the poker-mirror
user, which may write that stream only.

Exit (failures.py) 0: reconciled; 1: the two differ (each difference is named) or the target
was refused; 2: bad usage; 4: a server could not be reached (after a few seconds of attempts:
one line on stderr naming it and what to check) or read. --json prints one JSON object on stdout and nothing else
there (an error's line goes to stderr as well).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from shared.infra.eventstore import MIRROR_STREAM, StoreError
from shared.infra.mirror import MirrorRefused, copy_new, reconcile
from shared.infra.natsconn import NatsUnreachable, redact

from .bots_cmd import connect_store
from .datadir import NATS_HELP, default_nats_url
from .failures import FAILED, UNREACHABLE, USAGE, unreachable_line

MIRROR_URL_ENV = "POKER_MIRROR_URL"


async def _run(args: argparse.Namespace) -> tuple[int, dict]:
    """(exit code, what to report)."""
    primary = await connect_store(args.source, name="pokerctl-mirror")
    try:
        mirror = await connect_store(args.to, stream=MIRROR_STREAM, name="pokerctl-mirror")
    except BaseException:
        await primary.close()
        raise
    out: dict = {}
    try:
        if args.action == "sync":
            report = await copy_new(primary, mirror)
            out["copied"] = report.copied
            if len(report.positions) > 1:  # a sharded log: a sequence per stream
                out["positions"] = report.positions
            else:
                out["last_source_seq"] = report.last_source_seq
        result = await reconcile(primary, mirror)
        out.update(ok=result.ok, tables=len(result.primary), mirror_tables=len(result.mirror),
                   differences=result.differences)
        return (0 if result.ok else 1), out
    finally:
        await mirror.close()
        await primary.close()


def _print_text(out: dict) -> None:
    if "positions" in out:
        held = ", ".join(f"{stream} up to sequence {seq}"
                         for stream, seq in out["positions"].items())
        print(f"copied {out['copied']} commits; the mirror holds {held}")
    elif "copied" in out:
        print(f"copied {out['copied']} commits; the mirror holds the primary up to sequence "
              f"{out['last_source_seq']}")
    print(f"{out['tables']} tables in the primary, {out['mirror_tables']} in the mirror: "
          + ("reconciled (commit counts and digests match)" if out["ok"] else "DIFFERENT"))
    for line in out["differences"]:
        print(f"  {line}")


def run(args: argparse.Namespace) -> int:
    if not args.to:
        print(f"pokerctl mirror: say where the mirror is: --to URL (or {MIRROR_URL_ENV})",
              file=sys.stderr)
        return USAGE
    line, failed = "", False
    try:
        code, out = asyncio.run(_run(args))
    except MirrorRefused as exc:
        code, out, failed = FAILED, {"ok": False, "refused": str(exc)}, True
    except StoreError as exc:
        code, out, failed = UNREACHABLE, {"ok": False, "error": str(exc)}, True
    except NatsUnreachable as exc:
        flag = "--from, or POKER_NATS_URL" if exc.url == redact(args.source) else \
            f"--to, or {MIRROR_URL_ENV}"
        line = unreachable_line("pokerctl mirror", exc, flag)
        code, out, failed = UNREACHABLE, {"ok": False, "error": str(exc),
                                          "unreachable": exc.url}, True
    if args.json:
        print(json.dumps(out), flush=True)
    elif not failed:
        _print_text(out)
    if failed:
        what = "refused" if "refused" in out else "error"
        print(line or f"pokerctl mirror: {what}: {out.get('refused') or out.get('error')}",
              file=sys.stderr)
    return code


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("mirror", help=help)
    p.add_argument("action", choices=("sync", "check"),
                   help="sync: copy what is new, then reconcile; check: reconcile only")
    p.add_argument("--from", dest="source", default=default_nats_url(),
                   help="the primary: " + NATS_HELP)
    p.add_argument("--to", default=os.environ.get(MIRROR_URL_ENV),
                   help=f"the mirror's NATS URL (default {MIRROR_URL_ENV})")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(run=run)
