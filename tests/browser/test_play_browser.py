"""A person plays complete games in Chromium by clicks alone against the sample bots; the stored
records verify; a closed tab comes back within the grace, or forfeits ``disconnected`` after it."""

from __future__ import annotations

import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from arena.engine import replay
from arena.store.db import Database
from arena.web.replays import replay_text, verify_match

from .playkit import DECIDE_OR_OVER, play_by_clicks, start_play


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
    [(["greedy"], 2, 0, 11), (["random", "greedy", "random"], 4, 2, 12)],
    ids=["2p-vs-greedy", "4p-vs-random-greedy"],
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
    assert f"match {stored} (end: " in "\n".join(played.lines)  # the result table names it the same way


def test_a_closed_tab_reopened_within_the_grace_plays_on(browser: Any, tmp_path: Path) -> None:
    played = start_play(tmp_path, "greedy", "--seed", "21", "--grace", "10")
    errors: list[str] = []
    rng = random.Random(21)
    page = new_page(browser, errors)
    try:
        page.goto(played.url)
        assert play_by_clicks(page, rng, stop_after=8) == 8
        seen = page.evaluate("window.poolViewer.steps")
        page.context.close()  # the tab is closed mid-match
        time.sleep(2.0)
        page = new_page(browser, errors)
        page.goto(played.url)  # ... and opened again within the grace
        page.wait_for_selector("#play-panel[data-ready='1']")
        assert page.evaluate("window.poolViewer.steps") >= seen  # the game so far is back
        play_by_clicks(page, rng)
        page.wait_for_selector("#play-panel[data-final='1']", timeout=30_000)
        stored = int(page.locator("#play-panel").get_attribute("data-stored") or 0)
        assert "forfeited" not in page.locator("#play-result").inner_text()
    finally:
        page.context.close()
        status = played.wait(60)
        played.stop()
    assert not errors, errors
    assert status == 0, "\n".join(played.lines)
    stored_match(tmp_path, stored)


def test_after_the_grace_a_closed_tab_forfeits_disconnected(browser: Any, tmp_path: Path) -> None:
    # 3 players: after the person forfeits, the bots play on to the end
    played = start_play(tmp_path, "random", "greedy", "--seed", "22", "--grace", "1.5")
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        page.goto(played.url)
        play_by_clicks(page, random.Random(22), stop_after=6)
        closed = time.monotonic()
        page.context.close()
        status = played.wait(90)
        waited = time.monotonic() - closed
    finally:
        played.stop()
    assert not errors, errors
    out = "\n".join(played.lines)
    assert status == 3, out
    assert "seat 0 (human:tester) forfeited: disconnected" in out
    assert waited >= 1.5
    stored = int(re.search(r"stored as match (\d+)", out).group(1))  # type: ignore[union-attr]
    text, seating = stored_match(tmp_path, stored)
    assert seating == ["human:tester", "random", "greedy"]
    assert [f["reason"] for f in replay(text).result["forfeits"]] == ["disconnected"]


def test_a_whole_game_by_keyboard_on_a_phone_width_page(browser: Any, tmp_path: Path) -> None:
    played = start_play(tmp_path, "greedy", "--seed", "23")
    errors: list[str] = []
    page = new_page(browser, errors, width=390, height=844)
    rng = random.Random(23)
    try:
        page.goto(played.url)
        page.wait_for_selector("#play-panel[data-ready='1']")
        assert page.locator("#board").get_attribute("data-layout") == "narrow"
        # nothing wider than the phone: no sideways scrolling
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        seen = ""
        keys = 0
        while True:
            page.wait_for_function(DECIDE_OR_OVER, arg=seen, timeout=60_000)
            panel = page.locator("#play-panel")
            if panel.get_attribute("data-state") == "over":
                break
            seen = panel.get_attribute("data-request") or ""
            phase = panel.get_attribute("data-phase")
            if phase == "roll":
                if rng.random() < 0.5:
                    page.keyboard.press("1")  # the first die, then Enter keeps it (if that is a legal keep)
                    if page.locator("#btn-keep").is_enabled():
                        page.keyboard.press("Enter")
                    else:
                        page.keyboard.press("s")
                elif page.locator("#btn-chip").is_visible() and rng.random() < 0.3:
                    page.keyboard.press("c")
                else:
                    page.keyboard.press("s")
            elif page.locator("#play-options button.opt").count():
                for _ in range(rng.randrange(4)):
                    page.keyboard.press("ArrowRight")  # mark another option
                page.keyboard.press("Enter")
            else:
                page.keyboard.press("p")
            keys += 1
        page.wait_for_selector("#play-panel[data-final='1']", timeout=30_000)
        stored = int(page.locator("#play-panel").get_attribute("data-stored") or 0)
        assert keys > 20
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    finally:
        page.context.close()
        status = played.wait(60)
        played.stop()
    assert not errors, errors
    assert status == 0, "\n".join(played.lines)
    stored_match(tmp_path, stored)


def act(page: Any) -> None:
    """One decision by a click: Stop when rolling, else a highlighted lounger, or Pass."""
    if page.locator("#play-panel").get_attribute("data-phase") == "roll":
        page.locator("#btn-stop").click()
    elif page.locator("#board g.lounger.target").count():
        page.locator("#board g.lounger.target").first.click()
    else:
        page.locator("#btn-pass").click()


def test_the_others_play_out_at_a_watchable_pace_and_esc_skips(browser: Any, tmp_path: Path) -> None:
    played = start_play(tmp_path, "greedy", "--seed", "24")
    errors: list[str] = []
    page = new_page(browser, errors)
    try:
        page.goto(played.url)
        rng = random.Random(24)
        # the placements and the first roll (no pace), up to the person's first action step
        while page.locator("#play-panel").get_attribute("data-phase") != "action":
            play_by_clicks(page, rng, stop_after=1)  # (returns at the next decision)
        page.evaluate("window.poolPlay.pace = 400")
        before = page.evaluate("window.poolViewer.steps")
        act(page)  # then the bot's whole turn plays out, and the person's first throw
        steps: list[int] = []
        started = time.monotonic()
        while (
            page.locator("#play-panel").get_attribute("data-state") != "decide"
            and time.monotonic() - started < 60
        ):
            steps.append(page.evaluate("window.poolViewer.step"))
            time.sleep(0.05)
        took = time.monotonic() - started
        shown = sorted(set(steps))
        total = page.evaluate("window.poolViewer.steps")
        assert total - before >= 4  # the person's stop, the bot's turn, the throws
        assert len([k for k in shown if before < k < total]) >= 3  # shown one after another
        assert took >= 0.4 * (total - before - 2)  # ... each for about the pace
        # Esc: straight to the latest state, the decision is offered at once
        page.evaluate("window.poolPlay.pace = 0")
        while page.locator("#play-panel").get_attribute("data-phase") != "action":
            play_by_clicks(page, rng, stop_after=1)
        page.evaluate("window.poolPlay.pace = 60000")  # the bot's turn would take minutes
        seen = page.locator("#play-panel").get_attribute("data-request")
        act(page)
        page.wait_for_selector("#btn-skip:not([hidden])", timeout=30_000)
        page.keyboard.press("Escape")
        page.wait_for_function(DECIDE_OR_OVER, arg=seen, timeout=5_000)
        assert page.evaluate("window.poolViewer.step") == page.evaluate("window.poolViewer.steps")
    finally:
        page.context.close()
        played.stop()
    assert not errors, errors
