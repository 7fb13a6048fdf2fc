"""Raw commits as a file, for audits offline: JSON lines, one commit a line,
``{"table": T, "seq": N, "data": base64, "msg_id": M}`` (and ``"source_seq"`` for a mirror's
copy: the primary's sequence; ``"shard"`` for a commit of a shard stream, whose sequences are
that stream's), in stream order, stream by stream. The bytes are the
commits exactly as stored, so the hash chain is checked on what the log held.

A whole-log export (``pokerctl audit --all --export``) then holds the hands' Merkle log
(shared/tlog: POKER_HANDS), one line per leaf in tree order, ``{"leaf": i, "data": base64}``,
so that it is audited offline against a checkpoint as the log is (``--file F --checkpoint
C``). Readers of commits skip those lines."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator

from shared.infra.eventstore import Stored

FORMAT = "poker-commits/1"


class ExportError(ValueError):
    pass


def dump_lines(rows: Iterable[tuple[str, Stored]],
               leaves: Iterable[bytes] = ()) -> Iterator[str]:
    """A header line, one line per (table, commit), then one per leaf of the hands' log."""
    yield json.dumps({"format": FORMAT}) + "\n"
    yield from _commit_lines(rows)
    for i, leaf in enumerate(leaves):
        yield json.dumps({"leaf": i, "data": base64.b64encode(leaf).decode()}) + "\n"


def _commit_lines(rows: Iterable[tuple[str, Stored]]) -> Iterator[str]:
    for table_id, s in rows:
        row = {"table": table_id, "seq": s.seq, "data": base64.b64encode(s.data).decode(),
               "msg_id": s.msg_id}
        if s.source_seq:
            row["source_seq"] = s.source_seq
        if s.shard is not None:
            row["shard"] = s.shard
        yield json.dumps(row) + "\n"


def load_lines(lines: Iterable[str]) -> Iterator[tuple[str, Stored]]:
    """(table, commit) per line of an export; raises ExportError naming a bad line."""
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if "format" in row:
                if row["format"] != FORMAT:
                    raise ExportError(f"line {n}: unknown format {row['format']!r}")
                continue
            if "leaf" in row:  # the hands' log (load_leaves)
                continue
            shard = row.get("shard")
            yield row["table"], Stored(int(row["seq"]), base64.b64decode(row["data"]),
                                       row.get("msg_id", ""), int(row.get("source_seq", 0)),
                                       None if shard is None else int(shard))
        except ExportError:
            raise
        except Exception as exc:  # noqa: BLE001 - json, key, base64 errors: say where
            raise ExportError(f"line {n} is not an exported commit: {exc!r}") from None


def load_leaves(lines: Iterable[str]) -> list[bytes]:
    """The leaves of the hands' log an export holds, in tree order; ExportError naming a line
    that is not a leaf of the next index."""
    out: list[bytes] = []
    for n, line in enumerate(lines, start=1):
        if '"leaf"' not in line:
            continue
        try:
            row = json.loads(line)
            if "leaf" not in row:
                continue
            index, data = int(row["leaf"]), base64.b64decode(row["data"], validate=True)
        except Exception as exc:  # noqa: BLE001 - json, key, base64 errors: say where
            raise ExportError(f"line {n} is not a leaf of the hands' log: {exc!r}") from None
        if index != len(out):
            raise ExportError(f"line {n}: leaf {index} where leaf {len(out)} was due")
        out.append(data)
    return out
