"""A hand's evidence, as a regulator files it: one JSON file (``poker-hand-evidence/v1``) that
holds the hand's commits exactly as stored and is checked offline, with no server and no
compliance key (``pokerctl audit --evidence FILE``; the web's compliance replay serves it).

The hand's commits run from the commit holding its ``HandStarted`` (whose stream sequence the
PokerStars text uses as the hand id) to the commit holding its ``DeckRevealed`` (the hand's
last: shared/tlog/hands.py draws the same line for the hands' Merkle log), or to the log's
end for a hand still running. The file (canonical JSON: sorted keys, indent 1, ASCII, one
final newline) holds:

- ``context``: the table's commits before the hand, as stored (base64), so that the table as
  it stood when the hand started can be folded again (their hash chain is checked by the
  repository's fold, shared/infra/repository.py; their sealed cards stay sealed);
- ``link_before``: the SHA-256 of the last event before the hand (the first commit's
  ``prev_hash``); ``commits``: each commit of the hand as stored (``data``), with what is read
  from it: its sequence, time, who decided it (a player, by the seat their command was for,
  or a service's own step), its events with their amounts, its ``prev_hash`` and ``hash``;
- ``hand_key``: the key of this hand alone (it opens this hand's sealed cards, no other);
  ``reveal``: each deck commitment with the deck and salt revealed and the check;
- ``leaf``: the hand's leaf of the hands' Merkle log (what the notary's signed checkpoints
  cover: the leaf found in a checkpoint pins the hand against a forger); ``verdict``: the
  audit of the hand (shared/audit/auditor.py, resumed on the folded table: every decision
  re-decided, every card against the revealed deck, the chips);
- ``checksum``: the SHA-256 of the canonical file without it (the stream sequences are not in
  the hash chain: the checksum is what catches a changed one).

:func:`verify` builds the file again from what it cannot derive (the stored bytes, the hand
key, the sequences) with the same :func:`build`, and it verifies only if the result is the
file byte for byte: one changed byte anywhere fails, and the first field that differs is
named."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import datetime
import decimal
import enum
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

from shared.infra.codec import BODY_FIELD
from shared.infra.commits import CommitParseError, parse_commit, read_envelopes
from shared.infra.eventstore import Stored
from shared.infra.repository import CorruptLog, LoadedTable, fold_commit
from shared.infra.rpc import CLIENT_PREFIX
from shared.infra.secrecy import HandKey, Keyring
from shared.poker import events as E
from shared.poker.cards import Card, card
from shared.poker.deck import commitment as deck_commitment
from shared.tlog.hands import HandLeaves

from .auditor import TableAuditor

FORMAT = "poker-hand-evidence/v1"


class EvidenceError(ValueError):
    """A file that is not hand evidence (not JSON, another format, a field missing)."""


@dataclass(frozen=True)
class Span:
    """Hand ``hand_no``'s commits in a table's log: ``stored[first:last + 1]``; ``done``:
    its deck is revealed (else the hand runs to the log's end)."""

    first: int
    last: int
    done: bool


def hand_span(table_id: str, stored: Sequence[Stored], hand_no: int) -> Span | None:
    """Where hand ``hand_no`` is in ``stored`` (the table's log in order), as the hands'
    Merkle log draws it (shared/tlog/hands.py); None if it never started there."""
    leaves = HandLeaves(table_id, keep=False)
    first: int | None = None
    for i, s in enumerate(stored):
        try:
            commit, envelopes = read_envelopes(s.data)
        except CommitParseError:
            continue  # the audit names it
        done = leaves.feed(s, commit.events, envelopes)
        if first is None and leaves.open is not None and leaves.open.hand_no == hand_no:
            first = i
        if any(leaf.hand_no == hand_no for leaf in done):
            return Span(i if first is None else first, i, True)
    return None if first is None else Span(first, len(stored) - 1, False)


# --- the commits read -------------------------------------------------------------------------


def jsonable(value: object) -> object:
    """An event's field as JSON: cards as "Ah", enums by value, nested records as objects."""
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, enum.Enum):
        return value.value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    if isinstance(value, (decimal.Decimal, float)):
        return str(value)
    return value


