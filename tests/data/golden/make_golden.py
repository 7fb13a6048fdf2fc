"""Make a golden log: a stream written by today's code, kept as a test fixture that every later
version of the code must fold, audit and render the same histories from
(tests/integration/test_golden_log.py; README.md here says what it is and the rule).

Run by hand, never by the tests:

    python -m tests.data.golden.make_golden                  # into tests/data/golden/
    python -m tests.data.golden.make_golden --out tests/data/golden/v2   # a new fixture

It starts a LocalCluster (`pokerctl up`'s: nats-server from the wheel, every service as its
own process) in a temporary directory, plays a few hands at one table of every game and
betting structure with bots (a fixed seed for their choices; the cards are the dealer's and
differ per run), lets every bot leave (its chips cashed out to its wallet), waits until the
log is still (no hand running, no money with the wallet unsettled), then writes into the
fixture directory:

- ``log.jsonl``: every commit of the log exactly as stored (`pokerctl audit --all --export`'s
  format, shared/audit/export.py), written by the exporter's own code (audit_read.read_stream,
  dump_lines);
- ``compliance.key``: the test-only compliance private key the cluster's dealer sealed every
  hand to (the file `ComplianceKeyring.from_files` reads);
- ``expected/<table>/``: what :func:`derive` makes of those two files alone (read back from
  the disk, not from what the cluster said): the fold's summary, the audit's verdict and
  counts, and the histories in every format of `pokerctl history`;
- ``README.md``: the code version (``git rev-parse HEAD``) and how it was made.

An existing fixture is never overwritten (the rule in README.md): a new one goes into a new
directory.

:func:`derive` and the functions it is made of are also what the test checks the fixture
with: they take only a table's commits and the key, and read them through the repository's
own code (the fold, the auditor, `pokerctl history`'s reader and renderer).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

from shared.audit import TableAudit, audit_table
from shared.audit.export import dump_lines, load_lines
from shared.infra.eventstore import Stored
from shared.infra.repository import LoadedTable, fold_commit
from shared.infra.secrecy import ComplianceKeyring
from shared.poker.options import stakes_of

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
LOG = "log.jsonl"
KEY = "compliance.key"
EXPECTED = "expected"

SEED = 19  # the bots' choices (threat 19)
HANDS = 3
SEATS = 4
RUN_ID = "golden"  # table ids: holdem-FL-golden-1, ...
#: the seat whose own view (`pokerctl history --seat`) is kept too
VIEWER = 1

#: what the audit's verdict is compared on: counts of what was checked, none of them timings
AUDIT_FIELDS = ("ok", "commits", "events", "hands", "decisions", "buy_ins", "top_ups",
                "stacks", "rake", "left_with", "decks", "cards", "first_seq", "last_seq",
                "head_hash", "hand_open", "conserved")

#: file name -> (`pokerctl history --format`, --seat)
HISTORIES: dict[str, tuple[str, int | None]] = {
    "history.pokerstars.txt": ("pokerstars", None),
    f"history.seat{VIEWER}.pokerstars.txt": ("pokerstars", VIEWER),
    "history.jsonl": ("json", None),
    "history.phhs": ("phh", None),
}


# --- what is expected of a log: the test reads the fixture through these too ----------------


def keyring(key_file: Path) -> ComplianceKeyring:
    """A fresh compliance keyring (it learns hand keys as a log is read: one per reader)."""
    return ComplianceKeyring.from_files([str(key_file)])


def load_log(path: Path) -> dict[str, list[Stored]]:
    """table -> its commits in stream order, from an export file."""
    tables: dict[str, list[Stored]] = {}
    with open(path, encoding="utf-8") as f:
        for table_id, stored in load_lines(f):
            tables.setdefault(table_id, []).append(stored)
    return tables


def load_rows(path: Path) -> list[tuple[str, Stored]]:
    """Every (table, commit) of an export file, in its order (the stream's)."""
    with open(path, encoding="utf-8") as f:
        return list(load_lines(f))


def _seats(state) -> list[dict]:
    return [{"seat": s.seat, "player_id": s.player_id, "stack": s.stack,
             "sitting_out": s.sitting_out} for s in state.seats]


def state_summary(commits: Sequence[Stored], key_file: Path) -> dict:
    """The repository's fold of the table (shared/infra/repository.fold_commit, commit by
    commit): where it ends (version, events, the chain's head) and the table then, and the
    seats' stacks after every hand."""
    ring = keyring(key_file)
    lt = LoadedTable()
    after_hands = []
    played = 0
    for stored in commits:
        lt = fold_commit(lt, stored, ring)
        if lt.state is not None and lt.state.hands_played > played:  # a hand is over
            played = lt.state.hands_played
            after_hands.append({"hand_no": lt.state.last_hand_no, "seq": stored.seq,
                                "seats": _seats(lt.state)})
    state = lt.state
    assert state is not None, "a table's log opens with TableCreated"
    return {
        "table_id": state.table_id,
        "game": state.options.game.value,
        "structure": state.options.structure.value,
        "stakes": stakes_of(state.options),
        "max_seats": state.options.max_seats,
        "version": lt.seq,
        "commits": len(commits),
        "events": lt.events,
        "head_hash": lt.last_hash.hex(),
        "hands_played": state.hands_played,
        "last_hand_no": state.last_hand_no,
        "button": state.button,
        "hand_running": state.hand_running,
        "seats": _seats(state),
        "open_sagas": [{"kind": g.kind.value, "amount": g.amount, "seat": g.seat}
                       for g in state.sagas],
        "paused": state.paused,
        "closing": state.closing,
        "after_hands": after_hands,
    }


def audit_summary(audit: TableAudit) -> dict:
    out = {k: getattr(audit, k) for k in AUDIT_FIELDS}
    out["failure"] = None if audit.failure is None else str(audit.failure)
    return out


def audit_of(table_id: str, commits: Sequence[Stored], key_file: Path) -> TableAudit:
    """The auditor's verdict on the table (shared/audit.audit_table, the compliance key)."""
    return audit_table(table_id, commits, keyring(key_file))


def histories(commits: Sequence[Stored], key_file: Path) -> dict[str, str]:
    """file name -> the table's finished hands as `pokerctl history` prints them in that
    format (its reader, shared/history/log.table_hands, and its renderer, history_cmd.render,
    with the compliance key)."""
    from services.pokerctl.history_cmd import render
    from shared.history.log import table_hands
    out = {}
    for name, (fmt, seat) in HISTORIES.items():
        records = [r for r in table_hands(commits, keyring(key_file)) if r.complete]
        out[name] = render(records, fmt, seat) if records else ""
    return out


def dumps(obj: object) -> str:
    return json.dumps(obj, indent=1, sort_keys=True) + "\n"


def derive(log_file: Path, key_file: Path) -> dict[str, str]:
    """Every expected file (path under expected/ -> text), from the log and the key alone."""
    out: dict[str, str] = {}
    for table_id, commits in sorted(load_log(log_file).items()):
        out[f"{table_id}/state.json"] = dumps(state_summary(commits, key_file))
        out[f"{table_id}/audit.json"] = dumps(audit_summary(audit_of(table_id, commits,
                                                                     key_file)))
        for name, text in histories(commits, key_file).items():
            out[f"{table_id}/{name}"] = text
    return out


# --- making one --------------------------------------------------------------------------------


async def _still(cluster, table_ids: Iterable[str]) -> bool:
    """Every table's fold at rest: no hand running, nobody seated, no saga open."""
    from shared.infra.eventstore import EventStore
    store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
    try:
        for t in table_ids:
            lt = LoadedTable()
            for s in await store.read(t):
                lt = fold_commit(lt, s)
            st = lt.state
            if st is None or st.hand_running or st.seats or st.sagas:
                return False
        return True
    finally:
        await store.close()


async def _export(cluster) -> tuple[list[tuple[str, Stored]], dict]:
    """Every commit of the log, as `pokerctl audit --all --export` reads it."""
    from services.pokerctl.audit_read import read_stream
    from shared.infra.eventstore import EventStore
    store = await EventStore.connect(cluster.nats_url, create=False, ca=cluster.nats_ca)
    try:
        rows: list[tuple[str, Stored]] = []
        source = await read_stream(store, None, None, rows)
        return rows, source
    finally:
        await store.close()


async def play_and_export(data_dir: Path) -> tuple[list[tuple[str, Stored]], str, list]:
    """(every commit of the log, the compliance private key's text, what was played)."""
    from poker.table.v1 import table_pb2_grpc

    from services.pokerctl.bots_cmd import plan_tables, play_tables
    from services.pokerctl.up import LocalCluster
    from shared.infra.waiting import until

    cluster = LocalCluster(data_dir, base_port=None, log_level="WARNING")
    await cluster.start()
    try:
        plans = plan_tables(run_id=RUN_ID)  # one table of every game and structure
        async with cluster.channel("table") as ch:
            played = await play_tables(table_pb2_grpc.TableServiceStub(ch), plans, HANDS,
                                       SEATS, cluster.sponsor(), seed=SEED, leave=True)
        errors = [(p.plan.table_id, p.error) for p in played if p.error]
        if errors:
            raise SystemExit(f"make_golden: tables failed: {errors}")
        ids = [p.table_id for p in plans]
        await until(lambda: _still(cluster, ids), 60, "log at rest (bots gone, sagas settled)")
        rows, source = await _export(cluster)
        again, _ = await _export(cluster)
        if [(t, s.seq, s.data) for t, s in again] != [(t, s.seq, s.data) for t, s in rows]:
            raise SystemExit("make_golden: the log moved after it was at rest")
        if source.get("problems"):
            raise SystemExit(f"make_golden: the log reads with problems: {source['problems']}")
        if [s.seq for _, s in rows] != list(range(1, len(rows) + 1)):
            # the round trip through a new stream (the test) gives the commits their
            # sequences back only if the stream held these commits and nothing else
            raise SystemExit("make_golden: the stream's sequences have gaps")
        key_text = cluster.key_file.read_text()
        return rows, key_text, [(p.plan.table_id, p.plan.label, p.bots.hands_seen)
                                for p in played]
    finally:
        await cluster.stop()


def _git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() if done.returncode == 0 else f"(git {' '.join(args)} failed)"


def _readme(out: Path, rows: list[tuple[str, Stored]], played: list, derived: dict[str, str],
            notes: list[str]) -> str:
    rev = _git("rev-parse", "HEAD")
    dirty = " (the tree had uncommitted changes)" if _git(
        "status", "--porcelain", "--untracked-files=no") else ""
    made = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    size = (out / LOG).stat().st_size
    tables = "\n".join(f"| `{t}` | {label} | {hands} |" for t, label, hands in played)
    noted = "".join(f"- {n}\n" for n in notes)
    where = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    last = rows[-1][1].seq if rows else 0
    return f"""# Golden log: `{where}`

A stream written by today's code, kept as a test fixture. Every later version of the code
must fold it, audit it and render the same hand histories from it
(`tests/integration/test_golden_log.py`; threat 19, "the log replayed from the start by a
newer version of the code: the same hand histories").

- code version: `{rev}`{dirty}
- made: {made}, by `python -m tests.data.golden.make_golden`

## The rule

**This fixture is never regenerated to make a test pass.** When the test fails, the code
changed how it reads a log it wrote before: fix the code. A deliberate change of the log's
format or of a rendering adds a *new* fixture next to this one
(`python -m tests.data.golden.make_golden --out tests/data/golden/<name>`; the test checks
every directory here holding a `{LOG}`) and both must keep passing: old logs do not go away.

## What is here

- `{LOG}`: every commit of the log, exactly as stored, in stream order, in the format of
  `pokerctl audit --all --export` (`shared/audit/export.py`: JSON lines of table, stream
  sequence, base64 bytes, message id).
  {len(rows)} commits of {len({t for t, _ in rows})} tables, {size:,} bytes. The stream held
  nothing else: its sequences run 1..{last} without a gap, so the commits published again in
  this order into an empty stream get their sequences (the PokerStars hand ids) back.
- `{KEY}`: the compliance private key the cluster's dealer sealed every hand's key to (the
  file `pokerctl keys generate` writes and `--key` / `ComplianceKeyring.from_files` reads).
  **A test-only key, made for the throwaway cluster this log came from: it protects nothing
  real.** Without it the audit cannot open the sealed cards (folded hands, burns, the
  revealed decks) and the histories read `??`.
- `{EXPECTED}/<table>/` ({len(derived)} files): computed from `{LOG}` and `{KEY}` alone
  (`derive` in `make_golden.py`, from the files read back from the disk):
  - `state.json`: the repository's fold (`shared/infra/repository.fold_commit`): the last
    sequence (version), events, the hash chain's head, hands played, the button, the seats
    (none: the bots left), open sagas (none), and the seats after every hand;
  - `audit.json`: `shared/audit.audit_table` with the key: the verdict and the counts checked
    (commits, events, hands, decisions re-decided, decks revealed, cards checked, chips);
  - the histories as `pokerctl history --file {LOG} --table T --key {KEY}` prints them:
    `history.pokerstars.txt` (`--format pokerstars`), `history.seat{VIEWER}.pokerstars.txt`
    (`--seat {VIEWER}`: that player's view), `history.jsonl` (`--format json`) and
    `history.phhs` (`--format phh`).

## How it was made

A `LocalCluster` (`pokerctl up`'s processes, nats-server from the wheel) in a temporary
directory; bots (`services/pokerctl/bots_cmd.play_tables`, seed {SEED}) played {HANDS} hands
with {SEATS} seats at one table of every game and structure
(`plan_tables(run_id="{RUN_ID}")`), then left (cashed out to their wallets); once no hand ran
and no money was unsettled the log was exported and the cluster stopped. The bots' choices
are seeded, the cards are not (the dealer's entropy): another run makes another log, hence
the rule above.

| table | game | hands |
|---|---|---|
{tables}

## Notes

- The histories hold times (the PokerStars header's date in US Eastern time, the JSON's
  `started_at_unix_ms`): they are the commits' own times, read from the log, so the same log
  renders the same bytes on any day. The Eastern time needs the system's time zone database
  (`zoneinfo`, America/New_York).
- The PokerStars hand ids are the commits' stream sequences (in `{LOG}`), the player names
  the bots' ids, the table ids those of `plan_tables(run_id="{RUN_ID}")`: all in the log.
{noted}"""


def notes_of(derived: dict[str, str]) -> list[str]:
    """What the hands hold worth knowing (an all-in, a side pot, a showdown), from the JSON."""
    showdowns = allins = side_pots = 0
    for path, text in derived.items():
        if not path.endswith("/history.jsonl"):
            continue
        for line in text.splitlines():
            hand = json.loads(line)
            showdowns += any(not s.get("mucked") for s in hand["shows"]) and \
                len(hand["shows"]) > 1
            allins += any(a.get("all_in") for st in hand["streets"] for a in st["actions"]) \
                or any(f["all_in"] for f in hand["forced_bets"])
            side_pots += len(hand["pots"]) > 1
    return [f"Hands with a showdown of two hands or more: {showdowns}; with an all-in: "
            f"{allins}; with a side pot: {side_pots}."]


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.data.golden.make_golden",
                                description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=HERE, help="the fixture directory (new)")
    args = p.parse_args(argv)
    out = args.out.resolve()
    if (out / LOG).exists():
        print(f"make_golden: {out / LOG} exists: a golden log is never regenerated (README.md);"
              f" make a new fixture with --out", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="golden-") as tmp:
        rows, key_text, played = asyncio.run(play_and_export(Path(tmp)))
    out.mkdir(parents=True, exist_ok=True)
    with open(out / LOG, "w", encoding="utf-8") as f:
        f.writelines(dump_lines(rows))
    (out / KEY).write_text(key_text)
    derived = derive(out / LOG, out / KEY)  # from the files on the disk alone
    for rel, text in derived.items():
        path = out / EXPECTED / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (out / "README.md").write_text(_readme(out, rows, played, derived, notes_of(derived)))
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"make_golden: {len(rows)} commits of {len(played)} tables; {len(derived)} expected "
          f"files; {size:,} bytes in {out}")
    for line in notes_of(derived):
        print(f"make_golden: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
