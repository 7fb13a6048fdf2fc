"""Every documented disagreement of the differential test (tests/property/test_differential_*)
and the exact condition under which a disagreement is put down to it.

Each cause cites the rule of docs/RULES.md it is about. A disagreement is exempted
only when its condition here holds: our engine gives the rule book's value (RulesOracle, in
tests/helpers/rules_model.py) and pokerkit the value its own documented behaviour gives, on
exactly the field concerned. Anything else is undocumented and fails the test.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tests.helpers.rules_model import card_strength

if TYPE_CHECKING:  # pragma: no cover - types only
    from shared.poker.betting import LegalActions
    from shared.poker.state import HandState
    from tests.helpers.pokerkit_oracle import PKLegal
    from tests.helpers.rules_model import Expected

# ------------------------------------------------------------------------------------------
# Documented divergences
# ------------------------------------------------------------------------------------------

#: pokerkit 0.7.7 against RULES.md (cause -> pokerkit's behaviour vs the rule book).
KNOWN_DIVERGENCES: dict[str, str] = {}
#: our engine against RULES.md (cause -> what goes wrong, minimal reproduction): open bugs,
#: counted (and the hands they spoil stopped) instead of failing the test.
ENGINE_BUGS: dict[str, str] = {}
#: engine bugs this harness found that are fixed since (kept for the record; a recurrence is
#: an undocumented disagreement and fails the test; each has a regression test in
#: tests/property/test_differential_holdem.py).
FIXED_ENGINE_BUGS: dict[str, str] = {}
#: reasons a hand is stopped before its end (reason -> why).
AVOIDED: dict[str, str] = {}


def _doc(table: dict[str, str], name: str, text: str) -> str:
    table[name] = " ".join(text.split())
    return name


def _open_bug(name: str) -> str | None:
    """``name`` while it is an open ENGINE_BUGS entry; None (undocumented) once fixed."""
    return name if name in ENGINE_BUGS else None


PK_NO_FOLD_WHEN_CHECK = _doc(KNOWN_DIVERGENCES, "PK_NO_FOLD_WHEN_CHECK", """
    RULES §4: "fold (always allowed on one's turn)". Exactly: both engines have nothing to
    call, ours offers the fold, pokerkit does not. pokerkit (Mode.TOURNAMENT,
    State.verify_folding) refuses a fold when there is nothing to call ("There is no reason
    for this player to fold"). Mode.CASH_GAME only warns, but it also changes all-in run-outs
    and showing, so we keep tournament mode and never fold when checking is free.""")

PK_FL_BLIND_NOT_COUNTED = _doc(KNOWN_DIVERGENCES, "PK_FL_BLIND_NOT_COUNTED", """
    RULES §4: fixed limit caps at max_bets (4) per round and "the big blind ... counts as the
    first, so a $10/$20 game caps at $40". pokerkit counts only the completions, bets and
    raises made in the round (completion_betting_or_raising_count starts at 0 after the
    blinds), so its fixed-limit hold'em and Omaha allow a fifth bet pre-flop ($50). See
    test_pokerkit_fixed_limit_preflop_cap.""")

SHORT_FORCED_BET = _doc(KNOWN_DIVERGENCES, "SHORT_FORCED_BET", """
    RULES §3: "A player who cannot cover an ante, blind or bring-in posts what they have and
    is all in; the others still call the full amount, and the raise sizes stay those of the
    full blind". pokerkit's amount to call is max(bets) - own bet: after a short (all-in) big
    blind or bring-in the others owe only what was posted, and its minimum and pot-limit
    maximum raise-to are measured from that smaller bet. Exactly: in the round where a big
    blind or bring-in was posted short, pokerkit's value (call, check, fold, raise allowed,
    min_to, max_to) is the one RulesOracle(forced_as_posted=True) gives (the short bet counted
    at what was posted), ours the rule book's, and the two readings differ on that value
    (short_forced_bet). Not exempted any more: the RULES §4 round end ("when every other
    player still in the hand is all in, a player's call is capped at the largest of those
    all-ins ... and a player whose chips in already cover it has no turn"): pokerkit agrees
    on the capped call; its extra turn for a covered player is PK_EXTRA_CHECK.""")

SHORT_ALLIN_REOPENS = _doc(KNOWN_DIVERGENCES, "SHORT_ALLIN_REOPENS", """
    RULES §4: "an all-in that raises by less than a full raise does not reopen the betting
    to players who already acted ... unless the total of such all-ins (or a later raise)
    reaches a full raise over what they last faced"; fixed limit: "an all-in of at least half
    a bet counts as a full bet or raise (it reopens, counts toward the cap, and the next raise
    is a full unit on top ...); under half a bet it does not reopen, and a player who has not
    yet acted may fold, call it, or complete it to the full bet". pokerkit measures a raise
    against the largest bet/raise increment of the round (completion_betting_or_raising_amount,
    0 when the round starts): an all-in opening bet below the big blind or the fixed-limit bet
    reopens the betting; short all-ins add up only while consecutive; fixed limit has no
    half-bet rule: under half a bet the next raise is the all-in plus a unit (RULES: complete
    to the full bet), at or above half it does not reopen, and every all-in bet or raise counts
    toward the cap. Assigned only where our engine agrees with RulesOracle.""")

PK_NO_RAISE_UNCOVERED = _doc(KNOWN_DIVERGENCES, "PK_NO_RAISE_UNCOVERED", """
    RULES §4 is silent on a raise that nobody could answer (exactly: RulesOracle marks the
    raise optional, pokerkit refuses it). pokerkit
    (_verify_completion_betting_or_raising) refuses it when no other live player has chips
    beyond the current bet ("There is no reason to complete, bet, or raise since every other
    player has either folded or gone all-in"), e.g. the only other player left has fewer chips
    than the bet they face; our engine allowed it while another live player was not all in
    (the working tree now refuses it too). Harmless either way: the excess would come back
    uncalled. RulesOracle accepts both readings; a disagreement is counted here.""")

STUD_STAND_IN_FOLD = _doc(KNOWN_DIVERGENCES, "STUD_STAND_IN_FOLD", """
    RULES §3: "If that player [the bring-in] is all in from the ante, the next player
    clockwise who is not all in acts first and may fold, bring in, or complete." pokerkit
    keeps bring_in_status for the stand-in and refuses the fold ("The player must post a
    bring-in or complete").""")

PK_EXTRA_CHECK = _doc(KNOWN_DIVERGENCES, "PK_EXTRA_CHECK", """
    RULES §4, round end: "When every other player still in the hand is all in, a player's
    call is capped at the largest of those all-ins ..., and a player whose chips in already
    cover it has no turn" (the rule book's example: $1/$2, the big blind all in for $1, the
    button folds: the board is dealt at once). pokerkit still gives that player a turn whose
    only option is to check. Exactly: our round is over; pokerkit asks one player, who is not
    all in, has nothing to call and may not raise, every other live player is all in and the
    player's bet covers the largest of theirs. We let pokerkit check and count it.""")

PK_ALLIN_BRING_IN_COMPLETES = _doc(KNOWN_DIVERGENCES, "PK_ALLIN_BRING_IN_COMPLETES", """
    RULES §3: the bring-in "posts the bring-in or completes to the small bet"; one who cannot
    cover it "posts what they have and is all in". A player whose chips after the ante are no
    more than the bring-in can only post them as the bring-in (ours). pokerkit also offers a
    "completion" to the same all-in amount (min = max completion = the stack) and then treats
    it as the round's first bet, not as a bring-in.""")

PK_HU_EQUAL_BLINDS = _doc(KNOWN_DIVERGENCES, "PK_HU_EQUAL_BLINDS", """
    RULES §3: "Heads-up: the button posts the small blind, acts first before the flop". With
    small blind == big blind (allowed: 0 < small_blind <= big_blind) pokerkit's opener
    (State._begin_betting, Opening.POSITION: left of the largest blind, ties to the highest
    index) is the big blind heads-up. The hand is stopped (ACTOR:PK_HU_EQUAL_BLINDS).""")

ODD_CHIP = _doc(KNOWN_DIVERGENCES, "ODD_CHIP", """
    RULES §6: "Each half of each pot is split on its own"; remainder units go one each to the
    tied winners from the first clockwise from the button (stud hi/lo: by the highest card by
    suit for the high half, the lowest card by suit for the low half). pokerkit
    (State.push_chips) gives the whole remainder to the tied winner with the lowest index
    (first from the button's left), and it splits the pots after killing the losing hands and
    merging consecutive pots whose remaining claimants are the same, so remainders differ.
    Accepted only where our stacks equal the rule book's award (rules_settlement) and a
    model of pokerkit's split reproduces pokerkit's stacks exactly.""")

PK_FREEROLL = _doc(KNOWN_DIVERGENCES, "PK_FREEROLL", """
    RULES §5 (as ruled in tests/unit/test_rules_pots.py, "a player who risked nothing
    wins nothing"): a player whose only bet came back uncalled claims no pot. pokerkit
    (State.pots) puts dead money (a big-blind ante) into a pot at stake level 0 that every live
    hand claims, including one that put nothing in (e.g. heads-up, the big blind all in from
    its ante, the small blind's call returned: pokerkit lets the small blind win the ante).
    Accepted only where our stacks equal the rule book's award (rules_settlement) and the
    pokerkit model reproduces pokerkit's stacks exactly.""")

STUD_HILO_DOUBLE_TIE = _doc(KNOWN_DIVERGENCES, "STUD_HILO_DOUBLE_TIE", """
    RULES §6: in stud hi/lo "two players who tie for both high and low split the whole pot as
    evenly as possible and the one holding the highest card by suit gets the odd unit".
    pokerkit splits the high and the low half separately (each remainder to the lowest
    index). Accepted only where our stacks equal the rule book's award (rules_settlement)
    and the pokerkit model reproduces pokerkit's stacks exactly.""")

PK_SIDE_POT_LOW = _doc(KNOWN_DIVERGENCES, "PK_SIDE_POT_LOW", """
    RULES §6: "No qualifying low: the high hand wins the whole pot" (each pot among the hands
    eligible for it). pokerkit (_begin_chips_pushing) halves every pot as soon as ANY live hand
    has a qualifying low; in a pot where no eligible hand has one, push_chips finds no low
    (max is None) and splits that half among every eligible hand still live. Accepted only
    where our stacks equal the rule book's award (rules_settlement) and the pokerkit model
    reproduces pokerkit's stacks exactly.""")

ENGINE_SHORT_ALLIN_REOPENS = _doc(FIXED_ENGINE_BUGS, "ENGINE_SHORT_ALLIN_REOPENS", """
    Fixed in 68f97cc ("short all-ins do not reopen").
    RULES §4: an all-in short of a full raise does not reopen the betting to players who
    already acted. fold._raise_changes marks every other player acted=False after ANY raise,
    and betting._raise_allowed refuses a raise only when `p.acted and current_bet <
    p.reopen_at`, so after a short all-in the reopen_at guard never applies and players who
    already acted may raise again. Repro (test_engine_bug_short_allin_reopens): NL 1/2, seats
    1, 2, 3, button 3, stacks 100/16/100; pre-flop 3 call, 1 call, 2 check; flop 1 bet 10, 2
    raise 14 (all in, +4 < 10), 3 call: seat 1 is offered "raise to between 24 and 98";
    expected call or fold only (pokerkit agrees with the rule book here).""")

ENGINE_DEAD_MONEY_POTS = _doc(FIXED_ENGINE_BUGS, "ENGINE_DEAD_MONEY_POTS", """
    Fixed in 68f97cc ("dead money (big-blind ante, dead blind) in the main pot").
    RULES §3/§5: a big-blind ante is dead money; only an all-in player is limited to the pots
    up to their contribution. (a) From 53a8804 to 10aed60 pots.form_pots makes a pot at the
    largest contribution and makes eligible only players who contributed at least each level,
    so dead money (a big-blind ante, a dead small blind) puts the poster alone in the top pot:
    every other live player who is not all in loses their claim, and with all-ins the ante is
    spread over the side pots. Repro (test_engine_bug_big_blind_ante_pots): NL 1/2, big-blind
    ante 2, seats 1 (button, small blind) and 2, stacks 100/100, deck 7c As 2d Ah | Qs Kc 9h 5d
    | Qd 3s | Qh 8c, everyone checks/calls: PotsFormed(6, eligible (2,)): seat 1 (aces) must
    muck and seat 2 (seven high) wins 6. (b) A first fix (stake = contributed - dead, dead money
    into the main pot; uncommitted, before 68f97cc) left a big blind all in from its ante
    (stake 0) out of every pot, even the main pot holding its own ante (the team's own ruling
    in tests/unit/test_rules_pots.py: the player who put money in may win it). Repro
    (test_engine_bug_big_blind_all_in_from_ante_pots): NL 2/4, big-blind ante 3, seats
    1 (100), 2 (1 chip), 3 (button, 100); 3 calls, 1 calls, checks down: ours PotsFormed(9,
    eligible (1, 3)); expected (1, eligible 1, 2, 3) + (8, eligible 1, 3). While open, hands
    whose pots differ from rules_pots were stopped at the pots (ENGINE:ENGINE_DEAD_MONEY_POTS);
    now such a difference fails the test.""")

STUD_OPEN_PAIR = _doc(AVOIDED, "STUD_OPEN_PAIR", """
    F7S only. RULES §4: stud high, 4th street, with an open pair showing any player may bet or
    raise the small or the big bet. pokerkit has no such option. As ruled by the lead, F7S hands
    are compared only where the case does not arise: the deck is arranged so that no 4th-street
    card pairs any 3rd-street upcard (whoever folds), and a hand where one shows anyway is
    stopped when 4th street is dealt and counted here (should stay at zero).""")

STUD_RUNOUT = _doc(AVOIDED, "STUD_RUNOUT", """
    Stud with 8 players when the deck runs short on 7th street. RULES §1: the burned cards
    are shuffled with the undealt ones; if those cannot give the burn plus one card to every
    live player, one common card is turned up, and the best showing hand counting it acts
    first. pokerkit (State._begin_dealing, get_dealable_cards) also counts the mucked (folded)
    cards as dealable and does not count the burn, so it deals 7th-street hole cards where
    the rule book turns up a common card; and with a common card it picks the opener from the
    up cards alone. The hand is stopped at that street.""")

_doc(AVOIDED, "ACTOR:<cause>", """
    The engines disagree on who acts (or whether anyone acts) for a documented cause
    (PK_HU_EQUAL_BLINDS; STUD_RUNOUT). The rest of the hand is not the same game: counted under the cause, stopped.""")

_doc(AVOIDED, "NO_COMMON_ACTION:<causes>", """
    Every disagreement at a decision has a documented cause but no action is legal in both
    engines (e.g. SHORT_FORCED_BET: after a short big blind we owe a call where pokerkit has
    nothing to call, and pokerkit refuses a fold when checking is free). Stopped and counted.""")

_doc(AVOIDED, "ENGINE:<bug>", """
    An ENGINE_BUGS case that makes the rest of the hand incomparable (ENGINE_DEAD_MONEY_POTS,
    while it was open: our pots excluded live players). Stopped and counted.""")


# ------------------------------------------------------------------------------------------
# The conditions (``run`` is the tests.helpers.differential.HandRun of the hand)
# ------------------------------------------------------------------------------------------

def short_forced_bet(run, hand: HandState, ours: LegalActions, theirs: PKLegal,
                     exp: Expected | None, what: str) -> bool:
    """SHORT_FORCED_BET, exactly (RULES §3: after a short forced bet "the others still call the
    full amount, and the raise sizes stay those of the full blind"): the round in which a big
    blind or bring-in was posted short; pokerkit's value for ``what`` is the one of the
    reading that counts the short bet at what was posted, ours (checked against RulesOracle
    before) the rule book's, and the two readings differ there."""
    if exp is None or hand.street != 0 or not run.short_forced:
        return False
    alt = run.posted_oracle.expected(hand, ours.seat)
    pk_call = theirs.call if theirs.can_check_or_call else 0
    pk_check = theirs.can_check_or_call and theirs.call == 0
    if what == "call":
        return pk_call == alt.call != exp.call
    if what == "check":
        return pk_check == alt.can_check != exp.can_check
    if what == "fold":  # pokerkit refuses a fold when it sees nothing to call
        return not theirs.can_fold and pk_check and alt.can_check and not exp.can_check
    if what == "raise":
        return theirs.can_raise == alt.can_raise != exp.can_raise
    if what in ("min_to", "max_to"):
        want, other = getattr(alt, what), getattr(exp, what)
        return alt.can_raise and getattr(theirs, what) == want != other
    return False


def classify(run, hand: HandState, ours: LegalActions, theirs: PKLegal, exp: Expected | None,
             what: str) -> str | None:
    """The documented cause of a disagreement on ``what`` at a decision where our engine
    follows the rule book (RulesOracle); None if there is none."""
    v = run.v
    pk_check = theirs.can_check_or_call and theirs.call == 0
    if short_forced_bet(run, hand, ours, theirs, exp, what):
        return SHORT_FORCED_BET
    if what == "fold":
        # RULES §4 "fold (always allowed on one's turn)": nothing to call in both engines
        if ours.can_fold and ours.can_check and pk_check and not theirs.can_fold:
            return PK_NO_FOLD_WHEN_CHECK
        # RULES §3: the stand-in for a bring-in all in from the ante may fold
        if (v.stud and ours.bring_in and ours.can_fold and not theirs.can_fold
                and lowest_upcard_seat(hand) != ours.seat
                and hand.player(lowest_upcard_seat(hand)).all_in):
            return STUD_STAND_IN_FOLD
        return None
    # RULES §3: a bring-in all in after the ante can only post it, not "complete" to it
    if (what == "raise" and v.stud and ours.bring_in and ours.raise_kind is None
            and theirs.can_raise and theirs.min_to == theirs.max_to == ours.bring_in
            and hand.player(ours.seat).stack == ours.bring_in):
        return PK_ALLIN_BRING_IN_COMPLETES
    if exp is None:  # a bring-in decision: nothing else is documented there
        return None
    # RULES §4 is silent on a raise nobody could answer
    if what == "raise" and exp.raise_optional and not theirs.can_raise:
        return PK_NO_RAISE_UNCOVERED
    pk = run.pk_betting.offers(hand, ours.seat)  # pokerkit's own arithmetic, modelled
    # RULES §4: the big blind counts as the first of max_bets; pokerkit offers one bet more
    if (what == "raise" and not exp.can_raise and theirs.can_raise
            and exp.why_no_raise == "capped" and v.fixed and not v.stud and hand.street == 0
            and pk.can_raise and theirs.min_to == pk.min_to):
        return PK_FL_BLIND_NOT_COUNTED
    # RULES §4 short all-ins (and the fixed-limit half-bet rule), exactly: after a short
    # all-in this round, pokerkit gives the value its own measure of raises gives
    # (PokerkitBetting), and that differs from the rule book's
    if what in ("raise", "min_to", "max_to") and (run.oracle.short_allin
                                                  or run.oracle.allin_below_unit):
        if what == "raise" and theirs.can_raise == pk.can_raise != exp.can_raise:
            return SHORT_ALLIN_REOPENS
        if (what != "raise" and pk.can_raise
                and getattr(theirs, what) == getattr(pk, what) != getattr(exp, what)):
            return SHORT_ALLIN_REOPENS
    return None


def classify_actor(run, hand: HandState, seat: int, pk_seat: int | None) -> str | None:
    """The documented cause of the engines asking different players to act; None if none."""
    o = run.setup.options
    # RULES §3: heads-up the button posts the small blind and acts first before the flop;
    # pokerkit asks the big blind when the blinds are equal
    if (not run.v.stud and len(hand.players) == 2 and hand.street == 0
            and o.small_blind == o.big_blind and seat == hand.button and pk_seat is not None
            and pk_seat != seat):
        return PK_HU_EQUAL_BLINDS
    # RULES §1: a common card turned up on 7th street (pokerkit deals hole cards instead)
    if run.v.stud and hand.board:
        return STUD_RUNOUT
    return None


def extra_check(run, hand: HandState, seat: int, theirs: PKLegal) -> bool:
    """PK_EXTRA_CHECK, exactly (RULES §4 round end): pokerkit asks ``seat`` to act after our
    round is over; the seat is not all in, has nothing to call and may not raise, every other
    live player is all in, and the seat's chips in cover the largest of theirs (stakes, dead
    money aside: the round's bets are gone into the pot once it closed)."""
    p = hand.player(seat)
    others = [q for q in hand.players if q.seat != seat and not q.folded]

    def stake(q):
        return q.contributed - run.dead.get(q.seat, 0)

    return (theirs.can_check_or_call and theirs.call == 0 and not theirs.can_raise
            and not p.all_in and bool(others) and all(q.all_in for q in others)
            and stake(p) >= max(stake(q) for q in others))


def lowest_upcard_seat(hand: HandState) -> int:
    """RULES §3: stud's bring-in, the lowest upcard, ties broken by suit_order, ace high."""
    order = hand.options.suit_order.value
    return min(hand.players, key=lambda p: card_strength(p.upcards[0], order)).seat
