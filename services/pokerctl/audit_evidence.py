"""`pokerctl audit --evidence FILE`: verify a hand's evidence file offline (no server, no
compliance key): the file the web's compliance replay downloads (``poker-hand-evidence/v1``,
shared/audit/evidence.py). Its hash chain and links are recomputed from the stored commits,
the hand is audited again from them (the auditor, resumed on the table its earlier commits
fold to), and the whole file is rebuilt: it verifies only if the rebuild is the file byte for
byte and the hand's audit passes.

Exit 0: it verifies and the hand passes; 1: it does not verify (a changed byte, not evidence
at all) or the hand's audit fails; 2: the file cannot be read (failures.py)."""

from __future__ import annotations

import argparse
import json
import sys

from shared.audit.evidence import EvidenceError, verify

from .failures import FAILED, OK, USAGE

PROG = "pokerctl audit --evidence"


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.evidence, "rb") as f:
            data = f.read()
    except OSError as exc:
        print(f"{PROG}: cannot read {args.evidence}: {exc.strerror}", file=sys.stderr)
        return USAGE
    try:
        found = verify(data)
    except EvidenceError as exc:
        print(f"{PROG}: {args.evidence} does not verify: {exc}", file=sys.stderr)
        return FAILED
    if args.json:
        print(json.dumps({"ok": found.ok, "intact": found.intact, "verdict": found.verdict,
                          "problems": found.problems}, indent=1))
    else:
        for p in found.problems:
            print(f"FAIL: {p}")
        v = found.verdict
        what = (f"{v.get('commits', 0)} commits, {v.get('events', 0)} events, "
                f"{v.get('cards', 0)} cards checked against {v.get('decks', 0)} revealed "
                f"decks")
        print(f"evidence {'verifies' if found.ok else 'does NOT verify'}: {what}")
    return OK if found.ok else FAILED
