"""The web pages in a real browser: Debian's Chromium (``make test`` installs it when missing),
driven by Playwright pointed at that binary, against the web app served by uvicorn on a free
port, a client of the in-process services (real gRPC with mutual TLS, a real nats-server).

The lobby lists the tables bots created; a spectator's table page follows the table live and
never holds a hole card before the showdown, in its DOM or in the traffic it receives (the
server-sent events, read from Chromium's own network events over CDP); two players in two
browser contexts sign in, sit down and play a hand by clicking, and the log, its audit and the
history agree with the clicks; forged tokens, another's seat and oversized or cross-site
posts get a clear status and append nothing; a hand replays step by step. Screenshots of each
page are saved in test-artifacts/ (POKER_TEST_ARTIFACTS overrides it)."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest
import uvicorn
from playwright.async_api import async_playwright
from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb
from poker.table.v1 import table_pb2_grpc

from services.pokerctl.botclient import play
from services.pokerctl.bots_cmd import TablePlan, create_and_seat
from services.web.app import Backend, create_app
from shared.audit import audit_table
from shared.audit.access import read_access, record_opened
from shared.history import phh, pokerstars, to_json
from shared.history.log import decode_log, table_hands
from shared.infra.bearer import bearer_metadata
from shared.infra.eventstore import EventStore
from shared.infra.identity import RELAY
from shared.infra.waiting import until
from shared.phh.parse import loads_one
from shared.poker import events as E

CHROMIUM = "/usr/bin/chromium"
#: as the machine's notes start it: no background connections to a network there is not
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
ARTIFACTS = Path(os.environ.get("POKER_TEST_ARTIFACTS")
                 or Path(__file__).resolve().parents[2] / "test-artifacts")


@contextlib.asynccontextmanager
async def served(app):
    """``app`` on 127.0.0.1, a port the OS chose: its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                           lifespan="off"))
    serving = asyncio.create_task(server.serve())

    async def started():
        return server.started or serving.done()

    await until(started, 15, "web server start")
    try:
        yield f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    finally:
        server.should_exit = True
        await asyncio.wait_for(serving, 15)


def backend(stack, store, chan, read=None) -> Backend:
    """What `pokerctl up` gives the web: the table service, the log, the identity provider,
    its own token, the compliance key and the access log."""
    async def record(purpose, tables, key_ids, hands, person):
        return await record_opened(store.js, purpose, tables, key_ids, hands, person)
    return Backend(table_pb2_grpc.TableServiceStub(chan), store.table_counts, read or store.read,
                   stack.issuer.verifier().averify, bearer_metadata(stack.token("web", RELAY)),
                   stack.keyring(), record)


@pytest.fixture
async def web(stack):
    """The web app, calling the table service as "web" (no role) or as a signed-in player."""
    chan = stack.channel("table")
    store = await EventStore.connect(stack.nats_url, create=False)
    async with served(create_app(backend(stack, store, chan))) as url:
        yield url
    await store.close()
    await chan.close()


@pytest.fixture
async def browser():
    assert Path(CHROMIUM).exists(), "Debian's chromium is missing: `make test` installs it"
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        await b.close()


async def seated(stack, table_id: str):
    """Bots seated at a new fixed-limit hold'em table; ``start(hands)`` has them play."""
    stub = table_pb2_grpc.TableServiceStub(stack.channel("table"))
    plan = TablePlan(table_id, "holdem", "fixed_limit", {"small_bet": 10})
    bots = await create_and_seat(stub, plan, 3, stack.sponsor())

    def start(hands: int) -> asyncio.Task:
        return asyncio.create_task(play(stub, bots, hands, random.Random(7)))
    return start


