"""One source for the NATS users (shared/infra/natsauth.py): deploy/nats/accounts.conf is its
rendering, the Helm values hold the same users and permissions, and every deployment gives
each service its own user and every password variable the configs read."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from shared.infra import natsauth
from shared.infra.services import names

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
#: the services of the hand path (the registry's, shared/infra/services.py; the notary and
#: the tournament director: tests/unit/test_deploy.py)
SERVICES = names(lambda s: not s.on_demand)


def test_accounts_conf_is_the_rendering_of_natsauth():
    assert (DEPLOY / "nats" / "accounts.conf").read_text() == natsauth.accounts_conf(), \
        "deploy/nats/accounts.conf is stale: python -m shared.infra.natsauth"


def test_the_helm_values_hold_the_same_users():
    merge = yaml.safe_load((DEPLOY / "nats" / "values.yaml").read_text())["config"]["merge"]
    assert merge["system_account"] == "SYS"
    accounts = merge["accounts"]
    assert accounts["POKER"]["jetstream"] == "enabled"
    want = natsauth.helm_users()
    assert accounts["POKER"]["users"] == want["POKER"]
    assert accounts["SYS"]["users"] == want["SYS"]


def test_the_helm_chart_gets_every_password_and_tls():
    values = yaml.safe_load((DEPLOY / "nats" / "values.yaml").read_text())
    env = values["container"]["env"]
    for u in (*natsauth.USERS, natsauth.SYS):
        assert env[u.password_variable]["valueFrom"]["secretKeyRef"]["name"] == "nats-users"
    assert values["config"]["nats"]["tls"]["enabled"] is True
    assert values["config"]["merge"]["cluster"]["tls"]["ca_file"]


def test_compose_gives_nats_every_password_and_each_service_its_own_user():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    for node in ("nats-1", "nats-2", "nats-3"):
        env = services[node]["environment"]
        for u in (*natsauth.USERS, natsauth.SYS):
            assert u.password_variable in env, (node, u.name)
        assert {"NATS_TLS_CERT", "NATS_TLS_KEY", "NATS_TLS_CA"} <= env.keys()
    for svc in SERVICES:
        url = services[svc]["environment"]["POKER_NATS_URL"]
        assert url.startswith(f"tls://{natsauth.SERVICE_USERS[svc]}:"), (svc, url)
    assert services["nats-init"]["environment"]["POKER_NATS_URL"].startswith(
        f"tls://{natsauth.ADMIN}:")


def test_kubernetes_gives_each_service_its_own_user():
    for svc in SERVICES:
        text = (DEPLOY / "k8s" / "base" / f"{svc}.yaml").read_text()
        (url,) = re.findall(r"value: (tls://\S+)", text)
        assert url.startswith(f"tls://{natsauth.SERVICE_USERS[svc]}:"), (svc, url)
        # the user's password from its own key of poker-secrets (poker-X: nats-X-password)
        (key,) = re.findall(r"name: poker-secrets\s+key: (\S+)", text)
        role = natsauth.SERVICE_USERS[svc].removeprefix("poker-")
        assert key == f"nats-{role}-password", (svc, key)
    config = (DEPLOY / "k8s" / "base" / "configmap.yaml").read_text()
    for user in {*natsauth.SERVICE_USERS.values(), natsauth.ADMIN}:
        assert f"nats-{user.removeprefix('poker-')}-password=" in config, user
