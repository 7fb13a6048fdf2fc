"""Mutual TLS between the services: a private CA, one certificate per identity, and the
credentials and channels built from them.

    generate(dir)                       # dir/ca.pem, ca.key and <identity>.pem/.key per identity
    tls = TlsConfig.from_env("dealer", env)  # POKER_TLS_DIR (or POKER_TLS_CA/_CERT/_KEY); None when
                                        # POKER_INSECURE=1; TlsError when neither is set
    server_credentials(tls, require_client_auth=True)
    channel(address, tls, service="dealer")       # grpc.aio channel, verifies the dealer's cert

An identity is the certificate's common name: the service a process is (``table``,
``dealer``, ...), ``nats`` for the NATS servers, ``client`` for what pokerctl and bots present,
``admin`` for the job that creates the streams. Every certificate also names its identity as a
DNS name (``dealer``, ``dealer.poker.svc``, ...), so a client checks that it reached the
service it meant to (:func:`channel` verifies the server against its identity, not against the
address) and the same files work under compose and Kubernetes. Which identities a service
accepts is :data:`CALLERS`, enforced by shared/infra/rpc.py's ``CallerIdentity``.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import grpc
import structlog
from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from .files import write_private
from .services import SERVICE, SERVICES, names

log = structlog.get_logger()

#: every service's (shared/infra/services.py), then the NATS servers', the clients', the
#: admin's and the web pages'
DEFAULT_IDENTITIES = (*names(), "nats", "client", "admin", "web")
DEFAULT_HOSTS = ("127.0.0.1", "localhost")
#: Kubernetes namespaces of deploy/k8s's overlays: each identity is valid as
#: <identity>.<namespace>.svc[.cluster.local] there
NAMESPACES = ("poker", "poker-dev")
#: names a NATS node is reached by beyond "nats": compose's nodes, the Helm chart's pods
_EXTRA_DNS = {"nats": ("nats-1", "nats-2", "nats-3", "*.nats-headless")}

CA_DAYS = 3650
LEAF_DAYS = 825
#: a leaf that expires sooner than this is issued again by :func:`generate`
RENEW_BEFORE = dt.timedelta(days=30)

#: service -> the identities it accepts calls from (the health check and reflection are open
#: to any certificate of the CA: probes). Only the table service runs hands, so only it may
#: ask the dealer for a seat's cards or have the betting service act for a seat. The wallet
#: moves money: the table service (buy-ins, cash-outs, rake), the tournament director (entries,
#: refunds, prizes) and the admin (the cashier; its
#: Deposit, Withdraw and Balances are the admin's alone, services/wallet/server.py). A service
#: not named here (the client-facing table service) accepts any caller. (The registry:
#: shared/infra/services.py.)
CALLERS: Mapping[str, frozenset[str]] = {
    s.name: s.callers for s in SERVICES if s.callers is not None}
#: methods that accept a few identities beyond their service's CALLERS: the web pages read a
#: signed-in player's wallet balance (for the player only, services/web/table_page.py); they
#: move no money
METHOD_CALLERS: Mapping[str, frozenset[str]] = {
    f"/{SERVICE['wallet'].grpc_service}/Balance": frozenset({"web"}),
}
#: methods every certificate of the CA may call, whatever its identity
OPEN_METHODS = ("/grpc.health.v1.Health/", "/grpc.reflection.")

INSECURE_WARNING = ("POKER_INSECURE=1: gRPC in PLAINTEXT, every caller trusted (anyone who "
                    "reaches a port can read hole cards and act for seats); for debugging only")


class TlsError(RuntimeError):
    """TLS is not configured, or its files cannot be read or made."""


# --- certificates ------------------------------------------------------------------------


def dns_names(identity: str) -> list[str]:
    """The DNS names a certificate of ``identity`` is valid for: the identity itself (a
    compose service name, or the client's check of whom it reached) and its Kubernetes
    Service names in each namespace of :data:`NAMESPACES`."""
    bases = [identity, *_EXTRA_DNS.get(identity, ())]
    names = list(bases)
    for ns in NAMESPACES:
        for base in bases:
            names += [f"{base}.{ns}", f"{base}.{ns}.svc", f"{base}.{ns}.svc.cluster.local"]
    return names


def _write_public(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def _key_bytes(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _load_ca(directory: Path) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    """The CA in ``directory``, made on first use."""
    cert_path, key_path = directory / "ca.pem", directory / "ca.key"
    if cert_path.exists() and key_path.exists():
        cert = x509.load_pem_x509_certificate(cert_path.read_bytes())
        key = serialization.load_pem_private_key(key_path.read_bytes(), password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):  # this module makes EC keys only
            raise TlsError(f"{key_path} is not an elliptic-curve key: remove ca.pem and "
                           "ca.key to make a new CA (then every certificate is reissued)")
        return cert, key
    if cert_path.exists() or key_path.exists():
        raise TlsError(f"{directory} holds only one of ca.pem and ca.key: restore the other, "
                       "or remove both to make a new CA (then every certificate is reissued)")
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "poker tables CA")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=CA_DAYS))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True,
                                         crl_sign=True, content_commitment=False,
                                         key_encipherment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                           critical=False)
            .sign(key, hashes.SHA256()))
    write_private(key_path, _key_bytes(key))
    _write_public(cert_path, _pem(cert))
    return cert, key


def _sans(identity: str, hosts: Iterable[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = []
    for host in [*hosts, *dns_names(identity)]:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            out.append(x509.DNSName(host))
    return list(dict.fromkeys(out))


def _leaf_current(path: Path, ca: x509.Certificate, identity: str,
                  sans: list[x509.GeneralName]) -> bool:
    """An existing leaf is kept when this CA issued it for this identity and these names and
    it is not about to expire."""
    try:
        cert = x509.load_pem_x509_certificate(path.read_bytes())
        cert.verify_directly_issued_by(ca)
        have = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (OSError, ValueError, TypeError, x509.ExtensionNotFound, InvalidSignature):
        return False  # missing, unreadable, or another CA's
    cn = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return (bool(cn) and cn[0].value == identity and set(sans) <= set(have)
            and cert.not_valid_after_utc - dt.datetime.now(dt.UTC) > RENEW_BEFORE)


def _issue(ca: x509.Certificate, ca_key: ec.EllipticCurvePrivateKey, identity: str,
           sans: list[x509.GeneralName]) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, identity)]))
            .issuer_name(ca.subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(min(now + dt.timedelta(days=LEAF_DAYS), ca.not_valid_after_utc))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False,
                                         key_cert_sign=False, crl_sign=False,
                                         content_commitment=False, data_encipherment=False,
                                         key_agreement=False, encipher_only=False,
                                         decipher_only=False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH,
                                                  ExtendedKeyUsageOID.CLIENT_AUTH]),
                           critical=False)
            .add_extension(x509.SubjectAlternativeName(sans), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


def generate(directory: str | os.PathLike, identities: Sequence[str] = DEFAULT_IDENTITIES,
             hosts: Sequence[str] = DEFAULT_HOSTS) -> Path:
    """Make (or complete) a certificate directory; returns it.

    ``ca.pem``/``ca.key`` are made on first use and reused after. For each identity,
    ``<identity>.pem``/``<identity>.key``: ECDSA P-256, CN = the identity, valid for ``hosts``
    (IP addresses as IP names) and :func:`dns_names`, for client and server authentication.
    A leaf already there is kept if the CA issued it for the same identity and names and it
    is not near expiry, else issued again. Keys are owner-only (0600)."""
    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    ca, ca_key = _load_ca(target)
    for identity in identities:
        if not identity or "/" in identity or identity.startswith("."):
            raise TlsError(f"not an identity name: {identity!r}")
        sans = _sans(identity, hosts)
        cert_path, key_path = target / f"{identity}.pem", target / f"{identity}.key"
        if key_path.exists() and _leaf_current(cert_path, ca, identity, sans):
            continue
        cert, key = _issue(ca, ca_key, identity, sans)
        write_private(key_path, _key_bytes(key))
        _write_public(cert_path, _pem(cert))
    return target


def common_name(pem: bytes) -> str:
    """The CN of a PEM certificate (tests, messages)."""
    cert = x509.load_pem_x509_certificate(pem)
    return str(cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value)


# --- configuration -------------------------------------------------------------------------


@dataclass(frozen=True)
class TlsConfig:
    """The files a process uses: the CA it trusts, and its own certificate and key (a
    client with no certificate, e.g. a player's, has ``cert``/``key`` None)."""

    ca: Path
    cert: Path | None = None
    key: Path | None = None

    @classmethod
    def in_dir(cls, directory: str | os.PathLike, identity: str | None) -> TlsConfig:
        """The files :func:`generate` made in ``directory`` for ``identity`` (None: the CA
        only)."""
        d = Path(directory)
        if identity is None:
            return cls(d / "ca.pem")
        return cls(d / "ca.pem", d / f"{identity}.pem", d / f"{identity}.key")

    @classmethod
    def from_env(cls, identity: str | None, env: Mapping[str, str]) -> TlsConfig | None:
        """The process's TLS files: POKER_TLS_CA/POKER_TLS_CERT/POKER_TLS_KEY if set, else
        POKER_TLS_DIR with ``identity``'s files in it. None (plaintext) when POKER_INSECURE=1
        and nothing else is set. Neither: :class:`TlsError` naming what to set. ``env``: the
        variables (a service's: the mapping :meth:`shared.infra.config.Config.from_env`
        hands it, ``Config.tls``; a client command's: its environment, certs_cmd.py)."""
        directory, ca = env.get("POKER_TLS_DIR", ""), env.get("POKER_TLS_CA", "")
        if ca or directory:
            base = cls.in_dir(directory, identity) if directory else cls(Path(ca))
            tls = cls(Path(ca) if ca else base.ca,
                      Path(env["POKER_TLS_CERT"]) if env.get("POKER_TLS_CERT") else base.cert,
                      Path(env["POKER_TLS_KEY"]) if env.get("POKER_TLS_KEY") else base.key)
            return tls.checked()
        if env.get("POKER_INSECURE", "") in ("1", "true", "yes"):
            return None
        raise TlsError(
            "TLS is not configured: set POKER_TLS_DIR to a directory made by `pokerctl certs "
            f"generate DIR` (it uses DIR/ca.pem and DIR/{identity or 'client'}.pem/.key), or "
            "POKER_TLS_CA, POKER_TLS_CERT and POKER_TLS_KEY; POKER_INSECURE=1 runs in "
            "plaintext (debugging only)")

    def checked(self) -> TlsConfig:
        """Self, once every file named exists and a certificate comes with its key."""
        if (self.cert is None) != (self.key is None):
            raise TlsError("a certificate needs its key: set both POKER_TLS_CERT and "
                           "POKER_TLS_KEY, or neither")
        for path in (self.ca, self.cert, self.key):
            if path is not None and not path.is_file():
                raise TlsError(f"TLS file {path} does not exist (make the files with "
                               "`pokerctl certs generate DIR`)")
        return self

    def read(self) -> tuple[bytes, bytes | None, bytes | None]:
        """The CA, certificate and key as bytes (what grpc wants)."""
        try:
            return (self.ca.read_bytes(),
                    self.cert.read_bytes() if self.cert else None,
                    self.key.read_bytes() if self.key else None)
        except OSError as exc:
            raise TlsError(f"cannot read TLS files: {exc}") from exc

    @property
    def identity(self) -> str | None:
        """The CN of this process's certificate."""
        return common_name(self.cert.read_bytes()) if self.cert else None


#: the name the dataclass was first announced by
TlsFiles = TlsConfig


def server_credentials(tls: TlsConfig, require_client_auth: bool) -> grpc.ServerCredentials:
    """Serve with ``tls``'s certificate; trust client certificates of its CA only.
    ``require_client_auth``: the handshake fails without one (internal services); else a
    certificate is optional (the client-facing table service)."""
    ca, cert, key = tls.read()
    if cert is None:
        raise TlsError("a server needs a certificate and key")
    return grpc.ssl_server_credentials([(key, cert)], root_certificates=ca,
                                       require_client_auth=require_client_auth)


def channel_credentials(tls: TlsConfig) -> grpc.ChannelCredentials:
    """Trust servers of ``tls``'s CA; present its certificate if it has one."""
    ca, cert, key = tls.read()
    return grpc.ssl_channel_credentials(root_certificates=ca, private_key=key,
                                        certificate_chain=cert)


# --- channels --------------------------------------------------------------------------------

#: every channel pings its server when idle, so a connection stays warm between hands and a
#: peer that vanished (a host gone, not a closed socket) is found in seconds, not at the next
#: call's deadline; servers accept those pings (:data:`SERVER_KEEPALIVE`)
KEEPALIVE_MS = 10_000
KEEPALIVE: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_timeout_ms", 5_000),
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.max_pings_without_data", 0),
)
SERVER_KEEPALIVE: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", KEEPALIVE_MS // 2),
    ("grpc.http2.max_ping_strikes", 0),
)


