"""The table page's seat controls and the lobby (issue 26), in Debian's Chromium driven by
Playwright against the web app and the in-process services (tests/helpers/web_table.py):
sit out, back in and top up from the page; their bad input refused with nothing appended;
the lobby's filters (game, stakes, seats free), buy-in ranges and phase words; and
``python -m services.web`` reading a player's balance with its own certificate; the presets
of a pot-limit table as the core computes them."""

from __future__ import annotations

from poker.events.v1 import events_pb2 as ev
from poker.table.v1 import table_pb2 as tpb

from shared.history.log import decode_log
from shared.infra.waiting import until
from shared.poker.betting import POT_PRESETS, pot_limit_max_raise_to, pot_raise_to
from shared.poker.events import ActionKind
from shared.poker.fold import fold
from tests.helpers.tables import Table
from tests.helpers.web_table import (  # web_fixture, browser_fixture: the fixtures web, browser
    DESKTOP,
    PHONE,
    browser_fixture,  # noqa: F401
    moved,
    new_table,
    on_turn,
    operator,
    paused,
    web_fixture,  # noqa: F401
)
from tests.system.test_web_pages import _signed_in, shot


async def test_a_player_sits_out_comes_back_and_tops_up_from_the_page(stack, web, browser):
    t = await new_table(stack, web.store, "web-out")
    async with operator(stack) as ops:  # no hand: the seat's own controls between hands
        await paused(ops, "web-out", True, "pause")
    await t.sit(2, buy_in=100)
    await stack.deposit("dora", 300)
    page = await _signed_in(browser, web.url, stack.token("dora"))
    await page.goto(web.url + "/table/web-out")
    await page.locator('.seat.empty[data-seat="4"]').click()
    await page.fill("#sit-buy-in", "100")
    await page.click('#sit button[type="submit"]')
    await page.wait_for_function("() => view && view.you === 4", timeout=15_000)
    await page.click("#sitout")
    await page.wait_for_function("() => view.seats.find(s => s.seat === 4).sitting_out")
    assert next(s for s in (await t.view()).seats if s.seat == 4).sitting_out
    await page.locator("#sitin").click()
    await page.wait_for_function("() => !view.seats.find(s => s.seat === 4).sitting_out")
    await page.fill("#topup-amount", "50")
    await page.click("#topup")
    await page.wait_for_function("() => view.seats.find(s => s.seat === 4).stack == 150",
                                 timeout=15_000)
    await page.locator("#wallet").filter(has_text="your wallet: 150 chips").wait_for()
    await page.fill("#topup-amount", "1000")  # past the maximum buy-in: refused, shown
    await page.click("#topup")
    said = await page.wait_for_function("() => document.getElementById('error').textContent")
    assert "400" in await said.json_value()  # the table's maximum, named
    assert next(s for s in (await t.view()).seats if s.seat == 4).stack == 150


async def test_the_presets_of_a_pot_limit_table_are_the_cores(stack, web, browser):
    """Facing a bet at a pot-limit table, the page offers min, ½ pot and pot (no all-in), at
    the amounts the core gives the table's state as the log folds it: the pot is pot limit's
    maximum, half the pot the core's half; a preset clicked fills the amount box with it."""
    t = await new_table(stack, web.store, "web-pl", structure=ev.STRUCTURE_POT_LIMIT)
    await t.sit(2, buy_in=200)
    await stack.deposit("alice", 500)
    page = await _signed_in(browser, web.url, stack.token("alice"))
    await page.goto(web.url + "/table/web-pl")
    await page.locator('.seat.empty[data-seat="1"]').click()
    await page.fill("#sit-buy-in", "200")
    await page.click('#sit button[type="submit"]')
    await page.wait_for_function("() => view && view.you === 1", timeout=15_000)
    while True:  # p2 raises, so that alice faces a bet with chips in the middle
        v = await until(lambda: on_turn(t), 15, "a turn")
        if v.to_act == 1 and v.legal.call:
            break
        assert v.to_act == 2
        await t.act(ActionKind.RAISE if v.current_bet else ActionKind.BET, v.legal.min_to)
        await until(lambda v=v: moved(t, v.version), 15, "p2's raise")
    await page.wait_for_function(
        "v => view && Number(view.version) >= v && document.querySelector('.preset')",
        arg=v.version, timeout=15_000)
    shown = dict(await page.locator(".preset").evaluate_all(
        "l => l.map(e => [e.dataset.preset, Number(e.dataset.amount)])"))
    hand = fold(decode_log(await web.store.read("web-pl"), stack.keyring())[0]).hand
    lo, hi, bet = v.legal.min_to, v.legal.max_to, hand.round.current_bet
    half = pot_raise_to(bet, hand.pot_total, v.legal.call, POT_PRESETS["half"])
    assert shown == {"min": lo, "half": min(hi, max(lo, half)),
                     "pot": pot_limit_max_raise_to(hand, hand.player(1))}, shown
    assert shown["pot"] == hi and lo < shown["half"] < hi
    await page.click('.preset[data-preset="half"]')
    assert await page.input_value("#amount-box") == str(shown["half"])


