"""A table's log folded commit by commit, to check the views the table service serves: each
view must be the fold of the log at the version it names, as its viewer may see it, and must
hold no card another seat holds face down before that seat shows it."""

from __future__ import annotations

from collections import defaultdict

from poker.table.v1 import table_pb2 as tpb

from services.pokerctl.bots_cmd import decode_commit
from services.table.views import view_message
from shared.infra.repository import LoadedTable, fold_commit
from shared.poker import events as E
from shared.poker.view import table_view


def folded(stored, keyring=None) -> LoadedTable:
    """The table's fold after every commit read back from the log."""
    lt = LoadedTable()
    for s in stored:
        lt = fold_commit(lt, s, keyring)
    return lt


class LogIndex:
    """One table's log, folded commit by commit: the state at every version, the down cards
    each seat was dealt in each hand, and the version at which a seat showed its hand: all
    opened with the compliance keyring (the log seals the cards nobody has seen)."""

    def __init__(self, stored: list, keyring) -> None:
        self.states = {}
        self.clocks = {}
        self.down: dict[tuple[int, int], set[str]] = defaultdict(set)
        self.dealt: dict[tuple[int, int], list[str]] = defaultdict(list)
        self.shown_at: dict[tuple[int, int], int] = {}
        lt = LoadedTable()
        hand_no = 0
        for s in stored:
            lt = fold_commit(lt, s, keyring)
            self.states[s.seq] = lt.state
            self.clocks[s.seq] = lt.clock
            for e in decode_commit(s.data, keyring):
                if isinstance(e, E.HandStarted):
                    hand_no = e.hand_no
                elif isinstance(e, E.CardsDealt):
                    for h in e.hole:
                        for card, up in zip(h.cards, h.face_up):
                            self.dealt[(hand_no, h.seat)].append(str(card))
                            if not up:
                                self.down[(hand_no, h.seat)].add(str(card))
                elif isinstance(e, E.HandShown):
                    self.shown_at[(hand_no, e.seat)] = s.seq
        self.last = lt

    def secret_from(self, viewer: int, hand_no: int, version: int) -> set[str]:
        """Cards the viewer may not see at ``version``: other seats' down cards not shown."""
        out: set[str] = set()
        for (h, seat), cards in self.down.items():
            if h == hand_no and seat != viewer and self.shown_at.get((h, seat), 1 << 62) > version:
                out |= cards
        return out


def check_view(log: LogIndex, viewer: int, view: tpb.TableView) -> None:
    state = log.states[view.version]
    expected = view_message(table_view(state, viewer or None), view.version, state,
                            log.clocks[view.version], view.server_unix_ms)
    assert view == expected, f"seat {viewer} was served a view that is not the fold at " \
                             f"version {view.version}"
    visible = set(view.board) | {c for s in view.seats for c in s.cards}
    leaked = visible & log.secret_from(viewer, view.hand_no, view.version)
    assert not leaked, f"seat {viewer or 'spectator'} saw {leaked} at version {view.version}"
    for s in view.seats:
        if s.seat == viewer and s.in_hand:  # a seat sees all of its own cards
            assert list(s.cards) == log.dealt[(view.hand_no, s.seat)][:len(s.cards)]
            assert "??" not in s.cards


