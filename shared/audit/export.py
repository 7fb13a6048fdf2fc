"""Raw commits as a file, for audits offline: JSON lines, one commit a line,
``{"table": T, "seq": N, "data": base64, "msg_id": M}`` (and ``"source_seq"`` for a mirror's
copy: the primary's sequence; ``"shard"`` for a commit of a shard stream, whose sequences are
that stream's), in stream order, stream by stream. The bytes are the
commits exactly as stored, so the hash chain is checked on what the log held."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Iterator

from shared.infra.eventstore import Stored

FORMAT = "poker-commits/1"


class ExportError(ValueError):
    pass


def dump_lines(rows: Iterable[tuple[str, Stored]]) -> Iterator[str]:
    """A header line, then one line per (table, commit)."""
    yield json.dumps({"format": FORMAT}) + "\n"
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
            shard = row.get("shard")
            yield row["table"], Stored(int(row["seq"]), base64.b64decode(row["data"]),
                                       row.get("msg_id", ""), int(row.get("source_seq", 0)),
                                       None if shard is None else int(shard))
        except ExportError:
            raise
        except Exception as exc:  # noqa: BLE001 - json, key, base64 errors: say where
            raise ExportError(f"line {n} is not an exported commit: {exc!r}") from None