def shot(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"


async def test_the_lobby_lists_the_tables_bots_created(stack, web, browser):
    playing = (await seated(stack, "web-lobby"))(2)
    page = await browser.new_page()
    await page.goto(web + "/")
    row = page.locator('tr[data-table="web-lobby"]')
    await row.wait_for(timeout=20_000)
    text = await row.inner_text()
    assert "holdem" in text and "fixed limit" in text and "10/20" in text and "3/10" in text
    await page.screenshot(path=shot("lobby"))
    await playing
    link = row.locator("a")
    assert await link.get_attribute("href") == "/table/web-lobby"


async def test_a_spectator_never_holds_a_hole_card_before_the_showdown(stack, web, browser):
    start = await seated(stack, "web-watch")
    page = await browser.new_page()
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("Network.enable")
    received: list[dict] = []
    cdp.on("Network.eventSourceMessageReceived",
           lambda event: received.append(json.loads(event["data"])))
    await page.goto(web + "/table/web-watch")
    await page.locator(".seat").first.wait_for(timeout=20_000)
    playing = start(6)  # the page watches from before the first action
    dom_checks = 0
    while not playing.done():  # look at the DOM as the table moves on
        wrong = await page.evaluate("""() => [...document.querySelectorAll(
            '.seat[data-shown="false"] img.card')].map(i => i.dataset.card)
            .filter(c => c !== '??')""")
        assert wrong == [], f"a spectator's page shows {wrong} of a seat not shown"
        dom_checks += 1
        await asyncio.wait([playing], timeout=0.05)  # the next look, or the end of play
    await playing
    await page.screenshot(path=shot("table-spectator"))
    recent = await page.locator("#recent li").all_inner_texts()
    assert any(" folds" in r or " calls " in r or " checks" in r or " raises " in r
               for r in recent), recent  # the last actions are shown

    async def all_views():
        return received and int(received[-1]["version"]) >= 1 and received
    await until(all_views, 10, "views over the network")
    dealt = 0
    for view in received:  # every view the page was sent
        for seat in view["seats"]:
            if not seat["shown"]:
                assert set(seat["cards"]) <= {"??"}, (view["version"], seat)
                dealt += bool(seat["cards"])
    assert dealt > 0 and dom_checks > 0  # hands were dealt while the page watched


async def test_a_hand_replays_step_by_step_and_downloads_as_pokerstars_text_and_phh(
        stack, web, browser):
    await (await seated(stack, "web-hand"))(3)
    page = await browser.new_page()
    await page.goto(web + "/table/web-hand/hands/1")
    where = page.locator("#where")
    await where.wait_for()
    first = await _stacks(page)
    total = int((await where.inner_text()).rsplit(" ", 1)[1])
    assert total > 5  # seats, blinds, deals, actions, the win
    pots = [await page.locator("#pot").inner_text()]
    for _ in range(total - 1):
        await page.click("#next")
        pots.append(await page.locator("#pot").inner_text())
    assert await where.inner_text() == f"step {total} of {total}"
    last = await _stacks(page)
    hand_json = (await (await page.request.get(web + "/api/tables/web-hand/hands/1")).json())
    rake = hand_json["rake"]
    assert await page.locator("#pot").inner_text() == "pot 0", json.dumps(hand_json)
    # each step's pot is the server's (the core's fold: shared/history/pots.py), as sent
    assert pots == [f"pot {s['pot']}" for s in hand_json["steps"]]
    # the replay conserves the chips: what the players had is what they have plus the rake
    assert sum(last.values()) + rake == sum(first.values())
    await page.screenshot(path=shot("hand-replay"))
    text = await page.request.get(web + "/api/tables/web-hand/hands/1/pokerstars.txt")
    assert text.status == 200 and "attachment" in text.headers["content-disposition"]
    assert "PokerStars Hand #" in await text.text()
    assert (await text.text()).strip() == (await page.locator("#text").inner_text()).strip()
    phh = await page.request.get(web + "/api/tables/web-hand/hands/1/hand.phh")
    hand = loads_one(await phh.text())
    # the PHH's finishing stacks (in its order of players, by name) are the replay's last
    names = dict(await page.evaluate("""() => [...document.querySelectorAll('.seat')].map(s =>
        [s.querySelector('.name').textContent.split(': ')[1], Number(s.dataset.seat)])"""))
    assert {p: int(x) for p, x in zip(hand.players, hand.finishing_stacks)} == {
        name: last[seat] for name, seat in names.items()}
    running = await page.request.get(web + "/api/tables/web-hand/hands/99")
    assert running.status == 404


#: a card as the pages and downloads write it (``9s``), alone or run together as PHH writes
#: a seat's cards (``9sJd``); the unknown card ``??`` is none
_CARD_RUN = re.compile(r"(?<![A-Za-z0-9])((?:[2-9TJQKA][cdhs])+)(?![A-Za-z0-9])")


def cards_in(text: str) -> set[str]:
    """Every card written in ``text``."""
    return {run[i:i + 2] for run in _CARD_RUN.findall(text) for i in range(0, len(run), 2)}


def strings_of(data) -> list[str]:
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for k, v in data.items() for s in (*strings_of(k), *strings_of(v))]
    if isinstance(data, list):
        return [s for v in data for s in strings_of(v)]
    return []


