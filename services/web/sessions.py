"""The web's sessions, in the NATS KV bucket ``POKER_WEB_SESSIONS`` (shared by every web
process, kept across a restart; the admin makes it: :func:`ensure_bucket`), and signing in
and out.

- The cookie (HttpOnly, SameSite=Strict; Secure over TLS or with POKER_WEB_SECURE_COOKIE=1)
  holds a random id and nothing else; the bucket's key is its SHA-256 (``s.<hex>``), so a
  reader of the bucket cannot present a session. The value (JSON) holds the subject, roles,
  name and expiry of the player's token, the token itself, and per table the seat and its
  seat token ("" once the seat was taken back from another session: it then is resumed
  only when the player acts or sits here, not merely by opening the page).
- A session ends SESSION_TTL_S after its sign-in, when its token expires, or at sign-out
  (``DELETE /api/session``: the key is deleted and the cookie cleared). The bucket's TTL is
  the same, so what nobody reads again is gone from it too.
- Nobody's sign-in removes another person's session: each subject has an index (``u.`` and
  the SHA-256 of the subject) of its own sessions, at most PER_SUBJECT, and a sign-in beyond
  that ends the subject's own oldest. Sign-ins are limited per client address and per subject
  (limits.py: 429 with Retry-After), so one account cannot fill the bucket either.

A seat is never stranded with a lost token: a session that follows, sits or acts at a table
where the table's view shows its subject at a seat, but holds no seat token for it (a new
sign-in, another device, a token that expired), makes a new seat token and has the table
service record it (``ResumeSeat``, :func:`resume_seat`): the old token stops working.

Without a bucket (tests, one process), :class:`MemoryKV` keeps the same records in a dict.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import secrets
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import grpc
import nats.errors
import nats.js.errors
import structlog
from nats.js import api as js_api
from nats.js.errors import (
    BucketNotFoundError,
    KeyNotFoundError,
    KeyWrongLastSequenceError,
)
from poker.table.v1 import table_pb2, table_pb2_grpc
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from shared.infra.bearer import bearer_metadata
from shared.infra.identity import Principal, Unauthenticated
from shared.infra.natsauth import WEB_SESSIONS
from shared.infra.retry import retrying
from shared.infra.seattokens import new_seat_token

from .limits import Rates, WebSettings
from .replies import HEADERS, Refused, address_of, body_of, refused, same_origin

log = structlog.get_logger()

BUCKET = WEB_SESSIONS
#: how long a session lasts from its sign-in (less if the player's token expires first)
SESSION_TTL_S = 12 * 3600
#: a subject's sessions at once (devices, browsers); a sign-in beyond ends its own oldest
PER_SUBJECT = 10
#: tables one session holds seats at
MAX_SEATS = 64
#: the largest value the bucket takes (a token of at most 3,000 characters and the seats),
#: and the bucket's size: when full, sign-ins are refused, never anyone's session dropped
MAX_VALUE = 32 * 1024
MAX_BUCKET_BYTES = 1 << 30
COOKIE = "poker_session"
#: the longest cookie value looked up (ours are 43 characters)
MAX_COOKIE = 128
#: optimistic updates of one key before giving up (another process writing it meanwhile)
ATTEMPTS = 16
_NATS_ERRORS = (nats.errors.Error, nats.js.errors.Error, asyncio.TimeoutError, OSError)


class SessionsUnavailable(Refused):
    def __init__(self, why: str) -> None:
        super().__init__(503, f"sessions are unavailable here ({why}): try again shortly", 5)


async def ensure_bucket(js, replicas: int = 1, ttl_s: float = SESSION_TTL_S):
    """The sessions bucket, made if missing (the admin: `pokerctl up`, deploy/init_streams.py;
    the in-process test stack): file storage, one value per key, TTL ``ttl_s``, bounded."""
    try:
        return await js.key_value(BUCKET)
    except BucketNotFoundError:
        try:
            return await js.create_key_value(js_api.KeyValueConfig(
                bucket=BUCKET, history=1, ttl=ttl_s, replicas=replicas,
                storage=js_api.StorageType.FILE, max_value_size=MAX_VALUE,
                max_bytes=MAX_BUCKET_BYTES, direct=True,
                description="the web pages' sessions (services/web/sessions.py)"))
        except nats.js.errors.BadRequestError:  # made meanwhile
            return await js.key_value(BUCKET)


async def open_bucket(js):
    """The sessions bucket as the web finds it (its NATS user may not make it)."""
    try:
        return await js.key_value(BUCKET)
    except BucketNotFoundError:
        raise SystemExit(f"web: there is no {BUCKET} bucket: the admin makes it (`pokerctl "
                         f"up` and deploy/init_streams.py do)") from None


@dataclass
class _Entry:
    value: bytes
    revision: int


class MemoryKV:
    """The few calls of a NATS KV bucket the sessions make, over a dict (one process: tests
    and a web without a bucket); keys older than ``ttl_s`` since their last write vanish."""

    def __init__(self, ttl_s: float = SESSION_TTL_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s, self.clock = ttl_s, clock
        self._data: dict[str, tuple[bytes, int, float]] = {}
        self._revision = 0

    def _live(self, key: str) -> tuple[bytes, int, float] | None:
        held = self._data.get(key)
        if held is not None and self.clock() - held[2] >= self.ttl_s:
            del self._data[key]
            return None
        return held

    async def get(self, key: str) -> _Entry:
        held = self._live(key)
        if held is None:
            raise KeyNotFoundError
        return _Entry(held[0], held[1])

    def _write(self, key: str, value: bytes) -> int:
        self._revision += 1
        self._data.pop(key, None)
        self._data[key] = (value, self._revision, self.clock())
        if self._revision % 1024 == 0:  # now and then, what expired goes
            for k in [k for k, (_, _, at) in self._data.items()
                      if self.clock() - at >= self.ttl_s]:
                del self._data[k]
        return self._revision

    async def create(self, key: str, value: bytes) -> int:
        if self._live(key) is not None:
            raise KeyWrongLastSequenceError
        return self._write(key, value)

    async def update(self, key: str, value: bytes, last: int | None = None) -> int:
        held = self._live(key)
        if (held[1] if held else 0) != (last or 0):
            raise KeyWrongLastSequenceError
        return self._write(key, value)

    async def delete(self, key: str, last: int | None = None) -> bool:
        self._data.pop(key, None)
        return True


def session_key(sid: str) -> str:
    """The bucket's key of a session: the SHA-256 of the cookie's id (never the id)."""
    return "s." + hashlib.sha256(sid.encode()).hexdigest()


def subject_key(subject: str) -> str:
    """The bucket's key of a subject's index of sessions."""
    return "u." + hashlib.sha256(subject.encode()).hexdigest()


@dataclass
class Session:
    """A signed-in player: their token and, per table, the seat they hold with its seat token
    ("": the seat is theirs but its token is held elsewhere)."""

    key: str
    token: str
    principal: Principal
    seats: dict[str, tuple[int, str]]
    created_at: float
    revision: int = 0

    @property
    def metadata(self) -> tuple:
        return bearer_metadata(self.token)

    @property
    def subject(self) -> str:
        return self.principal.subject

    def seat_token(self, table_id: str) -> tuple[int, str] | None:
        """The seat here and its token, when this session holds a usable one."""
        held = self.seats.get(table_id)
        return held if held is not None and held[1] else None

    def encode(self) -> bytes:
        p = self.principal
        return json.dumps({"sub": p.subject, "roles": sorted(p.roles), "name": p.name,
                           "exp": p.expires_at, "token": self.token,
                           "created": self.created_at,
                           "seats": {t: [s, tok] for t, (s, tok) in self.seats.items()}},
                          separators=(",", ":")).encode()

    @classmethod
    def decode(cls, key: str, data: bytes, revision: int) -> Session:
        raw = json.loads(data)
        principal = Principal(raw["sub"], frozenset(raw["roles"]), float(raw["exp"]),
                              raw.get("name", ""))
        seats = {t: (int(s), str(tok)) for t, (s, tok) in raw["seats"].items()}
        return cls(key, raw["token"], principal, seats, float(raw["created"]), revision)


class SessionStore:
    """Sessions in ``kv`` (the bucket, or a MemoryKV): made at sign-in, read per request,
    their seats changed by optimistic updates, deleted at sign-out."""

    def __init__(self, kv: Any, ttl_s: float = SESSION_TTL_S, per_subject: int = PER_SUBJECT,
                 clock: Callable[[], float] = time.time) -> None:
        self.kv, self.ttl_s, self.per_subject, self.clock = kv, ttl_s, per_subject, clock
        self._signing_in: weakref.WeakValueDictionary[str, asyncio.Lock] = \
            weakref.WeakValueDictionary()

    def expires_at(self, session: Session) -> float:
        return min(session.created_at + self.ttl_s, session.principal.expires_at)

    async def create(self, token: str, principal: Principal) -> tuple[str, Session]:
        """A new session of ``principal``: its cookie id and the session. The subject's own
        oldest sessions beyond ``per_subject`` end."""
        sid = secrets.token_urlsafe(32)
        now = self.clock()
        session = Session(session_key(sid), token, principal, {}, now)
        lock = self._signing_in.setdefault(principal.subject, asyncio.Lock())
        try:
            async with lock:  # (this process's sign-ins of one subject, one at a time)
                ended = await self._index(principal.subject, add=(session.key, now))
            session.revision = await self.kv.create(session.key, session.encode())
            for key in ended:
                await self.kv.delete(key)
        except _NATS_ERRORS as exc:
            raise SessionsUnavailable(type(exc).__name__) from None
        return sid, session

    async def _index(self, subject: str, add: tuple[str, float] | None = None,
                     remove: str | None = None) -> list[str]:
        """Update the subject's index (live sessions, oldest first): ``add`` one, ``remove``
        one; the keys that fell out of it (expired, or over the limit) are returned."""
        key = subject_key(subject)
        for _ in range(ATTEMPTS):
            try:
                entry = await self.kv.get(key)
                held, revision = json.loads(entry.value), entry.revision
            except KeyNotFoundError as exc:  # (a deleted key: the revision of its marker)
                held, revision = [], getattr(getattr(exc, "entry", None), "revision", 0) or 0
            now = self.clock()
            live = [(k, at) for k, at in held if at + self.ttl_s > now and k != remove]
            if add is not None:
                live.append(add)
            ended = [k for k, _ in live[:-self.per_subject]] if add is not None else []
            ended += [k for k, at in held if at + self.ttl_s <= now]
            live = live[-self.per_subject:]
            try:
                await self.kv.update(key, json.dumps(live).encode(), last=revision)
            except KeyWrongLastSequenceError:  # another process signed the subject in
                await asyncio.sleep(random.uniform(0, 0.02))  # (apart, the next time)
                continue
            return ended
        raise SessionsUnavailable("the sign-ins of this account collide")

    async def get(self, sid: str) -> Session | None:
        """The live session of cookie id ``sid``, else None (an expired one is deleted)."""
        if not sid or len(sid) > MAX_COOKIE:
            return None
        return await self.load(session_key(sid))

    async def load(self, key: str) -> Session | None:
        try:
            entry = await self.kv.get(key)
        except KeyNotFoundError:
            return None
        except _NATS_ERRORS as exc:
            raise SessionsUnavailable(type(exc).__name__) from None
        try:
            session = Session.decode(key, entry.value, entry.revision)
        except (ValueError, KeyError, TypeError):
            log.warning("a session that does not decode: ended", key=key[:10])
            await self.kv.delete(key)
            return None
        if self.expires_at(session) <= self.clock():
            await self.kv.delete(key)
            return None
        return session

    async def delete(self, session: Session) -> None:
        """Sign-out: the session's key is deleted, and it leaves its subject's index."""
        try:
            await self.kv.delete(session.key)
            await self._index(session.subject, remove=session.key)
        except _NATS_ERRORS as exc:
            raise SessionsUnavailable(type(exc).__name__) from None

    async def set_seat(self, session: Session, table_id: str,
                       held: tuple[int, str] | None) -> Session:
        """The session with ``held`` (seat, seat token) at ``table_id`` (None: no seat there),
        written with an optimistic update (read again on a conflict: another request of the
        same session changed another table's seat meanwhile). Refused (401) if the session
        ended meanwhile; (409) past MAX_SEATS tables."""
        for _ in range(ATTEMPTS):
            seats = dict(session.seats)
            if held is None:
                seats.pop(table_id, None)
            else:
                seats[table_id] = held
            over = max(0, len(seats) - MAX_SEATS)
            for gone in [t for t, (_, tok) in seats.items() if not tok][:over]:
                del seats[gone]  # (seats without a token here go first)
            if len(seats) > MAX_SEATS:
                raise Refused(409, f"you hold seats at {MAX_SEATS} tables from this session: "
                                   f"leave one first")
            changed = replace(session, seats=seats)
            try:
                changed.revision = await self.kv.update(session.key, changed.encode(),
                                                        last=session.revision)
                return changed
            except KeyWrongLastSequenceError:
                fresh = await self.load(session.key)
                if fresh is None:
                    raise Refused(401, "your session ended (signed out, or expired): sign in "
                                       "again") from None
                session = fresh
            except _NATS_ERRORS as exc:
                raise SessionsUnavailable(type(exc).__name__) from None
        raise SessionsUnavailable("this session is being changed by many requests at once")


@dataclass
class Sessions:
    """Signing in and out over a :class:`SessionStore`, with the sign-in rates; the session
    of a request and the visitor it counts as."""

    store: SessionStore
    verify: Callable | None  # a player's token checked (Backend.verify)
    settings: WebSettings = field(default_factory=WebSettings)

    def __post_init__(self) -> None:
        s = self.settings
        self.per_address = Rates(*s.sign_ins_per_address, "sign-ins from this address")
        self.per_subject = Rates(*s.sign_ins_per_subject, "sign-ins of this account")
        #: one resumption at a time per session in this process
        self.resuming: weakref.WeakValueDictionary[str, asyncio.Lock] = \
            weakref.WeakValueDictionary()

    async def of(self, request: Request) -> Session | None:
        """The request's session (its cookie's), else None."""
        return await self.store.get(request.cookies.get(COOKIE, ""))

    async def visitor_of(self, request: Request) -> str:
        """Whom per-visitor limits count: a signed-in session, else the client's address
        (also when the sessions cannot be read)."""
        try:
            session = await self.of(request)
        except SessionsUnavailable:
            session = None
        return visitor(request, session)

    def _secure(self, request: Request) -> bool:
        return self.settings.secure_cookie or request.url.scheme in ("https", "wss")

    async def sign_in(self, request: Request) -> Response:
        try:
            body = await body_of(request)
            token = body.get("token")
            if not isinstance(token, str) or not 0 < len(token) <= 3000:
                raise Refused(400, "give your token (the JWT your platform signed you in with)")
            if self.verify is None:
                raise Refused(503, "signing in is not set up here (no identity provider)")
            self.per_address.take(address_of(request))  # before the signature's cost
            try:
                principal = await self.verify(token)
            except Unauthenticated as exc:
                raise Refused(401, f"that token is not accepted: {exc}") from None
            self.per_subject.take(subject_key(principal.subject))
            sid, session = await self.store.create(token, principal)
        except Refused as exc:
            return refused(exc)
        reply = JSONResponse({"subject": principal.subject, "name": principal.name},
                             headers=HEADERS)
        reply.set_cookie(COOKIE, sid, httponly=True, samesite="strict", path="/",
                         secure=self._secure(request),
                         max_age=max(1, int(self.store.expires_at(session) - time.time())))
        return reply

    async def sign_out(self, request: Request) -> Response:
        try:
            same_origin(request)
            session = await self.of(request)
            if session is None:
                raise Refused(401, "you are not signed in")
            await self.store.delete(session)
        except Refused as exc:
            reply = refused(exc)
        else:
            reply = JSONResponse({"subject": None}, headers=HEADERS)
        reply.delete_cookie(COOKIE, path="/", secure=self._secure(request), httponly=True,
                            samesite="strict")
        return reply

    async def whoami(self, request: Request) -> Response:
        try:
            session = await self.of(request)
        except Refused as exc:
            return refused(exc)
        if session is None:
            return JSONResponse({"subject": None}, headers=HEADERS)
        return JSONResponse({"subject": session.subject, "name": session.principal.name,
                             "seats": {t: s for t, (s, tok) in session.seats.items() if tok}},
                            headers=HEADERS)


def visitor(request: Request, session: Session | None) -> str:
    """Whom per-visitor limits count: the session, else the client's address."""
    return "session:" + session.key if session is not None else "address:" + address_of(request)


