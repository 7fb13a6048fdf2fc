"""CPU time by process, read from /proc/<pid>/stat (Linux): what each process of a LocalCluster
(every service, every nats-server node) and this client spend per action.

    pids = cluster_pids(cluster)      # {"table": 123, ..., "nats": 120} (or "nats-1", ...)
    before = sample(pids)             # {"table": 1.23, ..., "client": 0.40}: CPU seconds
    ...                               # the measurement window
    ms = per_action_ms(before, sample(pids), actions)   # {"table": 0.61, ...}

utime + stime of a process cover all of its threads (gRPC's and the event loop's alike); a
process that has exited reads as missing, not as zero. The client is this process
(time.process_time, finer than the clock ticks of /proc).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping

from shared.infra.services import callers_of

#: clock ticks per second, the unit of utime and stime in /proc/<pid>/stat
CLK_TCK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

#: the services in the order the tables print them (those a hand runs through: the table
#: service, then its peers, in the registry's order, shared/infra/services.py); nats node(s)
#: and the client follow
SERVICE_ORDER = ("table", *callers_of("table"))
CLIENT = "client"


def parse_stat_ticks(text: str) -> int:
    """utime + stime (clock ticks) from the text of /proc/<pid>/stat. The command name, the
    second field, is in parentheses and may itself hold spaces and parentheses: the fields
    are counted from the last ')'. utime and stime are fields 14 and 15 (1-based)."""
    close = text.rfind(")")
    if close < 0:
        raise ValueError("not a /proc/<pid>/stat line: no ')' after the command name")
    rest = text[close + 1:].split()  # rest[0] is field 3 (state)
    if len(rest) < 13:
        raise ValueError(f"not a /proc/<pid>/stat line: {len(rest) + 2} fields")
    return int(rest[11]) + int(rest[12])


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user + system) process ``pid`` has used so far; None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return parse_stat_ticks(f.read()) / CLK_TCK
    except (FileNotFoundError, ProcessLookupError):
        return None


def cluster_pids(cluster) -> dict[str, int]:
    """Every process of a ``services.pokerctl.up.LocalCluster``, by name: its services (and
    replicas, "dealer-2", ...) and its nats-server node(s): "nats" alone, else "nats-1", ..."""
    names = list(cluster.procs)
    nodes = list(getattr(cluster, "nodes", []))
    names += ["nats"] if len(nodes) <= 1 else [n.name for n in nodes]
    pids = {name: cluster.pid(name) for name in names}
    return {name: pid for name, pid in pids.items() if pid is not None}


def running_pid(cluster, name: str) -> int:
    """The process id of ``name`` in a started ``LocalCluster``; RuntimeError if it has none
    (not started, or stopped)."""
    pid = cluster.pid(name)
    if pid is None:
        raise RuntimeError(f"{name} is not running in this cluster")
    return pid


def sample(pids: Mapping[str, int]) -> dict[str, float]:
    """CPU seconds so far of every process in ``pids``, and of this one as "client"."""
    out = {name: s for name, pid in pids.items() if (s := cpu_seconds(pid)) is not None}
    out[CLIENT] = time.process_time()
    return out


def per_action_ms(before: Mapping[str, float], after: Mapping[str, float],
                  actions: int) -> dict[str, float]:
    """Milliseconds of CPU per action of each process sampled both times (none: no actions)."""
    if actions <= 0:
        return {}
    return {name: (after[name] - before[name]) * 1e3 / actions
            for name in before if name in after}


def is_nats(name: str) -> bool:
    return name == "nats" or name.startswith("nats-")


def server_total(ms: Mapping[str, float]) -> float:
    """The services and NATS together (the client excluded): the issue's CPU per action."""
    return sum(v for name, v in ms.items() if name != CLIENT)


def group(ms: Mapping[str, float], columns: Iterable[str]) -> dict[str, float]:
    """``ms`` folded into ``columns``: a service's replicas ("dealer-2") count with it and
    every nats node with "nats"; what no column names is dropped."""
    columns = list(columns)
    out = dict.fromkeys(columns, 0.0)
    for name, v in ms.items():
        key = "nats" if is_nats(name) else name.split("-")[0] if name != CLIENT else name
        if key in out:
            out[key] += v
    return out