def event_json(event: object) -> dict:
    """One event as the replay shows it: its type (the log's name) and its fields."""
    return {"type": BODY_FIELD.get(type(event), type(event).__name__),
            **jsonable(event)}  # type: ignore[dict-item]


def actor(command_id: str, producer: str, events: Sequence[object],
          names: dict[int, str]) -> dict:
    """Who decided a commit: a client's command (ids under ``c.``, shared/infra/rpc.py) is a
    player's, named by the seat it was for (or the client's scope, an operator's); any other
    is a service's own step (the driver's ``drv:``, the clock's ``timeout:``, the wallet's
    answer), named by the service that appended it."""
    if command_id.startswith(CLIENT_PREFIX):
        seats = [getattr(e, "seat", None) for e in events]
        seat = next((s for s in seats if isinstance(s, int)), None)
        player = next((str(p) for p in (getattr(e, "player_id", "") for e in events) if p), "")
        if seat is None and not player:
            scope = command_id[len(CLIENT_PREFIX):].split(".", 1)[0]
            return {"kind": "client", "name": scope, "service": producer}
        name = (names.get(seat, "") if seat is not None else "") or player
        return {"kind": "player", "seat": seat, "name": name, "service": producer}
    return {"kind": "service", "name": producer, "step": command_id.split(":", 1)[0],
            "service": producer}


def _time(ms: int) -> str:
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.UTC).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")


def stored_json(s: Stored) -> dict:
    """A commit as stored: its sequence(s) and its bytes (base64)."""
    out: dict = {"seq": s.seq, "data": base64.b64encode(s.data).decode()}
    if s.source_seq:
        out["source_seq"] = s.source_seq
    if s.shard is not None:
        out["shard"] = s.shard
    return out


def stored_from(row: dict) -> Stored:
    """:func:`stored_json` read back (EvidenceError if it is not one)."""
    try:
        data = base64.b64decode(row["data"], validate=True)
        seq, source_seq, shard = row["seq"], row.get("source_seq", 0), row.get("shard")
    except (KeyError, TypeError, binascii.Error) as exc:
        raise EvidenceError(f"a commit that is not one ({type(exc).__name__}: {exc})") from None
    if not all(isinstance(v, int) for v in (seq, source_seq)) or \
            not (shard is None or isinstance(shard, int)):
        raise EvidenceError("a commit's sequence is not a number")
    return Stored(seq, data, source_seq=source_seq, shard=shard)


def commit_rows(commits: Sequence[Stored], keyring: Keyring | None,
                names: dict[int, str]) -> list[dict]:
    """Each commit as the replay lists it: sequence, time, who decided it, its events (with
    their amounts, the cards opened with ``keyring``), its first event's ``prev_hash`` and its
    last event's hash, and whether it links to the commit before. ``names``: seat -> player
    at the hand's start (kept up to date with the seats taken meanwhile)."""
    rows: list[dict] = []
    for s in commits:
        row: dict = {**stored_json(s), "events": []}
        try:
            parsed = parse_commit(s.data)
            envelopes = parsed.envelopes()
            decoded = parsed.events(keyring)
            events = [event_json(e) for e in decoded]
        except (CommitParseError, ValueError) as exc:
            rows.append({**row, "unreadable": str(exc)})
            continue
        for e in decoded:
            if isinstance(e, (E.PlayerSeated, E.BuyInRequested)):
                names[e.seat] = e.name or e.player_id
        head = envelopes[0] if envelopes else None
        at = head.occurred_at_unix_ms if head is not None else 0
        row.update(at_unix_ms=at, time=_time(at), events=events,
                   command_id=head.command_id if head is not None else "",
                   actor=actor(head.command_id, head.producer, decoded, names)
                   if head is not None else {},
                   prev_hash=head.prev_hash.hex() if head is not None else "",
                   hash=hashlib.sha256(parsed.raws[-1]).hexdigest() if parsed.raws else "")
        rows.append(row)
    for before, row in zip([None, *rows], rows):
        row["links"] = before is None or row.get("prev_hash") == before.get("hash")
    return rows


