"""The web's sessions (services/web/sessions.py) against the in-process stack: sessions in the
POKER_WEB_SESSIONS bucket of a real nats-server, the app served by uvicorn, players through its
HTTP API over raw sockets (tests/helpers/web.py), the other players through the table service.

Issue 24's attacks on the web's sessions, each shown failing before and held now:

- one player's 10,500 sign-ins (a valid token of their own) used to evict everyone else's
  session (the web kept 10,000, the oldest went), stranding the victim's seat and chips: now
  the victim's session, seat and chips are untouched, the attacker is held to a rate and to
  their own ten sessions;
- a seat's token lived only in the session that sat down: a new sign-in (another device) or a
  web restart left the seat without one; now the seat is taken back (ResumeSeat), and the
  session survives a restart (the bucket);
- there was no sign-out, the cookie was never Secure, any Host was answered.

Bad input at each new endpoint gets a clear status and changes nothing."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from nats.js.errors import KeyNotFoundError
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.wallet.v1 import wallet_pb2, wallet_pb2_grpc

from services.web.limits import WebSettings
from services.web.sessions import PER_SUBJECT, session_key, subject_key
from shared.audit import audit_table
from shared.audit.money import audit_money
from shared.infra.waiting import until
from shared.poker import events as E
from tests.helpers.web import Http, bucket_store, create_table, sign_in, web_app


async def balance(stack, player: str) -> int:
    async with stack.channel("wallet", identity="admin") as ch:
        reply = await wallet_pb2_grpc.WalletServiceStub(ch).Balance(
            wallet_pb2.BalanceRequest(account=wallet_pb2.Account(player_id=player)))
    return reply.balance


class Opponent:
    """A player at the table through the table service itself (not the web)."""

    def __init__(self, stack, table_id: str, player: str) -> None:
        from tests.helpers.tables import table_stub
        self.stack, self.table_id, self.player = stack, table_id, player
        self.stub = table_stub(stack, player)
        self.seat, self.token = 0, ""

    async def sit(self, seat: int, buy_in: int = 200) -> None:
        await self.stack.deposit(self.player, buy_in)
        reply = await self.stub.SitDown(tpb.SitDownRequest(
            table_id=self.table_id, seat=seat, buy_in=buy_in, command_id=f"sit-{seat}"))
        self.seat, self.token = seat, reply.seat_token

    async def view(self) -> tpb.TableView:
        return await self.stub.GetState(tpb.ViewRequest(
            table_id=self.table_id, seat=self.seat, seat_token=self.token))

    async def play_if_on_turn(self) -> tpb.TableView:
        """Call or check when on turn; the table's view."""
        v = await self.view()
        if v.to_act == self.seat:
            kind = ev.ACTION_KIND_CALL if v.legal.call else ev.ACTION_KIND_CHECK
            await self.stub.Act(tpb.ActRequest(
                table_id=self.table_id, seat=self.seat, seat_token=self.token,
                hand_no=v.hand_no, action=kind, command_id=uuid.uuid4().hex))
            v = await self.view()
        return v


async def turn_of(opponent: Opponent, seat: int) -> tpb.TableView:
    """The opponent plays until ``seat`` is on turn: the table's view then (a spectator's,
    with the legal actions of the seat on turn)."""
    async def on_turn():
        v = await opponent.play_if_on_turn()
        return v.to_act == seat
    await until(on_turn, 30, f"seat {seat} on turn")
    return await opponent.stub.GetState(tpb.ViewRequest(table_id=opponent.table_id))


async def act(client: Http, table_id: str, view: tpb.TableView) -> dict:
    """The web client's seat checks, or folds (never more chips than it must)."""
    action = "check" if view.legal.can_check else "fold"
    reply = await client.request("POST", f"/api/tables/{table_id}/act",
                                 {"action": action, "hand_no": view.hand_no})
    assert reply.status == 200, reply.body
    return reply.json()


async def leave_with_every_chip(stack, store, client: Http, opponent: Opponent,
                                table_id: str, player: str, before_sitting: int) -> None:
    """The web client leaves; the opponent plays on until the seat's chips are back in the
    player's wallet: the balance is what they had before sitting less the buy-in plus what
    the seat cashed out, and the money audits."""
    reply = await client.request("POST", f"/api/tables/{table_id}/leave", {})
    assert reply.status == 200, reply.body

    async def credited():
        await opponent.play_if_on_turn()  # a hand the player was still in plays out
        events = [e for s in await store.read(table_id)
                  for e in _events(s)]
        out = [e for e in events if isinstance(e, E.CashOutRequested) and e.player_id == player]
        done = {e.key for e in events if isinstance(e, E.CashOutConfirmed)}
        return out and out[0].key in done and out[0]
    cash_out = await until(credited, 30, f"{player}'s cash-out credited")
    assert cash_out.amount > 0
    assert await balance(stack, player) == before_sitting - 200 + cash_out.amount
    stored = await store.read(table_id)
    assert audit_table(table_id, stored, stack.keyring()).ok
    from services.wallet.ledger import fold_ledger, read_ledger
    money = audit_money([audit_table(table_id, stored, stack.keyring())],
                        fold_ledger(await read_ledger(store.js)))
    assert money.ok, money.problems


