"""Failpoints: named places in the code where a test makes a process die, to prove that what
a crash leaves half-done is finished later exactly once (the wallet saga, say).

    POKER_FAILPOINTS="cashier.after_debit=kill,cashier.before_credit=kill"

``kill`` SIGKILLs the process at that point (as kill -9 would); nothing else is an action.

The variable is read with the rest of the process's configuration
(:class:`shared.infra.config.Config` ``.failpoints``, parsed by :func:`parse`, so a bad value
stops the process at start with a message, exit 2), and only :func:`shared.infra.boot.main`
arms them (:func:`arm`): a service run as its own process, which is what the crash tests
start. Services started inside another process (services/stack.py, the test runner) never
arm any: a ``kill`` would take the whole process with it. Unarmed (production), :func:`hit`
is one dictionary lookup on an empty dict.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Mapping

import structlog

log = structlog.get_logger()

VARIABLE = "POKER_FAILPOINTS"

_ARMED: dict[str, str] = {}


def parse(spec: str) -> dict[str, str]:
    """``name=kill,...`` as {name: action}; ValueError naming the variable otherwise."""
    out = {}
    for item in filter(None, (p.strip() for p in spec.split(","))):
        name, _, action = item.partition("=")
        if action != "kill" or not name.strip():
            raise ValueError(f"{VARIABLE}: {item!r}: each item must be NAME=kill (the only "
                             "action is 'kill')")
        out[name.strip()] = action
    return out


def arm(points: Mapping[str, str]) -> None:
    """Arm ``points`` (from :func:`parse`) in this process, replacing any armed before."""
    _ARMED.clear()
    _ARMED.update(points)
    if points:
        log.warning("failpoints armed: this process kills itself at them",
                    failpoints=sorted(points))


def hit(name: str) -> None:
    """The process dies here if the failpoint ``name`` is armed."""
    if _ARMED.get(name) == "kill":
        log.warning("failpoint: killing this process", failpoint=name)
        os.kill(os.getpid(), signal.SIGKILL)
