"""The lobby's hands per hour (services/web/lobby.HandRates): measured from the first look at a
table, shown once it has been watched for RATE_AFTER_S."""

from services.web.lobby import RATE_AFTER_S, RATES_IDLE_S, HandRates


def test_hands_per_hour_come_from_the_hand_numbers_seen_over_time():
    now = [1000.0]
    rates = HandRates(clock=lambda: now[0])
    assert rates.rate("t", 5) is None  # first look: nothing measured yet
    now[0] += RATE_AFTER_S / 2
    assert rates.rate("t", 6) is None  # too short a window
    now[0] = 1000.0 + 360  # six minutes after the first look, 12 hands later
    assert rates.rate("t", 17) == 120 and isinstance(rates.rate("t", 17), int)  # rounded
    assert rates.rate("other", 3) is None  # each table from its own first look


def test_a_table_the_lobby_stopped_listing_is_forgotten_and_measured_again():
    now = [1000.0]
    rates = HandRates(clock=lambda: now[0])
    rates.rate("gone", 5)
    now[0] += RATES_IDLE_S + 1
    assert rates.rate("busy", 1) is None  # a use sweeps the idle table out
    assert "gone" not in rates._first
    assert rates.rate("gone", 50) is None  # measured afresh, not 45 hands over an hour