def _events(stored) -> list:
    from shared.infra.repository import read_commit
    return list(read_commit(stored).events(None))


async def test_ten_thousand_sign_ins_by_one_player_leave_another_players_seat_and_chips(
        stack, store):
    sessions = await bucket_store(store)
    async with web_app(stack, store, sessions) as (address, _):
        await create_table(stack, "flood")
        await stack.deposit("vera", 500)
        vera = await sign_in(address, stack.token("vera"), source="127.0.0.2")
        sat = await vera.request("POST", "/api/tables/flood/sit", {"seat": 1, "buy_in": 200})
        assert sat.status == 200, sat.body

        # the attacker: 10,500 sign-ins with a valid token of their own, from 50 addresses at
        # once, each over one kept-alive connection
        token = stack.token("mallory")
        statuses: dict[int, int] = {}
        waits: set[str | None] = set()

        async def attacker(n: int) -> None:
            client = Http(address, f"127.0.1.{n + 1}")
            try:
                for _ in range(210):
                    reply = await client.request("POST", "/api/session", {"token": token})
                    statuses[reply.status] = statuses.get(reply.status, 0) + 1
                    if reply.status == 429:
                        waits.add(reply.header("retry-after"))
            finally:
                await client.close()
        await asyncio.gather(*(attacker(n) for n in range(50)))
        assert sum(statuses.values()) == 10_500 and set(statuses) <= {200, 429}, statuses
        # the rate per account bit: a few sign-ins got through, the rest were told to wait
        assert statuses[200] <= 2 * PER_SUBJECT and statuses[429] >= 10_400, statuses
        assert waits and all(w is not None and w.isdigit() and int(w) >= 1 for w in waits)
        # and the attacker holds at most their own ten sessions
        index = json.loads((await sessions.kv.get(subject_key("mallory"))).value)
        assert len(index) <= PER_SUBJECT

        # the victim's session, seat and chips are untouched
        me = (await vera.request("GET", "/api/session")).json()
        assert me == {"subject": "vera", "name": "", "seats": {"flood": 1}}, me
        bob = Opponent(stack, "flood", "bob")
        await bob.sit(2)
        view = await turn_of(bob, 1)
        acted = await act(vera, "flood", view)
        assert acted["table_id"] == "flood"
        await leave_with_every_chip(stack, store, vera, bob, "flood", "vera", 500)
        await vera.close()


async def test_a_seat_is_taken_back_after_a_new_sign_in_and_kept_over_a_web_restart(
        stack, store):
    sessions = await bucket_store(store)
    await create_table(stack, "resume")
    await stack.deposit("rosa", 500)
    bob = Opponent(stack, "resume", "bob")
    async with web_app(stack, store, sessions) as (address, _):
        first = await sign_in(address, stack.token("rosa"))
        sat = await first.request("POST", "/api/tables/resume/sit", {"seat": 1, "buy_in": 200})
        assert sat.status == 200, sat.body
        old = json.loads((await sessions.kv.get(session_key(first.cookie))).value)
        old_token = old["seats"]["resume"][1]
        await bob.sit(2)

        # another device: a new session, with no seat token; opening the table takes the
        # seat back (ResumeSeat), and the page follows it as the seat
        second = await sign_in(address, stack.token("rosa"), source="127.0.0.3")
        assert (await second.request("GET", "/api/session")).json()["seats"] == {}
        events = await _first_event(address, "/api/tables/resume/events", second.cookie)
        assert events["you"] == 1
        replaced = [e for s in await store.read("resume") for e in _events(s)
                    if isinstance(e, E.SeatTokenReplaced)]
        assert [(e.seat, e.player_id) for e in replaced] == [(1, "rosa")]
        assert (await second.request("GET", "/api/session")).json()["seats"] == {"resume": 1}
        # the first session's token no longer proves the seat
        with pytest.raises(Exception) as refused:
            await bob.stub.GetState(tpb.ViewRequest(table_id="resume", seat=1,
                                                    seat_token=old_token))
        assert "PERMISSION_DENIED" in str(refused.value)
        # the pages print each seat's name, else its id
        seats = {s["seat"]: s for s in events["seats"]}
        assert seats[1]["player_id"] == "rosa" and "name" in seats[1]
        await first.close()

    # the web restarts: a new app over the same bucket; the session, its seat and its token
    # are all there (no new ResumeSeat), and the player acts and leaves with every chip
    async with web_app(stack, store, sessions) as (address, _):
        again = Http(address, "127.0.0.3", cookie=second.cookie)
        assert (await again.request("GET", "/api/session")).json()["seats"] == {"resume": 1}
        view = await turn_of(bob, 1)
        await act(again, "resume", view)
        replaced = [e for s in await store.read("resume") for e in _events(s)
                    if isinstance(e, E.SeatTokenReplaced)]
        assert len(replaced) == 1
        await leave_with_every_chip(stack, store, again, bob, "resume", "rosa", 500)
        assert (await again.request("GET", "/api/session")).json()["seats"] == {}
        await again.close()


