"""What a viewer may see of a table (secrecy): a seat sees its own hole cards; everybody sees
upcards, the board and hands shown at showdown; nobody sees another seat's down cards or the
deck. Pure: the table service maps this to its protobuf view."""

from __future__ import annotations

from dataclasses import dataclass, replace

from .betting import LegalActions, legal_actions
from .cards import UNKNOWN_CARD, Card
from .events import Pot
from .state import HandState, Phase, Player, TableState


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    player_id: str
    stack: int
    bet: int
    in_hand: bool
    folded: bool
    all_in: bool
    sitting_out: bool
    cards: tuple[Card, ...]
    shown: bool
    name: str = ""  # what is printed for the player (their name, else their id)


@dataclass(frozen=True, slots=True)
class TableView:
    table_id: str
    hand_no: int
    phase: str
    button: int
    street: int
    board: tuple[Card, ...]
    pot: int
    pots: tuple[Pot, ...]
    current_bet: int
    to_act: int
    legal: LegalActions | None  # the options of the player on turn (``to_act``)
    seats: tuple[SeatView, ...]
    rake: int


def visible_cards(p: Player, viewer: int | None) -> tuple[Card, ...]:
    if p.seat == viewer or p.shown:
        return p.hole
    return tuple(c if up else UNKNOWN_CARD for c, up in zip(p.hole, p.face_up))


def table_view(table: TableState, viewer: int | None,
               own_cards: tuple[Card, ...] | None = None) -> TableView:
    """The table as seat ``viewer`` (None: a spectator) may see it. ``own_cards``: the
    viewer's cards, when the fold holds them sealed (the dealer hands them over)."""
    public = public_view(table)
    return public if viewer is None else seat_view(public, table, viewer, own_cards)


def seat_view(public: TableView, table: TableState, viewer: int,
              own_cards: tuple[Card, ...] | None = None) -> TableView:
    """Seat ``viewer``'s view from the table's public view: the same but for its own cards
    (:func:`own_cards_of`), the only thing a seat sees that a spectator does not."""
    cards = own_cards_of(table, viewer, own_cards)
    if cards is None:
        return public
    seats = tuple(replace(s, cards=cards) if s.seat == viewer else s for s in public.seats)
    return replace(public, seats=seats)


def own_cards_of(table: TableState, viewer: int,
                 own_cards: tuple[Card, ...] | None = None) -> tuple[Card, ...] | None:
    """The cards seat ``viewer`` sees of its own hand (None: it has none in the running
    hand): all of them, ``own_cards`` where the fold holds them sealed (as
    :func:`table_view`'s)."""
    hand = table.hand
    player = next((p for p in hand.players if p.seat == viewer), None) if hand else None
    if player is None:
        return None
    cards = visible_cards(player, viewer)
    if own_cards is not None and len(own_cards) == len(cards):
        return own_cards
    return cards


def public_view(table: TableState) -> TableView:
    """The table as a spectator sees it: the board, upcards and hands shown."""
    hand: HandState | None = table.hand
    # Once the hand is over the seats' own stacks count (a top-up shows at once).
    running = hand is not None and hand.phase is not Phase.DONE
    in_hand = {p.seat: p for p in hand.players} if hand is not None else {}
    seats = []
    for s in table.seats:
        p = in_hand.get(s.seat)
        if p is None:
            seats.append(SeatView(s.seat, s.player_id, s.stack, 0, False, False, False,
                                  s.sitting_out, (), False, s.shown_name))
        else:
            seats.append(SeatView(s.seat, s.player_id, p.stack if running else s.stack,
                                  p.round_bet, True, p.folded, p.all_in, s.sitting_out,
                                  visible_cards(p, None), p.shown, s.shown_name))
    if hand is None:
        return TableView(table.table_id, 0, "waiting", 0, 0, (), 0, (), 0, 0, None,
                         tuple(seats), 0)
    to_act = hand.to_act if hand.phase is Phase.BET and hand.to_act is not None else 0
    # The options of the player on turn are public (they follow from stacks and bets alone),
    # so every view carries them: a client need not ask again to know what it may do.
    legal = legal_actions(hand, to_act) if to_act else None
    return TableView(table.table_id, hand.hand_no, hand.phase.value, hand.button, hand.street,
                     hand.board, hand.pot_total, hand.pots, hand.round.current_bet, to_act, legal,
                     tuple(seats), hand.rake)
