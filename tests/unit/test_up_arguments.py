"""`pokerctl up`'s arguments are checked before anything starts: --replicas is 1 to
MAX_REPLICAS (0 or a word is refused with the range, not accepted silently)."""

from __future__ import annotations

import argparse

import pytest

from services.pokerctl import up_cmd
from services.pokerctl.up import MAX_REPLICAS, LocalCluster
from services.pokerctl.up_processes import ClusterError


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="pokerctl")
    up_cmd.register(parser.add_subparsers())
    return parser.parse_args(["up", *argv])


@pytest.mark.parametrize("bad", ["0", "-1", str(MAX_REPLICAS + 1), "two"])
def test_replicas_outside_the_range_are_refused(bad, capsys):
    with pytest.raises(SystemExit) as exited:
        parse("--replicas", bad)
    assert exited.value.code == 2
    assert f"1 to {MAX_REPLICAS}" in capsys.readouterr().err


def test_replicas_in_the_range_are_taken():
    assert parse("--replicas", "2").replicas == 2
    assert parse().replicas == 1


def test_the_cluster_itself_refuses_no_replicas(tmp_path):
    with pytest.raises(ClusterError, match="--replicas"):
        LocalCluster(tmp_path, base_port=None, replica_count=0)
