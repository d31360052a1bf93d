"""The rules page (docs/rules.md rendered by the server), its links from the header and the
replay viewer, and the viewer's exact numbers: 64-bit seeds and think times formatted by one rule."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from arena.engine import LOUNGERS, play_game, replay
from arena.engine.policies import make_policy
from arena.rulesdoc import BOARD_SVG
from arena.web.export import standalone_html
from arena.web.viewdata import build_view, format_ms

from .conftest import Site
from .test_viewer import engine_replay, expected_board, open_match, read, shown_board

pytestmark = pytest.mark.timeout(120)

BIG_SEED = 8146625516662860959  # above 2**53: a JavaScript number would print ...861000


def test_rules_page_loads_from_the_header_link(page: Any, site: Site, shots: Path) -> None:
    page.goto(site.url + "/leaderboard")
    with page.expect_navigation():
        page.click("header.topbar nav a:text-is('Rules')")
    assert page.url == site.url + "/rules"
    assert page.get_attribute("header.topbar nav a[href='/rules']", "class") == "active"
    assert "the rules" in page.inner_text("article.rules h1").lower()
    ids = page.eval_on_selector_all("article.rules a[id^='r']", "as => as.map(a => a.id)")
    assert ids == [f"r{k}" for k in range(1, 29)]
    for heading in ("5-the-dice-stream", "64-the-game-record", "14-the-lifeguards-track"):
        assert page.query_selector(f"article.rules [id='{heading}']") is not None, heading
    # every lounger of the board is in the page's table, and the board diagram is drawn
    cells = page.eval_on_selector_all("article.rules td code", "cs => cs.map(c => c.textContent)")
    assert {lo.name for lo in LOUNGERS} <= set(cells)
    page.wait_for_function(
        "() => { const i = document.querySelector(\"article.rules img[src='/rules/board.svg']\");"
        " return i && i.complete && i.naturalWidth > 0; }",
        timeout=10_000,
    )
    # in-page links work; links to other files of the repository are plain text
    page.click("article.rules a[href='#5-the-dice-stream']")
    assert page.url.endswith("/rules#5-the-dice-stream")
    hrefs = page.eval_on_selector_all("article.rules a[href]", "as => as.map(a => a.getAttribute('href'))")
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs
    page.screenshot(path=str(shots / "rules.png"))


def test_the_board_diagram_is_served(site: Site) -> None:
    with urllib.request.urlopen(site.url + "/rules/board.svg", timeout=30) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("image/svg+xml")
        assert r.read() == BOARD_SVG.read_bytes()


def test_the_viewer_links_to_the_rules(page: Any, site: Site) -> None:
    mid = site.arena.matches[0]
    rep = engine_replay(site, mid)
    invade = next(
        k for k, e in enumerate(rep.events, start=1) if str(e.get("action", "")).startswith("invade ")
    )
    open_match(page, site, mid, step=invade)
    assert page.get_attribute("#ev-rule a", "href") == "/rules#r21"
    throw = next(k for k, e in enumerate(rep.events, start=1) if "throw" in e)
    page.evaluate("(k) => window.poolViewer.go(k)", throw)
    assert page.get_attribute("#ev-rule a", "href") == "/rules#31-rolling"
    with page.expect_navigation():
        page.click("#rules-link")
    assert page.url == site.url + "/rules"
    assert page.query_selector("article.rules #r21") is not None


def test_seeds_are_exact_in_the_json_api(site: Site) -> None:
    mid = site.arena.matches[0]
    rep = engine_replay(site, mid)
    seed = rep.header["seed"]
    with urllib.request.urlopen(f"{site.url}/api/matches/{mid}/replay", timeout=30) as r:
        view = json.loads(r.read())
    assert view["version"] == 2
    assert view["header"]["seed"] == str(seed) and view["match"]["seed"] == str(seed)
    with urllib.request.urlopen(f"{site.url}/api/matches/{mid}", timeout=30) as r:
        assert json.loads(r.read())["seed"] == str(seed)
    with urllib.request.urlopen(f"{site.url}/api/tournaments", timeout=30) as r:
        assert all(isinstance(t["seed"], str) for t in json.loads(r.read())["items"])


# ---- exact numbers in the page: an engine game with a 64-bit seed and awkward think times ------

AWKWARD_MS = (1.25, 0.05, 1.15, 2.675, 1.45, 0.25, 1234.45, 7.0)


def _awkward_record() -> str:
    """A real engine game with seed BIG_SEED whose decisions carry think times that round
    differently half-up, half-even and in binary (1.25, 1.15, 1.45, ...: JavaScript's
    toFixed(1) gives "1.1" for 1.15 and "1.4" for 1.45, Python's ".1f" "1.2" for 1.25)."""
    game = play_game(BIG_SEED, [make_policy("greedy", BIG_SEED, 0), make_policy("random", BIG_SEED, 1)])
    lines = game.record.splitlines()
    k = 0
    for n, line in enumerate(lines):
        obj = json.loads(line)
        if "action" in obj and "forced" not in obj:
            obj["ms"] = AWKWARD_MS[k % len(AWKWARD_MS)]
            obj["cpu_ms"] = AWKWARD_MS[(k + 1) % len(AWKWARD_MS)]
            if k == 3:
                obj["away_ms"] = 1500.25
            lines[n] = json.dumps(obj)
            k += 1
    return "\n".join(lines) + "\n"


def test_the_page_shows_seeds_and_times_exactly(page: Any, tmp_path: Path) -> None:
    """The self-contained viewer (no server at all): every think time on the page is the
    server's format_ms of the recorded value (1.25 -> "1.3", never "1.2"), and the seed is every
    digit of the 64-bit number."""
    text = _awkward_record()
    rep = replay(text)
    assert format_ms(1.25) == "1.3" and format_ms(0.05) == "0.1" and format_ms(2.675) == "2.7"
    html = tmp_path / "viewer.html"
    html.write_text(standalone_html(build_view(text), "exact numbers"), encoding="utf-8")
    page.goto(html.as_uri())
    page.wait_for_selector("#viewer[data-ready='1']")
    assert str(BIG_SEED) in page.inner_text(".match-head")
    checked = 0
    for k, event in enumerate(rep.events, start=1):
        if "ms" not in event and "throw" not in event:
            continue
        page.evaluate("(k) => window.poolViewer.go(k)", k)
        meta = page.inner_text("#ev-meta")
        if "throw" in event:
            assert f"the dice stream of seed {BIG_SEED}" in meta
            continue
        assert f"think time {format_ms(event['ms'])} ms" in meta, (k, meta)
        assert f"CPU {format_ms(event['cpu_ms'])} ms" in meta, (k, meta)
        if "away_ms" in event:
            assert f"disconnected {format_ms(event['away_ms'])} ms (not counted)" in meta
        numbers = re.findall(r"\d+\.\d+", meta)
        assert all(n in {format_ms(v) for v in (*AWKWARD_MS, 1500.25)} for n in numbers), meta
        checked += 1
        if checked > 40:
            break
    assert checked > 12
    tie = next(k for k, e in enumerate(rep.events, start=1) if e.get("ms") == 1.25)
    page.evaluate("(k) => window.poolViewer.go(k)", tie)
    assert "think time 1.3 ms" in page.inner_text("#ev-meta")
    assert shown_board(read(page)) == expected_board(rep.states[tie])


def test_a_record_without_a_clock_has_no_empty_item_in_its_subtitle() -> None:
    """An engine game's record has no time control: the exported page's subtitle reads
    ``seed N · normal``, not ``seed N · · normal``."""
    game = play_game(7, [make_policy("greedy", 7, 0), make_policy("random", 7, 1)])
    view = build_view(game.record)
    assert not view["header"].get("time_control")
    page = standalone_html(view, "no clock")
    subtitle = re.search(r"seed 7[^<]*</p>", page)
    assert subtitle is not None and "· ·" not in " ".join(subtitle.group(0).split()), subtitle
