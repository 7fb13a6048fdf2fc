"""How every process of the project reaches NATS: the one place that turns a NATS URL and the
environment into nats-py's connection options.

    POKER_NATS_URL   nats://host:port, or tls://user:password@host:port (TLS from the first
                     byte, so a password never reaches a server that has not proved itself);
                     a comma list names several nodes of one cluster (any of them will do)
    POKER_NATS_CA    the CA certificate (PEM) the NATS servers' certificates are checked
                     against; unset: the services' CA (POKER_TLS_CA, else POKER_TLS_DIR/ca.pem,
                     see shared/infra/tls.py), else the system's trust store

A service gets both from its :class:`shared.infra.config.Config` (``nats_url``, ``nats_ca``:
:func:`ca_file` of the mapping it was read from), and passes the CA on: ``ca=""`` is "no
private CA", so nothing here looks at the process's environment for it. Client commands and
one-shot tools (`pokerctl`, deploy/init_streams.py) that pass no CA (``ca=None``) get
:func:`ca_file` of this process's environment.

A user and password travel in the URL (``tls://poker-dealer:...@nats-1:4222``), so one
variable gives a service its server, its identity and its rights (deploy/nats/accounts.conf,
shared/infra/natsauth.py). :func:`redact` hides the password wherever a URL is printed.
"""

from __future__ import annotations

import asyncio
import logging
import os
import ssl
import time
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import nats
from nats.aio.client import Client

CA_ENV = "POKER_NATS_CA"


def servers(url: str) -> list[str]:
    """The server URLs of a comma list (blanks dropped)."""
    return [u.strip() for u in url.split(",") if u.strip()]


def ca_file(env: Mapping[str, str] | None = None) -> str | None:
    """The CA file NATS servers are checked against (see the module's docstring), or None.
    ``env``: the variables to look in (a service's: the mapping its Config was read from);
    None: this process's environment (client commands, one-shot tools)."""
    env = os.environ if env is None else env
    if env.get(CA_ENV):
        return env[CA_ENV]
    if env.get("POKER_TLS_CA"):
        return env["POKER_TLS_CA"]
    if env.get("POKER_TLS_DIR"):
        return str(Path(env["POKER_TLS_DIR"]) / "ca.pem")
    return None


def tls_context(ca: str | os.PathLike) -> ssl.SSLContext:
    """Trust the servers that ``ca`` signed, and check the host name against their
    certificate (an IP address against its IP names)."""
    ctx = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(ca))
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    return ctx


def options(url: str, ca: str | os.PathLike | None = None,
            env: Mapping[str, str] | None = None) -> dict:
    """nats-py's ``servers`` and, when there is a CA, ``tls``: ``ca`` (``""``: none), else
    (``ca`` None) :func:`ca_file` of ``env``. A server that requires TLS is then verified
    against that CA; without one nats-py uses the system's trust store, which does not know a
    private CA (the connection fails)."""
    out: dict = {"servers": servers(url)}
    ca = ca_file(env) if ca is None else ca
    if ca:
        out["tls"] = tls_context(ca)
    if any(urlsplit(s).scheme == "tls" for s in out["servers"]):
        # TLS first, before the server's INFO: nats-py otherwise talks plaintext (and sends
        # the URL's password) to whatever answers on the port without asking for TLS. The
        # servers of `up` and deploy/ expect it (``handshake_first``).
        out["tls_handshake_first"] = True
        out.setdefault("tls", ssl.create_default_context(ssl.Purpose.SERVER_AUTH))
    return out


