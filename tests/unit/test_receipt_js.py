"""The hand page's in-page receipt check (services/web/static/receipt.js) under node, on
receipts made by shared/tlog/receipt.py: a good one passes; a changed card, position, salt,
root or leaf index fails, as the Python verifier says."""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from shared.tlog.hands import HandLeaf
from tests.unit.test_receipt import _card, make

SCRIPT = Path(__file__).resolve().parents[2] / "services" / "web" / "static" / "receipt.js"
NODE = shutil.which("node")


def page_check(receipts: list[str]) -> list:
    """receipt.js's check() of each receipt (null: it verifies, else what fails)."""
    assert NODE, "node is missing (Debian's nodejs)"
    program = (f"const r = require({json.dumps(str(SCRIPT))});"
               "const all = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
               "Promise.all(all.map((x) => r.check(JSON.parse(x))))"
               ".then((v) => console.log(JSON.stringify(v)));")
    done = subprocess.run([NODE, "-e", program], input=json.dumps(receipts), text=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_page_checks_what_the_verifier_checks():
    receipt, deck = make()
    leaf = HandLeaf.parse(receipt.leaf)
    changed = [
        _card(receipt, 0, card=deck[10]),
        _card(receipt, 1, position=7),
        _card(receipt, 2, salt=bytes(16)),
        dataclasses.replace(receipt, leaf=dataclasses.replace(leaf, roots=("ab" * 32,))
                            .encode()),
        dataclasses.replace(receipt, leaf_index=2),
    ]
    verdicts = page_check([receipt.encode(), *(r.encode() for r in changed)])
    assert verdicts[0] is None
    assert all(isinstance(v, str) and v for v in verdicts[1:]), verdicts
    assert "not position" in verdicts[1] and "checkpoint's tree" in verdicts[-1]


@pytest.mark.parametrize("hands", [1, 2, 5, 33])
def test_the_page_checks_trees_of_every_shape(hands):
    for index in sorted({0, hands // 2, hands}):
        receipt, _ = make(other_hands=hands, index=index)
        assert page_check([receipt.encode()]) == [None]
