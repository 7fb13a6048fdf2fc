"""The table page as a player and a floor manager use it (issue 26), in Debian's Chromium
driven by Playwright, against the web app under uvicorn and the in-process services (real
gRPC with mutual TLS, a real nats-server, the real wallet).

A player signs in, sits from an empty seat (the buy-in range and their wallet shown), plays a
hand with the presets and the amount box, sees its result, leaves, and the wallet holds the
chips; the last actions shown are the history's; a spectator sees the bets in front of the
seats and the side pots of an all-in with unequal stacks, and the last hand's result until
the next hand's first action; the pages of a table read its log about once per commit;
``/table/nosuch`` is a 404 page and opens no Watch (test_web_table_controls.py: the seat
controls, the lobby's filters, the web process's wallet). Screenshots at desktop
(1280 px) and phone (390 px) widths go to test-artifacts/; the phone layout has no horizontal
overflow and its seats and controls are on screen."""

from __future__ import annotations

import grpc
import pytest
from poker.wallet.v1 import wallet_pb2

from shared.infra.protomap import legal_from
from shared.infra.waiting import until
from shared.poker import events as E
from shared.poker.betting import raise_presets
from shared.poker.events import ActionKind
from shared.poker.options import Structure
from tests.helpers.tables import Table
from tests.helpers.web_table import (  # web_fixture, browser_fixture: the fixtures web, browser
    DESKTOP,
    PHONE,
    browser_fixture,  # noqa: F401
    finished_hand,
    moved,
    new_table,
    on_turn,
    operator,
    paused,
    web_fixture,  # noqa: F401
)
from tests.system.test_web_pages import _signed_in, shot


def _actions(record) -> list[list]:
    """The hand's actions as the page marks them: seat, action, amount."""
    out = []
    for e in record.events:
        if isinstance(e, E.ActionTaken):
            amount = e.to if e.action in (ActionKind.RAISE, ActionKind.COMPLETE) else e.added
            out.append([e.seat, e.action.value, amount])
    return out


async def _no_overflow(page) -> None:
    """The page is no wider than the screen, and the seats and controls are on it."""
    width = await page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the phone layout is {width} px wide"
    boxes = await page.locator(".seat, #actions button, #actions input").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); "
        "return [e.className || e.id, r.left, r.right, r.height]; })")
    assert boxes
    for name, left, right, height in boxes:
        assert left >= 0 and right <= PHONE["width"], (name, left, right)
        assert height >= 30, (name, height)  # tappable
    seats = await page.locator(".seat").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); "
        "return [e.dataset.seat, r.left, r.top, r.right, r.bottom]; })")
    for i, (a, *ra) in enumerate(seats):  # each seat its own place to tap
        for b, *rb in seats[i + 1:]:
            apart = ra[2] <= rb[0] or rb[2] <= ra[0] or ra[3] <= rb[1] or rb[3] <= ra[1]
            assert apart, f"seats {a} and {b} overlap on a phone"


async def test_a_player_sits_plays_with_the_presets_sees_the_result_and_leaves(
        stack, web, browser):
    t = await new_table(stack, web.store, "web-sit")
    await t.sit(2, buy_in=200)  # p2, played here through the table service
    before = 500
    await stack.deposit("alice", before)
    page = await _signed_in(browser, web.url, stack.token("alice"))
    await page.set_viewport_size(DESKTOP)
    await _sit_from_the_empty_seat(web, page)
    async with operator(stack) as ops:  # no hand after this one: the result stays up
        await paused(ops, "web-sit", True, "pause")
    await _play_hand_one(stack, web, t, page)
    await _the_result_and_the_actions_are_the_logs(
        page, await finished_hand(stack, web.store, "web-sit", 1))
    await page.screenshot(path=shot("table-result"))
    view = await t.view()
    stack_at_leave = next(s.stack for s in view.seats if s.seat == 1)
    await page.click("#leave")
    await page.wait_for_function("() => view && !view.you && "
                                 "!view.seats.some(s => s.seat === 1)", timeout=15_000)
    with pytest.raises(grpc.aio.AioRpcError) as refused:  # the web reads, it moves nothing
        await web.wallet.Debit(wallet_pb2.Transfer(
            account=wallet_pb2.Account(player_id="alice"), amount=1, idempotency_key="web-x",
            reference="x"))
    assert refused.value.code() is grpc.StatusCode.PERMISSION_DENIED

    async def cashed_out():
        reply = await page.request.get(web.url + "/api/wallet")
        return (await reply.json())["balance"] == before - 200 + stack_at_leave
    await until(cashed_out, 15, "alice's chips back in her wallet")
    await page.locator("#wallet").filter(
        has_text=f"your wallet: {before - 200 + stack_at_leave} chips").wait_for()


