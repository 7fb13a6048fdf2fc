"""The log's layout (shared/infra/loglayout.py): a table's shard is a stable hash of its id,
the same in every process and version; one layout value names every stream and subject; the
configuration and the NATS rights follow POKER_STREAM_SHARDS."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys

import pytest

from shared.audit.export import dump_lines, load_lines
from shared.infra import natsauth
from shared.infra.config import Config
from shared.infra.eventstore import (
    MIRROR_STREAM,
    SHARD_SEQ_SPAN,
    LogLayout,
    LogStream,
    Stored,
    prefix_of,
    shard_index,
    shard_of,
)

INSECURE = {"POKER_INSECURE": "1"}


def test_the_shard_of_a_table_is_fixed_for_ever():
    """Hard-coded: another hash function would move every table of every sharded log."""
    assert {t: shard_of(t, 4) for t in ("t1", "beta", "gamma", "ü-tisch", "delta")} == \
        {"t1": 2, "beta": 1, "gamma": 0, "ü-tisch": 3, "delta": 1}
    assert [shard_of(t, 3) for t in ("holdem-nl-abc123-1", "delta", "t1")] == [0, 1, 2]


def test_the_shard_is_the_documented_hash():
    """SHA-256 of the id's UTF-8 bytes, the first 8 bytes big-endian, modulo N (what another
    language would compute)."""
    for table in ("t1", "omaha-pl-1f2e3d-7", "ü-tisch", "x" * 64):
        digest = hashlib.sha256(table.encode("utf-8")).digest()
        for n in (1, 2, 3, 4, 7, 64):
            assert shard_of(table, n) == int.from_bytes(digest[:8], "big") % n


def test_the_hash_does_not_depend_on_the_process():
    """Python's str hash is salted per process; the shard is not."""
    code = "from shared.infra.eventstore import shard_of; print(shard_of('salted?', 64))"
    outs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           env={"PYTHONHASHSEED": seed}, check=True).stdout
            for seed in ("1", "2", "3")}
    assert outs == {f"{shard_of('salted?', 64)}\n"}


def test_one_stream_is_todays_layout():
    layout = LogLayout()
    assert layout.streams == (LogStream("POKER", "poker.table."),)
    assert layout.home("t1").subject("t1") == "poker.table.t1"
    assert layout.table_of("poker.table.t1") == "t1"
    assert layout.label == "POKER"


def test_shard_streams_and_their_subjects():
    layout = LogLayout(shards=3)
    assert [(s.name, s.subjects, s.shard) for s in layout.streams] == [
        ("POKER_S0", "poker.s0.table.>", 0), ("POKER_S1", "poker.s1.table.>", 1),
        ("POKER_S2", "poker.s2.table.>", 2)]
    assert layout.home("t1").subject("t1") == "poker.s2.table.t1"
    assert layout.table_of("poker.s1.table.a.b") == "a.b"
    legacy = LogLayout(shards=3, legacy=True)
    assert [s.name for s in legacy.streams] == ["POKER", "POKER_S0", "POKER_S1", "POKER_S2"]
    assert legacy.home("t1").name == "POKER_S2"  # the legacy stream keeps only its own tables
    assert legacy.table_of("poker.table.old") == "old"
    assert legacy.label == "POKER + POKER_S0..POKER_S2"
    # a mirror keeps the placement under its own names
    mirror = legacy.mirrored()
    assert [s.subjects for s in mirror.streams] == [
        "poker.mirror.table.>", "poker.mirror.s0.table.>", "poker.mirror.s1.table.>",
        "poker.mirror.s2.table.>"]
    assert mirror.home("t1").name == f"{MIRROR_STREAM}_S2"
    # shard 1 and shard 10 share no prefix
    wide = LogLayout(shards=11)
    assert wide.table_of("poker.s10.table.x") == "x"
    assert wide.named("POKER_S10").shard == 10


