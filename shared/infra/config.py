"""The configuration of a service process, read from the environment once, at start, and
passed down: :meth:`Config.from_env` is the only place a service reads ``os.environ``
(shared/infra/boot.py calls it, as does the container probe, shared/infra/probe.py); the
modules it uses (TLS, NATS, identity, limits, leases, failpoints) parse the mapping it hands
them. The same variables drive `pokerctl up` (services/pokerctl/up.py), the compose file and
the Kubernetes manifests (deploy/).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from . import failpoints as _failpoints
from .eventstore import MAX_SHARDS
from .identity import Verifier
from .lease import DEFAULT_TTL_MS, default_instance_id, instance_id_from_env, ttl_ms_from_env
from .limits import LimitSettings
from .natsconn import ca_file
from .services import SERVICES, names
from .tablecache import CacheSettings
from .tls import TlsConfig

DEFAULT_NATS_URL = "nats://127.0.0.1:4222"
DEFAULT_BASE_PORT = 50050
DEFAULT_HOST = "127.0.0.1"
#: the clock keeper's tick (services/table/keeper.py has the same default for a keeper made
#: without a Config)
DEFAULT_CLOCK_TICK_MS = 200
DEFAULT_CLOCK_LIST_S = 30.0

#: service name -> offset from the base port used by `pokerctl up`, by offset (the registry:
#: shared/infra/services.py)
PORT_OFFSETS = {s.name: s.port_offset for s in sorted(SERVICES, key=lambda s: s.port_offset)}
#: the web pages (services/web) listen at the base port plus this (HTTP, not a gRPC peer)
WEB_PORT_OFFSET = 8
#: the services that check their callers' tokens (the others accept the table service's
#: certificate only): only they build ``Config.identity``
TOKEN_CHECKED = frozenset(names(lambda s: s.checks_tokens))

_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
_MOST_BASE_PORT = 65535 - max(PORT_OFFSETS.values())


def _integer(env: Mapping[str, str], variable: str, default: int, *, least: int = 0,
             most: int | None = None, what: str = "an integer") -> int:
    """``env[variable]`` as an integer in range (unset or blank: ``default``); else
    ValueError naming the variable and what it must be."""
    raw = env.get(variable)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        value = None
    if value is None or value < least or (most is not None and value > most):
        bound = f"from {least} to {most}" if most is not None else f"of at least {least}"
        raise ValueError(f"{variable} must be {what} {bound}, not {raw!r}")
    return value


def _seconds(env: Mapping[str, str], variable: str, default: float, least: float,
             most: float) -> float:
    raw = env.get(variable)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not least <= value <= most:  # NaN fails too
        raise ValueError(f"{variable} must be a number of seconds from {least} to {most}, "
                         f"not {raw!r}")
    return value


def witnesses(raw: str) -> tuple[tuple[str, str], ...]:
    """POKER_WITNESSES: ``URL=VKEY`` entries, comma-separated (URL: the witness's submission
    prefix, http(s)://host:port[/path]; VKEY: its cosignature key, c2sp.org/signed-note's
    ``name+id+base64``), as (URL, VKEY) pairs; ValueError naming the variable if one is not
    of that form (the key itself is checked by the notary)."""
    out = []
    for entry in (e.strip() for e in raw.split(",")):
        if not entry:
            continue
        url, sep, vkey = entry.partition("=")
        if not sep or not url.startswith(("http://", "https://")) or vkey.count("+") < 2:
            raise ValueError(f"POKER_WITNESSES must be URL=VKEY entries separated by commas "
                             f"(URL http(s)://..., VKEY name+id+key), not {entry!r}")
        out.append((url.rstrip("/"), vkey))
    return tuple(out)


def base_port(env: Mapping[str, str]) -> int:
    """POKER_BASE_PORT (default :data:`DEFAULT_BASE_PORT`): the services of `pokerctl up`
    listen at it plus their :data:`PORT_OFFSETS`."""
    return _integer(env, "POKER_BASE_PORT", DEFAULT_BASE_PORT, most=_MOST_BASE_PORT,
                    what="a port number")


def stream_shards(env: Mapping[str, str]) -> int:
    """POKER_STREAM_SHARDS (default 1): how many JetStream streams the tables are split over
    (shared/infra/loglayout.py's LogLayout); every process of a deployment, and its NATS
    accounts (shared/infra/natsauth.py), must say the same."""
    return _integer(env, "POKER_STREAM_SHARDS", 1, least=1, most=MAX_SHARDS)


def service_address(name: str, env: Mapping[str, str]) -> str:
    """Where service ``name`` is reached: POKER_<NAME>_ADDR (``host:port``, or a comma list
    of instances), else 127.0.0.1 at POKER_BASE_PORT + its offset (what `pokerctl up` runs).
    A service's peers (``Config.addresses``) and the client commands' defaults
    (services/pokerctl) both come from here."""
    return env.get(f"POKER_{name.upper()}_ADDR") or \
        f"{DEFAULT_HOST}:{base_port(env) + PORT_OFFSETS[name]}"


@dataclass(frozen=True)
class Config:
    """Everything a service process is configured with. Every variable, its default (an
    unset or empty variable takes it) and the field it fills:

    ============================== ====================================== =================
    variable                       default                                field
    ============================== ====================================== =================
    POKER_NATS_URL                 nats://127.0.0.1:4222 (tls://user:pw@  nats_url
                                   host:port; a comma list: a cluster)
    POKER_NATS_CA                  POKER_TLS_CA, else POKER_TLS_DIR/      nats_ca
                                   ca.pem, else "" (system trust store)
    POKER_BIND                     127.0.0.1                              host
    POKER_BASE_PORT                50050                                  port, addresses
    POKER_PORT                     POKER_BASE_PORT + the service's        port
                                   offset (table 1, dealer 2, betting 3,
                                   showdown 4, rake 5, wallet 6, notary 7,
                                   tournament 9)
    POKER_TABLE_ADDR,              127.0.0.1:(POKER_BASE_PORT + offset);  addresses
    POKER_DEALER_ADDR,             host:port[,host:port...]
    POKER_BETTING_ADDR,
    POKER_SHOWDOWN_ADDR,
    POKER_RAKE_ADDR,
    POKER_WALLET_ADDR,
    POKER_NOTARY_ADDR,
    POKER_TOURNAMENT_ADDR
    POKER_LOG_LEVEL                INFO (DEBUG INFO WARNING ERROR         log_level
                                   CRITICAL)
    POKER_STREAM_REPLICAS          1 (1 to 5)                             stream_replicas
    POKER_STREAM_SHARDS            1 (1 to 64: streams the tables are     stream_shards
                                   split over, by a hash of the table id;
                                   the same for every process)
    POKER_METRICS_PORT             0 (no /metrics)                        metrics_port
    POKER_TLS_DIR                  unset (DIR/ca.pem, DIR/<service>.pem   tls
                                   and .key)
    POKER_TLS_CA, POKER_TLS_CERT,  unset (each overrides POKER_TLS_DIR's  tls
    POKER_TLS_KEY                  file)
    POKER_INSECURE                 unset (1: plaintext, if no TLS is set) tls = None
    POKER_COMPLIANCE_PUBLIC_KEY    "" (the dealer refuses to start)       compliance_public_key
    POKER_INSTANCE_ID              host-pid-random                        instance_id
    POKER_LEASE_TTL_MS             5000 (at least 100)                    lease_ttl_ms
    POKER_CLOCK_TICK_MS            200 (0: the keeper ticks when told)    clock_tick_ms
    POKER_CLOCK_LIST_S             30 (the keeper's read of the log's     clock_list_s
                                   table list, a safety net: busy tables
                                   are announced)
    POKER_CACHE_TABLES             2000 (tables each per-table cache      cache
                                   keeps, least recently used out first)
    POKER_CACHE_IDLE_S             300 (an unused table is forgotten      cache
                                   after this; a vacant one at once)
    POKER_LIMIT_SEAT_COMMANDS_PER_S  50                                   limits
    POKER_LIMIT_SEAT_COMMANDS_BURST  200                                  limits
    POKER_LIMIT_SEAT_TOGGLES_PER_S   0.1                                  limits
    POKER_LIMIT_SEAT_TOGGLES_BURST   10                                   limits
    POKER_LIMIT_CALLER_JOINS_PER_S   50                                   limits
    POKER_LIMIT_CALLER_JOINS_BURST   300                                  limits
    POKER_LIMIT_PLAYER_JOINS_PER_S   0.2 (sit-downs per account)          limits
    POKER_LIMIT_PLAYER_JOINS_BURST   10                                   limits
    POKER_LIMIT_WATCHES_PER_CALLER   64                                   limits
    POKER_LIMIT_WATCHES_PER_TABLE    4096 (spectators)                    limits
    POKER_LIMIT_WATCHES_PER_PROCESS  20000 (spectators)                   limits
    POKER_LIMIT_WATCHES_PER_RELAY    20000 (a caller with role relay)     limits
    POKER_LIMIT_WATCH_QUEUE          64 (views waiting; then ABORTED)     limits
    POKER_LIMIT_RECEIPTS_PER_S       1 (GetReceipt per player)            limits
    POKER_LIMIT_RECEIPTS_BURST       30                                   limits
    POKER_LIMIT_TOURNAMENT_ENTRIES_PER_S  0.2 (Register and Unregister   limits
                                   per player, at the director)
    POKER_LIMIT_TOURNAMENT_ENTRIES_BURST  10                              limits
    POKER_JWKS_FILE,               unset (one of them, or the table       identity
    POKER_JWKS_URL                 service refuses to start)
    POKER_JWT_ISSUER               unset (required with a JWKS)           identity
    POKER_JWT_AUDIENCE             poker-tables                           identity
    POKER_JWT_LEEWAY_S             30 (0 to 3600)                         identity
    POKER_JWT_ROLES_CLAIM          roles                                  identity
    POKER_TOKEN_MAX_TTL_S          2678400 (31 days: exp - iat at most)   identity
    POKER_FAILPOINTS               unset (tests only: NAME=kill,...)      failpoints
    POKER_NOTARY_KEY               "" (the notary refuses to start): the  notary_key
                                   log's signing key file (PRIVATE+KEY+
                                   origin+id+key, `pokerctl keys notary`)
    POKER_CHECKPOINT_S             10 (seconds between checkpoints, when  checkpoint_s
                                   the tree grew; 0.05 to 86400)
    POKER_WITNESSES                "" (none): witnesses the notary asks   witnesses
                                   to cosign, URL=VKEY[,URL=VKEY...]
    POKER_DIRECTOR_TOKEN           "" (the director refuses to start): its director_token
                                   token to the table service (roles
                                   director and operator)
    ============================== ====================================== =================

    The table service alone uses instance_id, lease_ttl_ms, clock_tick_ms, limits and
    identity (built for the :data:`TOKEN_CHECKED` services only); the dealer uses
    compliance_public_key; the notary (services/notary) notary_key, checkpoint_s,
    witnesses, and instance_id and lease_ttl_ms for its lease. The parsers each variable goes through: TLS
    :meth:`TlsConfig.from_env`, the NATS CA :func:`shared.infra.natsconn.ca_file`, identity
    :meth:`Verifier.from_env`, limits :meth:`LimitSettings.from_mapping`, leases
    :func:`shared.infra.lease.ttl_ms_from_env` and ``instance_id_from_env``, failpoints
    :func:`shared.infra.failpoints.parse`; the rest here.
    """

    nats_url: str
    host: str
    port: int
    addresses: dict[str, str]  # peer service -> "host:port[,host:port...]"
    log_level: str
    stream_replicas: int
    #: how many streams the log's tables are split over (shared/infra/loglayout.py); a log
    #: that has another number is refused at connect
    stream_shards: int = 1
    #: the dealer's: the compliance role's public key file, which every hand key is sealed to
    compliance_public_key: str = ""
    #: the service's certificate and the CA it trusts (POKER_TLS_DIR, ...); None: plaintext,
    #: POKER_INSECURE=1 (from_env refuses to build a Config with neither)
    tls: TlsConfig | None = None
    #: the CA file NATS servers are checked against; "": none (the system's trust store)
    nats_ca: str = ""
    #: Prometheus /metrics port (0: none)
    metrics_port: int = 0
    #: the table service's: per-caller limits of the client API
    limits: LimitSettings = LimitSettings()
    #: the table service's: its name as a lease holder, and the lease bucket's TTL
    instance_id: str = field(default_factory=default_instance_id)
    lease_ttl_ms: int = DEFAULT_TTL_MS
    #: the table service's: how often the clock keeper looks for late players (0: only when
    #: told, for tests)
    clock_tick_ms: int = DEFAULT_CLOCK_TICK_MS
    #: the table service's: how often the clock keeper reads the log's whole table list
    #: besides when it takes a slot (busy tables are announced: services/table/keeper.py)
    clock_list_s: float = DEFAULT_CLOCK_LIST_S
    #: the table service's: the verifier of its callers' tokens (None: no JWKS configured)
    identity: Verifier | None = None
    #: failpoint -> action, armed by boot.main (tests only: shared/infra/failpoints.py)
    failpoints: Mapping[str, str] = field(default_factory=dict)
    #: the notary's: its signing key file, the seconds between checkpoints, the witnesses
    #: it asks to cosign them ((submission prefix URL, vkey) pairs)
    notary_key: str = ""
    checkpoint_s: float = 10.0
    witnesses: tuple[tuple[str, str], ...] = ()
    #: the tournament director's: its token to the table service (roles director, operator)
    director_token: str = ""
    #: every service's: how many tables each per-table cache keeps and how long an unused
    #: one stays (shared/infra/tablecache.py)
    cache: CacheSettings = CacheSettings()

    @classmethod
    def from_env(cls, service: str, env: Mapping[str, str] | None = None) -> Config:
        """The configuration of ``service`` from ``env`` (None: this process's environment,
        read here once). A value that is wrong: ValueError naming the variable and what it
        must be; TLS neither configured nor refused: :class:`~shared.infra.tls.TlsError`.
        (A process started by boot.main prints the message and exits 2.)"""
        env = dict(os.environ) if env is None else env  # the one read, a snapshot
        addresses = {name: service_address(name, env) for name in PORT_OFFSETS}
        port = _integer(env, "POKER_PORT", base_port(env) + PORT_OFFSETS.get(service, 0),
                        most=65535, what="a port number")
        log_level = (env.get("POKER_LOG_LEVEL") or "INFO").strip().upper()
        if log_level not in _LOG_LEVELS:
            raise ValueError(f"POKER_LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, not "
                             f"{env['POKER_LOG_LEVEL']!r}")
        return cls(
            nats_url=env.get("POKER_NATS_URL") or DEFAULT_NATS_URL,
            host=env.get("POKER_BIND") or DEFAULT_HOST,
            port=port,
            addresses=addresses,
            log_level=log_level,
            stream_replicas=_integer(env, "POKER_STREAM_REPLICAS", 1, least=1, most=5),
            stream_shards=stream_shards(env),
            compliance_public_key=env.get("POKER_COMPLIANCE_PUBLIC_KEY", ""),
            tls=TlsConfig.from_env(service, env),
            nats_ca=ca_file(env) or "",
            metrics_port=_integer(env, "POKER_METRICS_PORT", 0, most=65535,
                                  what="a port number"),
            limits=LimitSettings.from_mapping(env),
            instance_id=instance_id_from_env(env),
            lease_ttl_ms=ttl_ms_from_env(env),
            clock_tick_ms=_integer(env, "POKER_CLOCK_TICK_MS", DEFAULT_CLOCK_TICK_MS,
                                   what="an integer number of milliseconds"),
            clock_list_s=_seconds(env, "POKER_CLOCK_LIST_S", DEFAULT_CLOCK_LIST_S, 0.05,
                                  86400.0),
            identity=Verifier.from_env(env) if service in TOKEN_CHECKED else None,
            failpoints=_failpoints.parse(env.get(_failpoints.VARIABLE, "")),
            notary_key=env.get("POKER_NOTARY_KEY", ""),
            checkpoint_s=_seconds(env, "POKER_CHECKPOINT_S", 10.0, 0.05, 86400.0),
            witnesses=witnesses(env.get("POKER_WITNESSES", "")),
            director_token=env.get("POKER_DIRECTOR_TOKEN", ""),
            cache=CacheSettings.from_env(env),
        )

