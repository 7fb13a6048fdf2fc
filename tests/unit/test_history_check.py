"""The history check (tests/helpers/history.py) of the cluster's leader-kill test: a clean
history passes, and a lost acknowledgement, a doubled command id and a refused command found
in the log are each caught; the recording stub makes one entry per command id, however many
times it is attempted."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from poker.events.v1 import events_pb2 as pb
from poker.table.v1 import table_pb2

from tests.helpers.history import (
    ACKNOWLEDGED,
    REFUSED,
    UNKNOWN,
    Entry,
    History,
    RecordingStub,
    check,
    logged_id,
    table_log,
)

T = "holdem-NL-1"


def entry(command_id: str, outcome: str, method: str = "Act", scope: str = "s1") -> Entry:
    e = Entry(T, method, command_id, f"c.{scope}.{command_id}")
    e.acknowledged, e.refused = outcome == ACKNOWLEDGED, outcome == REFUSED
    return e


HISTORY = [entry("t", ACKNOWLEDGED, "CreateTable", "create"), entry("a", ACKNOWLEDGED),
           entry("b", ACKNOWLEDGED), entry("r", REFUSED), entry("u1", UNKNOWN),
           entry("u2", UNKNOWN)]
#: the log of HISTORY as it should be: system steps between the clients' commands, the
#: unknown u1 applied, u2 not, the refused r not
LOG = ["c.create.t", "drv:1:start:1", "c.s1.a", "timeout:1:2:5", "c.s1.b", "c.s1.u1",
       "wallet:c.s1.a"]


def test_a_clean_history_passes_with_its_counts():
    verdict = check(HISTORY, {T: LOG})
    assert verdict.ok, verdict.details()
    assert (verdict.commands, verdict.acknowledged, verdict.refused, verdict.unknown,
            verdict.unknown_applied, verdict.unknown_not_applied) == (6, 3, 1, 2, 1, 1)
    assert verdict.line() == ("history: 6 commands (0 retried): 3 acknowledged, 1 refused, "
                              "2 unknown (1 applied, 1 not); lost 0, doubled 0, "
                              "refused-but-applied 0, unrecorded 0")


def test_an_acknowledged_command_missing_from_the_log_is_lost():
    verdict = check(HISTORY, {T: [i for i in LOG if i != "c.s1.b"]})
    assert [e.command_id for e in verdict.lost] == ["b"]
    assert not verdict.ok and "lost 1" in verdict.line()


def test_an_acknowledged_command_of_a_table_never_read_is_lost():
    assert [e.command_id for e in check(HISTORY[:2], {}).lost] == ["t", "a"]


def test_a_client_command_id_in_two_commits_is_doubled():
    verdict = check(HISTORY, {T: [*LOG, "c.s1.a"]})
    assert verdict.doubled == ((T, "c.s1.a", 2),)
    assert not verdict.ok and "doubled 1" in verdict.line()


def test_a_system_id_repeated_is_not_a_client_double():
    assert check(HISTORY, {T: [*LOG, "drv:1:start:1", "drv:1:start:1"]}).doubled == ()


def test_a_refused_command_in_the_log_is_refused_but_applied():
    verdict = check(HISTORY, {T: [*LOG, "c.s1.r"]})
    assert [e.command_id for e in verdict.refused_applied] == ["r"]
    assert not verdict.ok and "refused-but-applied 1" in verdict.line()


def test_a_buy_in_the_wallet_refused_is_undone_not_refused_but_applied():
    refused = entry("sit-1-x", REFUSED, "SitDown", "sit1")
    log = table_log([_commit("c.sit1.sit-1-x", pb.EventEnvelope(
        buy_in_requested=pb.BuyInRequested(key="c.sit1.sit-1-x"))),
        _commit("wallet:c.sit1.sit-1-x", pb.EventEnvelope(
            buy_in_refused=pb.BuyInRefused(key="c.sit1.sit-1-x", reason="short")))])
    assert log.command_ids == ("c.sit1.sit-1-x", "wallet:c.sit1.sit-1-x")
    assert check([refused], {T: log}).ok
    assert check([refused], {T: log.command_ids}).refused_applied == (refused,)


def test_a_client_command_nobody_sent_is_unrecorded():
    verdict = check(HISTORY, {T: [*LOG, "c.s2.stranger"]})
    assert verdict.unrecorded == ((T, "c.s2.stranger"),)
    assert not verdict.ok


def _commit(command_id: str, *envelopes: pb.EventEnvelope) -> bytes:
    commit = pb.Commit()
    for env in envelopes:
        env.command_id = command_id
        commit.events.append(env.SerializeToString())
    return commit.SerializeToString()


def test_each_request_names_its_command_as_the_log_keeps_it():
    seat = table_pb2.SeatRequest(table_id=T, seat=3, command_id="x")
    assert logged_id("TopUp", table_pb2.TopUpRequest(seat=seat, amount=5)) == \
        (T, "c.s3.x", "x")
    assert logged_id("SitOut", table_pb2.SitOutRequest(seat=seat)) == (T, "c.s3.x", "x")
    assert logged_id("Leave", seat) == (T, "c.s3.x", "x")
    assert logged_id("SitDown", table_pb2.SitDownRequest(table_id=T, seat=3,
                                                         command_id="x"))[1] == "c.sit3.x"
    assert logged_id("CreateTable", table_pb2.CreateTableRequest(table_id=T,
                                                                 command_id="x"))[1] == \
        "c.create.x"


# --- the recording stub ---------------------------------------------------------------------


def _error(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), code.name)


class Stub:
    """Answers each method with the next of its ``answers`` (an exception is raised)."""

    def __init__(self, **answers: list) -> None:
        self.answers = answers
        self.read = 0

    def __getattr__(self, method: str):
        async def call(request, metadata=(), timeout=None):
            answer = self.answers[method].pop(0)
            if isinstance(answer, BaseException):
                raise answer
            return answer
        return call

    async def GetState(self, request, metadata=(), timeout=None):
        self.read += 1
        return "view"


ACT = table_pb2.ActRequest(table_id=T, seat=2, command_id="bot-9-2-ab")


async def test_one_entry_per_command_however_often_it_is_attempted():
    history = History()
    stub = RecordingStub(Stub(Act=[_error(grpc.StatusCode.UNAVAILABLE), "reply"]), history)
    with pytest.raises(grpc.aio.AioRpcError):
        await stub.Act(ACT, metadata=(), timeout=1)
    assert [e.outcome for e in history.entries] == [UNKNOWN]
    assert await stub.Act(ACT, metadata=(), timeout=1) == "reply"  # the client's retry
    [e] = history.entries
    assert (e.table_id, e.method, e.command_id, e.logged_id, e.outcome, e.calls) == \
        (T, "Act", "bot-9-2-ab", "c.s2.bot-9-2-ab", ACKNOWLEDGED, ["UNAVAILABLE", "OK"])


async def test_refusals_and_unknowns_and_reads_left_out():
    history = History()
    inner = Stub(Act=[_error(grpc.StatusCode.FAILED_PRECONDITION)],
                 Leave=[_error(grpc.StatusCode.DEADLINE_EXCEEDED)],
                 TopUp=[asyncio.CancelledError()])
    stub = RecordingStub(inner, history)
    for call, request, raised in (
            (stub.Act, ACT, grpc.aio.AioRpcError),
            (stub.Leave, table_pb2.SeatRequest(table_id=T, seat=1, command_id="l"),
             grpc.aio.AioRpcError),
            (stub.TopUp, table_pb2.TopUpRequest(seat=table_pb2.SeatRequest(
                table_id=T, seat=1, command_id="r")), asyncio.CancelledError)):
        with pytest.raises(raised):
            await call(request)
    assert await stub.GetState(table_pb2.ViewRequest(table_id=T)) == "view"
    assert inner.read == 1
    assert [(e.method, e.outcome, e.calls) for e in history.entries] == [
        ("Act", REFUSED, ["FAILED_PRECONDITION"]), ("Leave", UNKNOWN, ["DEADLINE_EXCEEDED"]),
        ("TopUp", UNKNOWN, ["CancelledError"])]


async def test_attempts_inside_the_retries_are_noted_in_the_command_they_are_of():
    history = History()
    inner = RecordingStub(Stub(Act=[_error(grpc.StatusCode.UNAVAILABLE), "reply"]), history,
                          attempts=True)

    class Retrying:  # the retries between the two: the very same request again
        def __getattr__(self, method):
            async def call(request, **kw):
                try:
                    return await getattr(inner, method)(request, **kw)
                except grpc.aio.AioRpcError:
                    return await getattr(inner, method)(request, **kw)
            return call

    assert await RecordingStub(Retrying(), history).Act(ACT) == "reply"
    [e] = history.entries
    assert (e.outcome, e.calls, e.attempts) == (ACKNOWLEDGED, ["OK"], ["UNAVAILABLE", "OK"])
    verdict = check([e], {T: [e.logged_id]})
    assert verdict.ok and verdict.retried == (e,)
    assert verdict.line().startswith("history: 1 commands (1 retried): 1 acknowledged")
    assert verdict.outcomes() == ["  1 x acknowledged Act: calls OK; attempts UNAVAILABLE, OK"]