async def test_the_lobby_filters_by_game_stakes_and_seats_free(stack, web, browser):
    holdem = await new_table(stack, web.store, "lobby-nl")
    await holdem.sit(1, buy_in=100)
    stud = Table(stack, web.store, "lobby-stud")
    await stud.stub.CreateTable(tpb.CreateTableRequest(
        table_id="lobby-stud", command_id="create", settings=tpb.TableSettings(
            game=ev.GAME_STUD, structure=ev.STRUCTURE_FIXED_LIMIT, small_bet=10,
            max_seats=2)))
    await stud.sit(1, buy_in=200)
    page = await browser.new_page(viewport=DESKTOP)
    await page.goto(web.url + "/")
    rows = page.locator("#lobby tbody tr")
    await page.locator('tr[data-table="lobby-stud"]').wait_for()
    await page.locator('tr[data-table="lobby-nl"]').wait_for()
    nl = page.locator('tr[data-table="lobby-nl"]')
    assert await nl.locator(".buy-in").inner_text() == "40 to 400"
    assert await nl.locator(".phase").inner_text() == "waiting for players"
    await page.select_option("#f-game", "stud")
    await page.locator('tr[data-table="lobby-nl"]').wait_for(state="detached")
    assert await rows.count() == 1
    await page.select_option("#f-game", "")
    await page.select_option("#f-stakes", "1/2")
    await page.locator('tr[data-table="lobby-stud"]').wait_for(state="detached")
    await page.select_option("#f-stakes", "")
    await page.fill("#f-free", "2")  # the stud table has one seat left
    await page.locator('tr[data-table="lobby-stud"]').wait_for(state="detached")
    assert await page.locator('tr[data-table="lobby-nl"]').count() == 1
    await page.screenshot(path=shot("lobby-filters"))
    await page.set_viewport_size(PHONE)
    await page.screenshot(path=shot("lobby-phone"), full_page=True)
    assert await page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]


async def test_the_seat_controls_refuse_bad_input_and_change_nothing(stack, web, browser):
    t = await new_table(stack, web.store, "web-bad")
    await t.sit(1, buy_in=100)
    anonymous = (await browser.new_context()).request
    assert (await anonymous.get(web.url + "/api/wallet")).status == 401
    assert (await anonymous.post(web.url + "/api/tables/web-bad/sitout",
                                 data={"sit_out": True})).status == 401
    page = await _signed_in(browser, web.url, stack.token("erin"))
    api = page.request
    commits = len(await web.store.read("web-bad"))
    for path, body, status in (("sitout", {"sit_out": "yes"}, 400), ("sitout", {}, 400),
                               ("topup", {"amount": -5}, 400), ("topup", {"amount": 1.5}, 400),
                               ("sitout", {"sit_out": True}, 403), ("topup", {"amount": 10}, 403)):
        reply = await api.post(f"{web.url}/api/tables/web-bad/{path}", data=body)
        assert reply.status == status, (path, body, await reply.text())
        assert (await reply.json())["error"]
    assert (await api.get(web.url + "/api/tables/" + "x" * 65 + "/log")).status == 400
    assert len(await web.store.read("web-bad")) == commits  # nothing appended


async def test_the_web_process_reads_a_players_balance_with_its_own_certificate(
        stack, store, tmp_path):
    """``python -m services.web`` as `pokerctl up` runs it (POKER_WALLET_ADDR, the stack's
    certificates): a signed-in player's /api/wallet is their wallet's balance."""
    from tests.helpers.web import sign_in, web_process
    await stack.deposit("fay", 321)
    async with web_process(stack, store, tmp_path) as (address, _):
        fay = await sign_in(address, stack.token("fay"))
        reply = await fay.request("GET", "/api/wallet")
        assert reply.status == 200 and reply.json() == {"player_id": "fay", "balance": 321}
        await fay.close()
