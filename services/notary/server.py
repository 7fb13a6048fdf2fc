"""The notary: keeps the hands' Merkle log (shared/tlog) and signs its checkpoints.

It follows every stream of the table log in stream order (batched direct gets from the
position it has reached, woken by the log's subjects as commits are published, and every
``FOLLOW_WAIT_S`` in any case), folds each table's envelopes into its hands
(shared/tlog/hands.py) and appends one leaf per finished hand to ``POKER_HANDS``
(shared/tlog/store.py), each append guarded by the tree's size (``Nats-Expected-Last-
Sequence``): two notaries never interleave leaves. Its place in each log stream is read from
its own stream at start (the last leaf of that stream: the sequence of that hand's last commit
and where to read again to find the hands running then), so a notary that restarts reads on
from there and appends each hand once.

Every ``POKER_CHECKPOINT_S`` seconds, if the tree grew, it signs a checkpoint
(c2sp.org/tlog-checkpoint: origin = its key's name, size, base64 root; Ed25519 note
signature), asks each witness of ``POKER_WITNESSES`` to cosign it (c2sp.org/tlog-witness
add-checkpoint, with the consistency proof from the size the witness last cosigned) and
stores it with the cosignatures it got in ``POKER_CHECKPOINTS`` (`pokerctl checkpoint` prints
the latest). A witness that is away or refuses is logged and asked again with the next
checkpoint; the checkpoint is stored without its cosignature.

More than one notary may run (`pokerctl up --replicas`, a Deployment's replicas): the one
holding the ``notary`` lease (bucket POKER_NOTARY) keeps the log, the others wait to take
over. The process serves the gRPC health check only.
"""

from __future__ import annotations

import asyncio
import base64
import urllib.error
import urllib.request
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import nats
import structlog
from nats.js.errors import APIError

from shared.infra.commits import CommitParseError, read_envelopes
from shared.infra.config import Config
from shared.infra.eventstore import WRONG_LAST_SEQUENCE, EventStore, LogStream, StoreError
from shared.infra.lease import Leases
from shared.tlog import merkle
from shared.tlog import store as tstore
from shared.tlog.hands import HandLeaves
from shared.tlog.note import (
    COSIGNATURE_V1,
    Checkpoint,
    Note,
    NoteError,
    SignedCheckpoint,
    Signer,
    Verifier,
    sign_checkpoint,
)
from shared.tlog.witness import request_body

log = structlog.get_logger()

LEASE = "notary"
#: the longest the follower waits for a wake-up before it reads the log again anyway
FOLLOW_WAIT_S = 2.0
WITNESS_TIMEOUT_S = 5.0


class LostRace(RuntimeError):
    """Another notary appended to POKER_HANDS: this one's view is stale."""


def load_signer(path: str) -> Signer:
    """The log's signing key from its file (``PRIVATE+KEY+...``); ValueError saying why not."""
    if not path:
        raise ValueError("POKER_NOTARY_KEY must name the notary's signing key file "
                         "(`pokerctl keys notary DIR`)")
    try:
        signer = Signer.parse(Path(path).read_text())
    except OSError as exc:
        raise ValueError(f"POKER_NOTARY_KEY: cannot read {path}: {exc}") from None
    except NoteError as exc:
        raise ValueError(f"POKER_NOTARY_KEY: {path}: {exc}") from None
    if signer.sig_type != 0x01:
        raise ValueError(f"POKER_NOTARY_KEY: {path} is not a note signing key (type 0x01)")
    return signer


@dataclass
class WitnessClient:
    url: str
    key: Verifier
    #: the size this witness last cosigned, as far as this notary knows (None: not known)
    size: int | None = None

    def post(self, body: bytes) -> tuple[int, bytes, str]:
        request = urllib.request.Request(f"{self.url}/add-checkpoint", data=body,
                                         method="POST")
        try:
            with urllib.request.urlopen(request, timeout=WITNESS_TIMEOUT_S) as reply:
                return reply.status, reply.read(), reply.headers.get("Content-Type", "")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), exc.headers.get("Content-Type", "")