def unshown(record) -> set[str]:
    """The down cards of a hand (opened with the compliance key) that no seat showed."""
    shown = {e.seat for e in record.events if isinstance(e, E.HandShown)}
    return {str(c) for e in record.events if isinstance(e, E.CardsDealt) for d in e.hole
            if d.seat not in shown for c, up in zip(d.cards, d.face_up) if not up}


async def test_a_public_hand_never_holds_a_card_the_table_did_not_show(stack, web, browser):
    """The public replay reads the log without the compliance key: its page, JSON,
    PokerStars text and PHH hold the board, the up cards and the cards shown, and not one of
    the down cards the compliance keyring opens that no seat showed."""
    hands = 4
    await (await seated(stack, "web-secret"))(hands)
    store = await EventStore.connect(stack.nats_url, create=False)
    try:
        opened = {r.hand_no: r for r in table_hands(await store.read("web-secret"),
                                                    stack.keyring()) if r.complete}
    finally:
        await store.close()
    assert set(opened) >= set(range(1, hands + 1))
    page = await browser.new_page()
    hidden_anywhere = 0
    for n in range(1, hands + 1):
        record = opened[n]
        hidden = unshown(record)
        hidden_anywhere += len(hidden)
        # the check sees those cards where they are written: in the compliance forms
        assert hidden <= cards_in(pokerstars(record)), n
        assert hidden <= cards_in(phh(record)), n
        assert hidden <= cards_in(" ".join(strings_of(to_json(record)))), n
        base = f"{web}/api/tables/web-secret/hands/{n}"
        public = {}
        for form, url in (("page", f"{web}/table/web-secret/hands/{n}"), ("json", base),
                          ("pokerstars", base + "/pokerstars.txt"),
                          ("phh", base + "/hand.phh")):
            response = await page.request.get(url)
            assert response.status == 200, (form, await response.text())
            public[form] = " ".join(strings_of(await response.json())) if form == "json" \
                else await response.text()
        for form, text in public.items():
            leaked = cards_in(text) & hidden
            assert not leaked, f"hand {n}'s public {form} holds {sorted(leaked)}, never shown"
        # what the public forms do show is real: the board and the shown cards are there
        board = {str(c) for e in record.events if isinstance(e, E.CardsDealt)
                 for c in e.board}
        assert board <= cards_in(public["pokerstars"]) and board <= cards_in(public["json"])
        if hidden:  # the page replays the hand step by step: no step draws a hidden card
            await page.goto(f"{web}/table/web-secret/hands/{n}")
            where = page.locator("#where")
            await where.wait_for()
            total = int((await where.inner_text()).rsplit(" ", 1)[1])
            drawn: set[str] = set()
            for step in range(total):
                if step:
                    await page.click("#next")
                await where.filter(has_text=f"step {step + 1} of {total}").wait_for()
                drawn |= set(await page.locator("img.card").evaluate_all(
                    "els => els.map(e => e.dataset.card)"))
            assert "??" in drawn and not drawn & hidden, (n, sorted(drawn & hidden))
    assert hidden_anywhere > 0, "no hand had a card left unshown: the check proved nothing"


async def _stacks(page) -> dict[int, int]:
    seats = await page.evaluate("""() => [...document.querySelectorAll('.seat')].map(s =>
        [Number(s.dataset.seat), Number(s.querySelector('.chips').textContent
            .match(/stack (\\d+)/)[1])])""")
    return dict(seats)


async def _create(stack, table_id: str) -> None:
    async with stack.as_operator() as chan:
        await table_pb2_grpc.TableServiceStub(chan).CreateTable(tpb.CreateTableRequest(
            table_id=table_id, command_id="create", settings=tpb.TableSettings(
                game=ev.GAME_HOLDEM, structure=ev.STRUCTURE_FIXED_LIMIT, small_bet=10)))


async def _signed_in(browser, web: str, token: str):
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(web + "/")
    await page.fill("#token", token)
    await page.click("#signin button")
    await page.locator("#who").filter(has_text="signed in as").wait_for()
    return page


