"""The analysis on the match page, in a real browser (Debian's Chromium via Playwright): the
Analyse button, the per-seat loss graph, the marked costliest decisions, and a click on a mark
moving the replay viewer to that decision."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from strength.analysis_store import greedy_match

from arena.engine import by_name
from arena.store.db import Database

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int, int]]:
    """The web app over a real SQLite database with two stored matches (2 and 3 players, sprint
    rules so that they are short)."""
    from arena.web.app import create_app
    from arena.web.server import BackgroundServer

    home = tmp_path_factory.mktemp("analysis-web")
    db = Database(f"sqlite:///{home / 'arena.db'}")
    two = greedy_match(db, 21, 2, by_name("sprint"))
    three = greedy_match(db, 22, 3, by_name("sprint"))
    server = BackgroundServer(create_app(db))
    url = server.start()
    yield url, two, three
    server.stop()
    db.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1500, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    yield pg
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


def _analyse(page: Any, url: str, match_id: int) -> dict[str, Any]:
    page.goto(f"{url}/matches/{match_id}")
    page.wait_for_selector("#viewer[data-ready='1']")
    page.click("#btn-analyse")
    page.wait_for_selector("#analysis[data-status='done']", timeout=180_000)
    data: dict[str, Any] = page.evaluate(f"() => fetch('/matches/{match_id}/analysis').then((r) => r.json())")
    assert data["status"] == "done"
    return data["analysis"]


@pytest.mark.parametrize("which", [0, 1])
def test_analysed_replay_shows_the_loss_graph_and_the_costliest_decisions(
    page: Any, served: tuple[str, int, int], which: int
) -> None:
    url = served[0]
    match_id = served[1 + which]
    analysis = _analyse(page, url, match_id)
    players = analysis["players"]
    assert players == 2 + which
    # one loss line per seat, ending at the seat's total
    lines = page.eval_on_selector_all(
        "#loss-graph polyline.loss-line", "els => els.map(e => Number(e.dataset.seat))"
    )
    assert sorted(lines) == list(range(players))
    labels = page.eval_on_selector_all("#loss-graph text.loss-label", "els => els.map(e => e.textContent)")
    for s in analysis["seats"]:
        assert any(label.endswith(f"{s['total_loss']:.1f}") for label in labels), labels
    # the marks are exactly the costliest decisions of every seat
    marks = page.eval_on_selector_all(
        "#loss-graph circle.costly", "els => els.map(e => [Number(e.dataset.seat), Number(e.dataset.step)])"
    )
    expected = sorted((s["seat"], step) for s in analysis["seats"] for step in s["costliest"])
    assert sorted(tuple(m) for m in marks) == expected
    assert expected, "a whole game without a single decision that lost anything"
    items = page.eval_on_selector_all(
        "#analysis-costly li.costly-item", "els => els.map(e => Number(e.dataset.step))"
    )
    assert sorted(items) == sorted(step for _seat, step in expected)
    # a click on the costliest mark moves the viewer to that decision (its event, the chosen action)
    worst = max((d for d in analysis["decisions"] if d["costly"]), key=lambda d: d["loss"])
    page.click(f"#loss-graph circle.costly[data-step='{worst['step']}']")
    page.wait_for_function(f"() => window.poolViewer.step === {worst['step']}")
    assert page.get_attribute("#board", "data-step") == str(worst["step"])
    chosen = page.text_content("#ev-legal li.chosen")
    assert chosen is not None and worst["chosen"] in chosen
    # and a line of the list does the same
    other = sorted(items)[0]
    page.click(f"#analysis-costly li.costly-item[data-step='{other}'] button")
    page.wait_for_function(f"() => window.poolViewer.step === {other}")


def test_a_computed_analysis_is_shown_when_the_page_opens(page: Any, served: tuple[str, int, int]) -> None:
    url, two, _three = served
    _analyse(page, url, two)
    page.goto(f"{url}/matches/{two}")
    page.wait_for_selector("#analysis[data-status='done']", timeout=30_000)
    assert page.locator("#loss-graph circle.costly").count() > 0
