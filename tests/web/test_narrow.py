"""The web app on a phone: at 400 px every page fits the screen (no sideways scrolling of the
page), the header's links are on screen, tables scroll inside their own box, and the replay
board fits and stays readable, still showing the engine's state."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import Site
from .test_viewer import engine_replay, expected_board, read, shown_board

pytestmark = pytest.mark.timeout(120)

WIDTH = 400

# Everything that sticks out of the viewport, horizontally, of the page and its parts.
FIT = """(sel) => {
  const vw = document.documentElement.clientWidth;
  const out = [];
  const page = document.documentElement.scrollWidth;
  if (page > window.innerWidth) out.push(`the page is ${page}px wide`);
  document.querySelectorAll(sel).forEach((e) => {
    const r = e.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) return;
    if (r.left < -0.5 || r.right > vw + 0.5) {
      out.push(`${e.tagName.toLowerCase()}.${e.className || ''}#${e.id || ''} spans ${r.left}..${r.right}`);
    }
  });
  return out;
}"""


@pytest.fixture
def phone(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": WIDTH, "height": 800}, device_scale_factor=1)
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def pages(site: Site) -> list[str]:
    a = site.arena
    return [
        "/leaderboard",
        "/tournaments",
        f"/tournaments/{a.forfeit_tournament}",
        "/matches?status=all",
        f"/matches/{a.forfeit_matches[0]}",
        "/rules",
        "/ladder",
        "/matches/987654",  # the error page
    ]


def test_every_page_fits_a_400px_screen(phone: Any, site: Site, shots: Path) -> None:
    for path in pages(site):
        phone.goto(site.url + path)
        if path.startswith("/matches/") and path != "/matches/987654":
            phone.wait_for_selector("#viewer[data-ready='1']")
        parts = "header nav a, main, table:not(.table-scroll > table), .table-scroll, pre, svg, img"
        sticking_out = phone.evaluate(FIT, parts)
        assert not sticking_out, (path, sticking_out)
        links = phone.eval_on_selector_all(
            "header.topbar nav a",
            "as => as.map(a => { const r = a.getBoundingClientRect();"
            " return [a.textContent, r.left >= 0 && r.right <= innerWidth && r.top >= 0 && r.height > 0]; })",
        )
        names = ["Leaderboard", "Ladder", "Tournaments", "Matches", "Rules", "API"]
        assert [name for name, _ in links] == names
        assert all(on_screen for _, on_screen in links), (path, links)
        name = path.replace("/", "_").replace("?", "_")
        phone.screenshot(path=str(shots / f"narrow{name}.png"), full_page=True)


def test_wide_tables_scroll_inside_their_box(phone: Any, site: Site) -> None:
    phone.goto(site.url + "/tournaments")
    box = phone.evaluate(
        "() => { const t = document.querySelector('table.data');"
        " return [t.scrollWidth, t.clientWidth, getComputedStyle(t).overflowX]; }"
    )
    scroll_width, client_width, overflow = box
    assert scroll_width > client_width, "the tournaments table should be wider than a phone"
    assert overflow == "auto" and client_width <= WIDTH
    phone.goto(site.url + "/rules")
    wide = phone.evaluate(
        "() => [...document.querySelectorAll('article.rules .table-scroll')]"
        ".filter(d => d.scrollWidth > d.clientWidth).length"
    )
    assert wide >= 1  # the lounger and track tables scroll inside their box


def test_the_board_fits_and_is_readable(phone: Any, site: Site, shots: Path) -> None:
    mid = site.arena.forfeit_matches[0]
    rep = engine_replay(site, mid)
    step = len(rep.states) // 2
    phone.goto(f"{site.url}/matches/{mid}#step={step}")
    phone.wait_for_selector("#viewer[data-ready='1']")
    assert phone.get_attribute("#board", "data-layout") == "narrow"
    board = phone.evaluate(
        "() => { const r = document.getElementById('board').getBoundingClientRect();"
        " return [r.left, r.right]; }"
    )
    assert board[0] >= 0 and board[1] <= WIDTH
    dom = read(phone)
    assert dom["step"] == step and shown_board(dom) == expected_board(rep.states[step])
    # rendered text heights in CSS pixels: a lounger's value, a towel's seat, the scores, names
    heights = phone.evaluate(
        """() => {
          const h = (sel) => Math.min(...[...document.querySelectorAll(sel)]
            .filter((e) => e.getBoundingClientRect().height > 0)
            .map((e) => e.getBoundingClientRect().height));
          return {value: h('#board .lounger .value'), score: h('#board .player-score'),
                  name: h('#board .player-name'), line: h('#board .player-line'),
                  status: h('#board .panel-line'), field: h('#board .field-label')};
        }"""
    )
    assert heights["value"] >= 9 and heights["field"] >= 8, heights
    assert heights["score"] >= 14 and heights["name"] >= 9 and heights["line"] >= 8, heights
    assert heights["status"] >= 8, heights
    # every player box is inside the board's picture (stacked under the deck, not cut off)
    inside = phone.evaluate(
        """() => { const b = document.getElementById('board').getBoundingClientRect();
          return [...document.querySelectorAll('#board g.player')].every((g) => {
            const r = g.getBoundingClientRect();
            return r.left >= b.left - 1 && r.right <= b.right + 1 && r.bottom <= b.bottom + 1; }); }"""
    )
    assert inside
    phone.locator("#viewer").screenshot(path=str(shots / "narrow-viewer.png"))
    # widen the window: the side panel goes back beside the deck
    phone.set_viewport_size({"width": 1500, "height": 900})
    phone.wait_for_function("() => document.getElementById('board').dataset.layout === 'wide'")
    assert phone.get_attribute("#board", "viewBox") == "0 0 1300 780"
    assert shown_board(read(phone)) == expected_board(rep.states[step])
