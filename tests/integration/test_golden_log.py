"""A golden log (threat 19: the log replayed from the start by a newer version of the code
gives the same hand histories): a stream written by an earlier version of the code, kept in
tests/data/golden/ with the compliance key that opens its cards and what that version made of
it (tests/data/golden/README.md; made once by ``python -m tests.data.golden.make_golden``, and
never regenerated to make this test pass).

For every fixture (tests/data/golden/ and any directory in it holding a log.jsonl) and every
table of its log, today's code:

- folds it (the repository's fold) to the same summary: version, events, chain head, seats;
- audits it (shared/audit with the key): it passes, with the same counts checked;
- renders the same histories, byte for byte, in every format of `pokerctl history`, through
  the library and through the command line reading the export file;
- publishes the commits into a real nats-server through the event store the services use and
  reads them back with ``EventStore.read``: the same bytes, the same sequences, the same fold
  and histories (today's store reads yesterday's log);
- and a byte changed in any commit's events is caught: by the audit or by a comparison.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from pathlib import Path

import pytest

from services.pokerctl.cli import main as pokerctl
from shared.infra.commits import parse_commit
from shared.infra.eventstore import EventStore, Stored
from tests.data.golden import make_golden as golden

GOLDEN = Path(golden.__file__).resolve().parent
FIXTURES = [d for d in [GOLDEN, *sorted(p for p in GOLDEN.iterdir() if p.is_dir())]
            if (d / golden.LOG).is_file()]
#: (fixture, table) for every table a fixture expects something of
TABLES = [(d, t.name) for d in FIXTURES for t in sorted((d / golden.EXPECTED).iterdir())]


def _id(value: object) -> str:
    return value.name if isinstance(value, Path) else str(value)


def _rel(path: Path) -> str:
    return str(path.relative_to(GOLDEN.parents[2]))


def same_text(got: str, path: Path) -> None:
    """``got`` is the file's bytes exactly; else fail with a unified diff of the first
    difference (the header and the first hunk)."""
    want = path.read_bytes()
    if got.encode("utf-8") == want:
        return
    old = want.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = got.splitlines(keepends=True)
    shown: list[str] = []
    for line in difflib.unified_diff(old, new, fromfile=f"{_rel(path)} (expected)",
                                     tofile="today's code", n=3):
        if line.startswith("@@") and any(x.startswith("@@") for x in shown):
            shown.append("... (more differences follow)\n")
            break
        shown.append(line if line.endswith("\n") else line + "\n\\ no newline at the end\n")
    if not any(x.startswith("@@") for x in shown):  # same lines: a byte the diff hides
        at = next((i for i, (a, b) in enumerate(zip(want, got.encode())) if a != b),
                  min(len(want), len(got.encode())))
        shown.append(f"the bytes differ first at offset {at} ({len(want)} expected, "
                     f"{len(got.encode())} now)\n")
    pytest.fail(f"{_rel(path)} is not what today's code makes of the golden log:\n"
                + "".join(shown), pytrace=False)


_logs: dict[Path, dict[str, list[Stored]]] = {}


def log_of(fixture: Path) -> dict[str, list[Stored]]:
    """table -> its commits (read once per fixture; Stored is immutable)."""
    if fixture not in _logs:
        _logs[fixture] = golden.load_log(fixture / golden.LOG)
    return _logs[fixture]


def key_of(fixture: Path) -> Path:
    return fixture / golden.KEY


def expected(fixture: Path, table: str, name: str) -> Path:
    return fixture / golden.EXPECTED / table / name


# --- the fixture ---------------------------------------------------------------------------


def test_there_is_a_golden_log():
    assert GOLDEN in FIXTURES, f"no {golden.LOG} in {GOLDEN}: the golden log is missing"


@pytest.mark.parametrize("fixture", FIXTURES, ids=_id)
def test_the_fixture_is_whole(fixture):
    """Every table of the log has its expected files, and only those; the key opens it."""
    tables = log_of(fixture)
    assert sorted(tables) == sorted(t for f, t in TABLES if f == fixture)
    names = {"state.json", "audit.json", *golden.HISTORIES}
    for table in tables:
        held = {p.name for p in (fixture / golden.EXPECTED / table).iterdir()}
        assert held == names, (table, held ^ names)
    assert golden.keyring(key_of(fixture)).key_ids  # a key file the keyring loader reads
    seqs = [s.seq for _, s in golden.load_rows(fixture / golden.LOG)]
    assert seqs == list(range(1, len(seqs) + 1)), "the stream's sequences, without a gap"
    size = sum(p.stat().st_size for p in fixture.rglob("*") if p.is_file())
    assert size < 1_000_000, f"{size:,} bytes: keep the golden log modest"


# --- today's code reads it -------------------------------------------------------------------


@pytest.mark.parametrize(("fixture", "table"), TABLES, ids=_id)
def test_the_fold_is_the_same(fixture, table):
    summary = golden.state_summary(log_of(fixture)[table], key_of(fixture))
    same_text(golden.dumps(summary), expected(fixture, table, "state.json"))


@pytest.mark.parametrize(("fixture", "table"), TABLES, ids=_id)
def test_the_audit_passes_with_the_same_counts(fixture, table):
    audit = golden.audit_of(table, log_of(fixture)[table], key_of(fixture))
    assert audit.ok, str(audit.failure)
    assert audit.conserved and not audit.hand_open
    assert audit.hands > 0 and audit.cards > 0 and audit.decks == audit.hands
    same_text(golden.dumps(golden.audit_summary(audit)), expected(fixture, table, "audit.json"))


@pytest.mark.parametrize("name", list(golden.HISTORIES))
@pytest.mark.parametrize(("fixture", "table"), TABLES, ids=_id)
def test_the_histories_are_the_same(fixture, table, name):
    rendered = golden.histories(log_of(fixture)[table], key_of(fixture))
    assert rendered[name], "every table played hands"
    same_text(rendered[name], expected(fixture, table, name))


@pytest.mark.parametrize("fixture", FIXTURES, ids=_id)
def test_the_command_line_prints_the_same_from_the_export_file(fixture, capsys):
    """`pokerctl history --file` and `pokerctl audit --file` on the golden log itself."""
    log, key = str(fixture / golden.LOG), str(key_of(fixture))
    for table in log_of(fixture):
        for name, (fmt, seat) in golden.HISTORIES.items():
            argv = ["history", "--file", log, "--table", table, "--key", key, "--format", fmt]
            if seat is not None:
                argv += ["--seat", str(seat)]
            assert pokerctl(argv) == 0, capsys.readouterr().err
            same_text(capsys.readouterr().out, expected(fixture, table, name))
    assert pokerctl(["audit", "--file", log, "--key", key, "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] and not report["source"]["problems"]
    fields = [k for k in golden.AUDIT_FIELDS if k != "conserved"]  # a property: not in JSON
    got = {t["table_id"]: {k: t[k] for k in fields} for t in report["tables"]}
    want = {}
    for table in log_of(fixture):
        summary = json.loads(expected(fixture, table, "audit.json").read_text())
        want[table] = {k: summary[k] for k in fields}
    assert got == want


# --- today's store reads yesterday's log -----------------------------------------------------


@pytest.mark.parametrize("fixture", FIXTURES, ids=_id)
async def test_the_log_published_into_a_stream_reads_back_the_same(fixture, store,
                                                                    nats_server):
    """The commits appended in stream order into an empty stream through the event store the
    services use (guarded by the table's last sequence, with their message ids), then read
    back with ``EventStore.read`` on a connection of its own: the same bytes at the same
    sequences, so the same fold, audit and histories (the PokerStars hand ids are the
    sequences)."""
    last: dict[str, int] = {}
    for table, stored in golden.load_rows(fixture / golden.LOG):
        seq, duplicate = await store.append(table, stored.data, last.get(table, 0),
                                            stored.msg_id)
        assert (seq, duplicate) == (stored.seq, False), (table, stored.seq)
        last[table] = seq
    reader = await EventStore.connect(nats_server.url, create=False, name="golden-reader")
    try:
        logs = {table: await reader.read(table) for table in log_of(fixture)}
    finally:
        await reader.close()
    for table, commits in log_of(fixture).items():
        read = logs[table]
        assert [(s.seq, s.data, s.msg_id) for s in read] == \
            [(s.seq, s.data, s.msg_id) for s in commits], table
        key = key_of(fixture)
        same_text(golden.dumps(golden.state_summary(read, key)),
                  expected(fixture, table, "state.json"))
        same_text(golden.dumps(golden.audit_summary(golden.audit_of(table, read, key))),
                  expected(fixture, table, "audit.json"))
        for name, text in golden.histories(read, key).items():
            same_text(text, expected(fixture, table, name))


# --- the test can fail ---------------------------------------------------------------------


def _flipped(stored: Stored) -> Stored:
    """The commit with one byte of its last event's envelope changed (XOR 1): in the middle
    of the envelope's bytes, which the hash chain covers."""
    raw = parse_commit(stored.data).raws[-1]
    at = stored.data.index(raw) + len(raw) // 2
    data = bytearray(stored.data)
    data[at] ^= 0x01
    return dataclasses.replace(stored, data=bytes(data))


def _caught(fixture: Path, table: str, commits: list[Stored]) -> str | None:
    """What catches a change of the table's log: the audit, or a comparison with the
    expected files (None: nothing did)."""
    key = key_of(fixture)
    audit = golden.audit_of(table, commits, key)
    if not audit.ok:
        return f"audit: {audit.failure}"
    if golden.dumps(golden.audit_summary(audit)) != \
            expected(fixture, table, "audit.json").read_text():
        return "the audit's counts"
    try:
        summary = golden.dumps(golden.state_summary(commits, key))
        rendered = golden.histories(commits, key)
    except Exception as exc:  # noqa: BLE001 - CorruptLog, SecrecyError, ...: caught
        return f"fold or render: {exc!r}"
    if summary != expected(fixture, table, "state.json").read_text():
        return "the fold's summary"
    for name, text in rendered.items():
        if text != expected(fixture, table, name).read_text():
            return name
    return None


def test_the_untouched_log_is_not_caught():
    """The check below, on the log as it is, finds nothing (so what it finds is the byte)."""
    fixture, table = TABLES[0]
    assert _caught(fixture, table, log_of(fixture)[table]) is None


def test_a_byte_changed_in_any_commit_is_caught():
    """One byte of one commit's data changed (in memory), commit by commit through a whole
    table (the one with the fewest commits) and at the first, middle and last commit of
    every other: the audit or a comparison fails every time."""
    missed = []
    checked = 0
    for fixture, table in TABLES:
        commits = log_of(fixture)[table]
        smallest = min(log_of(fixture), key=lambda t: len(log_of(fixture)[t]))
        places = range(len(commits)) if table == smallest else \
            sorted({0, len(commits) // 2, len(commits) - 1})
        for i in places:
            tampered = list(commits)
            tampered[i] = _flipped(commits[i])
            assert tampered[i].data != commits[i].data
            checked += 1
            if _caught(fixture, table, tampered) is None:
                missed.append((fixture.name, table, commits[i].seq))
    assert checked > len(TABLES)
    assert not missed, f"a changed byte went unnoticed in commits {missed}"
