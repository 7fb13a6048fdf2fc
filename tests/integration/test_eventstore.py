"""The JetStream event store against a real nats-server (JetStream, file store,
sync_interval always): guarded appends, message-id dedupe, reads, and a log that cannot be
rewritten."""

from __future__ import annotations

import asyncio

import pytest
from nats.js.errors import APIError

from shared.infra.eventstore import READ_BATCH, STREAM, AppendConflict, EventStore, subject


async def _winners(results: list) -> tuple[list, list]:
    wins = [r for r in results if not isinstance(r, BaseException)]
    conflicts = [r for r in results if isinstance(r, AppendConflict)]
    others = [r for r in results if isinstance(r, BaseException) and r not in conflicts]
    assert not others, others
    return wins, conflicts


@pytest.mark.parametrize("writers", ["one connection", "two connections"])
async def test_two_concurrent_appends_at_one_sequence_exactly_one_wins(store, nats_server,
                                                                      writers):
    other = store if writers == "one connection" else await EventStore.connect(nats_server.url)
    try:
        # the first commit of a table (expected 0) and later ones: each round one wins
        expected = 0
        for round_ in range(10):
            a, b = f"a{round_}".encode(), f"b{round_}".encode()
            results = await asyncio.gather(
                store.append("t1", a, expected, f"t1:a{round_}"),
                other.append("t1", b, expected, f"t1:b{round_}"), return_exceptions=True)
            wins, conflicts = await _winners(results)
            assert len(wins) == 1 and len(conflicts) == 1, results
            assert conflicts[0].expected == expected and conflicts[0].table_id == "t1"
            seq, duplicate = wins[0]
            assert not duplicate and seq > expected
            last = await store.last("t1")
            assert last.seq == seq and last.data in (a, b)
            expected = seq
        log = await store.read("t1")
        assert len(log) == 10  # one commit per round, none lost, none doubled
    finally:
        if other is not store:
            await other.close()


async def test_a_duplicated_msg_id_has_one_effect_and_returns_the_original_sequence(store):
    seq, duplicate = await store.append("t1", b"x", 0, "t1:cmd-1")
    assert (seq, duplicate) == (1, False)
    # the retry the client sends when the acknowledgement was lost (same expected sequence)
    assert await store.append("t1", b"x", 0, "t1:cmd-1") == (seq, True)
    # a retry that already knows the new sequence: JetStream's dedupe answers
    assert await store.append("t1", b"x", seq, "t1:cmd-1") == (seq, True)
    assert [s.seq for s in await store.read("t1")] == [seq]
    assert (await store.last("t1")).msg_id == "t1:cmd-1"


async def test_a_duplicate_after_the_subject_moved_on_is_a_conflict_not_a_second_copy(store):
    """Inside the window, on a single node, JetStream answers a stale retry with "wrong last
    sequence"; the last commit is another command's, so the store cannot call it a
    duplicate: it reports a conflict (the repository then answers from its command index)."""
    s1, _ = await store.append("t1", b"x", 0, "t1:cmd-1")
    s2, _ = await store.append("t1", b"y", s1, "t1:cmd-2")
    with pytest.raises(AppendConflict):
        await store.append("t1", b"x", 0, "t1:cmd-1")
    assert [s.seq for s in await store.read("t1")] == [s1, s2]


async def test_read_after_a_sequence_returns_that_tables_later_commits_in_order(store):
    seqs = {"t1": [], "t2": []}
    for i in range(6):  # interleaved: the tables' stream sequences are not contiguous
        for t in ("t1", "t2"):
            last = seqs[t][-1] if seqs[t] else 0
            seq, _ = await store.append(t, f"{t}-{i}".encode(), last, f"{t}:{i}")
            seqs[t].append(seq)
    t1 = await store.read("t1")
    assert [s.seq for s in t1] == seqs["t1"]
    assert [s.data for s in t1] == [f"t1-{i}".encode() for i in range(6)]
    assert [s.msg_id for s in t1] == [f"t1:{i}" for i in range(6)]
    after = await store.read("t1", after_seq=seqs["t1"][2])
    assert [s.seq for s in after] == seqs["t1"][3:]
    # a sequence in between (another table's) works as well
    assert [s.seq for s in await store.read("t1", after_seq=seqs["t2"][2])] == seqs["t1"][3:]
    assert await store.read("t1", after_seq=seqs["t1"][-1]) == []


async def test_read_pages_past_one_batch(store):
    seq = 0
    for i in range(READ_BATCH + 40):
        seq, _ = await store.append("long", b"%d" % i, seq, f"long:{i}")
    log = await store.read("long")
    assert [s.data for s in log] == [b"%d" % i for i in range(READ_BATCH + 40)]
    assert len(await store.read("long", after_seq=log[READ_BATCH].seq)) == 39
    everything = await store.read_all()
    assert len(everything) == READ_BATCH + 40


