"""`pokerctl checkpoint`: the latest signed checkpoint of the hands' Merkle log.

    pokerctl checkpoint [--out FILE] [--nats URL] [--json]

Prints the latest checkpoint the notary stored (POKER_CHECKPOINTS, shared/tlog/store.py) as
it is, a c2sp.org/tlog-checkpoint signed note: origin, tree size, base64 root hash, a blank
line, the notary's signature and any witnesses' cosignatures; --out writes it to FILE instead
(the file `pokerctl audit --checkpoint FILE` and `pokerctl witness verify FILE` take). --json:
origin, size, root and the signature lines' names. Exit (failures.py) 3 when there is no
checkpoint yet, 1 when the stored one does not parse, 4 when the server cannot be read.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from shared.infra.eventstore import StoreError
from shared.tlog.note import NoteError, SignedCheckpoint
from shared.tlog.store import latest_checkpoint

from .bots_cmd import connect_store
from .datadir import default_nats_url
from .failures import FAILED, NOT_FOUND, read_exit, reports_unreachable


async def _latest(url: str) -> str | None:
    store = await connect_store(url, 3.0, None, name="pokerctl-checkpoint")
    try:
        return await latest_checkpoint(store.js)
    finally:
        await store.close()


@reports_unreachable("pokerctl checkpoint")
def run(args: argparse.Namespace) -> int:
    try:
        text = asyncio.run(_latest(args.nats))
    except (TimeoutError, StoreError, OSError) as exc:
        print(f"pokerctl checkpoint: {exc}", file=sys.stderr)
        return read_exit(exc)
    if text is None:
        print("pokerctl checkpoint: no checkpoint yet (the notary signs one every "
              "POKER_CHECKPOINT_S seconds once a hand has ended)", file=sys.stderr)
        return NOT_FOUND
    try:
        signed = SignedCheckpoint.parse(text)
    except NoteError as exc:
        print(f"pokerctl checkpoint: the stored checkpoint does not parse: {exc}",
              file=sys.stderr)
        return FAILED
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text)
        print(f"checkpoint of size {signed.checkpoint.size} written to {args.out}",
              file=sys.stderr)
    elif args.json:
        cp = signed.checkpoint
        print(json.dumps({"origin": cp.origin, "size": cp.size,
                          "root": text.split("\n")[2],
                          "signatures": [s.name for s in signed.note.signatures]}))
    else:
        sys.stdout.write(text)
    return 0


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("checkpoint", help=help)
    p.add_argument("--out", default=None, metavar="FILE", help="write it to FILE")
    p.add_argument("--json", action="store_true", help="origin, size, root, signers")
    p.add_argument("--nats", default=default_nats_url("poker-reader"),
                   help="NATS URL (default POKER_NATS_URL, else the NATS of `pokerctl up` as "
                        "its reader)")
    p.set_defaults(run=run)
