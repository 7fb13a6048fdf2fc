"""`pokerctl witness`: a witness a regulator runs, and the offline check of a checkpoint.

    pokerctl keys witness DIR --name NAME        # DIR/witness.key, DIR/witness.vkey
    pokerctl witness serve --key DIR/witness.key --log VKEY [--log VKEY...] \\
        --state FILE [--listen 127.0.0.1:7380] [--prefix /]
    pokerctl witness verify FILE [--log-key VKEY] [--witness VKEY...] [--quorum N] [--json]

``serve`` answers c2sp.org/tlog-witness ``POST <prefix>/add-checkpoint`` for the logs whose
keys ``--log`` names (a vkey, or a file holding one; the notary's is `pokerctl up`'s
DATA/keys/notary.vkey): it cosigns a checkpoint only if its consistency proof shows it extends
the last one it cosigned for that log (409 with its size if the request starts from another
size, 422 for a proof that does not verify or a split view: another tree of a size it
cosigned), recording the new checkpoint in --state (written and synced, atomically, before it
answers). ``GET <prefix>/<sha256 hex of the origin>/checkpoint`` serves the last one it
cosigned. The notary is told of the witness by POKER_WITNESSES=URL=VKEY (URL the prefix,
http://127.0.0.1:7380; VKEY the witness's vkey file's content).

``verify`` checks a checkpoint offline: the notary's signature (--log-key, default
POKER_NOTARY_VKEY or `pokerctl up`'s) and a cosignature of each --witness (or of --quorum of
them); prints the tree's size and root and each cosignature's time. Exit 0 if it holds, 1 if
not, 2 for bad arguments.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from shared.tlog.note import NoteError, SignedCheckpoint, Signer

from .failures import USAGE
from .tlog_args import add_log_key_arguments, log_key, vkey, witness_keys


def _serve(args: argparse.Namespace) -> int:
    from shared.tlog.witness import Witness, serve
    try:
        signer = Signer.parse(Path(args.key).read_text())
        logs = [vkey(v) for v in args.log]
    except (OSError, NoteError) as exc:
        print(f"pokerctl witness: {exc}", file=sys.stderr)
        return USAGE
    if not logs:
        print("pokerctl witness: --log VKEY names a log to witness (at least one)",
              file=sys.stderr)
        return USAGE
    host, _, port = args.listen.rpartition(":")
    try:
        witness = Witness(signer, logs, Path(args.state))
        server = serve(witness, host or "127.0.0.1", int(port), args.prefix)
    except (NoteError, OSError, ValueError) as exc:
        print(f"pokerctl witness: {exc}", file=sys.stderr)
        return USAGE
    bound = server.server_address
    # typeshed types server_address as any address a socket accepts (bytes too); once bound,
    # socketserver sets it to getsockname(), (str host, port) for this TCP server
    print(f"witness {signer.name} ({signer.verifier.vkey}) at "
          f"http://{bound[0]}:{bound[1]}"  # type: ignore[str-bytes-safe]
          f"{args.prefix.rstrip('/')}/add-checkpoint, for "
          + ", ".join(v.name for v in logs), flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        witness.close()
    return 0


def _verify(args: argparse.Namespace) -> int:
    try:
        signed = SignedCheckpoint.parse(Path(args.file).read_bytes())
        key = log_key(args)
        witnesses = witness_keys(args)
    except (OSError, NoteError) as exc:
        print(f"pokerctl witness verify: {exc}", file=sys.stderr)
        return USAGE
    quorum = len(witnesses) if args.quorum is None else args.quorum
    if not 0 <= quorum <= len(witnesses):
        print(f"pokerctl witness verify: --quorum is from 0 to the {len(witnesses)} "
              f"--witness keys given", file=sys.stderr)
        return USAGE
    problems, cosigned = [], {}
    try:
        signed.verify(key)
    except NoteError as exc:
        problems.append(str(exc))
    for w in witnesses:
        try:
            cosigned[w.name] = signed.cosigned_by(w)
        except NoteError as exc:
            problems.append(str(exc))
    if len(cosigned) < quorum and not problems:
        problems.append(f"{len(cosigned)} cosignature(s), {quorum} needed")
    ok = not problems if quorum == len(witnesses) else \
        (len(cosigned) >= quorum and all("cosignature" in p for p in problems))
    cp = signed.checkpoint
    root = signed.note.text.split("\n")[2]
    if args.json:
        print(json.dumps({"ok": ok, "origin": cp.origin, "size": cp.size, "root": root,
                          "cosigned": cosigned, "problems": problems}))
    else:
        print(f"{cp.origin} size {cp.size} root {root}")
        for name, t in cosigned.items():
            print(f"cosigned by {name} at {t}")
        for p in problems:
            print(f"FAIL: {p}")
        print("checkpoint " + ("verified" if ok else "NOT verified"))
    return 0 if ok else 1


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    p = sub.add_parser("witness", help=help)
    wsub = p.add_subparsers(dest="witness_command", required=True)
    s = wsub.add_parser("serve", help="cosign checkpoints that extend the last one cosigned "
                                      "(c2sp.org/tlog-witness add-checkpoint, over HTTP)")
    s.add_argument("--key", required=True, metavar="FILE",
                   help="the witness's signing key (`pokerctl keys witness DIR --name N`)")
    s.add_argument("--log", action="append", default=[], metavar="VKEY",
                   help="a log's key (vkey or file; its name is the log's origin); repeatable")
    s.add_argument("--state", required=True, metavar="FILE",
                   help="where the last checkpoint cosigned per log is kept")
    s.add_argument("--listen", default="127.0.0.1:7380", metavar="HOST:PORT")
    s.add_argument("--prefix", default="/", help="the URL prefix (default /)")
    s.set_defaults(run=_serve)
    v = wsub.add_parser("verify", help="check a checkpoint's signature and cosignatures "
                                       "offline")
    v.add_argument("file", metavar="FILE", help="a checkpoint (`pokerctl checkpoint --out`)")
    add_log_key_arguments(v)
    v.add_argument("--quorum", type=int, default=None, metavar="N",
                   help="cosignatures needed among the --witness keys (default: all)")
    v.add_argument("--json", action="store_true")
    v.set_defaults(run=_verify)
