"""Failpoints: named places in the code where a test makes a process die, to prove that what
a crash leaves half-done is finished later exactly once (the wallet saga, say).

    POKER_FAILPOINTS="cashier.after_debit=kill,cashier.before_credit=kill"

``kill`` SIGKILLs the process at that point (as kill -9 would); nothing else is an action.
Unset (production), :func:`hit` is one dictionary lookup on an empty dict.
"""

from __future__ import annotations

import os
import signal

import structlog

log = structlog.get_logger()


def _parse(spec: str) -> dict[str, str]:
    out = {}
    for item in filter(None, (p.strip() for p in spec.split(","))):
        name, _, action = item.partition("=")
        if action != "kill":
            raise ValueError(f"POKER_FAILPOINTS: {item!r}: the only action is 'kill'")
        out[name] = action
    return out


_ARMED = _parse(os.environ.get("POKER_FAILPOINTS", ""))


def hit(name: str) -> None:
    """The process dies here if the failpoint ``name`` is armed."""
    if _ARMED.get(name) == "kill":
        log.warning("failpoint: killing this process", failpoint=name)
        os.kill(os.getpid(), signal.SIGKILL)
