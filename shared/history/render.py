"""Renderers for one :class:`HandRecord`: PokerStars text and PHH (the JSON-ready object:
render_json.py), and :class:`HandFacts`, what every renderer reads of a hand.

PokerStars layout (play-money style: amounts are plain chip integers):

- header ``PokerStars Hand #<id>:  Hold'em No Limit (1/2) - 2026/11/30 8:00:00 ET``
  (the hand's commit time in US Eastern time; without one, the unix epoch). The id
  (:func:`hand_id`), which tracking software keys hands by, is the JetStream stream sequence of
  the commit holding the hand's ``HandStarted``: one stream holds every table, so ids are unique
  across tables, grow with time and stay the same when the log is exported again. A record
  without a sequence (built from bare events, not read from the log) falls back to the table's
  hand number, which is unique only within its table. The table's hand number is the
  ``hand_no`` of the JSON form (and what ``pokerctl history --hand`` selects);
- ``Table '<id>' 6-max Seat #<button> is the button`` (stud: no button), seats with their
  starting stacks, forced bets, streets with hole cards and actions, uncalled bets, the show
  down, collections by pot (``pot`` with one pot, else ``main pot``, ``side pot`` or, with
  several side pots, ``side pot-1`` ...), the summary (pot amounts after rake, ``| Rake R``).
- hands named in PokerStars' words (:func:`pokerstars_high`, :func:`pokerstars_low`, worked out
  again from the shown cards and the board; the events' own names are the engine's):
  ``a pair of Kings``, ``a straight, Ace to Five``, ``a Royal Flush``; hi/lo games show
  ``(HI: a pair of Fives; LO: 5,4,3,2,A)``, or ``(HI: ...)`` alone without a low.
- names and the table id are printed through :func:`shared.poker.players.printable`: a
  player id from an old log holding a newline, a control, bidi or zero-width character is
  escaped (``\x0a``, ``\u202e``), so no id can forge a line or hide on one. The JSON form
  keeps ids exact (``json.dumps`` escapes them); PHH escapes them as TOML strings.
- ``viewer=None`` is the auditor's history (every seat's cards, also mucked ones);
  ``viewer=seat`` is that player's (their own cards, the others' up cards and shown hands).
"""

from __future__ import annotations

import datetime as _dt
from zoneinfo import ZoneInfo

from shared.phh.export import export
from shared.poker import evaluator as ev
from shared.poker import events as E
from shared.poker.cards import UNKNOWN_CARD, Card
from shared.poker.events import ActionKind, ForcedKind
from shared.poker.options import Game, Structure, stakes_of
from shared.poker.players import printable

from .record import HandRecord

_GAME = {Game.HOLDEM: "Hold'em", Game.OMAHA: "Omaha", Game.OMAHA_HILO: "Omaha Hi/Lo",
         Game.STUD: "7 Card Stud", Game.STUD_HILO: "7 Card Stud Hi/Lo"}
_STRUCTURE = {Structure.NO_LIMIT: "No Limit", Structure.POT_LIMIT: "Pot Limit",
              Structure.FIXED_LIMIT: "Limit"}
_BOARD_STREETS = ("Flop", "Flop", "Turn", "River")  # summary: "folded before/on the ..."
_STUD_STREETS = ("3rd Street", "4th Street", "5th Street", "6th Street", "River")
_STUD_HEADERS = ("3rd STREET", "4th STREET", "5th STREET", "6th STREET", "RIVER")
_ET = ZoneInfo("America/New_York")


def pokerstars_high(value: int) -> str:
    """A high value named as PokerStars does: "a full house, Kings full of Fours"."""
    return ev.name_high(value, ev.POKERSTARS)


def pokerstars_low(value: int) -> str:
    """A low value as PokerStars writes it: "8,5,4,2,A" (highest first)."""
    return ",".join("A" if r == 1 else str(r) for r in ev.low_ranks(value))


def _cards(cs: tuple[Card, ...] | list[Card]) -> str:
    return "[" + " ".join(str(c) for c in cs) + "]"


