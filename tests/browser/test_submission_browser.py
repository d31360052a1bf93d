"""Bot authors in Chromium against a real ``arena serve``: sign up, upload a bot, see it validated
and active, open its page and a validation match; another user uploads a crashing bot and sees it
refused with its error, and cannot open the first user's files nor change the bot."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from serve.serverkit import CRASH_BOT, GOOD_BOT, ServeProcess
from store.helpers import wait_gone

FINAL = ("active", "rejected", "retired")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServeProcess]:
    home = (tmp_path / "home").resolve()
    home.mkdir()
    proc = ServeProcess(home, f"sqlite:///{home / 'arena.db'}", tmp_path / "serve.log", "--jobs", "2")
    try:
        yield proc
    finally:
        code = proc.stop()
        left = wait_gone(str(home / "artifacts"), timeout=10.0)
        for pid in left:
            os.kill(pid, 9)
        assert code == 143 and not left, (code, left, proc.output())


def _page(browser: Any, errors: list[str]) -> Any:
    context = browser.new_context(viewport={"width": 1300, "height": 900})
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page


def _sign_up(page: Any, base: str, name: str, password: str) -> None:
    page.goto(f"{base}/signup")
    page.fill("input[name=username]", name)
    page.fill("input[name=password]", password)
    page.fill("input[name=password2]", password)
    page.click("button:has-text('Sign up')")
    page.wait_for_url(f"{base}/account")
    assert page.locator(".acct-user").inner_text() == name


def _upload(page: Any, base: str, bot: str, path: Path) -> None:
    page.click("a:has-text('Upload a bot')")
    page.wait_for_url(f"{base}/submit")
    page.fill("input[name=name]", bot)
    page.set_input_files("input[name=file]", str(path))
    page.click("button:has-text('Upload')")
    page.wait_for_url(f"{base}/bots/{bot}?uploaded=1")


def _final_status(page: Any, timeout: float = 150.0) -> str:
    """The first version's status once validated (the page reloads itself while it waits)."""
    row = page.locator("tr.version[data-version='1']")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            status = row.get_attribute("data-status", timeout=5000)
        except Exception:  # the page was reloading
            status = None
        if status in FINAL:
            return str(status)
        time.sleep(0.5)
    raise AssertionError(f"still not validated: {page.content()[:2000]}")


def test_authors_upload_see_validation_and_keep_their_bots(browser: Any, server: ServeProcess) -> None:
    base = server.url
    errors: list[str] = []
    alice = _page(browser, errors)
    _sign_up(alice, base, "alice", "alice-password-1")
    _upload(alice, base, "rover", GOOD_BOT)
    assert _final_status(alice) == "active"
    alice.goto(f"{base}/bots/rover")
    assert alice.locator("h1.bot-name").inner_text().startswith("rover")
    assert alice.locator("tr.version[data-version='1'] .status").inner_text() == "active"
    links = alice.locator("tr.version[data-version='1'] a[href^='/matches/']")
    assert links.count() == 2
    assert alice.locator("a:has-text('download')").count() == 1
    links.first.click()
    alice.wait_for_url(f"{base}/matches/*")
    assert "rover" in alice.content()

    bob = _page(browser, errors)
    _sign_up(bob, base, "bob", "bob-password-22")
    _upload(bob, base, "crashy", CRASH_BOT)
    assert _final_status(bob) == "rejected"
    bob.goto(f"{base}/bots/crashy")
    assert bob.locator("tr.version[data-version='1'] .reason").inner_text().startswith("crashed")
    assert "cannot find my weights file" in bob.locator("pre.stderr").first.inner_text()

    # bob on alice's bot: a read-only page, no file, no action
    bob.goto(f"{base}/bots/rover")
    assert bob.locator("a:has-text('download')").count() == 0
    assert bob.locator("button:has-text('retire')").count() == 0
    assert bob.locator("button:has-text('Delete this bot')").count() == 0
    answer = bob.goto(f"{base}/bots/rover/versions/1/file")
    assert answer is not None and answer.status == 403
    assert "only the owner of rover" in bob.content()
    forged = bob.evaluate(
        """async () => {
            const page = await fetch('/account').then(r => r.text());
            const token = page.match(/name="csrf_token" value="([^"]+)"/)[1];
            const body = new URLSearchParams({csrf_token: token});
            const retire = await fetch('/bots/rover/versions/1/retire', {method: 'POST', body});
            const del = await fetch('/bots/rover/delete', {method: 'POST', body});
            return [retire.status, del.status];
        }"""
    )
    assert forged == [403, 403]
    alice.goto(f"{base}/bots/rover")
    assert alice.locator("tr.version[data-version='1'] .status").inner_text() == "active"
    assert not errors, errors


def test_a_file_over_the_limit_gets_the_form_back_with_the_reason(
    browser: Any, server: ServeProcess, tmp_path: Path
) -> None:
    base = server.url
    errors: list[str] = []
    page = _page(browser, errors)
    _sign_up(page, base, "carol", "carol-password-3")
    big = tmp_path / "big.sh"
    big.write_bytes(b"#!/bin/sh\n" + b"#" * 6_000_000)  # over the 5 MB default: refused unread
    page.click("a:has-text('Upload a bot')")
    page.wait_for_url(f"{base}/submit")
    page.fill("input[name=name]", "bigbot")
    page.set_input_files("input[name=file]", str(big))
    with page.expect_navigation() as navigation:
        page.click("button:has-text('Upload')")
    answer = navigation.value
    assert answer is not None and answer.status == 413
    assert answer.headers["content-type"].startswith("text/html")
    assert page.title().startswith("Upload a bot")
    assert page.locator("#upload-error").inner_text() == (
        "the upload is 6.00 MB, over the 5 MB limit; nothing was uploaded: "
        "choose a smaller file (at most 5 MB)"
    )
    assert page.locator("form[action='/submit'] input[name=file]").count() == 1
    # the form works again: a right-sized file goes through
    page.fill("input[name=name]", "bigbot")
    page.set_input_files("input[name=file]", str(GOOD_BOT))
    page.click("button:has-text('Upload')")
    page.wait_for_url(f"{base}/bots/bigbot?uploaded=1")
    assert not errors, errors