async def test_read_all_returns_every_table_with_its_subject(store):
    expected = []
    last = {"a": 0, "b": 0}
    for i, t in enumerate(["a", "b", "a", "b", "b"]):
        seq, _ = await store.append(t, b"%d" % i, last[t], f"{t}:{i}")
        last[t] = seq
        expected.append((subject(t), seq, b"%d" % i))
    everything = await store.read_all()
    assert [(subj, s.seq, s.data) for subj, s in everything] == expected
    later = await store.read_all(after_seq=expected[1][1])
    assert [(subj, s.seq) for subj, s in later] == [(e[0], e[1]) for e in expected[2:]]
    only_b = await store.read_all(subject_filter=subject("b"))
    assert [s.seq for _, s in only_b] == [e[1] for e in expected if e[0] == subject("b")]


async def test_a_table_with_no_events(store):
    assert await store.read("nobody") == []
    assert await store.last("nobody") is None
    assert await store.read_all(subject_filter=subject("nobody")) == []
    await store.append("somebody", b"x", 0, "somebody:1")  # other tables do not leak in
    assert await store.read("nobody") == []
    assert await store.last("nobody") is None


async def test_an_append_to_a_table_with_no_events_must_expect_none(store):
    with pytest.raises(AppendConflict):
        await store.append("t1", b"x", 5, "t1:1")
    assert await store.read("t1") == []


async def test_the_stream_denies_delete_and_purge(store):
    s1, _ = await store.append("t1", b"evidence", 0, "t1:1")
    await store.append("t2", b"more", 0, "t2:1")
    jsm = store.nc.jsm()
    with pytest.raises(APIError) as deleted:
        await jsm.delete_msg(STREAM, s1)
    assert deleted.value.err_code == 10057  # message delete not permitted
    with pytest.raises(APIError) as purged:
        await jsm.purge_stream(STREAM)
    assert purged.value.err_code == 10110  # stream purge not permitted
    with pytest.raises(APIError):
        await jsm.purge_stream(STREAM, subject=subject("t1"))
    # nor can the flags be lifted by updating the stream
    config = (await jsm.stream_info(STREAM)).config
    config.deny_delete = False
    with pytest.raises(APIError):
        await jsm.update_stream(config)
    config = (await jsm.stream_info(STREAM)).config
    config.deny_purge = False
    with pytest.raises(APIError):
        await jsm.update_stream(config)
    info = await jsm.stream_info(STREAM)
    assert info.config.deny_delete and info.config.deny_purge
    assert info.state.messages == 2
    assert [s.data for s in await store.read("t1")] == [b"evidence"]


async def test_the_stream_is_file_backed_and_survives_a_server_restart(nats_server):
    store = await EventStore.connect(nats_server.url)
    s1, _ = await store.append("t1", b"acknowledged", 0, "t1:1")
    await store.close()
    nats_server.stop(kill=True)  # kill -9: sync_interval always, so the ack means on disk
    nats_server.start()
    store = await EventStore.connect(nats_server.url)
    try:
        assert [(s.seq, s.data) for s in await store.read("t1")] == [(s1, b"acknowledged")]
    finally:
        await store.close()


async def test_every_table_is_listed_past_the_100000_subjects_of_one_stream_info_reply(
        tmp_path):
    """nats-server puts at most 100,000 subjects in one stream info reply and nats-py asks
    for the first page only: a log of more tables than that hid the rest from the clocks,
    the lobby and the compliance audit. Each is read page by page now."""
    from services.pokerctl.audit_pool import stream_tables
    from shared.infra.natsserver import NatsServer

    # fsync every 2 minutes: 100,003 messages, none of which needs to survive a power cut
    server = NatsServer(tmp_path / "js", sync_interval="2m").start(log_file=tmp_path / "n.log")
    store = await EventStore.connect(server.url)
    try:
        tables = [f"t{i:06d}" for i in range(100_003)]
        for i, table in enumerate(tables[:-1]):  # one message each (counted, not folded)
            await store.nc.publish(subject(table), b"x")
            if i % 10_000 == 0:
                await store.nc.flush()
        # a stream stores its messages in order: once the last one's ack is in, all are
        ack = await store.js.publish(subject(tables[-1]), b"x", stream=STREAM)
        assert ack.seq == len(tables)

        counts = await store.table_counts()
        assert len(counts) == len(tables) and set(counts.values()) == {1}
        assert await store.table_ids() == tables
        _, audited = await stream_tables(store)
        assert audited == counts
    finally:
        await store.close()
        server.stop()