async def _sit_from_the_empty_seat(web, page) -> None:
    """The header names the game, stakes and buy-in range; alice taps empty seat 1, sees the
    range and her wallet, buys in for 200 and is seated (her seat marked)."""
    await page.goto(web.url + "/table/web-sit")
    head = page.locator("#game")
    await head.filter(has_text="buy-in 40 to 400").wait_for()
    assert "holdem" in await head.inner_text() and "no limit" in await head.inner_text()
    assert "stakes 1/2" in await head.inner_text()
    await page.locator('.seat.empty[data-seat="1"]').click()
    await page.locator("#sit-range").filter(has_text="your wallet: 500").wait_for()
    assert "buy-in 40 to 400" in await page.locator("#sit-range").inner_text()
    assert await page.locator("#wallet").inner_text() == "your wallet: 500 chips"
    assert await page.input_value("#sit-seat") == "1"
    await page.fill("#sit-buy-in", "200")
    await page.click('#sit button[type="submit"]')
    await page.wait_for_function("() => view && view.you === 1", timeout=15_000)
    await page.locator(".seat.mine[data-seat='1']").wait_for()


async def _play_hand_one(stack, web, t: Table, page) -> None:
    """Hand 1 to its end: p2 through the table service (a raise first, so that alice faces
    a bet), alice by clicking: the presets and the amount box on her first turn (with the
    clock checked), then check or call."""
    turns = 0
    while await finished_hand(stack, web.store, "web-sit", 1) is None:
        v = await t.view()
        if v.to_act == 2 and not turns and v.legal.raise_kind:  # alice faces a bet to call
            await t.act(ActionKind.RAISE if v.current_bet else ActionKind.BET, v.legal.min_to)
        elif v.to_act == 2:
            await t.call_or_check()
        elif v.to_act == 1:
            await page.wait_for_function(
                "v => view && Number(view.version) >= v && view.to_act === 1 && "
                "!!document.querySelector('#actions button')", arg=v.version, timeout=15_000)
            turns += 1
            if turns == 1:
                await _the_clock_runs(page)
                await _raise_with_the_presets(page, v)
            else:
                button = page.locator('#actions button[data-action="check"], '
                                      '#actions button[data-action="call"]')
                await button.first.click()
            await until(lambda v=v: moved(t, v.version), 15, "alice's action in the log")
        else:
            await until(lambda v=v: moved(t, v.version), 15, "the hand to move on")


async def _the_clock_runs(page) -> None:
    """The clock: a bar and the seconds left, from the view's deadline."""
    await page.locator("#clock-text").filter(has_text="alice to act").wait_for()
    left = int((await page.locator("#clock-text").inner_text()).split("· ")[1].split(" s")[0])
    assert 0 < left <= 30
    width = await page.locator("#clock-bar").evaluate("e => e.style.width")
    assert 0 < float(width.rstrip("%")) <= 100


async def _the_result_and_the_actions_are_the_logs(page, record) -> None:
    """Who won what and the cards shown are on screen, and the last actions are the
    history's (shared/history), in order."""
    await page.locator("#result[data-hand='1']").wait_for()
    wins = await page.locator("#result-wins li").evaluate_all(
        "l => l.map(e => [Number(e.dataset.seat), Number(e.dataset.amount)])")
    won: dict[int, int] = {}
    for e in record.events:
        if isinstance(e, E.PotAwarded):
            for share in e.shares:
                won[share.seat] = won.get(share.seat, 0) + share.amount
    assert sorted(wins) == sorted([s, a] for s, a in won.items() if a)
    shown = {e.seat: [str(c) for c in e.cards] for e in record.events
             if isinstance(e, E.HandShown)}
    for seat, cards in shown.items():
        drawn = await page.locator(f"#result-shows li[data-seat='{seat}'] img.card")\
            .evaluate_all("l => l.map(e => e.dataset.card)")
        assert drawn == cards
    listed = await page.locator("#recent li").evaluate_all(
        "l => l.map(e => [Number(e.dataset.seat), e.dataset.action, Number(e.dataset.amount)])")
    assert listed == _actions(record) and len(listed) >= 3