async def test_a_new_sign_in_acts_at_once_the_seat_taken_back_on_the_act(stack, store):
    """The act itself takes the seat back (no page opened first)."""
    sessions = await bucket_store(store)
    await create_table(stack, "resume-act")
    await stack.deposit("ines", 500)
    bob = Opponent(stack, "resume-act", "bob")
    async with web_app(stack, store, sessions) as (address, _):
        first = await sign_in(address, stack.token("ines"))
        assert (await first.request("POST", "/api/tables/resume-act/sit",
                                    {"seat": 1, "buy_in": 200})).status == 200
        await bob.sit(2)
        second = await sign_in(address, stack.token("ines"), source="127.0.0.4")
        view = await turn_of(bob, 1)
        await act(second, "resume-act", view)
        # the first device acts again later: its token was replaced, so the seat is taken
        # back for it in turn (the player's own choice of device), and the act goes through
        view = await turn_of(bob, 1)
        await act(first, "resume-act", view)
        replaced = [e for s in await store.read("resume-act") for e in _events(s)
                    if isinstance(e, E.SeatTokenReplaced)]
        assert len(replaced) == 2
        await leave_with_every_chip(stack, store, first, bob, "resume-act", "ines", 500)


async def _first_event(address: str, path: str, cookie: str) -> dict:
    """The first server-sent event of ``path`` with the session ``cookie``."""
    host, port = address.split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n"
                     f"Cookie: poker_session={cookie}\r\nConnection: close\r\n\r\n".encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        assert head.startswith(b"HTTP/1.1 200"), head
        buffered = b""
        while b"\n\n" not in buffered:
            size = int((await asyncio.wait_for(reader.readline(), 30)).strip() or b"0", 16)
            buffered += (await reader.readexactly(size + 2))[:-2]
        return json.loads(buffered.split(b"\n\n")[0].removeprefix(b"data: "))
    finally:
        writer.close()


async def test_sign_out_ends_the_session_in_the_bucket(stack, store):
    sessions = await bucket_store(store)
    async with web_app(stack, store, sessions) as (address, _):
        client = await sign_in(address, stack.token("olga"))
        sid = client.cookie
        assert (await client.request("GET", "/api/session")).json()["subject"] == "olga"
        assert (await sessions.kv.get(session_key(sid))).value
        out = await client.request("DELETE", "/api/session")
        assert out.status == 200 and out.cookie("poker_session") in ("", '""')
        # the old cookie, replayed, is no longer signed in; the bucket has no key for it
        replay = Http(address, cookie=sid)
        assert (await replay.request("GET", "/api/session")).json() == {"subject": None}
        with pytest.raises(KeyNotFoundError):
            await sessions.kv.get(session_key(sid))
        assert session_key(sid) not in [
            k for k, _ in json.loads((await sessions.kv.get(subject_key("olga"))).value)]
        again = await replay.request("DELETE", "/api/session")
        assert again.status == 401  # nothing to sign out of
        await replay.close()
        await client.close()


async def test_the_cookie_is_secure_over_tls_or_when_told(stack, store):
    sessions = await bucket_store(store)
    token = stack.token("sam")
    async with web_app(stack, store, sessions) as (address, _):
        plain = await Http(address).request("POST", "/api/session", {"token": token})
        attributes = plain.cookie_attributes("poker_session")
        assert {"httponly", "samesite"} <= attributes and "secure" not in attributes
        # over TLS, as a proxy that ends it says (uvicorn believes 127.0.0.1's headers)
        tls = await Http(address).request("POST", "/api/session", {"token": token},
                                          headers={"X-Forwarded-Proto": "https"})
        assert "secure" in tls.cookie_attributes("poker_session")
    async with web_app(stack, store, sessions,
                       settings=WebSettings(secure_cookie=True)) as (address, _):
        told = await Http(address).request("POST", "/api/session", {"token": token})
        assert "secure" in told.cookie_attributes("poker_session")