async def seat_of(stub: table_pb2_grpc.TableServiceStub, session: Session,
                  table_id: str) -> int | None:
    """The seat the table's view shows the session's subject at (the id exactly), else
    None."""
    view = await stub.GetState(table_pb2.ViewRequest(table_id=table_id),
                               metadata=session.metadata, timeout=5)
    return next((s.seat for s in view.seats if s.player_id == session.subject), None)


async def resume_seat(stub: table_pb2_grpc.TableServiceStub, sessions: Sessions,
                      session: Session, table_id: str) -> Session:
    """The session with a working seat token at ``table_id`` if its subject holds a seat
    there: a new token made here, its digest recorded by the table service (``ResumeSeat``;
    the old token stops working) and kept in the session. A seat the table no longer shows
    as the subject's is forgotten. One at a time per session in this process."""
    lock = sessions.resuming.setdefault(session.key, asyncio.Lock())
    async with lock:
        fresh = await sessions.store.load(session.key)
        if fresh is None:
            raise Refused(401, "your session ended (signed out, or expired): sign in again")
        held = fresh.seat_token(table_id)
        if held is not None and held != session.seats.get(table_id):
            return fresh  # another request of this session resumed it meanwhile
        seat = await seat_of(stub, fresh, table_id)
        if seat is None:
            return await sessions.store.set_seat(fresh, table_id, None) \
                if table_id in fresh.seats else fresh
        token, digest = new_seat_token()
        await retrying(stub.ResumeSeat, table_pb2.ResumeSeatRequest(
            table_id=table_id, seat=seat, seat_token_sha256=digest,
            command_id=f"web-{secrets.token_hex(8)}"), fresh.metadata)
        log.info("seat resumed", table_id=table_id, seat=seat)
        return await sessions.store.set_seat(fresh, table_id, (seat, token))


async def resume_if_seated(stub: table_pb2_grpc.TableServiceStub, sessions: Sessions,
                           session: Session, table_id: str) -> Session:
    """:func:`resume_seat` for a page that follows the table: a failure (the table service
    refusing, or away) leaves the session as it is, and the page follows as a spectator."""
    try:
        return await resume_seat(stub, sessions, session, table_id)
    except (grpc.aio.AioRpcError, Refused) as exc:
        log.info("seat not resumed", table_id=table_id, why=str(exc)[:200])
        return session