async def _raise_with_the_presets(page, v) -> None:
    """Alice's first turn: the presets fill the amount box with the core's amounts for the
    view's pot and legal range (within it), the box takes a typed amount, and the raise goes in at it; with
    the screenshots at desktop and phone widths."""
    lo, hi = v.legal.min_to, v.legal.max_to
    assert v.legal.call > 0  # (so that the pot's size counts the call)
    box = page.locator("#amount-box")
    assert await box.input_value() == str(lo)
    expected = raise_presets(legal_from(1, v.legal), Structure.NO_LIMIT, v.current_bet, v.pot)
    assert set(expected) == {"min", "half", "pot", "allin"}
    offered = await page.locator(".preset").evaluate_all("l => l.map(e => e.dataset.preset)")
    assert offered == list(expected)
    for which, amount in expected.items():  # the core's amounts (betting.raise_presets)
        await page.click(f'.preset[data-preset="{which}"]')
        assert await box.input_value() == str(amount), which
    await page.screenshot(path=shot("table-desktop"))
    await page.set_viewport_size(PHONE)
    await page.locator("#actions").scroll_into_view_if_needed()
    await _no_overflow(page)
    await page.screenshot(path=shot("table-phone"), full_page=True)
    await page.set_viewport_size(DESKTOP)
    await box.fill(str(hi + 1000))  # past the maximum: clamped to it
    await box.dispatch_event("change")
    assert await box.input_value() == str(hi)
    await box.fill(str(lo + 3))
    await box.dispatch_event("change")
    await page.click('#actions button[data-action="raise"]')


async def test_a_spectator_sees_the_bets_and_the_side_pots(stack, web, browser):
    t = await new_table(stack, web.store, "web-pots")
    page = await browser.new_page(viewport=DESKTOP)
    await page.goto(web.url + "/table/web-pots")
    await page.locator(".seat.empty").first.wait_for()
    await page.evaluate("""() => { window.sidePots = [];
        new MutationObserver(() => document.querySelectorAll('#pots .pot').forEach(
            (p) => window.sidePots.push([p.className, Number(p.dataset.amount)])))
        .observe(document.getElementById('pots'), { childList: true }); }""")
    async with operator(stack) as ops:  # the three seated before hand 1 starts
        await paused(ops, "web-pots", True, "pause")
        for seat, buy_in in ((1, 40), (2, 100), (3, 200)):  # unequal stacks
            await t.sit(seat, buy_in=buy_in)
        await paused(ops, "web-pots", False, "resume")
    v = await until(lambda: on_turn(t), 15, "the first action of hand 1")
    bets = {s.seat: s.bet for s in v.seats if s.bet}
    assert len(bets) == 2  # the blinds, in front of their seats
    for seat, bet in bets.items():
        await page.locator(f".bet[data-seat='{seat}']").filter(has_text=str(bet)).wait_for()
    assert await page.locator(".bet").count() == 2
    await page.screenshot(path=shot("table-spectator-bets"))
    async with operator(stack) as ops:
        await paused(ops, "web-pots", True, "pause-again")
    record = await _all_in(stack, web, t)
    await _the_side_pots_were_shown(page, record)
    # the result stays up as hand 2 starts, until its first action
    await t.sit(5, buy_in=100)  # (the all-ins may have left one stack: one more to play)
    async with operator(stack) as ops:
        await paused(ops, "web-pots", False, "resume-again")
    v = await until(lambda: on_turn(t), 15, "hand 2's first turn")
    assert v.hand_no == 2
    await page.wait_for_function("v => Number(view.version) >= v", arg=v.version)
    await page.wait_for_function("v => logVersion >= v", arg=v.version)
    assert await page.locator("#result[data-hand='1']").is_visible()
    assert await page.locator("#recent-hand").inner_text() == "(hand 1)"
    await page.set_viewport_size(PHONE)
    width = await page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    await page.screenshot(path=shot("table-spectator-phone"), full_page=True)
    await t.call_or_check()
    await page.locator("#recent-hand").filter(has_text="(hand 2)").wait_for()
    assert await page.locator("#result").is_hidden()
    assert await page.locator("#recent li").count() == 1


async def _all_in(stack, web, t: Table):
    """Hand 1 played out by raising all in (or calling): its record."""
    while await finished_hand(stack, web.store, "web-pots", 1) is None:
        v = await t.view()
        if not v.to_act:
            await until(lambda v=v: moved(t, v.version), 15, "the hand to move on")
        elif v.legal.raise_kind:
            await t.act(ActionKind.RAISE if v.current_bet else ActionKind.BET, v.legal.max_to)
        else:
            await t.call_or_check()
    return await finished_hand(stack, web.store, "web-pots", 1)


