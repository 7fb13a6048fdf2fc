"""The table service's limits (shared/infra/limits.py) and the statuses the rpc wrapper gives
what goes wrong: RESOURCE_EXHAUSTED with a retry hint, INTERNAL (never UNKNOWN) for a bug."""

from __future__ import annotations

import grpc
import pytest

from shared.infra.limits import LimitSettings, RateLimiter, StreamCap, caller_of
from shared.infra.rpc import (
    RETRY_AFTER_HEADER,
    Exhausted,
    client_command_id,
    rpc,
    system_command_id,
)


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_bucket_allows_its_burst_then_its_rate_and_says_when():
    clock = Clock()
    bucket = RateLimiter(rate=2.0, burst=3, what="things", monotonic=clock)
    for _ in range(3):
        bucket.take("k")
    with pytest.raises(Exhausted) as refused:
        bucket.take("k")
    assert refused.value.retry_after_s == pytest.approx(0.5)
    assert "retry in 0.5 s" in str(refused.value)
    bucket.take("other")  # keys are independent
    clock.t += 0.5
    bucket.take("k")
    with pytest.raises(Exhausted):
        bucket.take("k")


def test_buckets_full_again_are_forgotten_once_per_refill_time_and_drained_ones_kept():
    clock = Clock()
    bucket = RateLimiter(rate=1.0, burst=4, what="things", monotonic=clock)
    for key in ("gone-1/1", "gone-2/1"):
        bucket.take(key)
    clock.t += 4.0  # both full again: the same as no bucket
    for _ in range(4):
        bucket.take("busy")  # drained: kept, so its limit holds
    assert set(bucket._buckets) == {"busy"}
    with pytest.raises(Exhausted):
        bucket.take("busy")


def test_a_bucket_remembers_at_most_max_keys_and_keeps_the_one_in_use():
    """Past ``max_keys`` keys (a stranger trying many), the least recently used go; a key
    over its rate and still asking stays refused (the web's Rates are this limiter)."""
    clock = Clock()
    bucket = RateLimiter(rate=1.0, burst=2, what="things", monotonic=clock, max_keys=100)
    bucket.take("hot")
    bucket.take("hot")
    for n in range(1000):
        bucket.take(f"k{n}")
        with pytest.raises(Exhausted):
            bucket.take("hot")
        assert bucket.remembered() <= 101


def test_a_stream_cap_gives_back_a_stream_once_and_forgets_a_key_without_one():
    cap = StreamCap(1, "this visitor")
    release = cap.take("a")
    with pytest.raises(Exhausted):
        cap.take("a")
    other = cap.take("b")  # another key is not held back by a's
    release()
    release()  # once, however many times it is called
    assert cap.held("a") == 0 and cap.holders() == 1
    other()
    assert cap.holders() == 0


def test_a_stream_cap_counts_open_streams_and_frees_on_close():
    cap = StreamCap(2, "this caller")
    with cap.holding("a"), cap.holding("a"):
        with pytest.raises(Exhausted):
            with cap.holding("a"):
                pass
        with cap.holding("b"):
            pass
    with cap.holding("a"), cap.holding("a"):
        pass


def test_limits_come_from_the_environment():
    s = LimitSettings.from_mapping({"POKER_LIMIT_WATCHES_PER_CALLER": "3",
                                    "POKER_LIMIT_SEAT_TOGGLES_PER_S": "0.5"})
    assert s.watches_per_caller == 3 and s.seat_toggles_per_s == 0.5
    assert LimitSettings.from_mapping({}) == LimitSettings()
    assert LimitSettings.from_mapping({"POKER_LIMIT_WATCHES_PER_TABLE": ""}) == LimitSettings()


@pytest.mark.parametrize("variable, raw, what", [
    ("POKER_LIMIT_WATCHES_PER_CALLER", "3.5", "an integer"),
    ("POKER_LIMIT_SEAT_COMMANDS_BURST", "many", "an integer"),
    ("POKER_LIMIT_SEAT_TOGGLES_PER_S", "-1", "a number"),
    ("POKER_LIMIT_CALLER_JOINS_PER_S", "nan", "a number"),
])
def test_a_limit_that_is_not_a_count_is_refused_by_name(variable, raw, what):
    with pytest.raises(ValueError, match=f"{variable} must be {what} of at least 0") as exc:
        LimitSettings.from_mapping({variable: raw})
    assert repr(raw) in str(exc.value)


class Peer:
    def __init__(self, peer: str) -> None:
        self._peer = peer

    def peer(self) -> str:
        return self._peer


