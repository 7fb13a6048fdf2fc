"""What a player writes reaches the pages as text, never as markup: the pages are Jinja2
templates (services/web/templates) with every value escaped, and the one place a player's
name is written into a page by the server is the hand page's PokerStars text. Two players
whose names are markup play a hand through the table service (real gRPC, a real
nats-server); Debian's Chromium opens the hand page: the names are in it as text, and no
element of theirs is."""

from __future__ import annotations

import re

from services.web.replies import HEADERS
from shared.infra.waiting import until
from tests.helpers.tables import Table
from tests.helpers.web_table import (  # web_fixture, browser_fixture: the fixtures web, browser
    browser_fixture,  # noqa: F401
    finished_hand,
    moved,
    new_table,
    web_fixture,  # noqa: F401
)

#: players whose names (their tokens' subjects, valid names) would be markup if not escaped
HOSTILE = {1: "<script>window.pwned=1</script>", 2: '"><img src=x id=pwned>'}


async def _play_hand_one(stack, store, t: Table):
    """Hand 1 checked and called to its end: its record."""
    while (record := await finished_hand(stack, store, t.table_id, 1)) is None:
        v = await t.view()
        if v.to_act and v.hand_no == 1:
            await t.call_or_check()
        else:
            await until(lambda v=v: moved(t, v.version), 15, "the hand to move on")
    return record


async def test_a_player_name_with_markup_is_text_on_the_hand_page(stack, web, browser):
    t = await new_table(stack, web.store, "web-xss")
    t.players.update(HOSTILE)
    for seat in HOSTILE:
        await t.sit(seat)
    record = await _play_hand_one(stack, web.store, t)
    assert set(record.names.values()) == set(HOSTILE.values()), record.names
    page = await browser.new_page()
    reply = await page.goto(web.url + "/table/web-xss/hands/1")
    assert reply is not None and reply.status == 200
    raw = await reply.text()
    for name in HOSTILE.values():
        assert name not in raw  # only its escaped form is sent
    assert "&lt;script&gt;window.pwned=1&lt;/script&gt;" in raw
    text = await page.locator("#text").inner_text()
    assert all(name in text for name in HOSTILE.values()), text
    # no element came of a name: the text holds none, no image or id of theirs, no script ran
    assert await page.evaluate("""() => document.querySelectorAll('#text *').length === 0
        && !document.getElementById('pwned') && !document.querySelector('img[src="x"]')
        && window.pwned === undefined""")


async def test_every_page_has_the_security_headers_and_its_status_and_no_inline_script(
        stack, web, browser):
    """The pages rendered from templates keep what the HTML strings had: the security headers
    (replies.HEADERS: the Content-Security-Policy allows this origin's files only), their
    status (the unknown table's page is a 404), scripts from /static only; Chromium reports
    no Content-Security-Policy violation on any of them."""
    t = await new_table(stack, web.store, "web-headers")
    for seat in (1, 2):
        await t.sit(seat)
    await _play_hand_one(stack, web.store, t)
    pages = {"/": 200, "/table/web-headers": 200, "/table/nosuch": 404,
             "/table/web-headers/hands/1": 200, "/compliance/tables/web-headers/hands/1": 200,
             "/tournaments": 200}
    page = await browser.new_page()
    refused: list[str] = []
    page.on("console", lambda m: refused.append(m.text)
            if "Content Security Policy" in m.text else None)
    for path, status in pages.items():
        reply = await page.goto(web.url + path)
        assert reply is not None and reply.status == status, path
        headers = await reply.all_headers()
        assert {k.lower(): v for k, v in HEADERS.items()}.items() <= headers.items(), path
        assert headers["content-type"] == "text/html; charset=utf-8", path
        scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", await reply.text(), re.S)
        assert scripts if path != "/table/nosuch" else not scripts, path
        assert all(re.fullmatch(r' src="/static/[a-z]+\.js"', attrs) and not body
                   for attrs, body in scripts), (path, scripts)
        await page.wait_for_load_state("load")
    assert refused == []