@dataclass
class _Follow:
    """One log stream as the notary follows it."""

    stream: LogStream
    position: int = 0  # the last sequence read
    done: int = 0  # the last sequence whose hand has its leaf (from POKER_HANDS)


@dataclass
class Notary:
    store: EventStore
    signer: Signer
    checkpoint_s: float = 10.0
    witnesses: list[WitnessClient] = field(default_factory=list)
    leases: Leases | None = None
    #: replicas of the streams it makes (POKER_STREAM_REPLICAS)
    replicas: int = 1
    tree: merkle.Tree = field(default_factory=merkle.Tree)
    #: checkpoints made, witnesses asked and leaves appended, for tests and logs
    appended: int = 0
    last_checkpoint: SignedCheckpoint | None = None

    def __post_init__(self) -> None:
        #: log stream -> table -> its hand running, for the tables with one only: a table
        #: between hands has nothing to keep (a HandLeaves without an open hand holds nothing),
        #: so the notary's state is bounded by the hands running, not by the tables ever seen
        self._running: dict[str, dict[str, HandLeaves]] = {}
        self._follows: dict[str, _Follow] = {}
        self._loaded = False
        self._wake = asyncio.Event()
        self._tasks: list[asyncio.Task] = []
        self._subs: list = []
        self._stopping = False
        self._appending = asyncio.Lock()

    @property
    def origin(self) -> str:
        return self.signer.name

    # --- life --------------------------------------------------------------------------------

    async def start(self) -> None:
        await tstore.ensure_streams(self.store.js, replicas=self.replicas)
        for s in (await self.store.layout()).streams:
            self._subs.append(await self.store.nc.subscribe(s.subjects, cb=self._nudge))
        self._tasks = [asyncio.create_task(self._follow_loop(), name="notary-follow"),
                       asyncio.create_task(self._checkpoint_loop(), name="notary-checkpoints")]

    async def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for sub in self._subs:
            try:
                await sub.unsubscribe()
            except Exception:  # noqa: BLE001 - the connection may be closing
                pass
        if self.leases is not None:
            await self.leases.release_all()

    async def _nudge(self, msg) -> None:
        self._wake.set()

    async def holds_lease(self) -> bool:
        if self.leases is None:
            return True
        await self.leases.renew()
        if await self.leases.acquire(LEASE):
            return True
        self._loaded = False  # another keeps the log: read it afresh if this one takes over
        return False

    async def _follow_loop(self) -> None:
        while not self._stopping:
            try:
                if await self.holds_lease():
                    await self.follow_once()
            except LostRace:
                log.warning("another notary appended to the hands' log: reading it again")
                self._loaded = False
                continue
            except (TimeoutError, StoreError, nats.errors.Error, OSError) as exc:
                log.warning("the notary could not read or append", reason=repr(exc))
                self._loaded = False
            self._wake.clear()
            wait = FOLLOW_WAIT_S if self.leases is None else min(FOLLOW_WAIT_S,
                                                                 self.leases.ttl_s / 3)
            try:
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                pass

    async def _checkpoint_loop(self) -> None:
        while not self._stopping:
            await asyncio.sleep(self.checkpoint_s)  # the period between checkpoints
            try:
                if self._loaded and await self.holds_lease():
                    await self.checkpoint()
            except (TimeoutError, StoreError, nats.errors.Error, OSError) as exc:
                log.warning("no checkpoint this time", reason=repr(exc))

    # --- the log of hands -----------------------------------------------------------------

    async def load(self) -> None:
        """The tree and each log stream's place, from POKER_HANDS."""
        leaves = await tstore.read_leaves(self.store)
        self.tree = merkle.Tree([merkle.leaf_hash(leaf) for leaf in leaves])
        self._running.clear()
        self._follows = {}
        for s in (await self.store.layout()).streams:
            last = await tstore.last_leaf_of(self.store.js, s.name)
            done, resume = last if last is not None else (0, 1)
            self._follows[s.name] = _Follow(s, position=resume - 1, done=done)
        latest = await tstore.latest_checkpoint(self.store.js)
        self.last_checkpoint = SignedCheckpoint.parse(latest) if latest else None
        self._loaded = True

    async def follow_once(self, limit: int | None = None) -> int:
        """Read every log stream from where it stands to its end (``limit``: at most that
        many commits, for tests that stop a notary mid-stream); returns the leaves
        appended."""
        if not self._loaded:
            await self.load()
        appended = read = 0
        for name, follow in self._follows.items():
            if await self.store.info(name) is None:
                continue  # a shard stream not made yet
            async for batch in self.store.batches(follow.stream, after_seq=follow.position):
                for subject, stored in batch:
                    if limit is not None and read >= limit:
                        return appended
                    appended += await self._commit(follow, subject, stored)
                    follow.position = stored.seq
                    read += 1
        return appended

    async def _commit(self, follow: _Follow, subject: str, stored) -> int:
        table = subject[len(follow.stream.prefix):]
        running = self._running.setdefault(follow.stream.name, {})
        hands = running.pop(table, None) or HandLeaves(table, keep=False)
        try:
            commit, envelopes = read_envelopes(stored.data)
        except CommitParseError as exc:
            log.critical("a commit does not parse: its table's hand is left out",
                         table_id=table, seq=stored.seq, reason=exc.cause)
            return 0
        finished = hands.feed(stored, commit.events, envelopes)
        if hands.open is not None:
            running[table] = hands
        if stored.seq <= follow.done:
            return 0  # its leaf is in the tree already
        for leaf in finished:
            await self._append(follow, stored.seq, leaf.encode())
        return len(finished)

    def _resume(self, follow: _Follow, seq: int) -> int:
        """Where to read ``follow``'s stream again to find every hand running after ``seq``."""
        running = self._running.get(follow.stream.name, {}).values()
        return min([*(h.open_since for h in running if h.open_since is not None), seq + 1])

    @property
    def tables_held(self) -> int:
        """How many tables the notary holds state for: those with a hand running."""
        return sum(len(r) for r in self._running.values())

    async def _append(self, follow: _Follow, seq: int, leaf: bytes) -> None:
        async with self._appending:
            size = self.tree.size
            headers = {"Nats-Expected-Last-Sequence": str(size),
                       "Nats-Msg-Id": f"hand:{follow.stream.name}:{seq}",
                       tstore.LOG_SEQ: str(seq),
                       tstore.RESUME_SEQ: str(self._resume(follow, seq))}
            try:
                ack = await self.store.js.publish(tstore.hands_subject(follow.stream.name),
                                                  leaf, headers=headers,
                                                  stream=tstore.HANDS_STREAM)
            except APIError as exc:
                if exc.err_code == WRONG_LAST_SEQUENCE:
                    self._loaded = False  # read POKER_HANDS afresh before anything else
                    raise LostRace() from None
                raise StoreError(f"cannot append a leaf: {exc.description}") from exc
            if ack.duplicate or ack.seq != size + 1:
                self._loaded = False
                raise LostRace()
            self.tree.append(merkle.leaf_hash(leaf))
            follow.done = seq
            self.appended += 1

    # --- checkpoints ----------------------------------------------------------------------

    async def checkpoint(self, force: bool = False) -> SignedCheckpoint | None:
        """Sign a checkpoint of the tree if it grew since the last one (``force``: also if
        not), have it cosigned by the witnesses and store it; returns it (None: nothing new)."""
        async with self._appending:
            size = self.tree.size
            root = self.tree.root(size)
        last = self.last_checkpoint
        if size <= (last.checkpoint.size if last is not None else 0) and not force:
            return None  # the tree did not grow (an empty tree is not signed unless forced)
        signed = sign_checkpoint(Checkpoint(self.origin, size, root), self.signer)
        cosignatures = []
        for w in self.witnesses:
            got = await asyncio.to_thread(self._cosign, w, signed, size)
            if got is not None:
                cosignatures.extend(got)
        if cosignatures:
            signed = SignedCheckpoint(signed.checkpoint, signed.note.with_signatures(
                cosignatures))
        await self.store.js.publish(tstore.CHECKPOINT_SUBJECT, signed.encode().encode(),
                                    stream=tstore.CHECKPOINT_STREAM)
        self.last_checkpoint = signed
        log.info("checkpoint", size=size, root=base64.b64encode(root).decode(),
                 cosignatures=len(cosignatures))
        return signed

    def _cosign(self, w: WitnessClient, signed: SignedCheckpoint, size: int) -> list | None:
        """``w``'s cosignature lines on ``signed`` (verified), or None (logged). A 409 tells
        the witness's size: asked again once with the proof from there."""
        for _ in range(2):
            old = w.size if w.size is not None else 0
            if old > size:
                log.error("the witness has cosigned a larger tree than this log's",
                          witness=w.url, witness_size=old, size=size)
                return None
            proof = self.tree.consistency_proof(old, size) if 0 < old < size else []
            try:
                status, body, ctype = w.post(request_body(old, proof, signed.encode()))
            except OSError as exc:
                log.warning("witness unreachable", witness=w.url, reason=repr(exc))
                return None
            if status == 409 and ctype.startswith("text/x.tlog.size"):
                try:
                    w.size = int(body.decode().strip())
                except ValueError:
                    return None
                continue
            if status != 200:
                log.error("the witness refused the checkpoint", witness=w.url, status=status,
                          answer=body[:300].decode(errors="replace"), size=size, old=old)
                return None
            try:
                note = Note.parse(signed.checkpoint.text + "\n" + body.decode())
                good = note.verified_by(w.key)
            except (NoteError, UnicodeDecodeError) as exc:
                log.error("the witness's answer does not verify", witness=w.url,
                          reason=str(exc))
                return None
            if not good:
                log.error("the witness answered without its cosignature", witness=w.url)
                return None
            w.size = size
            return good
        return None