def game_name(record: HandRecord) -> str:
    o = record.options
    return f"{_GAME[o.game]} {_STRUCTURE[o.structure]}"


def stakes(record: HandRecord) -> str:
    return stakes_of(record.options)


def hand_id(record: HandRecord) -> int:
    """The hand's PokerStars id: its stream sequence, else its hand number (module doc)."""
    return record.seq if record.seq is not None else record.hand_no


def et_time(ms: int | None) -> str:
    t = _dt.datetime.fromtimestamp((ms or 0) / 1000, _ET)
    return f"{t:%Y/%m/%d} {t.hour}:{t:%M:%S} ET"


class HandFacts:
    """What the renderers need, worked out once from the hand's events (and the one rule of
    who sees which cards, :meth:`sees`)."""

    def __init__(self, r: HandRecord) -> None:
        self.r = r
        self.stud = r.options.game.is_stud
        self.hilo = r.options.game.is_hilo
        self.order = [p.seat for p in r.start.players]
        self.stacks = {p.seat: p.stack for p in r.start.players}
        self.dealt: dict[int, list[Card]] = {s: [] for s in self.order}
        self.up: dict[int, list[bool]] = {s: [] for s in self.order}
        self.board: list[Card] = []
        self.shown: dict[int, E.HandShown] = {}
        self.mucked: set[int] = set()
        self.folded_on: dict[int, int] = {}  # seat -> street index
        self.voluntary: set[int] = set()  # put chips in by an action or a live blind
        self.positions: dict[int, list[str]] = {s: [] for s in self.order}
        if not self.stud:
            self.positions.setdefault(r.button, []).append("button")
        street = 0
        for e in r.events:
            street = self._note(e, street)
        formed = r.of(E.PotsFormed)
        self.pots = list(formed[-1].pots) if formed else []
        rakes = r.of(E.RakeTaken)
        self.rake = sum(x.amount for x in rakes)
        self.rake_from = [0] * len(self.pots)
        for x in rakes:
            for i, amount in enumerate(x.from_pots[:len(self.pots)]):
                self.rake_from[i] += amount
        self.awards = r.of(E.PotAwarded)
        self.won: dict[int, int] = {}
        for a in self.awards:
            for sh in a.shares:
                self.won[sh.seat] = self.won.get(sh.seat, 0) + sh.amount
        self.returned = {x.seat: x.amount for x in r.of(E.BetReturned)}
        ended = r.of(E.HandEnded)
        self.final = {x.seat: x.stack for x in ended[-1].stacks} if ended else None

    def _note(self, e: object, street: int) -> int:
        """What one event of the hand tells: the cards dealt, who folded on which street,
        who put chips in of their own will, the blinds' positions, the shows and mucks;
        returns the street the hand is on after it."""
        if isinstance(e, E.CardsDealt):
            street = e.street
            for h in e.hole:
                self.dealt[h.seat] += h.cards
                self.up[h.seat] += h.face_up
            self.board += e.board
        elif isinstance(e, E.ActionTaken):
            if e.action is ActionKind.FOLD:
                self.folded_on[e.seat] = street
            if e.added:
                self.voluntary.add(e.seat)
        elif isinstance(e, E.ForcedBetPosted):
            if e.kind is ForcedKind.SMALL_BLIND:
                self.positions[e.seat].append("small blind")
            elif e.kind is ForcedKind.BIG_BLIND:
                self.positions[e.seat].append("big blind")
            if e.kind.live:
                self.voluntary.add(e.seat)
        elif isinstance(e, E.HandShown):
            self.shown[e.seat] = e
        elif isinstance(e, E.HandMucked):
            self.mucked.add(e.seat)
        return street

    def name(self, seat: int) -> str:
        """The seat's player name as PokerStars text prints it (escaped: module doc)."""
        return printable(self.r.name(seat))

    @property
    def total_pot(self) -> int:
        return sum(p.amount for p in self.pots)

    def pot_name(self, index: int) -> str:
        if len(self.pots) == 1:
            return "pot"
        if index == 0:
            return "main pot"
        return "side pot" if len(self.pots) == 2 else f"side pot-{index}"

    def sees(self, seat: int, viewer: int | None) -> bool:
        """Whether the viewer sees ``seat``'s face-down cards: the auditor (None), the seat
        itself, or anyone once the seat showed them (the one rule of every form)."""
        return viewer is None or viewer == seat or seat in self.shown

    def visible(self, seat: int, viewer: int | None) -> list[Card]:
        """The cards of ``seat`` the viewer sees (unknown cards as ``??``)."""
        if self.sees(seat, viewer):
            return list(self.dealt[seat])
        return [c if up else UNKNOWN_CARD for c, up in zip(self.dealt[seat], self.up[seat])]

    def hand_name(self, seat: int) -> str:
        """The shown hand in PokerStars' words, valued again from its cards and the board."""
        hole, board = self.shown[seat].cards, tuple(self.board)
        game = self.r.options.game
        if game.is_omaha:
            high = ev.omaha_high_value(hole, board)
            low = ev.omaha_low8_value(hole, board) if self.hilo else None
        else:
            high = ev.high_value(hole + board)
            low = ev.low8_value(hole + board) if self.hilo else None
        if not self.hilo:
            return pokerstars_high(high)
        lo = f"; LO: {pokerstars_low(low)}" if low is not None else ""
        return f"HI: {pokerstars_high(high)}{lo}"