def reveal(rows: Sequence[dict]) -> list[dict]:
    """Each deck commitment of the hand's rows with the deck and salt revealed after it, the
    commitment recomputed from them, and whether they match."""
    committed = [e for r in rows for e in r["events"] if e["type"] == "deck_committed"]
    shown = next((e for r in rows for e in r["events"] if e["type"] == "deck_revealed"), None)
    out = []
    for i, c in enumerate(committed):
        row = {"commitment": c["commitment"], "deck": None, "salt": None, "recomputed": None,
               "verified": False}
        if shown is not None and i < len(shown["decks"]) and i < len(shown["salts"]):
            deck, salt = shown["decks"][i], shown["salts"][i]
            again = deck_commitment([card(x) for x in deck], salt)
            row.update(deck=deck, salt=salt, recomputed=again,
                       verified=again == c["commitment"])
        out.append(row)
    return out


# --- the file ---------------------------------------------------------------------------------


class OneHand:
    """A keyring that opens hand ``key.hand_no`` of ``key.table_id`` and nothing else."""

    def __init__(self, key: HandKey | None) -> None:
        self.key = key

    def hand_key(self, table_id: str, hand_no: int) -> HandKey | None:
        k = self.key
        return k if k is not None and (k.table_id, k.hand_no) == (table_id, hand_no) else None

    def learn(self, table_id: str, hand_no: int, key_id: str, wrapped: bytes) -> None:
        return None  # it holds its one key already


def _fold_context(context: Sequence[Stored]) -> tuple[LoadedTable, bool]:
    """The table as its commits before the hand leave it (no key: sealed cards stay so),
    their chain checked; and whether its events carry their command's digest."""
    lt = LoadedTable()
    for s in context:
        lt = fold_commit(lt, s)  # CorruptLog
    digests = False
    if context:
        _, envelopes = read_envelopes(context[-1].data)
        digests = bool(envelopes and envelopes[-1].command_digest)
    return lt, digests


def _verdict(table_id: str, context: Sequence[Stored], commits: Sequence[Stored],
             keyring: OneHand) -> tuple[dict, LoadedTable | None]:
    """The audit of the hand's commits, on the table the context folds to."""
    try:
        before, digests = _fold_context(context)
    except CorruptLog as exc:
        return {"ok": False, "failure": f"the commits before the hand: {exc}"}, None
    auditor = TableAuditor.resumed(table_id, before, keyring, digests)
    for s in commits:
        auditor.feed(s)
    a = auditor.result()
    return {"ok": a.ok, "failure": str(a.failure or ""), "commits": a.commits,
            "events": a.events, "decks": a.decks, "cards": a.cards, "rake": a.rake,
            "hand_open": a.hand_open}, before


def build(table_id: str, hand_no: int, context: Sequence[Stored], commits: Sequence[Stored],
          key: HandKey | None) -> dict:
    """The evidence of hand ``hand_no`` (its ``commits``, after the table's ``context``),
    opened with the hand's ``key`` alone."""
    keyring = OneHand(key)
    verdict, before = _verdict(table_id, context, commits, keyring)
    names = {s.seat: s.name or s.player_id for s in before.state.seats} \
        if before is not None and before.state is not None else {}
    rows = commit_rows(commits, keyring, names)
    leaves = HandLeaves(table_id)
    for s, row in zip(commits, rows):
        if "unreadable" not in row:
            commit, envelopes = read_envelopes(s.data)
            leaves.feed(s, commit.events, envelopes)
    doc = {"format": FORMAT, "table_id": table_id, "hand_no": hand_no,
           "first_seq": commits[0].seq if commits else 0,
           "last_seq": commits[-1].seq if commits else 0,
           "context": [stored_json(s) for s in context],
           "link_before": before.last_hash.hex() if before is not None else "",
           "commits": rows, "hand_key": key.key.hex() if key is not None else "",
           "reveal": reveal(rows),
           "leaf": leaves.leaves[0].decode() if leaves.leaves else "",
           "verdict": verdict}
    doc["checksum"] = hashlib.sha256(canonical(doc)).hexdigest()
    return doc