def test_the_caller_is_its_address_without_the_port():
    assert caller_of(Peer("ipv4:127.0.0.1:51234")) == "ipv4:127.0.0.1"
    assert caller_of(Peer("ipv6:[::1]:51234")) == "ipv6:[::1]"
    assert caller_of(Peer("unix:/tmp/s")) == "unix:/tmp/s"


def test_a_verified_player_is_counted_as_themselves_not_by_address():
    import contextvars

    from shared.infra.authz import _CALLER
    from shared.infra.identity import Principal

    def as_alice():
        _CALLER.set(Principal("alice", frozenset({"player"})))
        return caller_of(Peer("ipv4:127.0.0.1:51234"))
    assert contextvars.copy_context().run(as_alice) == "player:alice"


def test_client_ids_never_meet_the_systems():
    assert client_command_id("s3", "timeout:1:3:17") == "c.s3.timeout:1:3:17"
    assert client_command_id("s2", "x") != client_command_id("s3", "x")
    assert system_command_id("timeout", 1, 3, 17) == "timeout:1:3:17"
    with pytest.raises(ValueError):
        system_command_id("c.s3", "x")


class Context:
    """What the rpc wrapper uses of a grpc.aio context."""

    def __init__(self) -> None:
        self.aborted: tuple[grpc.StatusCode, str] | None = None
        self.trailing = ()

    def invocation_metadata(self):
        return (("x-trace-id", "trace-42"),)

    def set_trailing_metadata(self, md) -> None:
        self.trailing = md

    def code(self):
        return self.aborted[0] if self.aborted else None

    async def abort(self, code, details):
        self.aborted = (code, details)
        raise grpc.aio.AbortError()


class Servicer:
    @rpc
    async def Bug(self, request, context):
        raise KeyError("a bug")

    @rpc
    async def Flood(self, request, context):
        raise Exhausted("too many things", 1.25)


class Request:
    table_id = "t"
    seat = 0


async def test_a_bug_answers_internal_with_the_trace_id_never_unknown():
    ctx = Context()
    with pytest.raises(grpc.aio.AbortError):
        await Servicer().Bug(Request(), ctx)
    code, details = ctx.aborted
    assert code is grpc.StatusCode.INTERNAL
    assert "trace-42" in details and "KeyError" not in details


async def test_over_a_limit_answers_resource_exhausted_with_the_wait():
    ctx = Context()
    with pytest.raises(grpc.aio.AbortError):
        await Servicer().Flood(Request(), ctx)
    assert ctx.aborted[0] is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "retry in 1.2 s" in ctx.aborted[1] or "retry in 1.3 s" in ctx.aborted[1]
    assert ctx.trailing == ((RETRY_AFTER_HEADER, "1250"),)


def test_a_failure_is_reported_once_and_looked_at_less_often():
    """The keeper and the driver never loop on a refusal: the first failure of a kind is an
    error with its traceback, the same again is quiet, and the wait before the next look
    doubles up to a ceiling; success or another kind of failure starts afresh."""
    from structlog.testing import capture_logs

    from services.table.calls import Failures
    clock = Clock()
    failures = Failures("keeping the clock", first_s=0.5, max_s=2.0, monotonic=clock)
    with capture_logs() as logs:
        for _ in range(5):
            failures.failed("t1", ValueError("refused"))
            assert failures.waiting("t1") and not failures.waiting("t2")
    assert [entry["log_level"] for entry in logs] == ["error"] + ["debug"] * 4
    clock.t += 2.0
    assert not failures.waiting("t1")  # the wait is capped at max_s
    with capture_logs() as logs:
        failures.failed("t1", RuntimeError("another"))
        failures.ok("t1")
    assert [entry["log_level"] for entry in logs] == ["error", "info"]
    assert not failures.waiting("t1")


def test_a_limit_of_what_reaches_the_log_gives_back_what_appended_nothing():
    clock = Clock()
    toggles = RateLimiter(rate=0.1, burst=2, what="toggles", monotonic=clock,
                          appended_only=True)
    commands = RateLimiter(rate=0.1, burst=2, what="commands", monotonic=clock)
    for limiter in (toggles, commands):
        for _ in range(5):
            limiter.take("seat")
            limiter.spent_nothing("seat")  # refused: costs a toggle nothing
            if limiter is commands:
                break
    toggles.take("seat")
    toggles.take("seat")
    with pytest.raises(Exhausted):
        toggles.take("seat")
    commands.take("seat")
    with pytest.raises(Exhausted):  # a command counts refused or not
        commands.take("seat")