class _SslEofNoise(logging.Filter):
    """asyncio warns "returning true from eof_received() has no effect when using ssl" each
    time a TLS connection of nats-py's closes (its protocol asks to keep the transport half
    open, which TLS cannot): harmless, and the only line some commands would print."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "eof_received()" not in record.getMessage()


_QUIET = _SslEofNoise()


async def connect(url: str, *, name: str, ca: str | os.PathLike | None = None,
                  **kwargs) -> Client:
    """``nats.connect`` with :func:`options` (``ca``: the CA file; ``""``: none; None: the
    environment's); ``kwargs`` are nats-py's other options."""
    opts = options(url, ca)
    if "tls" in opts and _QUIET not in logging.getLogger("asyncio").filters:
        logging.getLogger("asyncio").addFilter(_QUIET)
    return await nats.connect(**opts, name=name, **kwargs)


class NatsUnreachable(Exception):
    """No NATS server of ``url`` answered within a command's bounded retry (:func:`connect_once`).
    The message is one line: the URL (its password redacted) and why."""

    def __init__(self, url: str, reason: str) -> None:
        self.url, self.reason = redact(url), reason
        super().__init__(f"cannot reach NATS at {self.url} ({reason})")


async def _nothing() -> None:
    return None


def _reason(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def silence_loop_errors(loop: asyncio.AbstractEventLoop | None = None) -> None:
    """Drop what nats-py's background tasks leave on the running loop (a reader or flusher
    task whose socket failed: "Task exception was never retrieved" with its traceback), so a
    command that failed prints its own line only."""
    (loop or asyncio.get_running_loop()).set_exception_handler(lambda _loop, _ctx: None)


async def connect_once(url: str, *, name: str, ca: str | os.PathLike | None = None,
                       timeout: float = 2.0, retry_s: float = 3.0, **kwargs) -> Client:
    """A one-shot client's connection (a command line, a tool): attempts for up to
    ``retry_s`` seconds (each of at most ``timeout``), then :class:`NatsUnreachable`; no
    reconnects once connected, and nats-py's error callbacks quiet (its default logs a
    traceback per attempt). ``kwargs``: nats-py's other options."""
    silence_loop_errors()
    seen: list[BaseException] = []  # what nats-py's error callback was told: the real cause

    async def noted(exc: Exception) -> None:
        seen.append(exc)

    kwargs.setdefault("error_cb", noted)
    kwargs.setdefault("disconnected_cb", _nothing)
    kwargs.setdefault("closed_cb", _nothing)
    # one attempt per server and call (0 would be "for ever" while connecting)
    opts = dict(allow_reconnect=False, max_reconnect_attempts=1, connect_timeout=timeout,
                reconnect_time_wait=0.2)
    opts.update(kwargs)
    deadline = time.monotonic() + retry_s
    while True:
        seen.clear()
        try:
            return await asyncio.wait_for(connect(url, name=name, ca=ca, **opts),
                                          timeout=timeout + 1)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # NoServersError, OSError, TimeoutError, TLS: say which
            if time.monotonic() + 0.5 >= deadline:
                raise NatsUnreachable(url, _reason(seen[-1] if seen else exc)) from None
        await asyncio.sleep(0.5)


def with_user(url: str, user: str, password: str) -> str:
    """``url`` (each server of a comma list) with ``user`` and ``password`` in it. nats-py
    sends the URL's user and password as they are written (no percent-decoding), so both
    must be plain URL characters (the passwords `pokerctl up` makes are hex)."""
    if not (user + password).replace("-", "").replace("_", "").isalnum():
        raise ValueError("a NATS user or password in a URL must be letters, digits, - or _")
    out = []
    for server in servers(url):
        parts = urlsplit(server)
        host = parts.netloc.rpartition("@")[2]
        netloc = f"{user}:{password}@{host}"
        out.append(urlunsplit(parts._replace(netloc=netloc)))
    return ",".join(out)


def redact(url: str) -> str:
    """``url`` with every password replaced by ``***`` (for messages and logs)."""
    out = []
    for server in servers(url) or [url]:
        parts = urlsplit(server)
        if parts.password is None:
            out.append(server)
            continue
        userinfo, _, host = parts.netloc.rpartition("@")
        netloc = f"{userinfo.partition(':')[0]}:***@{host}"
        out.append(urlunsplit(parts._replace(netloc=netloc)))
    return ",".join(out)
