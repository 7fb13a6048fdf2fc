"""What an audit finds (shared/audit/auditor.py): a table's result and its first failure,
and the bookkeeping of a commit's first bad event."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Failure:
    """The first bad event of a table."""

    table_id: str
    seq: int  # stream sequence of the commit
    event_index: int  # 1-based index of the event in the table's log (0: the commit itself)
    commit_index: int  # 0-based index of the event in its commit
    event_type: str
    reason: str
    #: the engine failed on this commit: a bug to report, not a finding about the log
    engine_bug: bool = False

    def __str__(self) -> str:
        where = (f"event {self.event_index} ({self.event_type}, #{self.commit_index} of the "
                 f"commit)" if self.event_index else f"the commit ({self.event_type})")
        return f"table {self.table_id}, stream seq {self.seq}, {where}: {self.reason}"

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True, slots=True)
class SagaRecord:
    """A saga with the wallet as the table's log tells it (the money audit matches each with
    the wallet's ledger): ``outcome`` confirmed, refused, credited or open."""

    key: str
    kind: str  # buy_in, top_up, cash_out, rake
    player_id: str
    amount: int
    outcome: str


@dataclass
class TableAudit:
    table_id: str
    commits: int = 0
    events: int = 0
    hands: int = 0
    decisions: int = 0  # commits re-decided by the engine
    buy_ins: int = 0  # PlayerSeated stacks
    top_ups: int = 0
    stacks: int = 0  # at the end: seats' stacks (with a running hand's stacks and pot)
    rake: int = 0
    left_with: int = 0  # chips taken away by players who left
    decks: int = 0  # decks revealed and checked
    cards: int = 0  # cards dealt and checked against a revealed deck
    first_seq: int = 0
    last_seq: int = 0
    head_hash: str = ""  # SHA-256 of the table's last envelope: anchor it elsewhere
    hand_open: bool = False  # the log ends inside a hand (its deck is not revealed yet)
    wallet: bool = False  # the table's chips come from a wallet (its sagas below)
    sagas: list[SagaRecord] = field(default_factory=list)  # settled, in log order
    open_sagas: list[SagaRecord] = field(default_factory=list)  # at the end of the log
    failure: Failure | None = None
    #: each finished hand's leaf of the hands' Merkle log, as the audited commits make it
    #: (shared/tlog/hands.py): what an audit against a checkpoint compares (not reported)
    hand_leaves: list[bytes] = field(default_factory=list, repr=False)

    @property
    def ok(self) -> bool:
        return self.failure is None

    @property
    def conserved(self) -> bool:
        return self.stacks + self.rake + self.left_with == self.buy_ins + self.top_ups

    def as_dict(self) -> dict:
        out = {k: v for k, v in dataclasses.asdict(self).items()
               if k not in ("failure", "hand_leaves")}
        out["ok"] = self.ok
        out["failure"] = self.failure.as_dict() if self.failure else None
        out["error"] = str(self.failure) if self.failure else None
        return out


@dataclass(slots=True)
class DeckRecord:
    commitment: str
    size: int
    reshuffle: bool
    taken_before: int = 0  # reshuffle: cards taken from the previous deck when it was made
    burned_before: tuple = ()  # reshuffle: the burned cards it was made with
    root: str = ""  # the positions root committed beside it (shared/tlog/receipt.py), if any
    dealt: list = field(default_factory=list)  # cards in deck order
    where: list = field(default_factory=list)  # per card: (seq, event_index, commit_index)


class Bad(Exception):
    def __init__(self, index: int, reason: str) -> None:
        super().__init__(reason)
        self.index = index
        self.reason = reason


class EngineBug(Exception):
    """The engine failed while re-deciding or folding a commit (not a refusal: a bug). The
    audit of the table stops there and says so; it is not evidence about the log."""

    def __init__(self, exc: BaseException) -> None:
        super().__init__(f"{type(exc).__name__}: {exc}")
        self.exc = exc


class FirstFailure:
    """The earliest bad event a commit's checks found (by index in the commit; on a tie, the
    one noted first)."""

    __slots__ = ("bad",)

    def __init__(self) -> None:
        self.bad: Bad | None = None

    def note(self, bad: Bad) -> None:
        if self.bad is None or bad.index < self.bad.index:
            self.bad = bad

    def raise_any(self) -> None:
        if self.bad is not None:
            raise self.bad


def compare(events: list, expected: list, first: FirstFailure) -> None:
    """The commit's events equal the engine's, event for event: note the first that
    differs, or the one too many, or the one missing."""
    if events == expected:
        return
    n = min(len(events), len(expected))
    for k in range(n):
        if events[k] != expected[k]:
            first.note(Bad(k, _diff(events[k], expected[k])))
            return
    if len(events) > n:
        first.note(Bad(n, "an event the engine's decision does not produce"))
    else:
        first.note(Bad(n - 1, f"the decision also produces {type(expected[n]).__name__}, "
                               f"missing from the commit"))


def _diff(got: object, want: object) -> str:
    """What differs between a recorded event and the engine's."""
    if type(got) is not type(want):
        return f"the engine decides {type(want).__name__} here"
    parts = []
    if dataclasses.is_dataclass(got):  # every event is
        for f in dataclasses.fields(got):
            a, b = getattr(got, f.name), getattr(want, f.name)
            if a != b:
                parts.append(f"{f.name} is {_short(a)}, the engine decides {_short(b)}")
    return "; ".join(parts) or "differs from the engine's decision"


def _short(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 120 else text[:117] + "..."



class Named(Bad):
    """The failure is already recorded (it names an earlier event than the current one)."""

    def __init__(self) -> None:
        super().__init__(0, "")
