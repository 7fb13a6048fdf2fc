"""Typed errors of the pure core. Each carries a reason a player or operator can act on."""


class PokerError(Exception):
    """Base of the core's errors."""

    @property
    def reason(self) -> str:
        return str(self.args[0]) if self.args else self.__class__.__name__


class IllegalAction(PokerError):
    """A command the rules do not allow now (out of turn, below the minimum, ...)."""


class InvalidOptions(PokerError, ValueError):
    """Table options that cannot make a playable table."""


class InvalidEvent(PokerError):
    """An event that cannot follow the state it is applied to (a corrupt or tampered log)."""


class ClockSkew(PokerError):
    """A step asked for at a time too far from the clock of the service taking it
    (shared/poker/clock.py, CLOCK_TOLERANCE_MS): one of the two clocks is wrong."""