async def test_two_players_sign_in_sit_down_and_play_a_hand_by_clicking(stack, web, browser):
    await _create(stack, "web-play")
    pages = {}
    for seat, player in ((1, "alice"), (2, "bob")):
        await stack.deposit(player, 500)
        page = await _signed_in(browser, web, stack.token(player))
        await page.goto(web + "/table/web-play")
        await page.locator("#sit").wait_for()
        await page.fill("#sit-seat", str(seat))
        await page.fill("#sit-buy-in", "200")
        await page.click("#sit button")
        try:  # the page reloads once seated: then its views are the seat's own
            await page.wait_for_function("s => view && view.you === s", arg=seat,
                                         timeout=15_000)
        except Exception:
            raise AssertionError(await page.locator("#error").inner_text()) from None
        pages[seat] = page
    clicks = 0
    store = await EventStore.connect(stack.nats_url, create=False)
    try:
        async def hand_one():
            """Hand 1 from the log, and the commit (version) of each of its actions."""
            stored = await store.read("web-play")
            records = [r for r in table_hands(stored, stack.keyring()) if r.hand_no == 1]
            events, _, seqs = decode_log(stored, stack.keyring())
            hand, acted = 0, []
            for event, seq in zip(events, seqs):
                hand = event.hand_no if isinstance(event, E.HandStarted) else hand
                if hand == 1 and isinstance(event, E.ActionTaken):
                    acted.append((event.seat, seq))
            return (records[0] if records else None), acted

        while True:
            record, acted = await hand_one()
            if record is not None and record.complete:
                break
            for seat, page in pages.items():
                # this seat's turn in hand 1, as its page shows it (not a view of hand 2,
                # which starts as soon as hand 1 is over)
                on_turn = await page.evaluate("""s => !!view && Number(view.hand_no) === 1
                    && view.to_act === s && !!document.querySelector('#actions button')""",
                                              seat)
                if not on_turn:
                    continue
                # a seat sees its own two cards, never the other's
                mine = await page.locator(f'.seat[data-seat="{seat}"] img.card')\
                    .evaluate_all("els => els.map(e => e.dataset.card)")
                other = await page.locator(f'.seat[data-seat="{3 - seat}"] img.card')\
                    .evaluate_all("els => els.map(e => e.dataset.card)")
                assert len(mine) == 2 and "??" not in mine and set(other) <= {"??"}
                wanted = page.locator('#actions button[data-action="call"]')
                if not await wanted.count():
                    wanted = page.locator('#actions button[data-action="check"]')
                await wanted.click()
                clicks += 1
                before = len(acted)

                async def logged(before=before):  # the click's action, in the log
                    _, now = await hand_one()
                    return len(now) > before and now

                try:
                    now = await until(logged, 15, f"seat {seat}'s action in the log")
                except TimeoutError:
                    raise AssertionError(await page.locator("#error").inner_text()) \
                        from None
                assert [s for s, _ in now[len(acted):]] == [seat]  # one action, this seat's
                acted = now
                # the page's view reaches the commit holding it: its buttons are current
                await page.wait_for_function("v => Number(view.version) >= v",
                                             arg=now[-1][1], timeout=15_000)
            assert clicks < 40, "a hand of checks and calls is over in fewer clicks"
        await pages[1].screenshot(path=shot("table-player"))
        assert audit_table("web-play", await store.read("web-play"), stack.keyring()).ok
        # the log, the history and the clicks agree: every click is one action in hand 1
        actions = [e for e in record.events if type(e).__name__ == "ActionTaken"]
        assert len(actions) == clicks and {e.seat for e in actions} == {1, 2}
        assert "alice" in pokerstars(record) and "bob" in pokerstars(record)
    finally:
        await store.close()


async def test_the_web_refuses_forged_tokens_others_seats_and_oversized_bodies(
        stack, web, browser):
    await _create(stack, "web-refuse")
    context = await browser.new_context()
    api = context.request
    forged = await api.post(web + "/api/session", data={"token": "eyJhbGciOi.forged.x"})
    assert forged.status == 401 and "not accepted" in (await forged.json())["error"]
    nobody = await api.post(web + "/api/tables/web-refuse/act",
                            data={"action": "call", "hand_no": 1})
    assert nobody.status == 403  # no session holds a seat there
    page = await _signed_in(browser, web, stack.token("carol"))
    huge = await page.request.post(web + "/api/tables/web-refuse/sit",
                                   data={"seat": 1, "buy_in": 200, "pad": "x" * 10_000})
    assert huge.status == 413
    form = await page.request.post(web + "/api/tables/web-refuse/sit",
                                   form={"seat": "1", "buy_in": "200"})
    assert form.status == 415  # a cross-site form cannot post JSON
    other_site = await page.request.post(web + "/api/tables/web-refuse/sit",
                                         data={"seat": 1, "buy_in": 200},
                                         headers={"Origin": "http://evil.example"})
    assert other_site.status == 403
    broke = await page.request.post(web + "/api/tables/web-refuse/sit",
                                    data={"seat": 1, "buy_in": 200})
    assert broke.status == 409 and "wallet" in (await broke.json())["error"]
    store = await EventStore.connect(stack.nats_url, create=False)
    try:  # none of it reached the log: the table holds only its creation
        assert len(await store.read("web-refuse")) == 1
    finally:
        await store.close()