async def _the_side_pots_were_shown(page, record) -> None:
    """The page drew the main pot and each side pot as the log formed them, and the result
    says who won what from which pot."""
    pots = [p.amount for e in record.events if isinstance(e, E.PotsFormed) for p in e.pots]
    assert len(pots) >= 2  # a main pot and a side pot
    seen = await page.wait_for_function("() => window.sidePots.length && window.sidePots",
                                        timeout=15_000)
    seen = await seen.json_value()
    assert sorted({a for c, a in seen if "side-pot" in c}) == sorted(pots[1:])
    assert {a for c, a in seen if "main-pot" in c} == {pots[0]}
    await page.locator("#result[data-hand='1']").wait_for()
    won = sorted((e.pot_index, sh.seat, sh.amount) for e in record.events
                 if isinstance(e, E.PotAwarded) for sh in e.shares if sh.amount)
    listed = await page.locator("#result-wins li").evaluate_all(
        "l => l.map(e => [e.textContent, Number(e.dataset.seat), Number(e.dataset.amount)])")
    assert sorted((0 if "main pot" in text else int(text.split("side pot ")[1][0]), seat,
                   amount) for text, seat, amount in listed) == won


async def test_the_pages_of_a_table_read_its_log_about_once_per_commit(stack, web, browser):
    """Every page asks for the hand's actions once per view; the web reads the log once per
    commit for all of them (the summary kept, one read under way per table)."""
    t = await new_table(stack, web.store, "web-many")
    async with operator(stack) as ops:
        await paused(ops, "web-many", True, "pause")
        for seat in (1, 2, 3):
            await t.sit(seat, buy_in=100)
        pages = [await browser.new_page() for _ in range(4)]
        asked_by: list[list[str]] = [[] for _ in pages]
        for page, asked in zip(pages, asked_by):
            page.on("request", lambda r, asked=asked: asked.append(r.url)
                    if r.url.endswith("/log") else None)
            await page.goto(web.url + "/table/web-many")
            await page.wait_for_function("() => logVersion >= 0")
        for asked in asked_by:
            asked.clear()
        before, start = web.reads["web-many"], (await t.view()).version
        await paused(ops, "web-many", False, "resume")
        await until(lambda: on_turn(t), 15, "hand 1's first turn")
        await paused(ops, "web-many", True, "pause-again")
    while await finished_hand(stack, web.store, "web-many", 1) is None:
        v = await t.view()
        if v.to_act:
            await t.call_or_check()
        else:
            await until(lambda v=v: moved(t, v.version), 15, "the hand to move on")
    end = (await t.view()).version
    for page in pages:
        await page.wait_for_function("v => logVersion >= v", arg=end, timeout=15_000)
    reads, commits = web.reads["web-many"] - before, end - start
    asked = sum(len(a) for a in asked_by)
    assert 0 < reads <= commits + 2, (reads, commits)
    # every page ends with the last version, and the web reads that version once for all of
    # them (each earlier read answers at least one ask): a read per ask would fail this
    assert reads + len(pages) - 1 <= asked, (reads, asked)
    late = await pages[0].request.get(f"{web.url}/api/tables/web-many/log")
    assert late.ok and (await late.json())["version"] == end
    assert web.reads["web-many"] - before == reads  # a page that asks late: no read


async def test_a_visitor_cannot_steer_the_table_summary_with_a_version(stack, web, browser):
    """An attacker's read: the summary is as of the latest view the web holds of the table,
    whatever version a request names. Versions the table never reached (or garbage) neither
    make the log be read again nor get a summary of a version that does not exist."""
    t = await new_table(stack, web.store, "web-steer")
    async with operator(stack) as ops:
        await paused(ops, "web-steer", True, "pause")
        for seat in (1, 2):
            await t.sit(seat, buy_in=100)
    version = (await t.view()).version
    page = await browser.new_page()  # a spectator's page: the web follows the table
    await page.goto(web.url + "/table/web-steer")
    await page.wait_for_function("v => logVersion >= v", arg=version, timeout=15_000)
    before = web.reads["web-steer"]
    for v in (version + 1, 10**17, 2**62, "99999999999999999999", -1, "x"):
        reply = await page.request.get(f"{web.url}/api/tables/web-steer/log?v={v}")
        assert reply.ok and (await reply.json())["version"] == version, v
    assert web.reads["web-steer"] == before, "a version the client named read the log"


async def test_a_table_that_does_not_exist_is_a_404_page_and_opens_no_watch(
        stack, web, browser):
    page = await browser.new_page()
    reply = await page.goto(web.url + "/table/nosuch")
    assert reply.status == 404
    assert "no such table" in (await page.locator("h1").inner_text()).lower()
    events = await page.request.get(web.url + "/api/tables/nosuch/events")
    assert events.status == 404 and "nosuch" in (await events.json())["error"]
    log = await page.request.get(web.url + "/api/tables/nosuch/log")
    assert log.status == 404
    assert web.stub.calls.get("Watch", 0) == 0 and web.stub.calls.get("GetState", 0) == 0
    assert len(web.app.state.fanout) == 0
    assert "nosuch" not in await web.store.table_ids()
    assert await web.store.read("nosuch") == []
    assert "nosuch" not in web.app.state.hands.tables  # nothing kept for it either