def seen_cards(record: HandRecord, viewer: int) -> list[tuple[Card, str]]:
    """Every card seat ``viewer`` saw at the table in this hand, with how (``hole``,
    ``board``, ``up S``: face up at seat S, ``shown S``): the rule of :meth:`HandFacts.sees`, what
    a player's receipt may prove (shared/tlog/receipt.py) and nothing more."""
    h = HandFacts(record)
    out: list[tuple[Card, str]] = [(c, "board") for c in h.board]
    for seat in h.order:
        for c, up in zip(h.visible(seat, viewer), h.up[seat]):
            if c == UNKNOWN_CARD:
                continue
            how = "hole" if seat == viewer else "up" if up else "shown"
            out.append((c, how if seat == viewer else f"{how} {seat}"))
    return out


# --- PokerStars ------------------------------------------------------------------------------


def pokerstars(record: HandRecord, viewer: int | None = None) -> str:
    """The hand as PokerStars hand history text (no trailing blank lines)."""
    h = HandFacts(record)
    r = record
    name = h.name
    out = _header(h)
    current = 0  # the bet to match this round
    big_blind = {f.seat: f.amount for f in r.start.forced_bets if f.kind is ForcedKind.BIG_BLIND}
    # a returning player's dead small blind and big blind together: "posts small & big blinds"
    both = [f for f in r.of(E.ForcedBetPosted)
            if f.kind in (ForcedKind.DEAD_SMALL_BLIND, ForcedKind.BIG_BLIND)]
    pairs = {f.seat for f in both if f.kind is ForcedKind.DEAD_SMALL_BLIND} & \
        {f.seat for f in both if f.kind is ForcedKind.BIG_BLIND}
    seen: dict[int, int] = {s: 0 for s in h.order}  # cards of each seat already printed
    for e in r.events:
        if isinstance(e, E.ForcedBetPosted):
            out += _forced_lines(h, e, pairs, both)
            if e.kind is ForcedKind.BIG_BLIND:
                current = max(current, e.amount, big_blind.get(e.seat, 0))
            elif e.kind is ForcedKind.SMALL_BLIND:
                current = max(current, e.amount)
        elif isinstance(e, E.CardsDealt):
            out += _street_lines(h, e, viewer, seen)
        elif isinstance(e, E.ActionTaken):
            out.append(f"{name(e.seat)}: {_action_words(e, current)}")
            current = max(current, e.to)
        elif isinstance(e, E.PlayerTimedOut):
            out.append(f"{name(e.seat)} has timed out")
        elif isinstance(e, E.BetReturned):
            out.append(f"Uncalled bet ({e.amount}) returned to {name(e.seat)}")
        elif isinstance(e, E.BettingRoundClosed):
            current = 0
    if h.shown or h.mucked:  # after the last card dealt, whenever the hands were shown
        out += _showdown(h)
    out += _collections(h)
    if not (h.shown or h.mucked) and len(h.won) == 1:
        out.append(f"{name(next(iter(h.won)))}: doesn't show hand")
    out += _summary(h, viewer)
    return "\n".join(out)