def channel(address: str, tls: TlsConfig | None, service: str,
            options: Sequence[tuple[str, object]] = (),
            interceptors: Sequence[grpc.aio.ClientInterceptor] | None = None) -> grpc.aio.Channel:
    """The one way this project opens a channel to a service.

    ``address``: host:port, a comma-separated list of them (balanced call by call, round
    robin), or a name that resolves to several (``dns:///dealer:50052`` on a headless
    Kubernetes Service). ``service``: the identity the server must prove (its certificate
    names it), whatever address it was reached at. ``tls`` None: plaintext (POKER_INSECURE).
    ``interceptors``: e.g. the caller's token on every call (shared/infra/bearer.py)."""
    target, opts = _target(address, tls, service, options)
    if tls is None:
        return grpc.aio.insecure_channel(target, options=opts, interceptors=interceptors)
    return grpc.aio.secure_channel(target, channel_credentials(tls), options=opts,
                                   interceptors=interceptors)


def sync_channel(address: str, tls: TlsConfig | None, service: str,
                 options: Sequence[tuple[str, object]] = ()) -> grpc.Channel:
    """:func:`channel` for synchronous callers (one-shot CLI commands, the probe)."""
    target, opts = _target(address, tls, service, options)
    if tls is None:
        return grpc.insecure_channel(target, options=opts)
    return grpc.secure_channel(target, channel_credentials(tls), options=opts)


