"""A table's hands from its commits: the one place that turns a table's log (the commits as
read from a stream, a mirror or an export file) into hand records, the chain and fold checked
(`pokerctl history` and the web pages' hand pages both read hands through it)."""

from __future__ import annotations

from collections.abc import Sequence

from shared.infra.eventstore import Stored
from shared.infra.repository import LoadedTable, UnknownTable, fold_commit, read_commit
from shared.infra.secrecy import Keyring
from shared.poker.errors import IllegalAction
from shared.poker.state import TableState

from .record import HandRecord, hands


def decode_log(stored: Sequence[Stored], keyring: Keyring | None = None
               ) -> tuple[list[object], list[int | None], list[int]]:
    """Every event of the commits with its time (unix ms) and its commit's log position (the
    hand ids of the PokerStars text: the stream sequence, set apart per shard stream); the
    chain and fold are checked (CorruptLog). ``keyring``: the compliance keyring that opens
    the cards nobody saw (without it they read ``??``)."""
    lt = LoadedTable()
    events: list[object] = []
    times: list[int | None] = []
    seqs: list[int] = []
    for s in stored:
        parsed = read_commit(s)  # raises CorruptLog
        lt = fold_commit(lt, s, keyring, parsed)  # raises CorruptLog; decodes the events
        for k, event in enumerate(parsed.events(keyring)):
            events.append(event)
            times.append(parsed.envelope(k).occurred_at_unix_ms or None)
            seqs.append(s.log_position)  # the same hand ids from a mirror
    return events, times, seqs


def finished_hand(table: TableState, table_id: str, hand_no: int) -> None:
    """Refuse, from a fold of the table, a hand it has not played to its end: one it has not
    dealt (UnknownTable) or the one running (IllegalAction). What a receipt of the hand is
    refused for before any log is read (the table service and the dealer ask it alike)."""
    if hand_no > table.last_hand_no:
        raise UnknownTable(f"table {table_id} has no hand {hand_no}")
    if hand_no == table.last_hand_no and table.hand_running:
        raise IllegalAction(f"hand {hand_no} is not finished: ask for its receipt once it has "
                            f"ended")


def table_hands(stored: Sequence[Stored], keyring: Keyring | None = None) -> list[HandRecord]:
    """The hands of a table's commits, in log order (the last may still be running)."""
    events, times, seqs = decode_log(stored, keyring)
    return hands(events, times, seqs=seqs)
