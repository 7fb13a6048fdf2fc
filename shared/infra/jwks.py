"""Where the identity provider's public keys come from (shared/infra/identity.py verifies
tokens with them): a JWKS given inline, a file re-read when it changes, or an http(s) URL,
cached and refreshed at most every URL_REFRESH_COOLDOWN_S."""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import jwt
import structlog

URL_REFRESH_COOLDOWN_S = 30.0

log = structlog.get_logger()


class KeysUnavailable(Exception):
    """The keys cannot be had now (a JWKS URL that does not answer): the message says so."""


def _usable(keys: Iterable[jwt.PyJWK], algorithms: tuple[str, ...]) -> list[jwt.PyJWK]:
    """The signature keys of a set that verify one of ``algorithms``."""
    return [k for k in keys if k.public_key_use in ("sig", None)
            and k.algorithm_name in algorithms]


def _key_set(data: Any, algorithms: tuple[str, ...], where: str) -> list[jwt.PyJWK]:
    """The usable keys of a parsed JWKS (``{"keys": [...]}``, or one bare JWK)."""
    if isinstance(data, dict) and "kty" in data and "keys" not in data:
        data = {"keys": [data]}
    try:
        keys = _usable(jwt.PyJWKSet.from_dict(data if isinstance(data, dict) else {}).keys,
                       algorithms)
    except jwt.PyJWTError as exc:
        raise ValueError(f"{where} is not a usable JWKS (a JSON object with a 'keys' list: "
                         f"{exc})") from None
    if not keys:
        raise ValueError(f"{where} holds no signature key for {', '.join(algorithms)}")
    return keys


class _StaticKeys:
    """A JWKS given as a mapping (tests, an embedding program)."""

    remote = False

    def __init__(self, data: Mapping[str, Any], algorithms: tuple[str, ...]) -> None:
        self.describe = "the configured JWKS"
        self._keys = _key_set(dict(data), algorithms, self.describe)
        self.generation = 0

    def current(self) -> int:
        return self.generation

    def keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        return self._keys


class _FileKeys:
    """A JWKS file, read again when its mtime (or size, or inode) changes. A file that
    becomes unreadable or invalid keeps the last good keys (with a warning)."""

    remote = False

    def __init__(self, path: Path, algorithms: tuple[str, ...]) -> None:
        self.path, self.algorithms = path, algorithms
        self.describe = f"the JWKS file {path}"
        self.generation = 0
        self._lock = threading.Lock()
        self._stamp = self._stat()
        if self._stamp is None:
            raise ValueError(f"{self.describe} does not exist or cannot be read")
        self._text, self._keys = self._read()

    def _stat(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def _read(self) -> tuple[str, list[jwt.PyJWK]]:
        try:
            text = self.path.read_text()
            data = json.loads(text)
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read {self.describe}: {exc}") from None
        return text, _key_set(data, self.algorithms, self.describe)

    def current(self) -> int:
        """The key set's generation, after reading the file again if it changed."""
        stamp = self._stat()
        if stamp is None or stamp == self._stamp:
            return self.generation
        with self._lock:
            if stamp != self._stamp:
                self._stamp = stamp
                try:
                    text, keys = self._read()
                except ValueError as exc:
                    log.warning("jwks not reloaded: keeping the last good keys",
                                reason=str(exc))
                else:
                    if text != self._text:
                        self._text, self._keys = text, keys
                        self.generation += 1
                        log.info("jwks reloaded", file=str(self.path), keys=len(keys))
        return self.generation

    def keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        self.current()
        return self._keys


class _UrlKeys:
    """A JWKS URL, fetched with :class:`jwt.PyJWKClient` (cached for ``lifespan`` seconds;
    an unknown kid fetches it again, at most every :data:`URL_REFRESH_COOLDOWN_S`)."""

    remote = True

    def __init__(self, url: str, algorithms: tuple[str, ...], lifespan: float = 300) -> None:
        self.url, self.algorithms = url, algorithms
        self.describe = f"the JWKS at {url}"
        try:
            self.client = jwt.PyJWKClient(url, cache_jwk_set=True, lifespan=lifespan,
                                          timeout=5, cooldown_duration=URL_REFRESH_COOLDOWN_S)
        except jwt.PyJWKClientError as exc:
            raise ValueError(str(exc)) from None
        self.generation = 0
        self._kids: tuple | None = None
        self._refreshed = -math.inf
        self._lock = threading.Lock()

    def current(self) -> int:
        return self.generation  # no fetch here: the fast path never blocks on the network

    def keys(self, refresh: bool = False) -> list[jwt.PyJWK]:
        with self._lock:
            if refresh:
                if time.monotonic() - self._refreshed < URL_REFRESH_COOLDOWN_S:
                    refresh = False
                else:
                    self._refreshed = time.monotonic()
            try:
                keys = _usable(self.client.get_jwk_set(refresh=refresh).keys, self.algorithms)
            except (jwt.PyJWTError, ValueError) as exc:
                log.warning("jwks not fetched", url=self.url, reason=str(exc))
                raise KeysUnavailable("cannot get the identity provider's keys to check the "
                                      "token: try again shortly, or tell the operator") \
                    from None
            kids = tuple(sorted((k.key_id or "", k.algorithm_name) for k in keys))
            if kids != self._kids:
                if self._kids is not None:
                    self.generation += 1
                self._kids = kids
            return keys


def key_source(keys: Any, algorithms: tuple[str, ...]):
    if isinstance(keys, Mapping):
        return _StaticKeys(keys, algorithms)
    text = os.fspath(keys)
    if re.match(r"https?://", text, re.IGNORECASE):
        return _UrlKeys(text, algorithms)
    if re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", text):
        raise ValueError(f"{text!r}: a JWKS source is a file path or an http(s) URL")
    return _FileKeys(Path(text), algorithms)
