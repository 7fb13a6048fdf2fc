"""Given / when / then for one hand of the pure core.

    s = Scenario(options, stacks=[(1, 100), (2, 100), (3, 100)], button=3,
                 deck=board_deck({1: "AhAd", 2: "KcKd", 3: "7c2d"}, board="2s3s4h9dJc", button=3))
    s.play("3 call", "1 call", "2 check")          # when
    assert s.legal.raise_kind is ActionKind.BET      # then
    s.finish(check_call_policy)
    assert s.won == {1: 300}

The dealer's part comes from a fixed deck: ``deck`` is the top of the deck in deal order
(burns included), the rest of the 52 cards follow in their natural order. A stud reshuffle
takes the next prefix from ``reshuffles``. Steps that need no player decision (commit, forced
bets, dealing, pots, rake, award, reveal) are taken automatically; player steps (acting,
showing) are the test's. After every event the helper checks that chips are conserved.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence

from shared.poker import decide as D
from shared.poker import events as E
from shared.poker.betting import LegalActions
from shared.poker.cards import DECK, Card, cards
from shared.poker.errors import IllegalAction
from shared.poker.events import ActionKind
from shared.poker.fold import apply
from shared.poker.handrunner import Dealer, Policy, automatic_decision, new_table
from shared.poker.options import TableOptions
from shared.poker.state import HandState, Player, TableState

CardsLike = str | Sequence[Card]


def as_cards(x: CardsLike) -> tuple[Card, ...]:
    return cards(x) if isinstance(x, str) else tuple(x)


def deal_order(seats: Iterable[int], button: int) -> list[int]:
    """Seats in deal order: clockwise, starting with the first seat left of the button."""
    seats = sorted(seats)
    return [s for s in seats if s > button] + [s for s in seats if s <= button]


def _fill(used: set[Card], n: int) -> list[Card]:
    """``n`` cards not in ``used``, taken from the top of the natural deck downwards (aces
    first): burns and filler cards that are easy to tell apart in a failing test."""
    out = [c for c in reversed(DECK) if c not in used][:n]
    used.update(out)
    return out


def board_deck(hole: Mapping[int, CardsLike], board: CardsLike = "", button: int = 0,
               burns: CardsLike = "") -> str:
    """Deck order for hold'em / Omaha: every dealt-in seat's hole cards (one card at a time,
    clockwise from the button's left), then burn + flop, burn + turn, burn + river.
    Burns not given are filled with unused cards."""
    hands = {s: as_cards(h) for s, h in hole.items()}
    b = as_cards(board)
    used = {c for h in hands.values() for c in h} | set(b) | set(as_cards(burns))
    given_burns = list(as_cards(burns))
    order = deal_order(hands, button)
    n = len(hands[order[0]])
    deck: list[Card] = [hands[s][r] for r in range(n) for s in order]
    for street, (lo, hi) in enumerate(((0, 3), (3, 4), (4, 5))):
        if len(b) < hi:
            break
        burn = given_burns[street] if street < len(given_burns) else _fill(used, 1)[0]
        deck += [burn, *b[lo:hi]]
    return "".join(str(c) for c in deck)


def stud_deck(hands: Mapping[int, CardsLike], button: int, burns: CardsLike = "") -> str:
    """Deck order for stud: 3rd street two down and one up, one card at a time, clockwise from
    the button's left; then for 4th to 7th street a burn and one card to each seat whose hand
    string is long enough (a shorter string means the seat has folded by then)."""
    hs = {s: as_cards(h) for s, h in hands.items()}
    used = {c for h in hs.values() for c in h} | set(as_cards(burns))
    given_burns = list(as_cards(burns))
    order = deal_order(hs, button)
    deck: list[Card] = [hs[s][r] for r in range(3) for s in order]
    for street in range(1, 5):
        live = [s for s in order if len(hs[s]) > 2 + street]
        if not live:
            break
        burn = given_burns[street - 1] if street - 1 < len(given_burns) else _fill(used, 1)[0]
        deck += [burn] + [hs[s][2 + street] for s in live]
    return "".join(str(c) for c in deck)


class Scenario:
    """One hand, driven step by step through the real decisions and the fold."""

    def __init__(self, options: TableOptions, stacks: Sequence[tuple[int, int]], button: int,
                 deck: CardsLike = "", *, reshuffles: Sequence[CardsLike] = (),
                 hand_no: int = 1, forced_bets: Sequence[E.ForcedBet] | None = None,
                 check_conservation: bool = True) -> None:
        self.options = options
        self.table: TableState = new_table(options)
        self.start_total = sum(st for _, st in stacks)
        self.check_conservation = check_conservation
        self.events: list[object] = []
        prefixes = [as_cards(deck)] + [as_cards(d) for d in reshuffles]
        for p in prefixes:
            if len(set(p)) != len(p):
                raise ValueError(f"the given deck repeats a card: {p}")

        def shuffle(pool: Sequence[Card]) -> tuple[Card, ...]:
            i = len(self.dealer.decks)
            prefix = prefixes[i] if i < len(prefixes) else ()
            missing = [str(c) for c in prefix if c not in pool]
            if missing:
                raise ValueError(f"deck {i} cannot hold {missing}: not among the cards to shuffle")
            return prefix + tuple(c for c in pool if c not in prefix)

        self.dealer = Dealer(shuffle=shuffle, salt=lambda: f"salt-{len(self.dealer.salts)}")
        self._apply(D.start_hand(self.table, hand_no, button, stacks, forced_bets))

    # --- state ----------------------------------------------------------------------------

    @property
    def hand(self) -> HandState:
        return self.table.hand

    @property
    def step(self) -> D.Step:
        return D.next_step(self.hand)

    def player(self, seat: int) -> Player:
        return self.hand.player(seat)

    @property
    def stacks(self) -> dict[int, int]:
        return {p.seat: p.stack for p in self.hand.players}

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]

    @property
    def pots(self) -> tuple[E.Pot, ...]:
        formed = self.of(E.PotsFormed)
        return formed[-1].pots if formed else ()

    @property
    def won(self) -> dict[int, int]:
        """Chips awarded per seat (seats that won nothing are left out)."""
        out: dict[int, int] = {}
        for a in self.of(E.PotAwarded):
            for sh in a.shares:
                out[sh.seat] = out.get(sh.seat, 0) + sh.amount
        return {s: v for s, v in out.items() if v}

    @property
    def rake(self) -> int:
        return sum(e.amount for e in self.of(E.RakeTaken))

    @property
    def actions(self) -> list[E.ActionTaken]:
        return self.of(E.ActionTaken)

    # --- driving --------------------------------------------------------------------------

    def _apply(self, new: Iterable[object]) -> list[object]:
        new = list(new)
        for e in new:
            self.table = apply(self.table, e)
            self.events.append(e)
            if self.check_conservation and self.table.hand is not None:
                assert self.hand.chips_in_play == self.start_total, (
                    f"chips not conserved after {e}: {self.hand.chips_in_play} != {self.start_total}")
        return new

    def _auto(self, step: D.Step) -> list[object]:
        events = automatic_decision(self.hand, step, self.dealer)
        if events is None:
            raise AssertionError(f"step {step!r} needs a decision from the test")
        return events

    def advance(self, stop: tuple[type, ...] = (D.Act, D.Show), limit: int = 500) -> D.Step:
        """Take automatic steps until one of ``stop`` (or the end of the hand)."""
        for _ in range(limit):
            step = self.step
            if isinstance(step, stop) or isinstance(step, D.HandComplete):
                return step
            self._apply(self._auto(step))
        raise AssertionError("the hand did not reach a decision")

    def to_act(self) -> D.Act:
        step = self.advance()
        if not isinstance(step, D.Act):
            raise AssertionError(f"expected a player to act, the hand is at {step!r}")
        return step

    @property
    def on_turn(self) -> int:
        return self.to_act().seat

    @property
    def legal(self) -> LegalActions:
        return self.to_act().legal

    def act(self, seat: int, action: ActionKind | str, to: object = None) -> list[object]:
        """Seat ``seat`` takes ``action`` (the decision itself checks that it is their turn)."""
        self.advance()
        return self._apply(D.act(self.hand, seat, action, to))

    def play(self, *moves: str | tuple) -> None:
        """Moves like ``"3 raise 40"``, ``"1 call"``, ``"2 fold"``, or (seat, action, to)."""
        for m in moves:
            if isinstance(m, str):
                parts = m.split()
                seat, action = int(parts[0]), parts[1]
                to = int(parts[2]) if len(parts) > 2 else None
            else:
                seat, action, *rest = m
                to = rest[0] if rest else None
            self.act(seat, action, to)

    def reject(self, decision: Callable[..., object], *args: object, **kw: object) -> IllegalAction:
        """``decision(hand, *args)`` must raise IllegalAction, change nothing and return no events."""
        before_table, before_events = self.table, list(self.events)
        try:
            out = decision(self.hand, *args, **kw)
        except IllegalAction as err:
            assert self.table is before_table and self.events == before_events
            assert err.reason and isinstance(err.reason, str)
            return err
        raise AssertionError(f"{decision.__name__}{args} was accepted: {out!r}")

    def reject_act(self, seat: int, action: object, to: object = None) -> IllegalAction:
        self.advance()
        return self.reject(D.act, seat, action, to)

    # --- showdown and the end ---------------------------------------------------------------

    def to_showdown(self) -> D.Show:
        step = self.advance()
        if not isinstance(step, D.Show):
            raise AssertionError(f"expected a showdown, the hand is at {step!r}")
        return step

    def show(self, seat: int, hole: CardsLike | None = None) -> list[object]:
        self.to_showdown()
        return self._apply(D.show(self.hand, seat, None if hole is None else as_cards(hole)))

    def muck(self, seat: int) -> list[object]:
        self.to_showdown()
        return self._apply(D.muck(self.hand, seat))

    def finish(self, policy: Policy | None = None) -> None:
        """Play to the end: acting by ``policy`` (an Act step without one is an error), and
        each player at showdown left to the default (winning or tying hands shown)."""
        for _ in range(1000):
            step = self.advance()
            if isinstance(step, D.HandComplete):
                return
            if isinstance(step, D.Act):
                if policy is None:
                    raise AssertionError(f"seat {step.seat} must act: {step.legal}")
                action, to = policy(self.hand, step.legal)
                self._apply(D.act(self.hand, step.seat, action, to))
            else:
                self._apply(D.showdown_default(self.hand, step.seat))
        raise AssertionError("the hand did not end")

    def shown_order(self) -> list[int]:
        return [e.seat for e in self.events if isinstance(e, (E.HandShown, E.HandMucked))]
