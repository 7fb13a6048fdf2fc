"""The form of the table service's requests, checked before anything is decided (a bad one
is INVALID_ARGUMENT): a table's options from CreateTable's settings (unset fields take the
rule book's defaults, shared/poker/options.py), a client's seat token digest, a seed
request's fields."""

from __future__ import annotations

from poker.table.v1 import table_pb2

from shared.infra.protomap import (
    ANTE_TYPE,
    GAME,
    STRUCTURE,
    SUIT_ORDER,
    TIMEOUT_POLICY,
    EnumMap,
    UnknownEnumValue,
)
from shared.infra.rpc import BadRequest
from shared.poker.options import NO_RAKE_CAP, table_options
from shared.poker.shuffle import is_seed_hex
from shared.poker.tournament.decide import TOKEN_SHA256

_SETTINGS_INTS = ("max_seats", "chip_unit", "small_blind", "big_blind", "small_bet", "big_bet",
                  "ante", "bring_in", "max_bets", "rake_basis_points", "min_buy_in",
                  "max_buy_in", "decision_seconds", "countdown_seconds",
                  "reconnect_bonus_seconds")


def _enum_from(mapping: EnumMap, value: int):
    try:
        return mapping.from_pb(value)
    except UnknownEnumValue:
        raise BadRequest(f"{value} is not a known {mapping.prefix[:-1].lower()}") from None


def options_from(settings: table_pb2.TableSettings):
    """Table options from the request: unset fields take the rule book's defaults."""
    try:
        game, structure = GAME.from_pb(settings.game), STRUCTURE.from_pb(settings.structure)
    except UnknownEnumValue:
        raise BadRequest("settings need a game and a betting structure") from None
    kwargs: dict = {name: getattr(settings, name) for name in _SETTINGS_INTS
                    if settings.HasField(name)}
    for flag in ("heads_up_uncapped", "no_flop_no_drop", "private"):
        if settings.HasField(flag):
            kwargs[flag] = getattr(settings, flag)
    if settings.HasField("rake_cap") and settings.no_rake_cap:
        raise BadRequest("settings give both a rake_cap and no_rake_cap: choose one")
    if settings.HasField("rake_cap"):
        kwargs["rake_cap"] = settings.rake_cap
    elif settings.no_rake_cap:
        kwargs["rake_cap"] = NO_RAKE_CAP
    if settings.suit_order:
        kwargs["suit_order"] = _enum_from(SUIT_ORDER, settings.suit_order)
    if settings.ante_type:
        kwargs["ante_type"] = _enum_from(ANTE_TYPE, settings.ante_type)
    if settings.timeout_policy:
        kwargs["timeout_policy"] = _enum_from(TIMEOUT_POLICY, settings.timeout_policy)
    # the service's tables always take their chips from the players' wallets
    return table_options(game, structure, wallet=True, **kwargs)


def chosen_digest(digest_hex: str) -> str:
    """A client's seat token digest (SitDown, ResumeSeat), checked: "" when it sent none."""
    if digest_hex and not TOKEN_SHA256.fullmatch(digest_hex):
        raise BadRequest("seat_token_sha256 is the SHA-256 of your seat token as 64 "
                         "lowercase hex digits")
    return digest_hex


def check_seed_request(request: table_pb2.SeedRequest, field: str, what: str) -> None:
    """A seed request's form (the rules are shared/poker/seeds.py's): one of its two fields."""
    other = "seed" if field == "seed_sha256" else "seed_sha256"
    if request.hand_no < 1:
        raise BadRequest("hand_no is a hand number from 1")
    if not is_seed_hex(getattr(request, field)) or getattr(request, other):
        raise BadRequest(f"{field} must be {what} as 64 lowercase hex digits, and {other} "
                         f"left empty")
