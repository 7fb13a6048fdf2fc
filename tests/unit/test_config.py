"""shared/infra/config.py: a service's whole configuration, read from the environment once, at
start; a wrong value is refused by name (the process exits 2 with the message)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from shared.infra import boot, failpoints
from shared.infra.config import DEFAULT_BASE_PORT, PORT_OFFSETS, Config, service_address
from shared.infra.devissuer import DevIssuer
from shared.infra.identity import Verifier
from shared.infra.limits import LimitSettings
from shared.infra.tls import TlsConfig, generate

ROOT = Path(__file__).resolve().parents[2]
INSECURE = {"POKER_INSECURE": "1"}


class Recording(dict):
    """A mapping that remembers every variable asked for."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.asked: set[str] = set()

    def get(self, key, default=None):
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.asked.add(key)
        return super().__contains__(key)


def test_the_defaults():
    c = Config.from_env("dealer", INSECURE)
    assert (c.nats_url, c.host, c.port) == ("nats://127.0.0.1:4222", "127.0.0.1",
                                            DEFAULT_BASE_PORT + PORT_OFFSETS["dealer"])
    assert c.addresses == {name: f"127.0.0.1:{DEFAULT_BASE_PORT + offset}"
                           for name, offset in PORT_OFFSETS.items()}
    assert (c.log_level, c.stream_replicas, c.metrics_port, c.tls, c.nats_ca) == \
        ("INFO", 1, 0, None, "")
    assert (c.lease_ttl_ms, c.clock_tick_ms, c.limits) == (5000, 200, LimitSettings())
    assert c.compliance_public_key == "" and c.identity is None and c.failpoints == {}
    assert c.instance_id and c.instance_id != Config.from_env("dealer", INSECURE).instance_id


def test_every_setting_from_its_variable(tmp_path):
    certs = generate(tmp_path / "tls")
    env = {"POKER_TLS_DIR": str(certs), "POKER_NATS_URL": "tls://u:p@nats:4222",
           "POKER_BIND": "0.0.0.0", "POKER_BASE_PORT": "40000", "POKER_PORT": "41000",
           "POKER_DEALER_ADDR": "d1:1,d2:2", "POKER_LOG_LEVEL": "warning",
           "POKER_STREAM_REPLICAS": "3", "POKER_METRICS_PORT": "9090",
           "POKER_COMPLIANCE_PUBLIC_KEY": "/k.pub", "POKER_INSTANCE_ID": "table-7",
           "POKER_LEASE_TTL_MS": "1000", "POKER_CLOCK_TICK_MS": "0",
           "POKER_CLOCK_LIST_S": "2.5", "POKER_LIMIT_WATCHES_PER_TABLE": "2",
           "POKER_FAILPOINTS": "cashier.after_debit=kill",
           **DevIssuer.create(tmp_path / "identity").env()}
    c = Config.from_env("table", env)
    assert (c.nats_url, c.host, c.port) == ("tls://u:p@nats:4222", "0.0.0.0", 41000)
    assert c.addresses["dealer"] == "d1:1,d2:2"
    assert c.addresses["wallet"] == f"127.0.0.1:{40000 + PORT_OFFSETS['wallet']}"
    assert (c.log_level, c.stream_replicas, c.metrics_port) == ("WARNING", 3, 9090)
    assert c.tls == TlsConfig.in_dir(certs, "table") and c.nats_ca == str(certs / "ca.pem")
    assert (c.compliance_public_key, c.instance_id, c.lease_ttl_ms, c.clock_tick_ms) == \
        ("/k.pub", "table-7", 1000, 0)
    assert c.clock_list_s == 2.5 and Config.from_env("table", INSECURE).clock_list_s == 30.0
    assert c.limits == LimitSettings(watches_per_table=2)
    assert c.failpoints == {"cashier.after_debit": "kill"}
    assert isinstance(c.identity, Verifier) and c.identity.issuer == DevIssuer.ISSUER
    # only the table service checks callers' tokens: the others build no verifier
    assert Config.from_env("dealer", env).identity is None
    # without a base port, POKER_PORT alone moves the service
    assert Config.from_env("rake", {**INSECURE, "POKER_PORT": "0"}).port == 0
    assert Config.from_env("rake", {**INSECURE, "POKER_BASE_PORT": "100"}).port == 105


def test_a_mapping_is_all_it_reads_and_none_is_the_process_environment(monkeypatch):
    monkeypatch.setenv("POKER_PORT", "12345")
    monkeypatch.setenv("POKER_INSECURE", "1")
    assert Config.from_env("dealer", INSECURE).port == DEFAULT_BASE_PORT + 2
    assert Config.from_env("dealer").port == 12345


def test_every_variable_it_reads_is_in_its_docstring_and_every_one_there_is_read(tmp_path):
    doc = Config.__doc__
    asked: set[str] = set()
    identity = DevIssuer.create(tmp_path / "identity").env()
    certs = {"POKER_TLS_DIR": str(generate(tmp_path / "tls"))}
    for service in PORT_OFFSETS:
        for tls in (INSECURE, certs):
            env = Recording({**tls, **identity})
            Config.from_env(service, env)
            asked |= env.asked
    assert asked, "nothing read"
    missing = sorted(v for v in asked if not re.search(rf"\b{v}\b", doc))
    assert not missing, f"read but not in Config's docstring: {missing}"
    listed = set(re.findall(r"\bPOKER_[A-Z0-9_]*[A-Z0-9]\b", doc))
    assert not listed - asked, f"in the docstring but never read: {sorted(listed - asked)}"
    for f in LimitSettings.__dataclass_fields__:
        assert f"POKER_LIMIT_{f.upper()}" in doc