def canonical(doc: dict) -> bytes:
    """The file's bytes: one way to write ``doc``."""
    return (json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=True) + "\n").encode()


def evidence_of(table_id: str, hand_no: int, stored: Sequence[Stored],
                keyring: Keyring) -> bytes | None:
    """The evidence file of hand ``hand_no`` of ``stored`` (the table's log), its key taken
    from ``keyring`` (the compliance role's: it learns the key from the hand's
    ``DeckCommitted``); None if the log has no such hand."""
    span = hand_span(table_id, stored, hand_no)
    if span is None:
        return None
    commits = list(stored[span.first:span.last + 1])
    for s in commits:  # decoding the DeckCommitted has the keyring learn the hand's key
        try:
            parse_commit(s.data).events(keyring)
        except ValueError:
            continue  # the verdict names it
    key = keyring.hand_key(table_id, hand_no)
    return canonical(build(table_id, hand_no, stored[:span.first], commits, key))


@dataclass(frozen=True)
class Verified:
    """What :func:`verify` found: ``intact`` (the file is what its commits make, byte for
    byte), the hand audit's ``verdict``, and the ``problems``, one line each."""

    intact: bool
    verdict: dict
    problems: list[str]

    @property
    def ok(self) -> bool:
        return self.intact and bool(self.verdict.get("ok"))


def _read(data: bytes) -> tuple[str, int, list[Stored], list[Stored], HandKey | None]:
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise EvidenceError(f"not JSON ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise EvidenceError(f"not a {FORMAT} file")
    try:
        table_id, hand_no, key = doc["table_id"], doc["hand_no"], doc["hand_key"]
        context = [stored_from(r) for r in doc["context"]]
        commits = [stored_from(r) for r in doc["commits"]]
        hand_key = HandKey(table_id, hand_no, bytes.fromhex(key)) if key else None
    except (KeyError, TypeError, ValueError) as exc:
        raise EvidenceError(f"not a {FORMAT} file: {type(exc).__name__}: {exc}") from None
    if not isinstance(table_id, str) or not isinstance(hand_no, int):
        raise EvidenceError(f"not a {FORMAT} file: its table or hand is not one")
    return table_id, hand_no, context, commits, hand_key


def verify(data: bytes) -> Verified:
    """Check an evidence file offline (EvidenceError if it is not one)."""
    table_id, hand_no, context, commits, key = _read(data)
    again = build(table_id, hand_no, context, commits, key)
    intact = canonical(again) == data
    problems = []
    if not intact:
        where = sorted(differences(json.loads(data), again),
                       key=lambda line: line.startswith("checksum"))  # the cause first
        problems.append("the file is not what its commits make: " + "; ".join(where[:5])
                        if where else "the file is not written canonically (a byte changed)")
    if not again["verdict"]["ok"]:
        problems.append(f"the hand's audit fails: {again['verdict']['failure']}")
    return Verified(intact, again["verdict"], problems)


def differences(filed: object, made: object, path: str = "") -> list[str]:
    """Where ``filed`` and ``made`` differ: one line per field (path, the two values)."""
    if isinstance(filed, dict) and isinstance(made, dict):
        out = []
        for k in sorted(set(filed) | set(made)):
            if k not in made:
                out.append(f"{path}{k}: not a field of the evidence")
            elif k not in filed:
                out.append(f"{path}{k}: missing")
            else:
                out += differences(filed[k], made[k], f"{path}{k}.")
        return out
    if isinstance(filed, list) and isinstance(made, list) and len(filed) == len(made):
        return [d for i, (a, b) in enumerate(zip(filed, made))
                for d in differences(a, b, f"{path}{i}.")]
    if filed != made:
        return [f"{path.rstrip('.')}: the file says {_short(filed)}, its commits make "
                f"{_short(made)}"]
    return []


def _short(value: object) -> str:
    text = json.dumps(value)
    return text if len(text) <= 80 else text[:77] + "..."