async def test_the_compliance_replay_proves_a_real_hand_and_flags_a_tampered_copy(
        stack, web, browser):
    await (await seated(stack, "web-comp"))(2)
    player = await _signed_in(browser, web, stack.token("pat"))
    denied = await player.request.get(web + "/api/compliance/tables/web-comp/hands/1")
    assert denied.status == 403  # not the compliance role
    page = await _signed_in(browser, web, stack.token("cathy", "compliance"))
    await page.goto(web + "/compliance/tables/web-comp/hands/1")
    verdict = page.locator("#verdict")
    await verdict.wait_for()
    assert await verdict.get_attribute("data-ok") == "true"
    decks = page.locator("#decks li")
    assert await decks.count() >= 1
    assert set(await decks.evaluate_all("l => l.map(e => e.dataset.verified)")) == {"true"}
    links = await page.locator("#chain tbody tr").evaluate_all(
        "rows => rows.map(r => r.dataset.linkOk)")
    assert links and set(links) == {"true"}
    assert await page.locator("#hand-verdict").get_attribute("data-ok") == "true"
    rows = await page.locator("#chain tbody tr").evaluate_all(
        "rows => rows.map(r => [...r.children].map(td => td.textContent))")
    assert rows[0][3].startswith("hand_started") and rows[-1][3].startswith("deck_revealed")
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", r[1]) for r in rows)
    deciders = {r[2].split(" ")[0] for r in rows}
    assert deciders == {"service", "player"}, rows  # the dealer's steps and the bots' acts
    assert any("forced_bet_posted" in r[3] and "amount 5" in r[3] for r in rows), rows
    async with page.expect_download() as download:  # the evidence, as a regulator files it
        await page.click("#evidence")
    filed = await (await download.value).path()
    checked = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "services.pokerctl", "audit", "--evidence",
                         str(filed)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    total = int((await page.locator("#where").inner_text()).rsplit(" ", 1)[1])
    for _ in range(total - 1):  # to the end of the hand: every seat's cards dealt
        await page.click("#next")
    cards = await page.locator(".seat img.card").evaluate_all(
        "l => l.map(e => e.dataset.card)")
    assert cards and "??" not in cards  # every card opened with the key
    await page.screenshot(path=shot("compliance-replay"))
    store = await EventStore.connect(stack.nats_url, create=False)
    chan = stack.channel("table")
    try:  # the view was recorded first: who, which table and hand, which key
        records = [r for r in await read_access(store.js) if r["purpose"] == "web-replay"]
        assert records[-1]["who"] == "cathy (web)" and records[-1]["tables"] == ["web-comp"]
        assert records[-1]["hands"] == [1] and records[-1]["key_ids"]

        real = await store.read("web-comp")
        victim = next(i for i, c in enumerate(real) if i > 3)
        data = bytearray(real[victim].data)
        data[len(data) // 2] ^= 0x01  # one bit of one commit of the copy

        async def tampered(table_id):
            copy = await store.read(table_id)
            copy[victim] = dataclasses.replace(copy[victim], data=bytes(data))
            return copy

        async with served(create_app(backend(stack, store, chan, tampered))) as copy_url:
            page = await _signed_in(browser, copy_url, stack.token("cathy", "compliance"))
            await page.goto(copy_url + "/compliance/tables/web-comp/hands/1")
            await page.locator("#verdict").wait_for()
            assert await page.locator("#verdict").get_attribute("data-ok") == "false"
            assert "FAILED" in await page.locator("#verdict").inner_text()
            await page.screenshot(path=shot("compliance-replay-tampered"))
    finally:
        await store.close()
        await chan.close()


async def test_bad_table_ids_and_unknown_tables_get_a_clear_status(stack, web, browser):
    page = await browser.new_page()
    bad = await page.goto(web + "/table/" + "x" * 65)
    assert bad.status == 400
    missing = await page.request.get(web + "/api/tables/nope/events")
    assert missing.status == 404 and "nope" in (await missing.json())["error"]
    card = await page.request.get(web + "/cards/Zz.svg")
    assert card.status == 404
    headers = (await page.request.get(web + "/")).headers
    assert "default-src 'self'" in headers["content-security-policy"]
