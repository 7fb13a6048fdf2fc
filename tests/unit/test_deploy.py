"""deploy/: the Kubernetes manifests render (the real `kubectl kustomize`, base + overlays)
and validate against the Kubernetes schemas offline; the compose file parses and runs every
service with its environment; the NATS settings keep every acknowledged write and forbid
services to edit streams. No Docker and no cluster needed.
"""

from __future__ import annotations

import asyncio
import importlib.util
import re
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from shared.infra.config import PORT_OFFSETS
from shared.infra.services import SERVICE as REGISTRY
from shared.infra.services import callers_of, names

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
OVERLAYS = ("dev", "prod")
#: the services of the hand path, deployed alike (the registry's, shared/infra/services.py;
#: the notary and the tournament director have tests of their own below)
SERVICES = names(lambda s: not s.on_demand)
#: the services only the table service's pods may call (NetworkPolicies)
INTERNAL = callers_of("table")
#: a container's health probe: the gRPC health check over TLS (shared/infra/probe.py)
PROBE = ["python", "-m", "shared.infra.probe"]
K8S_VERSION = "1.33"  # validated against this release's schemas


# --- rendering: the real kustomize -----------------------------------------------------------

def render(directory: Path) -> list[dict]:
    """The objects `kubectl kustomize` renders from ``directory`` (kubectl: Debian's package,
    which `make test` installs when missing)."""
    out = subprocess.run(["kubectl", "kustomize", str(directory)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, f"kubectl kustomize {directory}: {out.stderr}"
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def _containers(obj: dict) -> list[dict]:
    spec = obj.get("spec", {})
    if obj["kind"] in ("Deployment", "Job", "StatefulSet"):
        return spec["template"]["spec"]["containers"]
    return []


def by_kind_name(objects: list[dict]) -> dict[tuple[str, str], dict]:
    out = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    assert len(out) == len(objects), "two objects of the same kind share a name"
    return out


@pytest.fixture(scope="module", params=OVERLAYS)
def overlay(request):
    return request.param, by_kind_name(render(K8S / "overlays" / request.param))


# --- Kubernetes ------------------------------------------------------------------------------

def test_every_rendered_object_validates_against_the_kubernetes_schemas(overlay):
    _, objects = overlay
    for (kind, name), obj in objects.items():
        try:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{kind}/{name}: {exc.message}")


def test_each_service_has_a_deployment_with_probes_resources_service_pdb_and_hpa(overlay):
    name, objects = overlay
    for svc in SERVICES:
        port = 50050 + PORT_OFFSETS[svc]
        dep = objects[("Deployment", f"poker-{svc}")]
        assert dep["metadata"]["namespace"] == {"dev": "poker-dev", "prod": "poker"}[name]
        pod = dep["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["args"] == [f"services.{svc}"]
        for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
            # the port is TLS only, which the kubelet's gRPC probe cannot speak
            assert "grpc" not in container[probe], (svc, probe)
            assert container[probe]["exec"]["command"] == PROBE + [svc], (svc, probe)
        assert {p["containerPort"] for p in container["ports"]} == {port, 9090}
        assert container["resources"]["requests"]["cpu"]
        assert container["resources"]["requests"]["memory"]
        assert container["envFrom"] == [{"configMapRef": {"name": "poker-config"}}]
        env = {e["name"]: e for e in container["env"]}
        assert "POKER_SEAT_SECRET" not in env  # seat tokens are random: no secret to share
        assert "$(NATS_PASSWORD)@nats:4222" in env["POKER_NATS_URL"]["value"]
        assert re.fullmatch(r"ghcr\.io/example/poker-tables:\S+", container["image"])
        labels = dep["spec"]["selector"]["matchLabels"]
        assert dep["spec"]["template"]["metadata"]["labels"].items() >= labels.items()
        service = objects[("Service", svc)]
        assert service["spec"]["selector"] == labels
        assert {p["port"] for p in service["spec"]["ports"]} == {port, 9090}
        pdb = objects[("PodDisruptionBudget", f"poker-{svc}")]
        assert pdb["spec"]["selector"]["matchLabels"] == labels
        hpa = objects[("HorizontalPodAutoscaler", f"poker-{svc}")]
        assert hpa["spec"]["scaleTargetRef"]["name"] == f"poker-{svc}"
        assert hpa["spec"]["minReplicas"] <= hpa["spec"]["maxReplicas"]
        assert dep["spec"]["replicas"] >= hpa["spec"]["minReplicas"]
    # only the dealer may reach the running hands' decks
    dealer_env = {e["name"]: e for e in
                  objects[("Deployment", "poker-dealer")]["spec"]["template"]["spec"]
                  ["containers"][0]["env"]}
    assert dealer_env["POKER_NATS_URL"]["value"].startswith("tls://poker-dealer:")
    # the wallet alone reaches the money ledger, as its own user with its own password
    wallet_env = {e["name"]: e for e in
                  objects[("Deployment", "poker-wallet")]["spec"]["template"]["spec"]
                  ["containers"][0]["env"]}
    assert wallet_env["POKER_NATS_URL"]["value"].startswith("tls://poker-wallet:")
    assert wallet_env["NATS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "poker-secrets", "key": "nats-wallet-password"}


def test_the_overlays_differ_in_replicas_and_resources():
    dev = by_kind_name(render(K8S / "overlays" / "dev"))
    prod = by_kind_name(render(K8S / "overlays" / "prod"))
    for svc in SERVICES:
        key = ("Deployment", f"poker-{svc}")
        assert dev[key]["spec"]["replicas"] == 1
        assert prod[key]["spec"]["replicas"] == 3
        assert prod[("PodDisruptionBudget", f"poker-{svc}")]["spec"]["minAvailable"] == 2
        # the patch replaced the resources but kept the rest of the container
        container = prod[key]["spec"]["template"]["spec"]["containers"][0]
        assert container["resources"]["requests"]["cpu"] == "500m"
        assert container["readinessProbe"]["exec"]["command"] == PROBE + [svc]


def test_the_config_map_configures_a_replicated_stream_and_every_peer(overlay):
    _, objects = overlay
    data = objects[("ConfigMap", "poker-config")]["data"]
    assert data["POKER_STREAM_REPLICAS"] == "3"
    assert data["POKER_STREAM_SHARDS"] == "1"  # the one stream POKER, as deploy/nats names
    assert data["POKER_BIND"] == "0.0.0.0"
    assert data["POKER_METRICS_PORT"] == "9090"
    for svc in SERVICES:
        # the internal services are headless: the table service resolves every pod and
        # balances each call over them (dns:///), the client-facing table service is not
        prefix = "" if svc == "table" else "dns:///"
        assert data[f"POKER_{svc.upper()}_ADDR"] == \
            f"{prefix}{svc}:{50050 + PORT_OFFSETS[svc]}"
    for svc in SERVICES:
        service = objects[("Service", svc)]
        assert (service["spec"].get("clusterIP") == "None") == (svc != "table")
    job = objects[("Job", "poker-init")]
    env = {e["name"]: e for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["POKER_NATS_URL"]["value"].startswith("tls://poker-admin:")
    assert job["spec"]["template"]["spec"]["containers"][0]["command"] == \
        ["python", "/app/deploy/init_streams.py"]


def test_the_table_service_is_given_its_identity_provider_on_kubernetes(overlay):
    """The table service refuses to start without a JWKS and an issuer: poker-config names the
    IdP's JWKS URL (the recommended way), its issuer and audience, and the table Deployment
    sets no JWKS file beside it (both set is refused)."""
    from shared.infra.identity import DEFAULT_AUDIENCE, Verifier
    _, objects = overlay
    data = objects[("ConfigMap", "poker-config")]["data"]
    assert data["POKER_JWKS_URL"].startswith("https://")
    assert data["POKER_JWT_ISSUER"]
    assert data["POKER_JWT_AUDIENCE"] == DEFAULT_AUDIENCE
    (container,) = objects[("Deployment", "poker-table")]["spec"]["template"]["spec"][
        "containers"]
    assert container["envFrom"] == [{"configMapRef": {"name": "poker-config"}}]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert not {"POKER_JWKS_FILE", "POKER_JWKS_URL", "POKER_JWT_ISSUER"} & env.keys()
    verifier = Verifier.from_env({**data, **{k: v for k, v in env.items() if v is not None}})
    assert verifier is not None  # configured (the URL is fetched on the first token only)


# --- compose ---------------------------------------------------------------------------------

def test_the_compose_file_runs_a_three_node_cluster_and_every_service_with_its_env():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    assert {"nats-1", "nats-2", "nats-3", "nats-init", *SERVICES} <= services.keys()
    for node in ("nats-1", "nats-2", "nats-3"):
        assert services[node]["command"] == ["-c", "/etc/nats/cluster.conf"]
        assert services[node]["environment"]["NATS_SERVER_NAME"] == node
        assert any(v.endswith(":/data") for v in services[node]["volumes"])
    for svc in SERVICES:
        spec = services[svc]
        assert spec["command"] == [f"services.{svc}"]
        env = spec["environment"]
        assert env["POKER_NATS_URL"].startswith("tls://poker-")
        assert env["POKER_STREAM_REPLICAS"] == "3"
        assert env["POKER_STREAM_SHARDS"] == "1"
        assert "POKER_SEAT_SECRET" not in env
        for peer in SERVICES:
            assert env[f"POKER_{peer.upper()}_ADDR"] == f"{peer}:{50050 + PORT_OFFSETS[peer]}"
        assert spec["depends_on"]["nats-init"]["condition"] == "service_completed_successfully"
    assert services["wallet"]["environment"]["POKER_NATS_URL"] == \
        "tls://poker-wallet:${POKER_WALLET_PASSWORD:-dev-wallet}@nats-1:4222"
    # the init job makes the streams the services expect: as many shards
    assert services["nats-init"]["environment"]["POKER_STREAM_SHARDS"] == \
        services["table"]["environment"]["POKER_STREAM_SHARDS"]
    build = services["nats-init"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile"
    # only the dealer is given the compliance public key, mounted read-only
    dealer = services["dealer"]
    key = dealer["environment"]["POKER_COMPLIANCE_PUBLIC_KEY"]
    assert [v for v in dealer["volumes"] if v.endswith(f":{key}:ro")]
    assert all("POKER_COMPLIANCE_PUBLIC_KEY" not in services[s]["environment"]
               for s in SERVICES if s != "dealer")


def test_the_dealer_reads_the_compliance_public_key_from_a_config_map(overlay):
    _, objects = overlay
    dealer = objects[("Deployment", "poker-dealer")]
    pod = dealer["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    key = env["POKER_COMPLIANCE_PUBLIC_KEY"]
    (mount,) = [m for m in container["volumeMounts"] if key.startswith(m["mountPath"] + "/")]
    assert mount["readOnly"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == "poker-compliance"


def test_each_service_runs_mutual_tls_with_its_own_certificate_from_its_secret(overlay):
    """Every Deployment mounts the Secret poker-tls-<service> (its own certificate, key and
    the CA) read-only, not readable by others, and points POKER_TLS_* into it."""
    _, objects = overlay
    for svc in SERVICES:
        pod = objects[("Deployment", f"poker-{svc}")]["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        env = {e["name"]: e.get("value") for e in container["env"]}
        paths = [env["POKER_TLS_CA"], env["POKER_TLS_CERT"], env["POKER_TLS_KEY"]]
        assert "POKER_INSECURE" not in env and "POKER_INSECURE" not in \
            objects[("ConfigMap", "poker-config")]["data"]
        (mount,) = [m for m in container["volumeMounts"]
                    if all(p.startswith(m["mountPath"] + "/") for p in paths)]
        assert mount["readOnly"], svc
        (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
        secret = volume["secret"]
        assert secret["secretName"] == f"poker-tls-{svc}"
        assert secret["defaultMode"] & 0o007 == 0, svc  # nobody else on the node reads it
        assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsUser"]
        files = {p[len(mount["mountPath"]) + 1:] for p in paths}
        assert files == {"ca.crt", "tls.crt", "tls.key"}  # a kubernetes.io/tls layout


def test_only_the_table_service_is_authorised_to_call_the_internal_ones():
    """The identities each service accepts (shared/infra/tls.py CALLERS) agree with the
    NetworkPolicies: the internal services take the table service only."""
    from shared.infra.tls import CALLERS
    assert set(CALLERS) == set(INTERNAL)
    assert all(CALLERS[svc] == {"table"} for svc in INTERNAL if svc != "wallet")
    # the wallet: the table service, and the admin as its cashier (by port-forward, not a pod)
    assert CALLERS["wallet"] == {"table", "tournament", "admin"}  # and the director


def test_every_compose_service_mounts_the_ca_and_its_own_certificate_only():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    for svc in SERVICES:
        spec = compose["services"][svc]
        directory = spec["environment"]["POKER_TLS_DIR"]
        assert "POKER_INSECURE" not in spec["environment"]
        mounted = {v.split(":")[1]: v for v in spec["volumes"]}
        tls = {path.rsplit("/", 1)[1] for path in mounted if path.startswith(directory + "/")}
        assert tls == {"ca.pem", f"{svc}.pem", f"{svc}.key"}, svc  # no other identity's key
        assert all(mounted[f"{directory}/{f}"].endswith(":ro") for f in tls)
        assert spec["healthcheck"]["test"] == ["CMD", *PROBE, svc]
    assert all(compose["services"]["table"]["depends_on"][s]["condition"] == "service_healthy"
               for s in SERVICES if s != "table")


def _compose_default(value: str) -> str:
    """A compose value with each ``${VAR:-default}`` taken at its default."""
    return re.sub(r"\$\{[A-Z0-9_]+:-([^}]*)\}", r"\1", value)


def test_the_compose_table_service_trusts_the_dev_issuer_pokerctl_token_makes(tmp_path):
    """`pokerctl token --player x --data-dir deploy` makes deploy/identity/jwks.json: the
    table service mounts that file read-only, and with the defaults its settings verify the
    tokens of that issuer. No other service is given an identity provider."""
    from services.pokerctl.token_cmd import identity_dir
    from shared.infra.devissuer import DevIssuer
    from shared.infra.identity import Verifier
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    table = compose["services"]["table"]
    env = table["environment"]
    path = env["POKER_JWKS_FILE"]
    assert "POKER_JWKS_URL" not in env
    (volume,) = [v for v in table["volumes"] if v.split(":")[1] == path]
    source, _, mode = volume.split(":")
    assert mode == "ro"
    issuer = DevIssuer.create(tmp_path / "identity")
    assert (DEPLOY / source).resolve() == \
        (identity_dir(str(DEPLOY)) / issuer.jwks_file.name).resolve()
    assert not any(v.endswith("issuer.key") or "issuer.key:" in v for v in table["volumes"])
    assert env["POKER_JWT_ISSUER"] == "${POKER_JWT_ISSUER:-pokerctl-dev}"
    settings = {k: _compose_default(str(v)) for k, v in env.items()}
    assert settings["POKER_JWT_ISSUER"] == DevIssuer.ISSUER
    assert settings["POKER_JWT_AUDIENCE"] == DevIssuer.AUDIENCE
    verifier = Verifier.from_env({**settings, "POKER_JWKS_FILE": str(issuer.jwks_file)})
    assert verifier.verify(issuer.token("alice")).subject == "alice"
    for svc in SERVICES:
        if svc != "table":
            assert not {"POKER_JWKS_FILE", "POKER_JWKS_URL"} & \
                compose["services"][svc]["environment"].keys(), svc


def test_the_init_job_makes_the_assets_up_makes_with_the_log(monkeypatch):
    """deploy/init_streams.py (the admin's one-shot job) makes the streams and buckets of
    services/pokerctl/assets.py (the list `pokerctl up` makes: test_shards checks it on a
    cluster) beside the POKER stream, with the same replicas: most services' NATS users may
    not."""
    spec = importlib.util.spec_from_file_location("init_streams", DEPLOY / "init_streams.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    made: list[tuple[str, int]] = []

    class Store:
        stream, js = "POKER", object()

        async def close(self):
            made.append(("closed", 0))

    async def connect(url, name, settings, connect_timeout, shards):
        made.append(("POKER", settings.replicas))
        made.append(("shards", shards))
        return Store()

    async def assets(js, replicas, lease_ttl_ms):
        assert js is Store.js
        made.append(("assets", replicas))

    monkeypatch.setenv("POKER_NATS_URL", "tls://poker-admin:x@nats:4222")
    monkeypatch.setenv("POKER_STREAM_REPLICAS", "3")
    monkeypatch.delenv("POKER_STREAM_SHARDS", raising=False)
    monkeypatch.setattr(module.EventStore, "connect", staticmethod(connect))
    monkeypatch.setattr(module, "make_assets", assets)
    asyncio.run(module.main())
    assert ("POKER", 3) in made and ("assets", 3) in made  # the list up makes too
    assert ("shards", 1) in made  # POKER_STREAM_SHARDS unset: the one stream
    assert made[-1] == ("closed", 0)


def test_the_dockerfile_installs_the_project_builds_the_protos_and_takes_a_module():
    text = (DEPLOY / "Dockerfile").read_text()
    assert text.startswith("#") and "FROM python:3.11-slim" in text
    assert "pip install ." in text and "grpc_tools.protoc" in text
    assert 'ENTRYPOINT ["python", "-m"]' in text
    assert 'CMD ["services.table"]' in text
    (expose,) = re.findall(r"^EXPOSE (.+)$", text, re.M)
    assert {int(p) for p in expose.split()} == \
        {50050 + offset for offset in PORT_OFFSETS.values()} | {9090}
    for copied in re.findall(r"^COPY (\S+)", text, re.M):
        assert (ROOT / copied).exists(), copied


# --- NATS ------------------------------------------------------------------------------------

def test_nats_helm_values_run_three_jetstream_nodes_fsyncing_every_write():
    values = yaml.safe_load((DEPLOY / "nats" / "values.yaml").read_text())
    config = values["config"]
    assert config["cluster"] == {"enabled": True, "replicas": 3, "name": "poker"}
    assert config["jetstream"]["fileStore"]["enabled"] is True
    assert config["jetstream"]["merge"]["sync_interval"] == "always"
    users = {u["user"]: u for u in config["merge"]["accounts"]["POKER"]["users"]}
    for user in ("poker-service", "poker-dealer"):
        publish = users[user]["permissions"]["publish"]
        for verb in ("DELETE", "PURGE", "UPDATE", "MSG.DELETE"):
            assert f"$JS.API.STREAM.{verb}.>" in publish["deny"], (user, verb)
        assert not any(s.startswith("$JS.API.STREAM.") and s.split(".")[3] in
                       ("DELETE", "PURGE", "UPDATE", "CREATE") for s in publish["allow"])
    assert "$KV.POKER_DECKS.>" in users["poker-dealer"]["permissions"]["publish"]["allow"]
    assert "$KV.POKER_DECKS.>" in users["poker-service"]["permissions"]["publish"]["deny"]


_UNITS = {"": 1, "B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "Ki": 2**10, "Mi": 2**20,
          "Gi": 2**30, "k": 2**10, "m": 2**20, "g": 2**30}


def _bytes(size: str) -> int:
    """A size as Go's GOMEMLIMIT, Kubernetes or compose's mem_limit writes it."""
    number, unit = re.fullmatch(r"(\d+)\s*([A-Za-z]*)", str(size)).groups()
    return int(number) * _UNITS[unit]


def test_every_nats_node_has_a_go_soft_memory_limit_below_its_container_limit():
    """NATS's advice: GOMEMLIMIT at about 80% of the container's memory, so the collector
    works harder before the kernel kills the node rather than after."""
    values = yaml.safe_load((DEPLOY / "nats" / "values.yaml").read_text())["container"]
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    nodes = {"helm": (values["env"]["GOMEMLIMIT"], values["merge"]["resources"]["limits"]
                      ["memory"])}
    nodes |= {name: (compose[name]["environment"]["GOMEMLIMIT"], compose[name]["mem_limit"])
              for name in ("nats-1", "nats-2", "nats-3")}
    for name, (soft, hard) in nodes.items():
        assert 0.7 <= _bytes(soft) / _bytes(hard) <= 0.9, (name, soft, hard)
    assert len({_bytes(hard) for _, hard in nodes.values()}) == 1  # helm and compose agree


def test_the_compose_nats_config_is_accepted_by_nats_server(tmp_path):
    """``nats-server -t`` checks the config (accounts included) without starting."""
    from shared.infra.natsauth import SYS, USERS
    from shared.infra.natsserver import server_binary
    from shared.infra.tls import generate
    certs = generate(tmp_path, identities=("nats",))
    env = {"NATS_SERVER_NAME": "nats-1", "NATS_TLS_CERT": str(certs / "nats.pem"),
           "NATS_TLS_KEY": str(certs / "nats.key"), "NATS_TLS_CA": str(certs / "ca.pem"),
           **{u.password_variable: u.name.replace("-", "") for u in (*USERS, SYS)}}
    done = subprocess.run([str(server_binary()), "-t", "-c", "cluster.conf"],
                          cwd=DEPLOY / "nats", env=env, capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (DEPLOY / "nats" / "cluster.conf").read_text()
    assert "sync_interval: always" in text
    assert text.count("nats-route://") == 3


def test_only_the_table_service_calls_the_internal_services(overlay):
    """NetworkPolicies: the dealer (whose SeatCards hands out hole cards), betting, showdown,
    rake and the wallet take gRPC from the pods of the services whose certificates they accept
    (the table service; the tournament director too at the wallet) only; the metrics port stays
    open. Exactly the services that accept the table service's certificate have one."""
    _, objects = overlay
    assert {name for kind, name in objects if kind == "NetworkPolicy"
            and name.endswith("-from-table")} == {f"poker-{svc}-from-table" for svc in INTERNAL}
    for svc in INTERNAL:
        policy = objects[("NetworkPolicy", f"poker-{svc}-from-table")]["spec"]
        deployment = objects[("Deployment", f"poker-{svc}")]
        assert policy["podSelector"]["matchLabels"] == \
            deployment["spec"]["selector"]["matchLabels"]
        assert policy["policyTypes"] == ["Ingress"]
        grpc_rule, metrics_rule = policy["ingress"]
        pods = sorted(c for c in REGISTRY[svc].callers or () if c in REGISTRY)
        assert sorted(rule["podSelector"]["matchLabels"]["app.kubernetes.io/component"]
                      for rule in grpc_rule["from"]) == pods
        assert grpc_rule["ports"] == [{"protocol": "TCP", "port": 50050 + PORT_OFFSETS[svc]}]
        assert "from" not in metrics_rule and metrics_rule["ports"][0]["port"] == 9090
    table = objects[("Deployment", "poker-table")]["spec"]["template"]["metadata"]["labels"]
    assert table["app.kubernetes.io/component"] == "table"


def test_the_wallet_egresses_to_nats_only(overlay):
    """The wallet's pods reach the NATS servers' client port (the Helm chart's server pods)
    and the cluster DNS that resolves them, nothing else."""
    _, objects = overlay
    policies = [o for (kind, _), o in objects.items() if kind == "NetworkPolicy"
                and o["spec"]["podSelector"]["matchLabels"].get("app.kubernetes.io/component")
                == "wallet"]
    egress = [p["spec"] for p in policies if "Egress" in p["spec"]["policyTypes"]]
    (spec,) = egress
    labels = objects[("Deployment", "poker-wallet")]["spec"]["selector"]["matchLabels"]
    assert spec["podSelector"]["matchLabels"] == labels
    assert spec["policyTypes"] == ["Egress"]
    nats, dns = spec["egress"]
    assert nats["to"] == [{"podSelector": {"matchLabels": {
        "app.kubernetes.io/name": "nats", "app.kubernetes.io/component": "nats"}}}]
    assert nats["ports"] == [{"protocol": "TCP", "port": 4222}]
    (container,) = objects[("Deployment", "poker-wallet")]["spec"]["template"]["spec"][
        "containers"]
    url = next(e["value"] for e in container["env"] if e["name"] == "POKER_NATS_URL")
    assert url.endswith("@nats:4222")  # the port the policy opens
    (peer,) = dns["to"]
    assert peer["namespaceSelector"] == {"matchLabels": {
        "kubernetes.io/metadata.name": "kube-system"}}
    assert peer["podSelector"] == {"matchLabels": {"k8s-app": "kube-dns"}}
    assert {p["port"] for p in dns["ports"]} == {53}


def test_the_web_pages_run_as_a_reader_of_the_log_and_a_client_of_the_table_service(overlay):
    _, objects = overlay
    web = objects[("Deployment", "poker-web")]
    pod = web["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"] == ["services.web"]
    env = {e["name"]: e for e in container["env"]}
    assert env["POKER_WEB_TOKEN"]["valueFrom"]["secretKeyRef"]["key"] == "web-token"
    # the log, read only, and its sessions bucket
    assert env["POKER_NATS_URL"]["value"].startswith("tls://poker-web:")
    assert "POKER_TLS_CA" in env and "POKER_TLS_KEY" not in env  # its token is its identity
    port = env["POKER_WEB_PORT"]["value"]
    assert {p["containerPort"] for p in container["ports"]} == {int(port)}
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == "/healthz"
    assert container["resources"]["requests"] and container["resources"]["limits"]
    assert pod["securityContext"]["runAsNonRoot"]
    assert container["securityContext"]["readOnlyRootFilesystem"]
    service = objects[("Service", "web")]
    assert service["spec"]["ports"][0]["targetPort"] == "http"
    assert "sessionAffinity" not in service["spec"]  # sessions live in the bucket, not a pod
    assert ("PodDisruptionBudget", "poker-web") in objects


def test_every_service_of_the_registry_is_deployed_on_its_port(overlay):
    """Each service of shared/infra/services.py has its Deployment listening at its port and
    its compose service; one that serves a gRPC service of its own has a Service of its name
    (what poker-config's addresses, dns:///<name>:<port>, resolve) selecting its pods."""
    _, objects = overlay
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    for svc in names():
        port = 50050 + PORT_OFFSETS[svc]
        deployment = objects[("Deployment", f"poker-{svc}")]
        (container,) = deployment["spec"]["template"]["spec"]["containers"]
        assert {p["containerPort"] for p in container["ports"]} == {port, 9090}, svc
        assert compose[svc]["command"] == [f"services.{svc}"]
        if REGISTRY[svc].grpc_service is None:
            continue
        service = objects[("Service", svc)]["spec"]
        assert service["selector"] == deployment["spec"]["selector"]["matchLabels"], svc
        assert port in {p["port"] for p in service["ports"]}, svc


def test_the_notary_runs_with_its_key_from_a_secret_and_its_own_user(overlay):
    """deploy/k8s/base/notary.yaml: `services.notary`, probed over TLS like the others, its own
    NATS user and certificate, the signing key from the Secret poker-notary-key (read-only,
    nobody else on the node reads it), a lease name per pod; the checkpoint settings in
    poker-config."""
    _, objects = overlay
    dep = objects[("Deployment", "poker-notary")]
    pod = dep["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["args"] == ["services.notary"]
    for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
        assert container[probe]["exec"]["command"] == PROBE + ["notary"]
    assert {p["containerPort"] for p in container["ports"]} == \
        {50050 + PORT_OFFSETS["notary"], 9090}
    env = {e["name"]: e for e in container["env"]}
    assert env["POKER_NATS_URL"]["value"].startswith("tls://poker-notary:")
    assert env["NATS_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "poker-secrets", "key": "nats-notary-password"}
    assert env["POKER_INSTANCE_ID"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    key = env["POKER_NOTARY_KEY"]["value"]
    (mount,) = [m for m in container["volumeMounts"] if key.startswith(m["mountPath"] + "/")]
    assert mount["readOnly"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == mount["name"]]
    assert volume["secret"]["secretName"] == "poker-notary-key"
    assert volume["secret"]["defaultMode"] & 0o007 == 0
    assert key.endswith("/" + volume["secret"]["items"][0]["path"])
    (tls,) = [v for v in pod["volumes"] if v.get("secret", {}).get("secretName") ==
              "poker-tls-notary"]
    assert tls["secret"]["defaultMode"] & 0o007 == 0
    assert container["securityContext"]["readOnlyRootFilesystem"]
    assert ("PodDisruptionBudget", "poker-notary") in objects
    data = objects[("ConfigMap", "poker-config")]["data"]
    assert float(data["POKER_CHECKPOINT_S"]) > 0 and "POKER_WITNESSES" in data
    from shared.infra.config import Config
    config = Config.from_env("notary", {**data, "POKER_INSECURE": "1"})
    assert config.checkpoint_s == 10 and config.witnesses == ()


def test_the_compose_notary_has_its_user_key_and_certificate():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    notary = compose["services"]["notary"]
    assert notary["command"] == ["services.notary"]
    env = notary["environment"]
    assert env["POKER_NATS_URL"].startswith("tls://poker-notary:")
    mounted = {v.split(":")[1]: v for v in notary["volumes"]}
    assert mounted[env["POKER_NOTARY_KEY"]].endswith(":ro")
    directory = env["POKER_TLS_DIR"]
    tls = {p.rsplit("/", 1)[1] for p in mounted if p.startswith(directory + "/")}
    assert tls == {"ca.pem", "notary.pem", "notary.key"}
    assert notary["healthcheck"]["test"] == ["CMD", *PROBE, "notary"]
    assert "POKER_NOTARY_PASSWORD" in compose["services"]["nats-1"]["environment"]
