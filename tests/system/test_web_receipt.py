"""The hand page's "verify this hand" in Chromium, on a real hand, a real notary's checkpoint
and the real web app: a signed-in player who played the hand clicks it and the page checks
their receipt (every card they saw, the leaf, the checkpoint's tree); a receipt changed on
the way (a card) is shown as not verifying; a visitor who is not signed in has no button."""

from __future__ import annotations

import json

import pytest

from services.stack import start_local
from services.web.app import create_app
from shared.infra.eventstore import EventStore
from shared.infra.waiting import until
from shared.poker.events import ActionKind
from shared.tlog.note import SignedCheckpoint
from shared.tlog.store import latest_checkpoint
from tests.helpers.tables import Table
from tests.system.test_web_pages import backend, browser, served, shot  # noqa: F401

pytestmark = pytest.mark.asyncio
HAND = "/table/rcptweb/hands/1"


@pytest.fixture
async def fast_stack(nats_server):
    s = await start_local(nats_server.url, env={"POKER_CHECKPOINT_S": "0.2"})
    yield s
    await s.stop()


async def a_finished_hand_in_a_checkpoint(stack, store) -> None:
    t = await Table.open(stack, store, "rcptweb", seats=2)
    await t.act(ActionKind.FOLD)
    await stack.start_service("notary")

    async def covered():
        text = await latest_checkpoint(store.js)
        return text and SignedCheckpoint.parse(text).checkpoint.size >= 1

    await until(covered, 30, "a checkpoint covering hand 1")


async def test_a_player_verifies_their_hand_in_the_page(fast_stack, store, browser):  # noqa: F811
    stack = fast_stack
    await a_finished_hand_in_a_checkpoint(stack, store)
    chan = stack.channel("table")
    reader = await EventStore.connect(stack.nats_url, create=False)
    async with served(create_app(backend(stack, reader, chan))) as url:
        stranger = await browser.new_page()
        await stranger.goto(url + HAND)
        await stranger.locator("#receipt-verdict").wait_for(state="attached")
        assert await stranger.locator("#verify-hand").is_hidden()

        page = await browser.new_page()
        await page.goto(url + HAND)
        signed = await page.evaluate("""async (token) => (await fetch('/api/session', {
            method: 'POST', headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({token})})).status""", stack.token("p1"))
        assert signed == 200
        await page.reload()
        button = page.locator("#verify-hand")
        await button.wait_for(state="visible", timeout=10_000)
        await button.click()
        verdict = page.locator("#receipt-verdict")
        await page.wait_for_function(
            "() => document.getElementById('receipt-verdict').textContent.includes('leaf')",
            timeout=20_000)
        text = await verdict.inner_text()
        assert "every card you saw" in text and "NOT" not in text, text
        assert await page.locator("#receipt-cards li").count() == 2  # p1's own two cards
        await page.screenshot(path=shot("receipt-verified"), full_page=True)

        async def changed(route):  # a card changed on the way: the page must see it
            reply = await route.fetch()
            receipt = json.loads(await reply.text())
            first = receipt["cards"][0]
            first["card"] = "2c" if first["card"] != "2c" else "3c"
            await route.fulfill(response=reply, body=json.dumps(receipt))

        await page.route("**/receipt", changed)
        await button.click()
        await page.wait_for_function(
            "() => document.getElementById('receipt-verdict').textContent.includes('NOT')",
            timeout=20_000)
        assert "is not position" in await verdict.inner_text()
    await reader.close()
    await chan.close()