async def test_only_the_allowed_hosts_are_answered(stack, store):
    settings = WebSettings(hosts=("poker.example.com", "127.0.0.1"))
    async with web_app(stack, store, settings=settings) as (address, _):
        ok = await Http(address).request("GET", "/")
        assert ok.status == 200
        named = await Http(address, host="poker.example.com").request("GET", "/api/session")
        assert named.status == 200
        evil = Http(address, host="evil.example")
        for method, path, body in (("GET", "/", None), ("GET", "/api/tables", None),
                                   ("POST", "/api/session", {"token": stack.token("eve")})):
            reply = await evil.request(method, path, body)
            assert reply.status == 400, (path, reply.status)
        assert (await evil.request("GET", "/healthz")).status == 200  # the probes' own
        await evil.close()


async def test_bad_input_at_the_session_and_seat_endpoints_gets_a_clear_status(stack, store):
    sessions = await bucket_store(store)
    await create_table(stack, "bad")
    await create_table(stack, "taken")
    await Opponent(stack, "taken", "bob").sit(1)
    before = len(await store.read("bad")), len(await store.read("taken"))
    settings = WebSettings(sign_ins_per_address=(0.01, 3))
    async with web_app(stack, store, sessions, settings=settings) as (address, _):
        anyone = Http(address, "127.0.0.5")
        # sign-out: nobody signed in, an unknown cookie, another site's page
        assert (await anyone.request("DELETE", "/api/session")).status == 401
        anyone.cookie = "x" * 43
        assert (await anyone.request("DELETE", "/api/session")).status == 401
        anyone.cookie = "y" * 5000  # (longer than any cookie made here: not looked up)
        assert (await anyone.request("GET", "/api/session")).json() == {"subject": None}
        anyone.cookie = None
        player = await sign_in(address, stack.token("pia"), source="127.0.0.6")
        other_site = await player.request("DELETE", "/api/session",
                                          headers={"Origin": "http://evil.example"})
        assert other_site.status == 403
        assert (await player.request("GET", "/api/session")).json()["subject"] == "pia"
        # leave: signed out, a bad table id, no seat, not JSON, too big, another site
        assert (await anyone.request("POST", "/api/tables/bad/leave", {})).status == 401
        assert (await player.request("POST", "/api/tables/" + "x" * 65 + "/leave",
                                     {})).status == 400
        nothing = await player.request("POST", "/api/tables/bad/leave", {})
        assert nothing.status == 403 and "no seat" in nothing.json()["error"]
        form = await player.request("POST", "/api/tables/bad/leave", raw=b"a=1",
                                    headers={"Content-Type": "application/x-www-form-"
                                                             "urlencoded"})
        assert form.status == 415
        huge = await player.request("POST", "/api/tables/bad/leave", {"pad": "x" * 10_000})
        assert huge.status == 413
        cross = await player.request("POST", "/api/tables/bad/leave", {},
                                     headers={"Origin": "http://evil.example"})
        assert cross.status == 403
        # sit (or take back a seat): a seat that is not a number, no buy-in for a new seat
        assert (await player.request("POST", "/api/tables/bad/sit",
                                     {"seat": "one"})).status == 400
        no_buy_in = await player.request("POST", "/api/tables/bad/sit", {"seat": 1})
        assert no_buy_in.status == 400 and "buy_in" in no_buy_in.json()["error"]
        # act without a seat: no ResumeSeat for a player the table does not show at a seat,
        # also at a table where another player sits
        assert (await player.request("POST", "/api/tables/bad/act",
                                     {"action": "fold", "hand_no": 1})).status == 403
        other = await player.request("POST", "/api/tables/taken/act",
                                     {"action": "fold", "hand_no": 1})
        assert other.status == 403 and "no seat" in other.json()["error"], other.body
        # sign-ins over the address's rate: 429 with the wait
        flood = Http(address, "127.0.0.7")
        replies = [await flood.request("POST", "/api/session", {"token": stack.token("pia")})
                   for _ in range(4)]
        assert [r.status for r in replies] == [200, 200, 200, 429]
        assert int(replies[-1].header("retry-after")) >= 1
        forged = await Http(address, "127.0.0.8").request("POST", "/api/session",
                                                         {"token": "eyJ.forged.x"})
        assert forged.status == 401
        for client in (anyone, player, flood):
            await client.close()
    # none of it reached the log
    assert (len(await store.read("bad")), len(await store.read("taken"))) == before
