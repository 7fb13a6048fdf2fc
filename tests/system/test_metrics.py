"""Prometheus metrics: after bots play hands through every service, a scrape of /metrics shows
the actions (by game, structure, action), their latency histogram, the hands completed, the
rake and the append conflicts, with bounded labels only (never a table, player or seat)."""

from __future__ import annotations

import urllib.request

from poker.table.v1 import table_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families

from services.pokerctl.bots_cmd import plan_tables, play_tables
from shared.infra import metrics
from shared.infra.natsserver import free_port

ALLOWED_LABELS = {"game", "structure", "action", "service", "method", "code", "le", "cache",
                  "reason"}


def scrape(port: int) -> dict[str, list]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as reply:
        text = reply.read().decode()
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def value(samples, name: str, **labels) -> float:
    return sum(s.value for s in samples if s.name == name
               and all(s.labels.get(k) == v for k, v in labels.items()))


async def test_a_scrape_after_play_shows_the_poker_metrics_with_bounded_labels(stack):
    port = free_port()
    server = metrics.start_metrics_server(port)
    try:
        before = scrape(port)
        plans = plan_tables(tables=2, game="holdem", structure="no_limit", run_id="metrics")
        async with stack.channel("table") as channel:
            played = await play_tables(table_pb2_grpc.TableServiceStub(channel), plans,
                                       hands=3, seats=3, sponsor=stack.sponsor(), seed=7)
        assert all(not p.error for p in played), [p.error for p in played]
        after = scrape(port)
    finally:
        server.shutdown()

    def grew(family: str, name: str, **labels) -> float:
        return value(after.get(family, []), name, **labels) - \
            value(before.get(family, []), name, **labels)

    nl = {"game": "holdem", "structure": "no_limit"}
    acted = sum(p.bots.actions for p in played)
    assert grew("poker_actions", "poker_actions_total", **nl) >= acted > 0
    assert grew("poker_action_latency_seconds", "poker_action_latency_seconds_count",
                **nl) >= acted
    assert grew("poker_hands_completed", "poker_hands_completed_total", **nl) >= 6
    assert "poker_rake" in after and "poker_append_conflicts" in after
    assert grew("poker_rpc_duration_seconds", "poker_rpc_duration_seconds_count",
                service="BettingService", method="Act", code="OK") >= acted
    # the bots left: each table, vacant, left the services' folds at once
    assert grew("poker_cache_evictions", "poker_cache_evictions_total", cache="folds",
                reason="released") >= 2
    assert grew("poker_log_reads", "poker_log_reads_total") > 0
    assert {s.labels["cache"] for s in after["poker_cached_tables"]} >= {
        "folds", "recent commits", "decks", "hand keys", "own cards", "answered versions",
        "placements"}
    actions = {s.labels["action"] for s in after["poker_actions"]}
    assert actions <= {"fold", "check", "call", "bet", "raise", "bring_in", "complete"}
    table_ids = {p.plan.table_id for p in played}
    for family, samples in after.items():
        if not family.startswith("poker_"):
            continue
        for sample in samples:
            assert set(sample.labels) <= ALLOWED_LABELS, (sample.name, sample.labels)
            assert not table_ids & set(sample.labels.values()), sample
