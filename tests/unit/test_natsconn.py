"""shared/infra/natsconn.py: the one place a NATS URL and the environment become connection
options; passwords never printed."""

from __future__ import annotations

import ssl

import pytest

from shared.infra import natsconn
from shared.infra.tls import generate


def test_a_user_goes_into_every_server_of_a_list_and_redact_hides_the_password():
    url = natsconn.with_user("tls://127.0.0.1:4222, tls://127.0.0.1:4223", "poker-dealer",
                             "s3cret")
    assert url == ("tls://poker-dealer:s3cret@127.0.0.1:4222,"
                   "tls://poker-dealer:s3cret@127.0.0.1:4223")
    assert natsconn.with_user(url, "poker-reader", "other").count("poker-reader:other@") == 2
    assert natsconn.redact(url) == ("tls://poker-dealer:***@127.0.0.1:4222,"
                                    "tls://poker-dealer:***@127.0.0.1:4223")
    assert natsconn.redact("nats://127.0.0.1:4222") == "nats://127.0.0.1:4222"
    with pytest.raises(ValueError):  # nats-py would send it percent-encoded
        natsconn.with_user(url, "poker-dealer", "p@ss:word")


def test_the_ca_comes_from_poker_nats_ca_else_the_services_ca():
    assert natsconn.ca_file({}) is None
    assert natsconn.ca_file({"POKER_TLS_DIR": "/certs"}) == "/certs/ca.pem"
    assert natsconn.ca_file({"POKER_TLS_DIR": "/certs", "POKER_TLS_CA": "/x/ca.crt"}) == \
        "/x/ca.crt"
    assert natsconn.ca_file({"POKER_NATS_CA": "/nats/ca.pem", "POKER_TLS_CA": "/x"}) == \
        "/nats/ca.pem"


def test_options_verify_the_server_against_the_ca(tmp_path):
    certs = generate(tmp_path, identities=("nats",))
    opts = natsconn.options("tls://a:b@127.0.0.1:1,tls://a:b@127.0.0.1:2",
                            env={"POKER_NATS_CA": str(certs / "ca.pem")})
    assert opts["servers"] == ["tls://a:b@127.0.0.1:1", "tls://a:b@127.0.0.1:2"]
    ctx = opts["tls"]
    assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
    assert "tls" not in natsconn.options("nats://127.0.0.1:4222", env={})