def _target(address: str, tls: TlsConfig | None, service: str,
            options: Sequence[tuple[str, object]]) -> tuple[str, list[tuple[str, object]]]:
    targets = address.split(",")
    target = targets[0] if len(targets) == 1 else "ipv4:" + ",".join(targets)
    opts = [("grpc.lb_policy_name", "round_robin"), *KEEPALIVE, *options]
    if tls is not None:  # the server must present ``service``'s certificate
        opts.append(("grpc.ssl_target_name_override", service))
    return target, opts


# --- authorisation ----------------------------------------------------------------------------


def peer_identity(context) -> str | None:
    """The identity (certificate CN) of a gRPC call's caller, or None without a certificate."""
    names = (context.auth_context() or {}).get("x509_common_name") or ()
    return names[0].decode() if names else None


def refusal(service: str, identity: str | None, method: str = "") -> str | None:
    """Why ``service`` refuses a caller of ``identity`` (None: it accepts it) to ``method``
    (its full name; METHOD_CALLERS may accept more identities for it)."""
    allowed = CALLERS.get(service)
    if allowed is None or identity in allowed or \
            identity in METHOD_CALLERS.get(method, frozenset()):
        return None
    who = " or ".join(f"the {a} service" for a in sorted(allowed))
    seen = f"this certificate is {identity!r}" if identity else "no client certificate"
    return f"the {service} accepts calls from {who} only; {seen}"