def test_layout_bounds_and_names():
    for bad in (0, 65):
        with pytest.raises(ValueError, match="from 1 to 64"):
            LogLayout(shards=bad)
    with pytest.raises(ValueError, match="no legacy"):
        LogLayout(shards=1, legacy=True)
    assert shard_index("POKER", "POKER_S3") == 3
    assert shard_index("POKER", "POKER_MIRROR_S3") is None
    assert shard_index("POKER_MIRROR", "POKER_MIRROR_S0") == 0
    assert shard_index("POKER", "POKER_S03") is None and shard_index("POKER", "POKER") is None
    assert prefix_of("POKER_S5") == "poker.s5.table."
    assert prefix_of("POKER_MIRROR_S1") == "poker.mirror.s1.table."


def test_log_positions_are_unique_across_streams_and_the_same_in_a_mirror():
    assert Stored(7, b"").log_position == 7  # one stream (and a legacy one): unchanged
    assert Stored(7, b"", shard=0).log_position == SHARD_SEQ_SPAN + 7
    assert Stored(7, b"", shard=2).log_position == 3 * SHARD_SEQ_SPAN + 7
    assert Stored(3, b"", source_seq=7, shard=2).log_position == 3 * SHARD_SEQ_SPAN + 7


def test_an_export_keeps_the_shard_of_each_commit():
    rows = [("a", Stored(1, b"x", "m1")), ("b", Stored(1, b"y", "m2", shard=2)),
            ("c", Stored(4, b"z", "m3", source_seq=9, shard=0))]
    assert list(load_lines(io.StringIO("".join(dump_lines(rows))))) == rows


def test_the_variable_is_configured_and_checked():
    assert Config.from_env("table", INSECURE).stream_shards == 1
    assert Config.from_env("dealer", {**INSECURE, "POKER_STREAM_SHARDS": "8"}).stream_shards == 8
    for raw in ("0", "65", "three", "2.5"):
        with pytest.raises(ValueError) as exc:
            Config.from_env("dealer", {**INSECURE, "POKER_STREAM_SHARDS": raw})
        assert str(exc.value) == f"POKER_STREAM_SHARDS must be an integer from 1 to 64, not " \
                                 f"{raw!r}"


def _rights(shards: int) -> dict[str, tuple[list[str], list[str]]]:
    return {u.name: (u.publish or [], u.subscribe) for u in natsauth.users(shards)}


def test_every_user_of_the_log_has_the_same_rights_on_every_shard_stream():
    one, three = _rights(1), _rights(3)
    for user in (natsauth.DEALER, natsauth.TABLE, natsauth.SERVICE):
        publish, subscribe = three[user]
        for right in one[user][0]:
            if "POKER" in right and "KV_" not in right and "POKER_" not in right:
                for k in range(3):
                    assert right.replace("POKER", f"POKER_S{k}") in publish, (user, right, k)
        for k in range(3):
            assert f"poker.s{k}.table.>" in publish and f"poker.s{k}.table.>" in subscribe
        assert not any("POKER_S3" in r or "poker.s3." in r for r in publish)
        assert "poker.*.table.>" not in publish  # no wider: it would match the mirror's
        assert set(one[user][0]) <= set(publish)  # the legacy stream's rights stay
    reader = three[natsauth.READER][0]
    for k in range(3):
        assert f"$JS.API.DIRECT.GET.POKER_S{k}" in reader
        assert f"$JS.API.DIRECT.GET.POKER_MIRROR_S{k}" in reader
        assert not any(r.startswith(f"poker.s{k}.") for r in reader)  # reads only
    mirror = three[natsauth.MIRROR][0]
    for k in range(3):
        assert f"poker.mirror.s{k}.table.>" in mirror
        assert f"$JS.API.STREAM.CREATE.POKER_MIRROR_S{k}" in mirror
        assert f"$JS.API.STREAM.INFO.POKER_S{k}" in mirror
        assert f"poker.s{k}.table.>" not in mirror
    assert _rights(1)[natsauth.WALLET] == three[natsauth.WALLET]  # no log, however split
    assert natsauth.USERS == natsauth.users(1)
    assert "POKER_STREAM_SHARDS=3" in natsauth.accounts_conf(shards=3)


def test_up_takes_the_number_of_shards_by_the_same_rule():
    import argparse

    from services.pokerctl.up_cmd import _shards
    assert _shards("4") == 4
    with pytest.raises(argparse.ArgumentTypeError, match=r"--shards must be an integer from 1 "
                                                          r"to 64, not '0'"):
        _shards("0")