def _header(h: HandFacts) -> list[str]:
    """The hand's first lines: its id, game, stakes and time, the table, the seats."""
    r = h.r
    out = [f"PokerStars Hand #{hand_id(r)}:  {game_name(r)} ({stakes(r)}) - "
           f"{et_time(r.started_at_ms)}"]
    table = f"Table '{printable(r.table_id)}' {r.options.max_seats}-max"
    out.append(table if h.stud else f"{table} Seat #{r.button} is the button")
    for s in sorted(h.order):
        out.append(f"Seat {s}: {h.name(s)} ({h.stacks[s]} in chips)")
    return out


def _forced_lines(h: HandFacts, e: E.ForcedBetPosted, pairs: set[int],
                  both: list[E.ForcedBetPosted]) -> list[str]:
    """A forced bet's line; a returning player's dead small blind and big blind are one line,
    "posts small & big blinds", printed at the second of them."""
    allin = " and is all-in" if e.all_in else ""
    if e.seat in pairs and e in both:
        mine = [f for f in both if f.seat == e.seat]
        if e is mine[-1]:
            return [f"{h.name(e.seat)}: posts small & big blinds "
                    f"{sum(f.amount for f in mine)}{allin}"]
        return []
    if e.kind is ForcedKind.ANTE:
        return [f"{h.name(e.seat)}: posts the ante {e.amount}{allin}"]
    if e.kind in (ForcedKind.SMALL_BLIND, ForcedKind.DEAD_SMALL_BLIND):
        return [f"{h.name(e.seat)}: posts small blind {e.amount}{allin}"]
    return [f"{h.name(e.seat)}: posts big blind {e.amount}{allin}"]


def _summary(h: HandFacts, viewer: int | None) -> list[str]:
    """The *** SUMMARY *** section: the pots and the rake, the board, each seat."""
    out = ["*** SUMMARY ***"]
    pots = [p.amount - rk for p, rk in zip(h.pots, h.rake_from)]
    line = f"Total pot {h.total_pot}"
    if len(pots) > 1:
        line += f" Main pot {pots[0]}."
        line += "".join(f" Side pot{'' if len(pots) == 2 else f'-{i}'} {amount}."
                        for i, amount in enumerate(pots[1:], start=1))
    out.append(f"{line} | Rake {h.rake}")
    if h.board:
        out.append(f"Board {_cards(h.board)}")
    for s in sorted(h.order):
        out.append(_seat_summary(h, s, viewer))
    return out


def _action_words(e: E.ActionTaken, current: int) -> str:
    allin = " and is all-in" if e.all_in else ""
    k = e.action
    if k is ActionKind.FOLD:
        return "folds"
    if k is ActionKind.CHECK:
        return "checks"
    if k is ActionKind.CALL:
        return f"calls {e.added}{allin}"
    if k is ActionKind.BET:
        return f"bets {e.added}{allin}"
    if k is ActionKind.RAISE:
        return f"raises {e.to - current} to {e.to}{allin}"
    if k is ActionKind.BRING_IN:
        return f"brings in for {e.added}{allin}"
    return f"completes it to {e.to}{allin}"