_NOTARIES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def notary_for(server) -> Notary:
    """The notary of a notary process's gRPC server (``Server.server``): tests in process."""
    return _NOTARIES[server]


def witness_clients(config: Config) -> list[WitnessClient]:
    out = []
    for url, vkey in config.witnesses:
        try:
            key = Verifier.parse(vkey)
        except NoteError as exc:
            raise ValueError(f"POKER_WITNESSES: {url}: {exc}") from None
        if key.sig_type != COSIGNATURE_V1:
            raise ValueError(f"POKER_WITNESSES: {url}: a witness's key is a cosignature key "
                             f"(type 0x04), not {key.sig_type:#04x}")
        out.append(WitnessClient(url, key))
    return out


async def setup(server, repo, store: EventStore, config: Config):
    """boot's setup: the signing key (``config.notary_key``), the witnesses, the lease
    (``config.instance_id``, ``config.lease_ttl_ms``), then the follower and the checkpoints
    in the background; the cleanup stops them."""
    signer = load_signer(config.notary_key)
    leases = await Leases.open(store.js, bucket=tstore.NOTARY_BUCKET,
                               ttl_ms=config.lease_ttl_ms, instance_id=config.instance_id,
                               replicas=config.stream_replicas)
    notary = Notary(store, signer, checkpoint_s=config.checkpoint_s,
                    witnesses=witness_clients(config), leases=leases,
                    replicas=config.stream_replicas)
    await notary.start()
    _NOTARIES[server] = notary
    return notary.stop
