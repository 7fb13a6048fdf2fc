"""The certificate generator and the TLS settings (shared/infra/tls.py)."""

from __future__ import annotations

import ipaddress

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from shared.infra.services import names
from shared.infra.tls import DEFAULT_IDENTITIES, TlsConfig, TlsError, generate, refusal


def cert(path) -> x509.Certificate:
    return x509.load_pem_x509_certificate(path.read_bytes())


def test_a_ca_and_a_certificate_per_identity_with_owner_only_keys(tmp_path):
    out = generate(tmp_path / "certs")
    assert {*names(), "nats", "client"} <= set(DEFAULT_IDENTITIES)  # every service's
    for name in ("ca", *DEFAULT_IDENTITIES):
        assert (out / f"{name}.pem").is_file()
        assert (out / f"{name}.key").stat().st_mode & 0o777 == 0o600
    ca = cert(out / "ca.pem")
    assert ca.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    for identity in DEFAULT_IDENTITIES:
        leaf = cert(out / f"{identity}.pem")
        leaf.verify_directly_issued_by(ca)
        assert leaf.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == identity
        assert isinstance(leaf.public_key(), ec.EllipticCurvePublicKey)
        assert leaf.public_key().curve.name == "secp256r1"
        sans = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        assert ipaddress.ip_address("127.0.0.1") in sans.get_values_for_type(x509.IPAddress)
        dns = sans.get_values_for_type(x509.DNSName)
        assert {"localhost", identity, f"{identity}.poker.svc",
                f"{identity}.poker.svc.cluster.local"} <= set(dns)
        eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
        assert {ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH} <= set(eku)
    nats = cert(out / "nats.pem").extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert {"nats-1", "nats-2", "nats-3"} <= set(nats)


def test_the_ca_and_current_certificates_are_reused_new_hosts_reissue(tmp_path):
    generate(tmp_path, identities=("dealer",))
    ca, dealer = (tmp_path / "ca.pem").read_bytes(), (tmp_path / "dealer.pem").read_bytes()
    generate(tmp_path, identities=("dealer", "table"))
    assert (tmp_path / "ca.pem").read_bytes() == ca
    assert (tmp_path / "dealer.pem").read_bytes() == dealer  # still current: kept
    generate(tmp_path, identities=("dealer",), hosts=("10.0.0.7", "poker.example"))
    assert (tmp_path / "ca.pem").read_bytes() == ca
    sans = cert(tmp_path / "dealer.pem").extensions.get_extension_for_class(
        x509.SubjectAlternativeName).value
    assert ipaddress.ip_address("10.0.0.7") in sans.get_values_for_type(x509.IPAddress)
    assert "poker.example" in sans.get_values_for_type(x509.DNSName)
    cert(tmp_path / "dealer.pem").verify_directly_issued_by(cert(tmp_path / "ca.pem"))


def test_a_leaf_of_another_ca_is_issued_again(tmp_path):
    generate(tmp_path / "a", identities=("dealer",))
    generate(tmp_path / "b", identities=())
    for name in ("dealer.pem", "dealer.key"):
        (tmp_path / "b" / name).write_bytes((tmp_path / "a" / name).read_bytes())
    generate(tmp_path / "b", identities=("dealer",))
    cert(tmp_path / "b" / "dealer.pem").verify_directly_issued_by(cert(tmp_path / "b/ca.pem"))


def test_half_a_ca_is_an_error_not_a_new_ca(tmp_path):
    generate(tmp_path, identities=())
    (tmp_path / "ca.key").unlink()
    with pytest.raises(TlsError, match="only one of ca.pem and ca.key"):
        generate(tmp_path)


def test_settings_from_the_environment(tmp_path):
    generate(tmp_path, identities=("dealer",))
    tls = TlsConfig.from_env("dealer", {"POKER_TLS_DIR": str(tmp_path)})
    assert tls == TlsConfig(tmp_path / "ca.pem", tmp_path / "dealer.pem",
                            tmp_path / "dealer.key")
    assert tls.identity == "dealer"
    explicit = TlsConfig.from_env("table", {"POKER_TLS_CA": str(tmp_path / "ca.pem"),
                                            "POKER_TLS_CERT": str(tmp_path / "dealer.pem"),
                                            "POKER_TLS_KEY": str(tmp_path / "dealer.key")})
    assert explicit == tls
    assert TlsConfig.from_env("dealer", {"POKER_INSECURE": "1"}) is None
    with pytest.raises(TlsError) as err:
        TlsConfig.from_env("dealer", {})
    for text in ("POKER_TLS_DIR", "POKER_TLS_CA", "POKER_TLS_CERT", "POKER_TLS_KEY",
                 "POKER_INSECURE=1", "pokerctl certs generate DIR"):
        assert text in str(err.value)
    with pytest.raises(TlsError, match="betting.pem does not exist"):
        TlsConfig.from_env("betting", {"POKER_TLS_DIR": str(tmp_path)})
    with pytest.raises(TlsError, match="needs its key"):
        TlsConfig.from_env("x", {"POKER_TLS_CA": str(tmp_path / "ca.pem"),
                                 "POKER_TLS_CERT": str(tmp_path / "dealer.pem")})


def test_who_each_service_accepts():
    for service in names(lambda s: s.callers == {"table"}):  # shared/infra/services.py
        assert refusal(service, "table") is None
        assert refusal(service, "client") == (f"the {service} accepts calls from the table "
                                              "service only; this certificate is 'client'")
    assert refusal("dealer", None).endswith("no client certificate")
    assert refusal("table", "client") is None and refusal("table", None) is None


def test_the_web_reads_a_balance_of_the_wallet_and_nothing_else():
    wallet = "/poker.wallet.v1.WalletService/"
    assert refusal("wallet", "web", wallet + "Balance") is None
    for method in ("Debit", "Credit", "Deposit", "Withdraw", "Balances"):
        assert refusal("wallet", "web", wallet + method) is not None, method
    assert refusal("wallet", "client", wallet + "Balance") is not None