def _street_lines(h: HandFacts, e: E.CardsDealt, viewer: int | None,
                  seen: dict[int, int]) -> list[str]:
    out: list[str] = []
    name = h.name
    if h.stud:
        out.append(f"*** {_STUD_HEADERS[e.street]} ***" + (f" {_cards(e.board)}" if e.board else ""))
    elif e.street == 0:
        out.append("*** HOLE CARDS ***")
    else:
        before = h.board[:{1: 0, 2: 3, 3: 4}[e.street]]
        label = {1: "FLOP", 2: "TURN", 3: "RIVER"}[e.street]
        out.append(f"*** {label} *** " + (f"{_cards(before)} " if before else "")
                   + _cards(e.board))
    for deal in e.hole:
        s = deal.seat
        start = seen[s]
        seen[s] += len(deal.cards)
        if not h.stud:
            if viewer is None or viewer == s:
                out.append(f"Dealt to {name(s)} {_cards(deal.cards)}")
            continue
        own = viewer is None or viewer == s
        if own:
            old, new = list(h.dealt[s][:start]), list(deal.cards)
        else:
            old = [c for c, up in zip(h.dealt[s][:start], h.up[s][:start]) if up]
            new = [c for c, up in zip(deal.cards, deal.face_up) if up]
            if not new:
                continue
        out.append(f"Dealt to {name(s)} " + (f"{_cards(old)} " if old else "") + _cards(new))
    return out


def _showdown(h: HandFacts) -> list[str]:
    out = ["*** SHOW DOWN ***"]
    for e in h.r.events:
        if isinstance(e, E.HandShown):
            out.append(f"{h.name(e.seat)}: shows {_cards(e.cards)} ({h.hand_name(e.seat)})")
        elif isinstance(e, E.HandMucked):
            out.append(f"{h.name(e.seat)}: mucks hand")
    return out


def _collections(h: HandFacts) -> list[str]:
    """``name collected X from ...``: side pots last to first, then the main pot."""
    out = []
    for a in sorted(h.awards, key=lambda a: -a.pot_index):
        for sh in a.shares:
            if sh.amount:
                out.append(f"{h.name(sh.seat)} collected {sh.amount} from "
                           f"{h.pot_name(a.pot_index)}")
    return out


def _seat_summary(h: HandFacts, s: int, viewer: int | None) -> str:
    label = "".join(f" ({p})" for p in h.positions.get(s, []))
    head = f"Seat {s}: {h.name(s)}{label}"
    streets = _STUD_STREETS if h.stud else _BOARD_STREETS
    if s in h.folded_on:
        street = h.folded_on[s]
        where = "before Flop" if not h.stud and street == 0 else f"on the {streets[street]}"
        didnt = "" if s in h.voluntary else " (didn't bet)"
        return f"{head} folded {where}{didnt}"
    won = h.won.get(s, 0)
    if s in h.shown:
        cards = _cards(h.shown[s].cards)
        if won:
            return f"{head} showed {cards} and won ({won}) with {h.hand_name(s)}"
        return f"{head} showed {cards} and lost with {h.hand_name(s)}"
    if s in h.mucked:
        known = h.visible(s, viewer)
        if won:
            return f"{head} mucked and won ({won})"
        if all(c.known for c in known):
            return f"{head} mucked {_cards(known)}"
        return f"{head} mucked"
    if won:
        return f"{head} collected ({won})"
    return f"{head} lost"


# --- PHH ---------------------------------------------------------------------------------------


def phh(record: HandRecord, viewer: int | None = None) -> str:
    """The hand as PHH (the engine's exporter; rake is not expressible in PHH: the finishing
    stacks are after any rake). ``viewer=seat``: the hand as that seat saw it, as the other
    forms give it: the other seats' face-down cards are PHH's unknown card ``??`` (``d dh p2
    ????``) unless the seat showed them at the showdown; its own, the up cards and the board
    as dealt."""
    events = list(record.events)
    if viewer is not None:
        h = HandFacts(record)

        def seen(d: E.HoleDeal) -> E.HoleDeal:
            if h.sees(d.seat, viewer):
                return d
            return d.evolve(cards=tuple(c if up else UNKNOWN_CARD
                                        for c, up in zip(d.cards, d.face_up)))

        events = [e.evolve(hole=tuple(seen(d) for d in e.hole))
                  if isinstance(e, E.CardsDealt) else e for e in events]
    return export(events, dict(record.names), record.options)
