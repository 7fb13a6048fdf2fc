"""Prometheus metrics of a service process, served at ``/metrics`` on POKER_METRICS_PORT
(``Config.metrics_port``, shared/infra/config.py; 0, the default, serves none).

Named by the Prometheus conventions (base units, ``_total`` counters). Labels are bounded
sets only: game, structure, action, and the RPC's service, method and status code. Never a
table id, player, seat or command id: those belong in logs, not in time series.

    poker_actions_total{game,structure,action}        actions appended (betting service;
                                                      a time-out's fold or check included)
    poker_action_latency_seconds{game,structure}      decide + append of an action
    poker_hands_completed_total{game,structure}       hands ended (showdown service)
    poker_rake_total{game,structure}                  chips raked (rake service)
    poker_append_conflicts_total                      appends that lost a race and re-folded
    poker_rpc_duration_seconds{service,method,code}   every gRPC call the service answered
    poker_tables_stopped_total                        tables stopped because their log does
                                                      not check (alert on any increase)
    poker_watchers                                    Watch streams open (table service)
    poker_table_hubs                                  tables followed live (table service)
    poker_views_made_total                            views made for watchers: one per commit
                                                      and kind of viewer, however many watch
    poker_watchers_dropped_total                      Watch streams closed for falling behind
    poker_cached_tables{cache}                        tables a per-table cache holds
                                                      (shared/infra/tablecache.py)
    poker_cache_evictions_total{cache,reason}         tables forgotten: released (vacant or
                                                      closed), idle, bound
    poker_cache_reloads_total{cache}                  tables made again after being forgotten
    poker_log_reads_total                             reads of a table's commits from the log
    poker_step_streams_served                         Steps streams a service answers now
    poker_step_streams_open                           Steps streams the table service holds
    poker_steps_resent_total                          steps sent again on a reopened stream
"""

from __future__ import annotations

from collections.abc import Iterable

from prometheus_client import Counter, Gauge, Histogram, start_http_server

from shared.poker.events import ActionTaken, HandEnded, RakeTaken

GAME_LABELS = ("game", "structure")
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

ACTIONS = Counter("poker_actions_total", "Player actions appended to the log",
                  [*GAME_LABELS, "action"])
ACTION_LATENCY = Histogram("poker_action_latency_seconds",
                           "Time to decide and append one player action", GAME_LABELS,
                           buckets=LATENCY_BUCKETS)
HANDS_COMPLETED = Counter("poker_hands_completed_total", "Hands played to the end",
                          GAME_LABELS)
RAKE = Counter("poker_rake_total", "Chips taken as rake", GAME_LABELS)
APPEND_CONFLICTS = Counter("poker_append_conflicts_total",
                           "Guarded appends that lost a race for the table (re-folded)")
TABLES_STOPPED = Counter("poker_tables_stopped_total",
                         "Tables stopped because their log does not check (hash chain, parse)")
WATCHERS = Gauge("poker_watchers", "Watch streams open in this process")
HUBS = Gauge("poker_table_hubs", "Tables followed live by this process (views, clocks)")
VIEWS_MADE = Counter("poker_views_made_total",
                     "Views made for watchers (one per commit and kind of viewer)")
WATCHERS_DROPPED = Counter("poker_watchers_dropped_total",
                           "Watch streams closed because they fell behind")
CACHED_TABLES = Gauge("poker_cached_tables", "Tables held by a per-table cache", ["cache"])
CACHE_EVICTIONS = Counter("poker_cache_evictions_total",
                          "Tables a per-table cache forgot (released, idle, bound)",
                          ["cache", "reason"])
CACHE_RELOADS = Counter("poker_cache_reloads_total",
                        "Tables a per-table cache made again after forgetting them", ["cache"])
LOG_READS = Counter("poker_log_reads_total", "Reads of a table's commits from the log")
LOG_COMMITS_READ = Counter("poker_log_commits_read_total",
                           "Commits those reads of a table's commits took from the log")
STEP_STREAMS_SERVED = Gauge("poker_step_streams_served",
                            "Steps streams this service answers now")
STEP_STREAMS_OPEN = Gauge("poker_step_streams_open", "Steps streams this process holds open")
STEPS_RESENT = Counter("poker_steps_resent_total",
                       "Steps sent again (same command id) on a reopened Steps stream")
RPC_DURATION = Histogram("poker_rpc_duration_seconds", "gRPC calls answered",
                         ["service", "method", "code"], buckets=LATENCY_BUCKETS)


def _game_labels(options) -> tuple[str, str]:
    if options is None:
        return "", ""
    return options.game.value, options.structure.value


def record_commit(options, events: Iterable, seconds: float | None = None) -> None:
    """Count what one appended commit did; ``options``: the table's (None before it exists);
    ``seconds``: how long deciding and appending it took."""
    game, structure = _game_labels(options)
    acted = False
    for event in events:
        if isinstance(event, ActionTaken):
            ACTIONS.labels(game, structure, event.action.value).inc()
            acted = True
        elif isinstance(event, HandEnded):
            HANDS_COMPLETED.labels(game, structure).inc()
        elif isinstance(event, RakeTaken) and event.amount > 0:
            RAKE.labels(game, structure).inc(event.amount)
    if acted and seconds is not None:
        ACTION_LATENCY.labels(game, structure).observe(seconds)


def record_rpc(service: str, method: str, code: str, seconds: float) -> None:
    RPC_DURATION.labels(service, method, code).observe(seconds)


def start_metrics_server(port: int, host: str = "127.0.0.1"):
    """Serve ``/metrics`` on ``host:port`` (a service's: ``Config.metrics_port``) from a
    daemon thread; returns the HTTP server (``shutdown()`` stops it) or None when ``port`` is
    0."""
    if not port:
        return None
    server, _thread = start_http_server(port, addr=host)
    return server