@pytest.mark.parametrize("service, variable, raw, what", [
    ("dealer", "POKER_PORT", "fifty", "a port number from 0 to 65535"),
    ("dealer", "POKER_PORT", "70000", "a port number from 0 to 65535"),
    ("dealer", "POKER_BASE_PORT", "5e4", "a port number from 0 to"),
    ("dealer", "POKER_BASE_PORT", "65535", "a port number from 0 to"),
    ("dealer", "POKER_METRICS_PORT", "-1", "a port number from 0 to 65535"),
    ("dealer", "POKER_STREAM_REPLICAS", "0", "an integer from 1 to 5"),
    ("dealer", "POKER_STREAM_REPLICAS", "three", "an integer from 1 to 5"),
    ("dealer", "POKER_LOG_LEVEL", "loud", "one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
    ("table", "POKER_LEASE_TTL_MS", "-5000", "at least 100"),
    ("table", "POKER_LEASE_TTL_MS", "50", "at least 100"),
    ("table", "POKER_LEASE_TTL_MS", "5s", "an integer number of milliseconds"),
    ("table", "POKER_CLOCK_TICK_MS", "-1", "an integer number of milliseconds of at least 0"),
    ("table", "POKER_CLOCK_TICK_MS", "0.5", "an integer number of milliseconds"),
    ("table", "POKER_CLOCK_LIST_S", "0", "a number of seconds from 0.05"),
    ("table", "POKER_CLOCK_LIST_S", "soon", "a number of seconds from 0.05"),
    ("table", "POKER_LIMIT_SEAT_COMMANDS_BURST", "lots", "an integer of at least 0"),
    ("table", "POKER_FAILPOINTS", "cashier.after_debit=explode", "NAME=kill"),
])
def test_a_wrong_value_is_refused_naming_the_variable(service, variable, raw, what):
    with pytest.raises(ValueError) as exc:
        Config.from_env(service, {**INSECURE, variable: raw})
    message = str(exc.value)
    assert message.startswith(variable) and what in message, message
    if variable != "POKER_FAILPOINTS":
        assert repr(raw) in message or raw in message, message


def test_the_table_services_identity_settings_are_checked(tmp_path):
    jwks = DevIssuer.create(tmp_path).env()["POKER_JWKS_FILE"]
    with pytest.raises(ValueError, match="POKER_JWT_ISSUER is not set"):
        Config.from_env("table", {**INSECURE, "POKER_JWKS_FILE": jwks})
    with pytest.raises(ValueError, match="POKER_JWT_LEEWAY_S must be a number"):
        Config.from_env("table", {**INSECURE, "POKER_JWKS_FILE": jwks,
                                  "POKER_JWT_ISSUER": "x", "POKER_JWT_LEEWAY_S": "soon"})
    # not the dealer's business: it does not look at them
    assert Config.from_env("dealer", {**INSECURE, "POKER_JWKS_FILE": jwks}).identity is None


def test_the_clients_defaults_are_the_services_addresses(monkeypatch):
    """`pokerctl`'s default table and wallet addresses are the ones the services use."""
    from services.pokerctl.datadir import default_table_addr
    from services.pokerctl.wallet_cmd import default_wallet_addr
    for var in ("POKER_TABLE_ADDR", "POKER_WALLET_ADDR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("POKER_BASE_PORT", "41000")
    addresses = Config.from_env("dealer", {**INSECURE, "POKER_BASE_PORT": "41000"}).addresses
    assert default_table_addr() == addresses["table"] == "127.0.0.1:41001"
    assert default_wallet_addr() == addresses["wallet"] == "127.0.0.1:41006"
    monkeypatch.setenv("POKER_WALLET_ADDR", "cashier:443")
    assert default_wallet_addr() == "cashier:443" == service_address(
        "wallet", {"POKER_WALLET_ADDR": "cashier:443"})


def test_failpoints_are_armed_only_when_told():
    assert failpoints.parse(" a=kill, b=kill ,") == {"a": "kill", "b": "kill"}
    failpoints.arm({"somewhere.else": "kill"})
    try:
        failpoints.hit("cashier.after_debit")  # not armed: nothing happens
    finally:
        failpoints.arm({})


def _no_setup(*_):
    raise AssertionError("the service must not start")


@pytest.mark.parametrize("service, env, text", [
    ("dealer", {"POKER_PORT": "fifty"}, "dealer: POKER_PORT must be a port number"),
    ("table", {"POKER_LEASE_TTL_MS": "-1"}, "table: POKER_LEASE_TTL_MS must be at least 100"),
])
def test_boot_exits_2_with_the_message(service, env, text, monkeypatch, capsys):
    monkeypatch.setenv("POKER_INSECURE", "1")
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    with pytest.raises(SystemExit) as exc:
        boot.main(service, _no_setup)
    assert exc.value.code == 2 and text in capsys.readouterr().err


def test_boot_builds_the_table_services_access_from_the_config(monkeypatch, capsys):
    from services.table.server import access_from_config
    monkeypatch.setenv("POKER_INSECURE", "1")
    for var in ("POKER_JWKS_FILE", "POKER_JWKS_URL"):
        monkeypatch.delenv(var, raising=False)
    with pytest.raises(SystemExit) as exc:
        boot.main("table", _no_setup, access_from_config)
    assert exc.value.code == 2
    assert "the table service checks every caller's token" in capsys.readouterr().err


def test_a_service_process_exits_2_on_a_wrong_value():
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), "POKER_INSECURE": "1",
           "POKER_STREAM_REPLICAS": "many"}
    proc = subprocess.run([sys.executable, "-m", "services.rake"], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "rake: POKER_STREAM_REPLICAS must be an integer from 1 to 5, not 'many'" in \
        proc.stderr
